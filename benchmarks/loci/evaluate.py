"""Evaluation driver: retrieval-only (Tables 2, 7, 8) and pairwise classification / retrieve-and-rerank
(Tables 3, 5, 12, Figures 5, 6, 12), per fold and per query, returning JSON-serialisable reports."""
from __future__ import annotations

import dataclasses
import subprocess
import time
import tracemalloc
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.numeric import json_safe, spearman
from detection.latin import overlap as lexical

from . import metrics as M
from .data import Benchmark
from .method_adapters import TrainData
from .splits import FoldPool, Split, table4

SCHEMA_RETRIEVAL = "similia.loci.retrieval/1"
SCHEMA_PAIRWISE = "similia.loci.pairwise/1"
TOP_LISTED = 10  # ranked sources kept per query in the per-query rows


def code_version() -> str | None:
    """``git describe --always --dirty`` of the repository, if available."""
    try:
        root = Path(__file__).resolve().parents[2]
        out = subprocess.run(["git", "-C", str(root), "describe", "--always", "--dirty"], capture_output=True,
                             text=True, timeout=5)
        return out.stdout.strip() or None
    except Exception:
        return None


def source_pool(bench: Benchmark, kind: str, fold_pools: list[FoldPool] | None = None) -> tuple[list[str], str]:
    """Source ids to rank against: ``gold`` (cited sources), ``gold+distractors`` (cited sources + every fold's
    source distractors), ``corpus`` (all source segments), ``auto`` (corpus when it holds more than the cited
    sources, else gold)."""
    cited = bench.cited_source_ids()
    if kind == "auto":
        kind = "corpus" if len(bench.sources) > len(set(cited)) else "gold"
    if kind == "gold":
        return list(dict.fromkeys(cited)), kind
    if kind == "gold+distractors":
        if fold_pools is None:
            raise ValueError("gold+distractors needs fold_pools")
        extra = [s for p in fold_pools for s in p.source_distractors]
        return list(dict.fromkeys(list(cited) + extra)), kind
    if kind == "corpus":
        return [s.seg_id for s in bench.sources], kind
    raise ValueError(f"unknown pool {kind!r}")


def _gold_arrays(bench: Benchmark, q_index: dict, s_index: dict):
    gq, gs, gc, links = [], [], [], []
    for g in bench.gold:
        if g.query_id in q_index and g.source_id in s_index:
            gq.append(q_index[g.query_id])
            gs.append(s_index[g.source_id])
            gc.append(M.CLASS_IDS[g.label])
            links.append(g)
    return np.asarray(gq, np.int64), np.asarray(gs, np.int64), np.asarray(gc, np.int8), links


def _per_query_metrics(hits, counts, ks):
    out = {}
    for view in M.VIEWS:
        for k in ks:
            out[(view, f"recall@{k}")] = M.recall_at_k(hits, counts[view], k, view)
            out[(view, f"mrr@{k}")] = M.mrr_at_k(hits, counts[view], k, view)
    return out


def _fold_summary(pq: dict, fold_rows: np.ndarray, folds: np.ndarray, n_folds: int):
    """Macro per fold, then mean ± std over folds, for every (view, metric)."""
    res = defaultdict(dict)
    per_fold = [defaultdict(dict) for _ in range(n_folds)]
    for (view, name), vals in pq.items():
        fvals = []
        for f in range(n_folds):
            v, n = M.macro(vals[folds == f])
            per_fold[f][view][name] = v
            per_fold[f][view]["n_queries"] = n
            fvals.append(v)
        res[view][name] = M.mean_std(fvals)
        allv, n_all = M.macro(vals)
        res[view][name]["all_queries"] = allv
        res[view]["n_queries"] = n_all
    return res, per_fold


@dataclass(frozen=True)
class RetrievalOptions:
    """How a retrieval evaluation is run and reported.

    ``ks``: cut-offs for Recall@k and MRR@k (the ranking depth is ``min(max(ks), pool size)``); ``pool``: see
    :func:`source_pool`; ``ties``: tie handling of :func:`metrics.retrieved_gold_classes`; ``seed``: recorded;
    ``per_query``: include per-query and per-pair rows; ``overlap``: the lexical-overlap audit of the gold pairs,
    overlap-bucket strata, the per-author-pair table and Spearman correlations (cheap); ``strata_ks``: the
    cut-offs of those sections.
    """

    ks: tuple = M.DEFAULT_KS
    pool: str = "auto"
    ties: str = "as_ranked"
    seed: int = 0
    per_query: bool = True
    overlap: bool = True
    strata_ks: tuple = (10, 100)


