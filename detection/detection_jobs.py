"""The one detection job: every query segment of one segment set against every source segment of another.

``benchmarks.detect`` fans out into shards of consecutive queries (``jobs.sharding``). Both callers use it:
``detection.services.detection.detection_job_create`` (stored corpora, the top-k lists as a file) and the
workbench (uploaded documents; it asks for candidates and stores them as rows through its result store).

- **Segment sets** are named in the params as ``{"set": NAME, "id": PK}``: an app that owns segments registers
  its set with :func:`register_segment_set` (the benchmarks: ``corpus``, a stored corpus; the workbench:
  ``document``), so this module never imports them. The job kind keeps the name it was stored under.
- **A shard** takes queries ``start..stop-1``: the fitted retriever's ``search_range`` (scored with the whole
  query list's statistics), and with ``candidates`` the pairs of :func:`detection.candidates.detect_range`
  (``min_score``, the reranker's class probabilities and ``thresholds`` labels, lexical overlap). It writes
  them to ``VAR_DIR/detections/job-<parent>/shard-<i>.npz``.
- **The merge** concatenates the shards in order into ``job-<id>.npz`` (``indices``, ``scores``,
  ``query_ids``, ``source_ids``), identical to one ``search`` over all queries however many shards and
  workers ran, and hands the concatenated candidates to the result store named in ``store``
  (:func:`register_result_store`), which writes them where its pages read them.

The fitted source index comes from the shared index cache (``detection.pool_index``: content-addressed by
method, parameters and the sources' ids and texts): a plan of several shards makes it ready in the parent (from
the cache, or fitted and stored), so a shard on another worker, and any later job over the same sources, loads
it instead of fitting. A worker process keeps the last index (segment sets, method, parameters, reranker) and
the texts it loaded: the shards of one job that land on the same worker load them once.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings

from core.registries import Registry
from detection.latin.units import make_units
from detection.pool_index import fit_or_load, index_counts
from jobs.sharding import pause_in_shard, query_ranges, shard_slot, sharded_job_kind

DETECT_KIND = "benchmarks.detect"


@dataclass(frozen=True)
class SegmentSet:
    """Segments a detection reads, by primary key: ``rows(pk)`` → ``[(seg_id, text), ...]`` in order,
    ``count(pk)``, and ``fingerprint(pk)``, which changes whenever the segments do (the worker cache key)."""

    rows: Callable[[int], list[tuple[str, str]]]
    count: Callable[[int], int]
    fingerprint: Callable[[int], tuple]


SEGMENT_SETS: Registry[SegmentSet] = Registry("segment set")
#: name -> ``store(context, params, candidates, merged) -> dict`` (merged into the job's result)
RESULT_STORES: Registry[Callable] = Registry("result store")


def register_segment_set(name: str, segment_set: SegmentSet) -> None:
    SEGMENT_SETS.add(name, segment_set)


def register_result_store(name: str):
    """Decorator: ``fn(context, params, candidates, merged)`` stores a merged detection's candidates."""

    def register(fn: Callable) -> Callable:
        return RESULT_STORES.add(name, fn)

    return register


def segment_set(name: str, pk: int) -> dict:
    """How a job's params name a segment set."""
    if name not in SEGMENT_SETS:
        raise KeyError(f"unknown segment set {name!r}; known: {', '.join(sorted(SEGMENT_SETS))}")
    return {"set": name, "id": int(pk)}


def _set(ref: dict) -> SegmentSet:
    return SEGMENT_SETS[ref["set"]]


def method_configs(params: dict):
    """The job's retriever and reranker (None) configurations, as ``detection_job_create`` stored them (their
    digests checked, not validated again: ``registry.carried_config``)."""
    from detection.methods.registry import carried_config

    reranker = params.get("reranker")
    return carried_config(params["method"], kind="retriever"), \
        carried_config(reranker, kind="reranker") if reranker else None


# ------------------------------------------------------------------------------------------------- plan
def _plan(params: dict, log) -> list[dict]:
    """Ranges of queries; with more than one, the source index is made ready here (fitted once, or loaded from
    the cache) so the shards on other workers load it from the cache rather than fitting it each."""
    q = params["queries"]
    n = len(_units(_set(q).rows(q["id"]), "sentence").ids) if params.get("unit") == "sentence" else _set(q).count(q["id"])
    plan = query_ranges(n, shards=params.get("shards"), shard_size=params.get("shard_size"))
    if len(plan) > 1:
        loaded, _ = _load(params, log)
        plan = [{**p, "parent_index": loaded.index} for p in plan]
    return plan


# ------------------------------------------------------------------------------------------------ shard
@dataclass
class _Units:
    """A segment list searched as ``unit``: each unit's id, text, the segment ids it covers and the index of its
    first segment (a line or a window starts at every segment, so that is its own index; a sentence starts on the
    segment where it begins, and a segment may start two)."""

    ids: list[str]
    texts: list[str]
    lines: list[tuple[str, ...]]
    first: np.ndarray


