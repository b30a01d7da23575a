"""A Loci Similes evaluation run as a sharded job (``benchmarks.loci_evaluate``, ``jobs.sharding``).

The ranking of the held-out queries against the pool is what grows with the corpora, so that is what the
shards share: an unsupervised method's queries in ranges (``jobs.sharding.query_ranges``; each worker fits
the pool once and keeps it, and ``search_range`` scores with the whole query list's statistics), a supervised
method's whole folds (each fitted on the other folds' links only, as in one process). Each shard writes its
rows' top lists to ``VAR_DIR/evaluations/job-<parent>/shard-<i>.npz``; the merge puts them in grid order and
hands them to ``runs.evaluation_run_execute``, which computes the metrics, the pairwise and rerank sections
and stores the report: the same report as a one-worker run (``tests/benchmarks/test_sharded_evaluation.py``).
"""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import numpy as np
from django.conf import settings

from benchmarks.models import EvaluationRun
from core.numeric import json_safe
from jobs.sharding import query_ranges, shard_slot

_LOADED: dict = {}  # per worker process: the run's identity -> (grid, method); the last one only


def _run(run_id: int) -> EvaluationRun:
    return EvaluationRun.objects.select_related("version__benchmark").get(pk=run_id)


def _grid_and_method(run: EvaluationRun):
    from benchmarks.loci import evaluate as E
    from benchmarks.services import runs

    bench, split, method = runs.evaluation_inputs(run)
    grid = E.retrieval_grid(bench, split, runs.run_pool(run), depth_wanted=max(run.ks or runs.DEFAULT_KS))
    return grid, method


def evaluation_plan(params: dict) -> list[dict]:
    """The shards of a run: ranges of its held-out queries, or for a supervised method groups of whole folds;
    ``shards`` of them when the job's params say, else one per ``JOB_SHARD_QUERIES`` queries."""
    run = _run(params["run_id"])
    grid, method = _grid_and_method(run)
    if not getattr(method, "supervised", False):
        return query_ranges(len(grid.queries), shards=params.get("shards"))
    folds = [f for f in range(grid.split.n_folds) if (grid.qfold == f).any()]
    n = params.get("shards") or -(-len(grid.queries) // settings.JOB_SHARD_QUERIES)
    return [{"folds": folds[r["start"]:r["stop"]]} for r in query_ranges(len(folds), shards=n)]


def evaluation_shard(job, *, run_id: int, start: int | None = None, stop: int | None = None,
                     folds: list[int] | None = None, shards: int | None = None) -> dict:
    """Rank one part of the run's held-out queries; an unsupervised method is fitted on the pool once per
    worker process and kept, a supervised one per fold on the other folds' links."""
    from benchmarks.loci import evaluate as E
    from benchmarks.services.runs import run_pool

    run = _run(run_id)
    t0 = time.perf_counter()
    # what decides the grid and the fitted method (ids alone repeat across throwaway test databases)
    key = (run_id, run.created, run.version_id, run.method, repr(run.params), run_pool(run), run.split, run.n_folds,
           run.seed, tuple(run.ks or ()), folds is None)
    fresh = key not in _LOADED
    if fresh:
        _LOADED.clear()
        job.progress(0.02, "loading the benchmark")
        grid, method = _grid_and_method(run)
        if folds is None:
            job.progress(0.05, f"fitting {run.method} on {len(grid.pool_ids)} sources")
            E.fit_pool(grid, method)
        _LOADED[key] = (grid, method)
    grid, method = _LOADED[key]
    fit_s = time.perf_counter() - t0
    if folds is None:
        job.progress(0.3, f"searching queries {start}–{stop - 1}")
        parts = [E.rank_part(grid, method, start=start, stop=stop)]
    else:
        parts = []
        for i, fold in enumerate(folds):
            job.progress(0.1 + 0.8 * i / len(folds), f"fold {fold}: fitting and searching")
            parts.append(E.rank_part(grid, method, fold=fold))
    rows, idx, sc = (np.concatenate([p[i] for p in parts]) for i in range(3))
    parent_id, index = shard_slot(job)
    folder = Path(settings.VAR_DIR) / "evaluations" / f"job-{parent_id}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"shard-{index}.npz"
    np.savez(path, rows=rows, indices=idx, scores=sc)
    job.log(f"pid {os.getpid()}: ranked {len(rows)} queries" + (" (pool fitted here)" if fresh else ""))
    return {"file": str(path.relative_to(settings.VAR_DIR)), "rows": len(rows), "loaded": fresh,
            "fit_s": round(fit_s, 3), "search_s": round(time.perf_counter() - t0 - fit_s, 3),
            "method": json_safe(method.describe()), "tunings": list(method.tunings[-len(folds):]) if folds else [],
            "worker": f"{job.job.worker}/{os.getpid()}"}


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
        E._place(indices, scores, p["rows"], p["indices"], p["scores"])
    workers = {r["worker"] for r in results}
    context.log(f"merged the rankings of {len(results)} shards from {len(workers)} worker process(es)")
    timing = {"shards": len(results), "workers": len(workers), "fit_s": sum(r["fit_s"] for r in results),
              "search_s": sum(r["search_s"] for r in results)}
    described = dict(results[-1]["method"])  # the last part's fit (a per-fold method: the last fold's model)
    tunings = [t for r in results for t in r["tunings"]]
    if tunings:
        described["tuning_per_fold"] = tunings
    out = runs.evaluation_run_execute(run=run, progress=context.progress, log=context.log,
                                      ranking=E.Ranking(indices, scores, described, timing))
    shutil.rmtree(root / "evaluations" / f"job-{context.id}", ignore_errors=True)
    return {**out, "shards": len(results), "shards_per_worker": {w: sum(r["worker"] == w for r in results)
                                                                 for w in workers},
            "index_loads": sum(bool(r["loaded"]) for r in results)}
