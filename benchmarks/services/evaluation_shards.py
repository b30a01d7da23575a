"""A Loci Similes evaluation run as a sharded job (``benchmarks.loci_evaluate``, ``jobs.sharding``).

The ranking of the held-out queries against the pool is what grows with the corpora, so that is what the
shards share: an unsupervised method's queries in ranges (``jobs.sharding.query_ranges``; ``search_range``
scores with the whole query list's statistics), a supervised method's whole folds (each fitted on the other
folds' links only, as in one process).

The pool is fitted **once per corpus and parameters**: the parent (which loads the benchmark anyway, to plan)
gets an unsupervised method's pool index from the shared index cache (``detection.pool_index``:
content-addressed by method, parameters and the pool's ids and texts, ``.npy`` arrays memory-mapped, never
pickled), fitting and storing it when no earlier job did. With more than one shard it writes the held-out
queries to ``VAR_DIR/evaluations/job-<parent>/queries.json`` and tells the shards the index's key. A shard on
the worker that planned uses what that process holds; a shard on another worker loads the cached index and the
queries (no benchmark from the database, no fit); a method that cannot be cached is fitted once per worker
process, as before.

Each worker process also keeps the run's loaded benchmark, split and grid (``_LOADED``, the last run only),
so the plan, the shards and the merge on one worker read the benchmark from the database once.

Each shard writes its rows' top lists to ``VAR_DIR/evaluations/job-<parent>/shard-<i>.npz``; the merge puts
them in grid order and hands them to ``runs.evaluation_run_execute``, which computes the metrics, the
pairwise and rerank sections and stores the report: the same report as a one-worker run
(``tests/benchmarks/test_sharded_evaluation.py``).
"""
from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from django.conf import settings

from benchmarks.models import EvaluationRun
from core.numeric import json_safe
from detection.pool_index import fit_or_load, index_counts, load_cached
from jobs.sharding import pause_in_shard, query_ranges, shard_slot


@dataclass
class _Loaded:
    """What one worker process holds for a run: the benchmark inputs (None when the shard loaded only the
    saved index) and the method fitted on the pool (None until fitted, or for a supervised method)."""

    key: str
    bench: object = None
    split: object = None
    grid: object = None
    queries: list[str] = field(default_factory=list)
    query_texts: list[str] = field(default_factory=list)
    depth: int = 0
    fitted: object = None
    index_key: str | None = None  # the pool index's key in the index cache, once fitted or loaded
    index_how: str | None = None  # "built" (fitted in this process) or "cache"
    fold_method: object = None  # a supervised method that keeps its encodings, shared by this process's folds
    units: object = None  # the run's unit plan (benchmarks.loci.unit_ranking.UnitPlan); None: the segments
    timings: dict = field(default_factory=dict)


_LOADED: dict[str, _Loaded] = {}  # per worker process: run key -> what it holds; the last run only


def _run(run_id: int) -> EvaluationRun:
    return EvaluationRun.objects.select_related("version__benchmark").get(pk=run_id)


def _run_key(run: EvaluationRun) -> str:
    """What decides the grid and the fitted method (ids alone repeat across throwaway test databases): the method
    as the run's stored configuration names it (its digest, checked), not the ``params`` column beside it."""
    from benchmarks.services.runs import run_pool

    return json.dumps([run.pk, run.created.isoformat(), run.version_id, run.method_config.digest, run_pool(run),
                       run.split, run.n_folds, run.seed, list(run.ks or ()), run.unit], sort_keys=True, default=str)


def _held(run: EvaluationRun) -> _Loaded:
    key = _run_key(run)
    if key not in _LOADED:
        _LOADED.clear()
        _LOADED[key] = _Loaded(key)
    return _LOADED[key]


def _with_inputs(run: EvaluationRun, log=None) -> _Loaded:
    """The run's benchmark, split and retrieval grid, read from the database once per worker process."""
    from benchmarks.loci import evaluate as E
    from benchmarks.services import runs

    held = _held(run)
    if held.grid is None:
        t = time.perf_counter()
        held.bench, held.split = runs.evaluation_benchmark(run)
        held.grid = E.retrieval_grid(held.bench, held.split, runs.run_pool(run),
                                     depth_wanted=max(run.ks or runs.DEFAULT_KS))
        held.queries, held.query_texts, held.depth = held.grid.queries, held.grid.query_texts, held.grid.depth
        if run.unit != "line":  # windows or sentences: over runs of consecutive lines of the corpora
            from benchmarks.loci.unit_ranking import unit_plan

            held.units = unit_plan(run.unit, pool_ids=held.grid.pool_ids, pool_texts=held.grid.source_texts,
                                   query_corpus_ids=[q.seg_id for q in held.bench.queries],
                                   query_corpus_texts=[q.text for q in held.bench.queries], queries=held.queries)
        held.timings["load_s"] = round(time.perf_counter() - t, 3)
        if log:
            log(f"pid {os.getpid()}: loaded the benchmark ({len(held.grid.pool_ids)} sources, "
                f"{len(held.queries)} held-out queries) in {held.timings['load_s']:.1f} s")
    return held