def _units(rows: list[tuple[str, str]], unit: str) -> _Units:
    if unit == "line":
        return _Units([i for i, _ in rows], [t for _, t in rows], [(i,) for i, _ in rows],
                      np.arange(len(rows), dtype=np.int32))
    units = make_units([i for i, _ in rows], [t for _, t in rows], unit)
    position = {seg_id: n for n, (seg_id, _) in enumerate(rows)}
    return _Units([u.id for u in units], [u.text for u in units], [u.lines for u in units],
                  np.asarray([position[u.lines[0]] for u in units], np.int32))


@dataclass
class _Loaded:
    retriever: object
    reranker: object | None
    queries: _Units
    sources: _Units
    index: str = "built"  # "built" (fitted in this process) or "cache" (loaded from the index cache)
    unit: str = "line"

    @property
    def query_ids(self) -> list[str]:
        return self.queries.ids

    @property
    def query_texts(self) -> list[str]:
        return self.queries.texts

    @property
    def source_ids(self) -> list[str]:
        return self.sources.ids

    @property
    def source_texts(self) -> list[str]:
        return self.sources.texts


def _on_segments(cands, loaded: _Loaded):
    """Candidates between units -> between the segments where the units start (what the stores index), each
    (query segment, source segment) pair once, at its best rank (two sentences may start on one segment)."""
    if loaded.unit != "sentence":
        return cands
    from detection.candidates import Candidates

    moved = Candidates(loaded.queries.first[cands.query], loaded.sources.first[cands.source], cands.rank,
                       cands.score, cands.probs, cands.label, cands.shared, cands.bucket, cands.explain)
    return _first_per_pair(moved)


def _first_per_pair(cands):
    """Each (query, source) pair once, at its best rank (then its first place), in the original order."""
    from detection.candidates import Candidates

    seen: set[tuple[int, int]] = set()
    keep = []
    for n in np.lexsort((np.arange(len(cands)), cands.rank, cands.source, cands.query)).tolist():
        pair = (int(cands.query[n]), int(cands.source[n]))
        if pair not in seen:
            seen.add(pair)
            keep.append(n)
    keep = np.asarray(sorted(keep), np.int64)
    return Candidates(cands.query[keep].astype(np.int32), cands.source[keep].astype(np.int32), cands.rank[keep],
                      cands.score[keep], None if cands.probs is None else cands.probs[keep],
                      [cands.label[i] for i in keep], cands.shared[keep], [cands.bucket[i] for i in keep],
                      None if cands.explain is None else [cands.explain[i] for i in keep])


_LOADED: dict = {}  # per worker process: key -> _Loaded; the last one only


def _load(params: dict, log) -> tuple[_Loaded, bool]:
    """The fitted retriever, the reranker and both segment lists, built once per worker process (and kept)."""
    from detection.methods import registry

    q, s = params["queries"], params["sources"]
    config, rr_config = method_configs(params)
    key = (_set(q).fingerprint(q["id"]), _set(s).fingerprint(s["id"]), config.digest,
           rr_config.digest if rr_config else "", params.get("unit") or "line")
    if key in _LOADED:
        return _LOADED[key], False
    _LOADED.clear()
    started = time.monotonic()
    unit = params.get("unit") or "line"
    sources = _units(_set(s).rows(s["id"]), unit)
    queries = _units(_set(q).rows(q["id"]), unit)
    context = registry.BuildContext.default()  # the worker's one build context
    retriever = registry.build_config(config, context)
    _, how, _ = fit_or_load(retriever, config, sources.ids, sources.texts, log=log)
    reranker = registry.build_config(rr_config, context) if rr_config else None
    _LOADED[key] = _Loaded(retriever, reranker, queries, sources, how, unit)
    log(f"pid {os.getpid()}: loaded {len(sources.ids)} sources and {len(queries.ids)} queries ({unit}), index "
        f"{config.name} {how} in {time.monotonic() - started:.1f} s")
    return _LOADED[key], True


def _out_dir(parent_id: int) -> Path:
    folder = Path(settings.VAR_DIR) / "detections" / f"job-{parent_id}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# ------------------------------------------------------------------------------------------------ merge