@dataclass
class Ranking:
    """Held-out queries ranked elsewhere (the shards of a sharded evaluation): ``indices``/``scores``
    (queries × depth, grid order, ``-1``/``-inf`` padding), the ranking's ``timing`` and the fitted method's
    ``describe()`` (the last part's, with every fold's tuning)."""

    indices: np.ndarray
    scores: np.ndarray
    method: dict
    timing: dict = dataclasses.field(default_factory=dict)


def evaluate_retrieval(bench: Benchmark, split: Split, method, options: RetrievalOptions | None = None, *,
                       fold_pools: list[FoldPool] | None = None, progress=None, benchmark_info: dict | None = None,
                       ranking: Ranking | None = None, **option_overrides) -> dict:
    """Retrieval-only evaluation: held-out citing queries of each fold ranked against a source pool.

    Args:
        bench: the benchmark (gold ids must be segment ids of ``bench``).
        split: query -> fold assignment (:mod:`benchmarks.loci.splits`).
        method: a retrieval method (:mod:`benchmarks.loci.method_adapters`); unsupervised methods are fitted once on the
            pool (identical in every fold) and searched once; supervised ones are fitted per fold on the other
            folds' links.
        options: a :class:`RetrievalOptions`; single fields may be given as keywords instead (``ks=(1, 10)``),
            an unknown one is a TypeError.
        fold_pools: needed for ``pool="gold+distractors"``.
        progress: optional ``fn(fraction, message)``.
        ranking: a :class:`Ranking` when the queries were already ranked (by :func:`rank_part` in the shards
            of a sharded job): its arrays, (queries × depth) in grid order, are used as they are.

    Returns:
        A JSON-serialisable dict (schema ``similia.loci.retrieval/1``): top-level pooled ``recall@K``/``mrr@K``
        (mean over folds), ``by_type`` (the same for ``cit.``/``cf.``), ``metrics`` (view -> metric -> mean, std,
        folds, all_queries), ``folds`` (per-fold macro values and sizes), ``per_query`` and ``per_pair`` rows,
        ``strata`` (by overlap bucket), ``author_pairs``, ``spearman``, ``audit``, ``timing``, and the run's
        identity (benchmark, split, method, pool, seed, code version, engine).
    """
    opts = dataclasses.replace(options or RetrievalOptions(), **option_overrides)
    ks, ties, strata_ks = opts.ks, opts.ties, opts.strata_ks
    t0 = time.perf_counter()
    prog = progress or (lambda f, m="": None)
    grid = retrieval_grid(bench, split, opts.pool, fold_pools, depth_wanted=max(ks))
    timing: dict = {}
    if ranking is None:
        indices, scores = _rank(grid, method, prog, timing)
        described = method.describe() if hasattr(method, "describe") else {"name": getattr(method, "name", "?")}
    else:  # ranked elsewhere (the shards of a sharded run): the arrays _rank would give, and their timing
        indices, scores, described = ranking.indices, ranking.scores, ranking.method
        if indices.shape != (len(grid.queries), grid.depth):
            raise ValueError(f"ranking of shape {indices.shape}, expected {(len(grid.queries), grid.depth)}")
        timing.update(ranking.timing)
    t = time.perf_counter()
    prog(0.75, "metrics")
    n_pool = len(grid.pool_ids)
    hits = M.retrieved_gold_classes(indices, grid.gq, grid.gs, grid.gc, n_pool, scores=scores, ties=ties)
    counts = M.gold_counts(grid.gq, grid.gc, len(grid.queries))
    pq = _per_query_metrics(hits, counts, ks)
    summary, per_fold = _fold_summary(pq, np.arange(len(grid.queries)), grid.qfold, split.n_folds)
    ranks = M.gold_ranks(indices, grid.gq, grid.gs, n_pool)
    timing["metrics_s"] = time.perf_counter() - t

    report = {
        "schema": SCHEMA_RETRIEVAL,
        "benchmark": benchmark_info or bench.summary(),
        "split": split.to_dict(),
        "method": described,
        "pool": {"kind": grid.pool_kind, "n_sources": n_pool, "n_queries": len(grid.queries), "depth": grid.depth,
                 "gold_links_outside_pool": grid.n_links_outside},
        "ks": list(ks), "ties": ties, "seed": opts.seed, "code_version": code_version(),
    }
    _summary_sections(report, summary, per_fold, grid, ks)
    if opts.per_query:
        _per_query_sections(report, grid, pq, M.mrr_at_k(hits, counts["all"], grid.depth), ranks, ks, indices, scores)
    if opts.overlap and grid.links:
        t = time.perf_counter()
        _overlap_sections(report, grid, indices, scores, ranks, strata_ks=strata_ks, ties=ties)
        timing["overlap_s"] = time.perf_counter() - t
    timing["total_s"] = time.perf_counter() - t0
    report["timing"] = timing
    prog(1.0, "done")
    return json_safe(report)


