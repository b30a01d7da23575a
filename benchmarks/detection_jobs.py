"""The sharded detection job: every query segment of one corpus against every source segment of another.

``benchmarks.detect`` fans out into shards of consecutive queries (``jobs.sharding``); each shard returns
the top-k of its queries, written to a file under ``VAR_DIR/detections/``; the merge concatenates the
shards in order into ``job-<id>.npz`` (``indices``, ``scores``, ``query_ids``, ``source_ids``). Row i of the
merged file equals row i of the retriever's ``search`` over the whole query corpus, however many shards
and workers ran: shards score with the whole corpus's statistics (``Retriever.search_range``).

A worker process keeps the last fitted index (the source corpus, method and parameters) and the query
texts it loaded: the shards of one job that land on the same worker load them once.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np
from django.conf import settings

from jobs.sharding import sharded_job_kind

DETECT_KIND = "benchmarks.detect"

_LOADED: dict = {}  # per worker process: key -> (retriever, query ids, query texts); the last one only


def _plan(params: dict) -> list[dict]:
    from benchmarks.selectors import segments_of

    n = segments_of(corpus_id=params["query_corpus_id"]).count()
    size = max(1, int(params.get("shard_size") or n or 1))
    return [{"start": a, "stop": min(a + size, n)} for a in range(0, n, size)]


def _fingerprint(corpus_id: int) -> tuple:
    """What tells a corpus apart from an earlier state of it: id, creation time, segment count, last id."""
    from django.db.models import Count, Max

    from benchmarks.models import Corpus

    row = Corpus.objects.filter(pk=corpus_id).annotate(n=Count("segments"), last=Max("segments__id")).values_list(
        "created", "n", "last").first()
    return (corpus_id, *(row or ()))


def _load(query_corpus_id: int, source_corpus_id: int, method: str, params: dict, log) -> tuple:
    """The fitted retriever and the query segments, built once per worker process (and kept)."""
    from benchmarks.selectors import segments_of
    from detection.latin.lemmatize import default_cache_dir
    from detection.methods import registry

    key = (_fingerprint(query_corpus_id), _fingerprint(source_corpus_id), method, json.dumps(params, sort_keys=True))
    if key in _LOADED:
        return _LOADED[key], False
    _LOADED.clear()
    started = time.monotonic()
    sources = list(segments_of(corpus_id=source_corpus_id).values_list("seg_id", "text"))
    queries = list(segments_of(corpus_id=query_corpus_id).values_list("seg_id", "text"))
    internal = {"cache_dir": str(default_cache_dir())} if "cache_dir" in registry.get_spec(method).internal else {}
    retriever = registry.build(method, params, **internal)
    retriever.fit([s for s, _ in sources], [t for _, t in sources])
    _LOADED[key] = (retriever, [q for q, _ in queries], [t for _, t in queries])
    log(f"pid {os.getpid()}: loaded {len(sources)} sources and {len(queries)} queries, index {method} built "
        f"in {time.monotonic() - started:.1f} s")
    return _LOADED[key], True


def _out_dir(parent_id: int) -> Path:
    folder = Path(settings.VAR_DIR) / "detections" / f"job-{parent_id}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _merge(context, params: dict, results: list[dict]) -> dict:
    root = Path(settings.VAR_DIR)
    parts = [np.load(root / r["file"]) for r in results]
    indices = np.concatenate([p["indices"] for p in parts])
    scores = np.concatenate([p["scores"] for p in parts])
    from benchmarks.selectors import segments_of

    query_ids = list(segments_of(corpus_id=params["query_corpus_id"]).values_list("seg_id", flat=True))
    source_ids = list(segments_of(corpus_id=params["source_corpus_id"]).values_list("seg_id", flat=True))
    out = root / "detections" / f"job-{context.id}.npz"
    tmp = out.with_suffix(".tmp.npz")
    np.savez(tmp, indices=indices, scores=scores, query_ids=np.array(query_ids),
             source_ids=np.array(source_ids))
    os.replace(tmp, out)
    digest = hashlib.sha256(indices.tobytes() + scores.tobytes()).hexdigest()
    workers: dict[str, int] = {}
    for r in results:
        workers[r["worker"]] = workers.get(r["worker"], 0) + 1
    context.log(f"merged {len(results)} shards from {len(workers)} worker process(es) into {out.name}")
    return {"file": str(out.relative_to(root)), "queries": len(indices), "k": int(params["k"]),
            "results": int((indices >= 0).sum()), "sha256": digest, "shards": len(results),
            "shards_per_worker": workers, "index_loads": sum(bool(r["loaded"]) for r in results)}


@sharded_job_kind(DETECT_KIND, plan=_plan, merge=_merge, queue="cpu",
                  description="Detect: top-k sources for every query of a corpus, in shards over the workers.")
def detect_shard(job, *, query_corpus_id: int, source_corpus_id: int, method: str, params: dict, k: int,
                 start: int, stop: int, shard_size: int | None = None) -> dict:
    (retriever, _, query_texts), loaded = _load(query_corpus_id, source_corpus_id, method, params, job.log)
    pause = os.environ.get(PAUSE_IN_SHARD_ENV)
    if pause:  # test-only: hold the shard (running, heartbeat on) so a test can kill its worker here
        job.log(f"{PAUSE_IN_SHARD_ENV}={pause}: pausing in the shard")
        time.sleep(float(pause))
    res = retriever.search_range(query_texts, int(k), int(start), int(stop),
                                 progress=lambda f, m="": job.progress(f, m))
    path = _out_dir(job.parent_id) / f"shard-{job.job.shard_index}.npz"
    np.savez(path, indices=res.indices, scores=res.scores)
    return {"file": str(path.relative_to(settings.VAR_DIR)), "rows": int(stop - start), "loaded": loaded,
            "worker": f"{job.job.worker}/{os.getpid()}"}


#: Test-only: seconds a shard sleeps after loading and before scoring. Unset in every real deployment.
PAUSE_IN_SHARD_ENV = "SIMILIA_TEST_PAUSE_IN_SHARD"