def _fit_pool(run: EvaluationRun, held: _Loaded, log=None):
    """The run's method fitted on the pool, once per worker process: from the index cache when a job over the
    same pool and parameters stored it, else fitted here (and stored)."""
    from benchmarks.services import runs

    if held.fitted is None:
        _with_inputs(run, log)
        method = runs.retrieval_method(run)
        units = held.units  # fitted on the pool's units (their texts key the cached index)
        ids, texts = (units.pool_ids, units.pool_texts) if units else (held.grid.pool_ids, held.grid.source_texts)
        held.index_key, held.index_how, took = fit_or_load(method, run.method_config, ids, texts, log=log)
        held.fitted = method
        held.timings["fit_s" if held.index_how == "built" else "index_load_s"] = round(took, 3)
    return held.fitted


def _queries_file(job_id: int) -> Path:
    """Where the parent writes a run's held-out queries for its shards: named by the job, never by a user."""
    return Path(settings.VAR_DIR) / "evaluations" / f"job-{job_id}" / "queries.json"


def evaluation_plan(params: dict, log) -> list[dict]:
    """The shards of a run: ranges of its held-out queries, or for a supervised method groups of whole folds;
    ``shards`` of them when the job's params say, else one per ``JOB_SHARD_QUERIES`` queries.

    With more than one shard of an unsupervised method, the pool index is made ready here (from the cache, or
    fitted and stored) and the shards are told its key (``index_key``: they load it rather than fit)."""
    from benchmarks.services import runs

    run = _run(params["run_id"])
    held = _with_inputs(run, log)
    grid = held.grid
    if runs.retrieval_method(run).supervised:
        folds = [f for f in range(grid.split.n_folds) if (grid.qfold == f).any()]
        n = params.get("shards") or -(-len(grid.queries) // settings.JOB_SHARD_QUERIES)
        return [{"folds": folds[r["start"]:r["stop"]]} for r in query_ranges(len(folds), shards=n)]
    plan = query_ranges(len(grid.queries), shards=params.get("shards"))
    if len(plan) > 1:
        _fit_pool(run, held, log)
        path = _queries_file(run.job_id)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"key": held.key, "depth": held.depth, "queries": held.queries,
                                        "query_texts": held.query_texts,
                                        "units": held.units.to_json() if held.units else None}))
        except OSError as exc:  # e.g. a full disk: the shards read the benchmark themselves
            log(f"could not write the queries for the shards ({exc})")
            return plan
        plan = [{**p, "index_key": held.index_key, "parent_index": held.index_how} for p in plan]
    return plan


def _from_cache(run: EvaluationRun, held: _Loaded, index_key: str) -> bool:
    """Load the pool index the plan named and the queries it wrote (no benchmark, no fit); False when either is
    missing or belongs to another run."""
    from benchmarks.services import runs

    try:
        meta = json.loads(_queries_file(run.job_id).read_text())
    except (OSError, ValueError):
        return False
    if meta.get("key") != held.key:
        return False
    t = time.perf_counter()
    method = runs.retrieval_method(run)
    if not load_cached(method, index_key):
        return False
    held.fitted, held.queries, held.query_texts, held.depth = method, meta["queries"], meta["query_texts"], \
        int(meta["depth"])
    if meta.get("units"):
        from benchmarks.loci.unit_ranking import UnitPlan

        held.units = UnitPlan.from_json(meta["units"])
    held.index_key, held.index_how = index_key, "cache"
    held.timings["index_load_s"] = round(time.perf_counter() - t, 3)
    return True