@dataclass
class _RetrievalGrid:
    """What a retrieval evaluation ranks and scores: the held-out queries (in fold order) with their folds, the
    source pool, and the gold links inside it as index arrays (query row, pool column, class id)."""

    bench: Benchmark
    split: Split
    queries: list[str]
    qfold: np.ndarray
    pool_ids: list[str]
    pool_kind: str
    gq: np.ndarray
    gs: np.ndarray
    gc: np.ndarray
    links: list
    n_links_outside: int
    depth: int
    qseg: dict
    sseg: dict

    @property
    def query_texts(self) -> list[str]:
        return [self.qseg[q].text for q in self.queries]

    @property
    def source_texts(self) -> list[str]:
        return [self.sseg[s].text for s in self.pool_ids]


def retrieval_grid(bench: Benchmark, split: Split, pool: str = "auto", fold_pools=None, *,
                   depth_wanted: int) -> _RetrievalGrid:
    """The held-out queries in fold order, the source pool and the gold links in it (what is ranked)."""
    pool_ids, pool_kind = source_pool(bench, pool, fold_pools)
    sseg = {s.seg_id: s for s in bench.sources}
    qseg = {s.seg_id: s for s in bench.queries}
    queries = [q for f in range(split.n_folds) for q in split.fold_queries(f) if q in qseg]
    q_index = {q: i for i, q in enumerate(queries)}
    s_index = {s: j for j, s in enumerate(pool_ids)}
    gq, gs, gc, links = _gold_arrays(bench, q_index, s_index)
    return _RetrievalGrid(
        bench, split, queries, np.asarray([split.query_fold[q] for q in queries], np.int64), pool_ids, pool_kind,
        gq, gs, gc, links, sum(1 for g in bench.gold if g.query_id in q_index and g.source_id not in s_index),
        int(min(depth_wanted, len(pool_ids))), qseg, sseg)


def _rank(grid: _RetrievalGrid, method, prog, timing: dict) -> tuple[np.ndarray, np.ndarray]:
    """(indices, scores) (queries x depth) of ``method``: fitted once on the pool when unsupervised, per fold on
    the other folds' links when supervised; ``-1``/``-inf`` padding."""
    n, depth = len(grid.queries), grid.depth
    indices = np.full((n, depth), -1, np.int32)
    scores = np.full((n, depth), -np.inf, np.float32)
    t = time.perf_counter()
    if not getattr(method, "supervised", False):
        prog(0.05, "fit")
        fit_pool(grid, method)
        timing["fit_s"] = time.perf_counter() - t
        t = time.perf_counter()
        prog(0.3, "search")
        rows, idx, sc = rank_part(grid, method, start=0, stop=n)
        place_rows(indices, scores, rows, idx, sc)
        timing["search_s"] = time.perf_counter() - t
        return indices, scores
    for f in range(grid.split.n_folds):
        prog(0.1 + 0.6 * f / grid.split.n_folds, f"fold {f}")
        place_rows(indices, scores, *rank_part(grid, method, fold=f))
    timing["fit_search_s"] = time.perf_counter() - t
    return indices, scores


def fit_pool(grid: _RetrievalGrid, method) -> None:
    """Fit an unsupervised method on the source pool (once; :func:`rank_part` then searches ranges of queries)."""
    method.fit(grid.pool_ids, grid.source_texts)