def _merge(context, params: dict, results: list[dict]) -> dict:
    from detection.candidates import Candidates

    root = Path(settings.VAR_DIR)
    parts = [dict(np.load(root / r["file"])) for r in results]
    indices = np.concatenate([p["indices"] for p in parts])
    scores = np.concatenate([p["scores"] for p in parts])
    q, s = params["queries"], params["sources"]
    query_ids = _units(_set(q).rows(q["id"]), params.get("unit") or "line").ids  # a row per query unit
    source_ids = [i for i, _ in _set(s).rows(s["id"])]  # indices are segments (a unit's first)
    out = root / "detections" / f"job-{context.id}.npz"
    tmp = out.with_suffix(".tmp.npz")
    np.savez(tmp, indices=indices, scores=scores, query_ids=np.array(query_ids), source_ids=np.array(source_ids))
    os.replace(tmp, out)
    digest = hashlib.sha256(indices.tobytes() + scores.tobytes()).hexdigest()
    workers: dict[str, int] = {}
    for r in results:
        workers[r["worker"]] = workers.get(r["worker"], 0) + 1
    context.log(f"merged {len(results)} shards from {len(workers)} worker process(es) into {out.name}")
    merged = {"file": str(out.relative_to(root)), "queries": len(indices), "k": int(params["k"]),
              "results": int((indices >= 0).sum()), "sha256": digest, "shards": len(results),
              "shards_per_worker": workers, **index_counts(results)}
    store = params.get("store")
    if store:
        cands = Candidates.concat([Candidates.from_arrays(p) for p in parts])
        if params.get("unit") == "sentence":  # two sentences starting on one segment, in two shards: once
            cands = _first_per_pair(cands)
        config, rr_config = method_configs(params)
        if rr_config:  # a reranker used outside what it learned from says so, in the job's log
            from detection.methods import registry
            from detection.methods.rerank.rerankers import card_check

            check = card_check(rr_config.name, dict(rr_config.params), config.name, list(cands.label),
                               dict(config.params), params.get("unit") or "line",
                               registry.get_spec(config.name).defaults())
            merged["warnings"], merged["reranker_check"] = check["warnings"], check  # the run's page shows both
            for w in merged["warnings"]:
                context.log(f"warning: {w}")
        merged.update(RESULT_STORES[store["name"]](context, params, cands, merged))
    shutil.rmtree(root / "detections" / f"job-{context.id}", ignore_errors=True)  # the parts are in the merge
    return merged


@sharded_job_kind(DETECT_KIND, plan=_plan, merge=_merge, queue="cpu",
                  description="Detect: top-k sources for every query of a segment set (optionally reranked), "
                              "in shards over the workers.")
def detect_shard(job, *, start: int, stop: int, parent_index: str | None = None, **params) -> dict:
    from detection.candidates import detect_range

    loaded, fresh = _load(params, job.log)
    pause_in_shard(job)  # test-only (unset in deployments): a test kills the worker here
    wants = bool(params.get("candidates") or params.get("store"))
    share = 0.6 if wants else 1.0
    explain, signals, names = None, None, ()
    if wants and hasattr(loaded.retriever, "search_explained"):  # candidates that say why (``channels``)
        res, channel_scores, side = loaded.retriever.search_explained(
            loaded.query_texts, int(params["k"]), start=int(start), stop=int(stop),
            progress=lambda f, m="": job.progress(share * f, m))
        if loaded.reranker is not None:  # the same scores as the signals a ranker learned from (search_signals)
            signals, names = loaded.retriever.as_signals(channel_scores, side), loaded.retriever.signal_names

        def explain(row: int, rank: int) -> dict:
            j = int(res.indices[row, rank])
            out = loaded.retriever.explain(row, j, channel_scores[row, rank], side)
            out["query_lines"] = list(loaded.queries.lines[int(start) + row])
            out["source_lines"] = list(loaded.sources.lines[j])
            return out
    else:
        res = loaded.retriever.search_range(loaded.query_texts, int(params["k"]), int(start), int(stop),
                                            progress=lambda f, m="": job.progress(share * f, m))
    # indices into the source segments: a unit's first segment (the same index for lines and windows)
    arrays = {"indices": np.where(res.indices >= 0, loaded.sources.first[np.maximum(res.indices, 0)], -1),
              "scores": res.scores}
    if wants:
        cands = detect_range(res.indices, res.scores, int(start), loaded.query_texts, loaded.source_ids,
                             loaded.source_texts, reranker=loaded.reranker, thresholds=params.get("thresholds"),
                             min_score=params.get("min_score"), query_ids=loaded.query_ids,
                             progress=lambda f, m="": job.progress(share + (1 - share) * f, m), explain=explain,
                             signals=signals, signal_names=names, first_stage=method_configs(params)[0].name)
        arrays.update(_on_segments(cands, loaded).to_arrays())
    parent_id, index = shard_slot(job)
    path = _out_dir(parent_id) / f"shard-{index}.npz"
    np.savez(path, **arrays)
    return {"file": str(path.relative_to(settings.VAR_DIR)), "rows": int(stop - start), "loaded": fresh,
            "index": loaded.index if fresh else "memory", "parent_index": parent_index,
            "worker": f"{job.job.worker}/{os.getpid()}"}