def evaluation_shard(job, *, run_id: int, start: int | None = None, stop: int | None = None,
                     folds: list[int] | None = None, shards: int | None = None, index_key: str | None = None,
                     parent_index: str | None = None) -> dict:
    """Rank one part of the run's held-out queries. An unsupervised method uses the pool index this worker
    holds, else the cached one the plan named (``index_key``), else gets it here (from the cache or fitted,
    once per worker process); a supervised one is fitted per fold on the other folds' links."""
    from benchmarks.loci import evaluate as E

    run = _run(run_id)
    t0 = time.perf_counter()
    held = _held(run)
    if folds is not None:
        index = "per fold"
        _with_inputs(run, job.log)
    elif held.fitted is not None:
        index = "memory"
    elif index_key and _from_cache(run, held, index_key):
        index = "cache"
    else:
        job.progress(0.05, f"fitting {run.method} on the pool (or loading it from the index cache)")
        _fit_pool(run, held, job.log)
        index = held.index_how or "built"
    ready_s = time.perf_counter() - t0
    pause_in_shard(job)  # test-only (unset in deployments)
    if folds is None:
        job.progress(0.3, f"searching queries {start}–{stop - 1}")
        if held.units is not None:
            from benchmarks.loci.unit_ranking import rank_units

            parts = [rank_units(held.fitted, held.units, held.depth, start, stop)]
        else:
            parts = [E.rank_queries(held.fitted, held.queries, held.query_texts, held.depth, start, stop)]
        method = held.fitted
        tunings = []
    else:
        from benchmarks.services import runs

        method = held.fold_method or runs.retrieval_method(run)
        if method.keeps_encodings:  # a bi-encoder per fold: the merge here reuses what it encoded
            held.fold_method = method
        parts = []
        for i, fold in enumerate(folds):
            job.progress(0.1 + 0.8 * i / len(folds), f"fold {fold}: fitting and searching")
            parts.append(E.rank_part(held.grid, method, fold=fold, units=held.units))
        tunings = list(method.tunings[-len(folds):])
    rows, idx, sc = (np.concatenate([p[i] for p in parts]) for i in range(3))
    parent_id, shard_index = shard_slot(job)
    folder = Path(settings.VAR_DIR) / "evaluations" / f"job-{parent_id}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"shard-{shard_index}.npz"
    np.savez(path, rows=rows, indices=idx, scores=sc)
    search_s = time.perf_counter() - t0 - ready_s
    job.log(f"pid {os.getpid()}: ranked {len(rows)} queries in {search_s:.2f} s (pool index: {index}, "
            f"ready in {ready_s:.2f} s)")
    return {"file": str(path.relative_to(settings.VAR_DIR)), "rows": len(rows), "index": index,
            "parent_index": parent_index, "fit_s": round(ready_s, 3), "search_s": round(search_s, 3),
            "method": json_safe(method.describe()), "tunings": tunings, "worker": f"{job.job.worker}/{os.getpid()}"}


def evaluation_merge(context, params: dict, results: list[dict]) -> dict:
    """The shards' top lists in grid order, then the report (metrics, pairwise, rerank) of the run."""
    from benchmarks.loci import evaluate as E
    from benchmarks.services import runs

    run = _run(params["run_id"])
    root = Path(settings.VAR_DIR)
    parts = [np.load(root / r["file"]) for r in results]
    n = sum(len(p["rows"]) for p in parts)
    depth = parts[0]["indices"].shape[1] if n else 0
    indices = np.full((n, depth), -1, np.int32)
    scores = np.full((n, depth), -np.inf, np.float32)
    for p in parts:
        E.place_rows(indices, scores, p["rows"], p["indices"], p["scores"])
    workers = {r["worker"] for r in results}
    context.log(f"merged the rankings of {len(results)} shards from {len(workers)} worker process(es)")
    timing = {"shards": len(results), "workers": len(workers), "fit_s": sum(r["fit_s"] for r in results),
              "search_s": sum(r["search_s"] for r in results)}
    described = dict(results[-1]["method"])  # the last part's fit (a per-fold method: the last fold's model)
    tunings = [t for r in results for t in r["tunings"]]
    if tunings:
        described["tuning_per_fold"] = tunings
    held = _LOADED.get(_run_key(run))
    benchmark = (held.bench, held.split) if held is not None and held.bench is not None else None
    ranked_here = (held.fitted or held.fold_method) if held is not None else None
    t = time.perf_counter()
    out = runs.evaluation_run_execute(run=run, progress=context.progress, log=context.log,
                                      ranking=E.Ranking(indices, scores, described, timing), benchmark=benchmark,
                                      method=ranked_here)
    report_s = time.perf_counter() - t
    _LOADED.clear()  # the run is stored: free what this worker held for it
    shutil.rmtree(root / "evaluations" / f"job-{context.id}", ignore_errors=True)
    return {**out, "shards": len(results), "shards_per_worker": {w: sum(r["worker"] == w for r in results)
                                                                 for w in workers},
            **index_counts(results), "merge_benchmark_reused": benchmark is not None,
            "merge_report_s": round(report_s, 3)}