def rank_part(grid: _RetrievalGrid, method, *, start: int | None = None, stop: int | None = None,
              fold: int | None = None, units=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, indices, scores)`` of part of the grid's queries, the rows :func:`_rank` gives them.

    An unsupervised method, fitted on the pool (:func:`fit_pool`), searches queries ``start..stop-1`` with the
    whole query list's statistics (``search_range``); a supervised one ranks fold ``fold``: fitted here on the
    other folds' links only, then searching that fold's queries. Shards of a sharded evaluation are such parts.
    ``units``: the run's :class:`.unit_ranking.UnitPlan` when it searches other units than the segments (the
    method is fitted on the pool's units; hits are scored on the segments they cover).
    """
    from . import unit_ranking as U

    depth, queries, q_texts = grid.depth, grid.queries, grid.query_texts
    if fold is None:
        if units is not None:
            return U.rank_units(method, units, depth, start, stop)
        return rank_queries(method, queries, q_texts, depth, start, stop)
    bench, split = grid.bench, grid.split
    tr_links = [g for g in bench.gold if split.query_fold.get(g.query_id, -1) not in (fold, -1)]
    trq = list(dict.fromkeys(g.query_id for g in tr_links))
    trs = list(dict.fromkeys(g.source_id for g in tr_links))
    train = TrainData(trq, [grid.qseg[q].text for q in trq], trs, [grid.sseg[s].text for s in trs], tr_links,
                      fold=fold)
    rows = np.nonzero(grid.qfold == fold)[0]
    if units is not None:
        U.fit_units(method, units, train=train)
        return (rows, *U.search_rows(method, units, rows, depth))
    method.fit(grid.pool_ids, grid.source_texts, train=train)
    idx, sc = method.search([queries[i] for i in rows], [q_texts[i] for i in rows], depth)
    return rows, idx, sc


def rank_queries(method, queries: list[str], query_texts: list[str], depth: int, start: int,
                 stop: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, indices, scores)`` of queries ``start..stop-1`` for a method fitted on the pool, scored with the
    statistics of the whole query list (``search_range``): what a shard of an unsupervised method ranks."""
    rows = np.arange(start, stop)
    if (start == 0 and stop == len(queries)) or not hasattr(method, "search_range"):
        idx, sc = method.search(queries[start:stop], query_texts[start:stop], depth)
    else:
        idx, sc = method.search_range(queries, query_texts, depth, start, stop)
    return rows, idx, sc


def place_rows(indices, scores, rows, idx, sc) -> None:
    """Write a part's top lists (``rows`` of the grid) into the full ``indices``/``scores`` arrays."""
    depth = indices.shape[1]
    indices[rows, :idx.shape[1]] = idx[:, :depth]
    scores[rows, :sc.shape[1]] = sc[:, :depth]


def _summary_sections(report: dict, summary: dict, per_fold: list, grid: _RetrievalGrid, ks) -> None:
    """Pooled ``recall@K``/``mrr@K`` at the top level, ``by_type``, ``metrics`` and ``folds``."""
    for k in ks:
        report[f"recall@{k}"] = summary["all"][f"recall@{k}"]["mean"]
        report[f"mrr@{k}"] = summary["all"][f"mrr@{k}"]["mean"]
    report["by_type"] = {v: {**{f"recall@{k}": summary[v][f"recall@{k}"]["mean"] for k in ks},
                             **{f"mrr@{k}": summary[v][f"mrr@{k}"]["mean"] for k in ks},
                             "n_queries": summary[v]["n_queries"]} for v in ("cit.", "cf.")}
    report["metrics"] = summary
    qfold = grid.qfold
    report["folds"] = [{"fold": f, "n_queries": int((qfold == f).sum()),
                        "n_gold": int(np.isin(grid.gq, np.nonzero(qfold == f)[0]).sum()), "metrics": per_fold[f]}
                       for f in range(grid.split.n_folds)]


def _per_query_sections(report: dict, grid: _RetrievalGrid, pq: dict, rr_full, ranks, ks, indices=None,
                        scores=None) -> None:
    """``per_query`` (recall@k and reciprocal rank of each query) and ``per_pair`` (rank of each gold link)."""
    counts = M.gold_counts(grid.gq, grid.gc, len(grid.queries))
    rows = []
    for i, q in enumerate(grid.queries):
        row = {"query_id": q, "fold": int(grid.qfold[i]), "n_gold": int(counts["all"][i]),
               "n_cit": int(counts["cit."][i]), "n_cf": int(counts["cf."][i])}
        for k in ks:
            row[f"recall@{k}"] = pq[("all", f"recall@{k}")][i]
        row["rr"] = rr_full[i]
        if indices is not None:  # the head of the ranked list, so exports and the run page can show what was found
            row["top"] = [[grid.pool_ids[j], float(scores[i, r])] for r, j in enumerate(indices[i, :TOP_LISTED])
                          if j >= 0]
        rows.append(row)
    report["per_query"] = rows
    if indices is not None:  # the whole list to the depth, for the TREC export (stored apart from the report)
        report["ranked"] = {q: [[grid.pool_ids[j], float(scores[i, r])] for r, j in enumerate(indices[i]) if j >= 0]
                            for i, q in enumerate(grid.queries)}
    report["per_pair"] = [{"query_id": g.query_id, "source_id": g.source_id, "label": g.label,
                           "fold": int(grid.qfold[grid.gq[n]]), "rank": int(ranks[n]) or None}
                          for n, g in enumerate(grid.links)]


def _overlap_sections(report: dict, grid: _RetrievalGrid, indices, scores, ranks, *, strata_ks, ties) -> None:
    """The lexical-overlap audit of the gold pairs, every metric per overlap bucket, the per-author-pair table
    and the Spearman of shared lemmas vs correctness."""
    links, qseg, sseg = grid.links, grid.qseg, grid.sseg
    an_q = {q: lexical.analyse(qseg[q].text) for q in {g.query_id for g in links}}
    an_s = {s: lexical.analyse(sseg[s].text) for s in {g.source_id for g in links}}
    ov = [lexical.pair_overlap(an_q[g.query_id], an_s[g.source_id]) for g in links]
    shared = np.asarray([o["shared_lemmas"] for o in ov], np.float64)
    aud = lexical.audit([(an_q[g.query_id], an_s[g.source_id]) for g in links], [g.label for g in links])
    aud.pop("per_pair")
    report["audit"] = aud
    if "per_pair" in report:
        for row, o in zip(report["per_pair"], ov):
            row["shared_lemmas"], row["shared_bigrams"], row["bucket"] = (o["shared_lemmas"], o["shared_bigrams"],
                                                                          o["bucket"])
    buckets = np.asarray([o["bucket"] for o in ov])
    report["strata"] = {"overlap_bucket": _bucket_strata(grid, buckets, indices, scores, strata_ks, ties)}
    report["author_pairs"] = _author_pair_rows(grid, shared, ranks, strata_ks)
    gc = grid.gc
    sp = {}
    for k in strata_ks:
        hit = ((ranks > 0) & (ranks <= k)).astype(np.float64)
        sp[f"hit@{k}"] = {"all": spearman(shared, hit).as_dict(),
                          "cit.": spearman(shared[gc == 1], hit[gc == 1]).as_dict(),
                          "cf.": spearman(shared[gc == 2], hit[gc == 2]).as_dict()}
    report["spearman"] = sp


def _bucket_strata(grid: _RetrievalGrid, buckets, indices, scores, strata_ks, ties) -> dict:
    """Every metric restricted to the gold pairs of one overlap bucket."""
    gq, gs, gc = grid.gq, grid.gs, grid.gc
    strata = {}
    for b in lexical.BUCKETS:
        m = buckets == b
        if not m.any():
            strata[b] = {"n_pairs": 0}
            continue
        hits = M.retrieved_gold_classes(indices, gq[m], gs[m], gc[m], len(grid.pool_ids), scores=scores, ties=ties)
        counts = M.gold_counts(gq[m], gc[m], indices.shape[0])
        pq = {(v, f"recall@{k}"): M.recall_at_k(hits, counts[v], k, v) for v in M.VIEWS for k in strata_ks}
        summ, _ = _fold_summary(pq, None, grid.qfold, grid.split.n_folds)
        strata[b] = {"n_pairs": int(m.sum()), "n_cit": int((gc[m] == 1).sum()), "n_cf": int((gc[m] == 2).sum()),
                     **{v: {name: summ[v][name]["mean"] for name in summ[v] if name != "n_queries"}
                        for v in M.VIEWS}}
    return strata


def _author_pair_rows(grid: _RetrievalGrid, shared, ranks, strata_ks) -> list[dict]:
    """Per author pair (Table 5 shape, retrieval version): pair-level hit rate at k, by gold class."""
    links, qseg, sseg, gc = grid.links, grid.qseg, grid.sseg, grid.gc
    qa = np.asarray([qseg[g.query_id].author or qseg[g.query_id].work for g in links])
    sa = np.asarray([sseg[g.source_id].author or sseg[g.source_id].work for g in links])
    rows = []
    for a, b in sorted(set(zip(qa.tolist(), sa.tolist()))):
        m = (qa == a) & (sa == b)
        row = {"query_author": a, "source_author": b}
        for cname, cid in (("cit.", 1), ("cf.", 2)):
            mm = m & (gc == cid)
            r = ranks[mm]
            row[cname] = {"n": int(mm.sum()),
                          "mean_shared_lemmas": float(shared[mm].mean()) if mm.any() else None,
                          **{f"hit@{k}": (float(((r > 0) & (r <= k)).mean()) if mm.any() else None) for k in strata_ks}}
        rows.append(row)
    return rows


# ----------------------------------------------------------------------------------------------- pairwise
def evaluate_pairwise(bench: Benchmark, split: Split, fold_pools: list[FoldPool], *, scorer=None, retriever=None,
                      sweep_ks=M.SWEEP_KS, tol: float = 0.01, overlap: bool = True, progress=None,
                      keep_grids: bool = False) -> dict:
    """Classification and retrieve-and-rerank on the per-fold pairwise documents (Appendix C, F).

    For each fold, every query of the fold pool is scored against every source of the pool. With a ``scorer``,
    per-class thresholds are tuned with the plateau heuristic (:func:`metrics.plateau_threshold`, ``tol``) on
    the *other* folds' grids and frozen on the held-out fold; then per-class P/R/F1 (per query, macro; pooled),
    the 3-class confusion matrix, SMR/FPR/FNR (global and per-query) and, per author pair, support, mean shared
    lemmas and per-query macro F1 (Table 5); Spearman of shared lemmas vs per-pair correctness by gold class
    (Figure 6). With a ``retriever`` (a retrieval method), the depth sweep of Table 12: retrieval-only vs
    retrieve-and-rerank (if a scorer is given), with the passages to inspect.

    Returns:
        JSON-serialisable dict (schema ``similia.loci.pairwise/1``) with ``table4``, ``thresholds`` per fold,
        ``classification`` (per view: folds and mean ± std), ``confusion`` (summed and per fold),
        ``error_rates``, ``sweep`` (per k: ret/rer mean ± std over folds, and per fold), ``author_pairs``,
        ``spearman``, ``timing``.
    """
    t0 = time.perf_counter()
    prog = progress or (lambda f, m="": None)
    qseg = {s.seg_id: s for s in bench.queries}
    sseg = {s.seg_id: s for s in bench.sources}
    timing = defaultdict(float)
    grids = [_fold_grid(bench, p, qseg, sseg, scorer=scorer, retriever=retriever, sweep_ks=sweep_ks, overlap=overlap,
                        timing=timing, prog=lambda m, f=p.fold: prog(0.05 + 0.5 * f / max(len(fold_pools), 1), m),
                        split=split)
             for p in fold_pools]
    t = time.perf_counter()
    out = {"schema": SCHEMA_PAIRWISE, "benchmark": bench.summary(), "split": split.to_dict(),
           "table4": table4(fold_pools), "pool_notes": {p.fold: p.notes for p in fold_pools},
           "scorer": scorer.describe() if scorer is not None and hasattr(scorer, "describe") else None,
           "retriever": retriever.describe() if retriever is not None and hasattr(retriever, "describe") else None,
           "code_version": code_version(), "tol": tol}
    preds = [None] * len(grids)
    if scorer is not None:
        prog(0.6, "thresholds")
        typed = grids[0]["scores"].ndim == 3
        out["thresholds"], preds = _tune_thresholds(grids, typed, tol)
        out.update(_classification_sections(grids, preds, typed, bench, qseg, sseg, overlap))
    if retriever is not None:
        prog(0.85, "sweep")
        out["sweep"] = _depth_sweep_section(grids, preds, sweep_ks)
    timing["metrics_s"] = time.perf_counter() - t
    timing["total_s"] = time.perf_counter() - t0
    out["timing"] = dict(timing)
    if keep_grids:
        out["_grids"] = grids
        out["_preds"] = preds
        return out
    return json_safe(out)


def _fold_grid(bench: Benchmark, pool: FoldPool, qseg: dict, sseg: dict, *, scorer, retriever, sweep_ks, overlap,
               timing, prog, split: Split | None = None) -> dict:
    """One fold's pairwise document: the gold grid (queries x sources, class ids), the scorer's grid, the
    retriever's ranking and the shared-lemma counts, as asked."""
    prog(f"fold {pool.fold}: scoring")
    q_index = {q: i for i, q in enumerate(pool.queries)}
    s_index = {s: j for j, s in enumerate(pool.sources)}
    gq, gs, gc, links = _gold_arrays(bench, q_index, s_index)
    gold = np.zeros((len(pool.queries), len(pool.sources)), np.int8)
    gold[gq, gs] = gc
    g = {"pool": pool, "gold": gold, "gq": gq, "gs": gs, "gc": gc, "links": links}
    qt = [qseg[q].text for q in pool.queries]
    st = [sseg[s].text for s in pool.sources]
    if scorer is not None:
        t = time.perf_counter()
        g["scores"] = np.asarray(scorer.score_grid(pool.queries, qt, pool.sources, st), np.float64)
        timing["score_s"] += time.perf_counter() - t
    if retriever is not None:
        t = time.perf_counter()
        if split is not None and getattr(retriever, "fold_models", False):  # a model per fold: this fold's, never one that saw it
            retriever.use_fold(pool.fold, [q for q, f in split.query_fold.items() if f != pool.fold])
        retriever.fit(pool.sources, st)
        idx, _ = retriever.search(pool.queries, qt, min(max(sweep_ks), len(pool.sources)))
        g["indices"] = np.asarray(idx)
        timing["retrieve_s"] += time.perf_counter() - t
    if overlap:
        t = time.perf_counter()
        g["shared"] = lexical.shared_counts_grid(lexical.analyse_many(qt), lexical.analyse_many(st))
        timing["overlap_s"] += time.perf_counter() - t
    return g


def _tune_thresholds(grids: list[dict], typed: bool, tol: float) -> tuple[list[dict], list]:
    """Per fold: plateau thresholds tuned on the other folds' grids (per class when the scores are typed), and
    the held-out fold's decisions with them frozen."""
    thresholds, preds = [], []
    for f, g in enumerate(grids):
        train = [h for h in grids if h is not g]
        th = {}
        if typed:
            for cname, cid in (("cit.", 1), ("cf.", 2)):
                s = np.concatenate([h["scores"][..., cid].ravel() for h in train])
                y = np.concatenate([(h["gold"] == cid).ravel() for h in train])
                th[cname] = M.plateau_threshold(s, y, tol)
        else:
            s = np.concatenate([h["scores"].ravel() for h in train])
            y = np.concatenate([(h["gold"] > 0).ravel() for h in train])
            th["all"] = M.plateau_threshold(s, y, tol)
        thresholds.append({"fold": f, **th})
        preds.append(M.decide(g["scores"], {k: v["threshold"] for k, v in th.items()}))
    return thresholds, preds


def _depth_sweep_section(grids: list[dict], preds: list, sweep_ks) -> dict:
    """Table 12: per view and depth k, retrieval-only (and retrieve-and-rerank) P/R/F1, mean ± std over folds."""
    per_fold = [{v: M.depth_sweep(g["indices"], g["gq"], g["gs"], g["gc"], len(g["pool"].sources), sweep_ks,
                                  rerank_pred=preds[f], view=v) for v in M.VIEWS}
                for f, g in enumerate(grids)]
    sweep = {}
    for v in M.VIEWS:
        rows = []
        for i, k in enumerate(sweep_ks):
            row = {"k": k}
            for stage in ("ret", "rer"):
                if stage not in per_fold[0][v][i]:
                    continue
                row[stage] = {m: M.mean_std([pf[v][i][stage][m] for pf in per_fold]) for m in per_fold[0][v][i][stage]}
            rows.append(row)
        sweep[v] = rows
    return sweep


def _classification_sections(grids, preds, typed, bench, qseg, sseg, overlap):
    views = M.VIEWS if typed else ("all",)
    cls = {v: {"folds": []} for v in views}
    conf_total = np.zeros((3, 3), np.int64) if typed else np.zeros((4, 4), np.int64)
    confs, errs = [], []
    for f, g in enumerate(grids):
        gold, pred = g["gold"], preds[f]
        for v in views:
            pq = M.per_query_prf(pred, gold, v)
            cls[v]["folds"].append(M.prf_summary(pq))
        c = M.confusion_matrix(np.where(gold > 2, 1, gold) if typed else gold, pred, 3 if typed else 4)
        conf_total += c
        confs.append(c.tolist())
        pqa = M.per_query_prf(pred, gold, "all")
        errs.append(M.error_rates(pqa["fp"], pqa["fn"], gold.shape[1], query_mask=pqa["n_gold"] > 0))
    for v in views:
        fl = cls[v]["folds"]
        cls[v]["mean"] = {agg: {m: M.mean_std([x[agg][m] for x in fl]) for m in ("p", "r", "f1")}
                          for agg in ("macro_gold", "macro_all", "pooled")}
    er = {}
    for reading in ("global", "per_query_all", "per_query_gold"):
        er[reading] = {m: M.mean_std([e[reading][m] for e in errs]) for m in ("smr", "fpr", "fnr")}
    out = {"classification": cls, "confusion": {"total": conf_total.tolist(), "folds": confs,
                                                "labels": ["none", "cit.", "cf."] if typed else
                                                ["none", "cit.", "cf.", "link"]},
           "error_rates": {"folds": errs, "mean": er}}
    if overlap:
        # Table 5: per author pair and class, support, mean shared lemmas, per-query macro F1 inside the block
        rows = defaultdict(lambda: {"cit.": {"n": 0, "ov": [], "f1": []}, "cf.": {"n": 0, "ov": [], "f1": []}})
        corr = {"none": ([], []), "cit.": ([], []), "cf.": ([], [])}
        for f, g in enumerate(grids):
            p = g["pool"]
            qa = np.asarray([qseg[q].author for q in p.queries])
            sa = np.asarray([sseg[s].author for s in p.sources])
            gold, pred, shared = g["gold"], preds[f], g["shared"]
            for (cname, cid) in (("cit.", 1), ("cf.", 2)):
                for a in np.unique(qa):
                    for b in np.unique(sa):
                        rm, cm = qa == a, sa == b
                        blk_g, blk_p = gold[np.ix_(rm, cm)], pred[np.ix_(rm, cm)]
                        n = int((blk_g == cid).sum())
                        if not n:
                            continue
                        pq = M.per_query_prf(blk_p, blk_g, cname)
                        has = pq["n_gold"] > 0
                        r = rows[(a, b)][cname]
                        r["n"] += n
                        r["ov"].extend(shared[np.ix_(rm, cm)][blk_g == cid].tolist())
                        r["f1"].append(float(pq["f1"][has].mean()))
            correct = pred == gold
            for cname, cid in (("none", 0), ("cit.", 1), ("cf.", 2)):
                m = gold == cid
                corr[cname][0].append(shared[m].ravel())
                corr[cname][1].append(correct[m].ravel())
        out["author_pairs"] = [{"query_author": a, "source_author": b,
                                **{c: {"n": r[c]["n"],
                                       "mean_shared_lemmas": float(np.mean(r[c]["ov"])) if r[c]["ov"] else None,
                                       "f1": float(np.mean(r[c]["f1"])) if r[c]["f1"] else None}
                                   for c in ("cit.", "cf.")}}
                               for (a, b), r in sorted(rows.items())]
        out["spearman"] = {c: spearman(np.concatenate(x), np.concatenate(y)).as_dict()
                           for c, (x, y) in corr.items()}
    return out


def measure(fn, *args, **kw):
    """Run ``fn`` and return (result, seconds, peak traced MiB)."""
    tracemalloc.start()
    t = time.perf_counter()
    try:
        res = fn(*args, **kw)
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return res, time.perf_counter() - t, peak / 2 ** 20
