"""Retrieve-and-rerank on the Loci Similes folds (seed 000 §4.2, §5.3, Tables 2/8/12, Appendices H, I).

Per fold f: the first stage ranks the whole source pool for every query (an unsupervised retriever is fitted
once on the pool); the reranker is trained on the top-k candidates of the *other* folds' queries (labels from
their gold) and scores the held-out fold's candidates; thresholds are tuned on the training folds only and
frozen. Reported beside the first stage alone: Recall@k and MRR@k (pooled and per type, per query → macro per
fold → mean ± std), P/R/F1 per class with the plateau thresholds (pooled over the fold's pairs; gold pairs that
were not retrieved count as misses), and the depth sweep of Table 12 with the passages to inspect.
Every fold records the queries its reranker trained on and the report says how many of them are held-out
queries of that fold (``leaked_queries``: always 0 when the reranker was trained here).
"""
from __future__ import annotations

import time

import numpy as np

from core.numeric import json_safe as _clean
from detection.methods.rerank import pipeline as P
from detection.methods.rerank.thresholds import decide

from . import metrics as M
from .data import Benchmark
from .evaluate import (
    _fold_summary,
    _gold_arrays,
    _per_query_metrics,
    code_version,
    source_pool,
)
from .splits import Split

SCHEMA = "similia.loci.rerank/1"
RERANK_SWEEP_KS = (1, 5, 10, 20, 50, 100)
_CLASS = {"cit.": 1, "cf.": 2, "link": 1}


def gold_classes(bench: Benchmark) -> dict[tuple[str, str], int]:
    """{(query, source): 1 cit. / 2 cf.} (a link of unknown type counts as cit.)."""
    return {(g.query_id, g.source_id): _CLASS.get(g.label, 1) for g in bench.gold}


def _fold_reranker(reranker_name: str, params: dict, fold: int, shared: dict):
    """The reranker for one fold: a fresh instance sharing the fitted featurizer; a stored model laid out per fold
    (``<model>/fold-<f>``) gives that fold's model."""
    from detection.methods import model_store, registry

    spec = registry.get_spec(reranker_name)
    p = dict(params)
    if p.get("model"):
        per_fold = f"{p['model']}/fold-{fold}"
        if model_store.local_path(per_fold) is not None:
            p["model"] = per_fold
    internal = {k: v for k, v in shared.items() if k in spec.internal}
    return spec.build(p, **internal)


def evaluate_rerank(bench: Benchmark, split: Split, retriever, reranker_name: str, reranker_params: dict | None = None,
                    *, k: int = 100, ks=(1, 5, 10, 20, 50, 100), sweep_ks=RERANK_SWEEP_KS, pool: str = "auto",
                    cache_dir=None, progress=None, benchmark_info: dict | None = None) -> dict:
    """Evaluate ``retriever`` (a :mod:`benchmarks.loci.method_adapters` retrieval method) followed by the registered
    reranker ``reranker_name`` on held-out folds.

    Returns:
        JSON-safe dict (schema ``similia.loci.rerank/1``): ``retrieval`` and ``rerank`` (``recall@K``/``mrr@K``
        pooled, ``by_type``, ``metrics`` with mean ± std), ``classification`` (per class P/R/F1 per fold and
        mean ± std), ``thresholds`` per fold, ``sweep`` (Table 12 per view), ``folds`` (training/held-out query
        counts, leaked queries), ``timing``.
    """
    t0 = time.perf_counter()
    prog = progress or (lambda f, m="": None)
    params = dict(reranker_params or {})
    timing = {}
    pool_ids, pool_kind = source_pool(bench, pool)
    sseg = {s.seg_id: s for s in bench.sources}
    qseg = {s.seg_id: s for s in bench.queries}
    queries = [q for f in range(split.n_folds) for q in split.fold_queries(f) if q in qseg]
    qfold = np.asarray([split.query_fold[q] for q in queries], np.int64)
    q_texts = [qseg[q].text for q in queries]
    s_texts = [sseg[s].text for s in pool_ids]
    depth = int(min(k, len(pool_ids)))
    t = time.perf_counter()
    prog(0.02, f"retrieval: fitting {getattr(retriever, 'name', '?')} on {len(pool_ids)} sources")
    retriever.fit(pool_ids, s_texts)
    idx, sc = retriever.search(queries, q_texts, depth)
    cands = P.from_topk(queries, q_texts, pool_ids, s_texts, np.asarray(idx), np.asarray(sc))
    timing["retrieve_s"] = time.perf_counter() - t
    gold = gold_classes(bench)
    y = cands.labels(gold)
    shared = {"cache_dir": cache_dir}
    t = time.perf_counter()
    prog(0.2, f"features of {len(cands)} candidate pairs")
    first = _fold_reranker(reranker_name, params, 0, shared)
    X = None
    if hasattr(first, "prepare"):
        if getattr(first, "featurizer", None) is None:
            first.prepare(s_texts)
        shared["featurizer"] = first.featurizer if hasattr(first, "featurizer") else first._inner.featurizer
        X = first.features(cands)
    timing["features_s"] = time.perf_counter() - t
    probs = np.zeros((len(cands), 3))
    labels_pred = np.zeros(len(cands), np.int8)
    fold_rows, thresholds = [], []
    t = time.perf_counter()
    cand_fold = qfold[cands.qi]
    for f in range(split.n_folds):
        prog(0.3 + 0.5 * f / split.n_folds, f"fold {f}: training and reranking")
        test = np.nonzero(cand_fold == f)[0]
        train = np.nonzero(cand_fold != f)[0]
        rr = first if f == 0 else _fold_reranker(reranker_name, params, f, shared)
        # a stored model is used as it is, with the thresholds its training job tuned on its training folds
        trained_here = not params.get("model")
        tr_c = cands.subset(train)
        kw = {"gold": {key: c for key, c in gold.items() if split.query_fold.get(key[0], -1) != f}}
        if X is not None:
            kw["X"] = X[train]
        if trained_here:
            rr.fit(tr_c, y[train], **kw)
        te_c = cands.subset(test)
        probs[test] = rr.predict_proba(te_c, **({"X": X[test]} if X is not None else {}))
        labels_pred[test] = decide(probs[test], rr.thresholds)
        held_out = set(split.fold_queries(f))
        thresholds.append({"fold": f, **{c: rr.thresholds[c] for c in ("cit.", "cf.")}})
        fold_rows.append({"fold": f, "n_queries": int((qfold == f).sum()),
                          "n_train_queries": len(rr.training_queries), "n_train_pairs": int(train.size),
                          "n_test_pairs": int(test.size),
                          "leaked_queries": len(rr.training_queries & held_out)})
    timing["rerank_s"] = time.perf_counter() - t
    prog(0.85, "metrics")
    report = {"schema": SCHEMA, "benchmark": benchmark_info or bench.summary(), "split": split.to_dict(),
              "retriever": retriever.describe() if hasattr(retriever, "describe") else {"name": "?"},
              "reranker": {"name": reranker_name, "params": params},
              "pool": {"kind": pool_kind, "n_sources": len(pool_ids), "n_queries": len(queries), "depth": depth},
              "ks": list(ks), "code_version": code_version(), "folds": fold_rows, "thresholds": thresholds}
    q_index = {q: i for i, q in enumerate(queries)}
    s_index = {s: j for j, s in enumerate(pool_ids)}
    gq, gs, gc, _ = _gold_arrays(bench, q_index, s_index)
    counts = M.gold_counts(gq, gc, len(queries))
    rer_idx, _rer_sc = P.reranked_topk(cands, probs, len(queries))
    ks = [kk for kk in ks if kk <= depth]
    for stage, ind in (("retrieval", np.asarray(idx)), ("rerank", rer_idx)):
        hits = M.retrieved_gold_classes(ind, gq, gs, gc, len(pool_ids))
        summary, _ = _fold_summary(_per_query_metrics(hits, counts, ks), None, qfold, split.n_folds)
        report[stage] = {**{f"recall@{kk}": summary["all"][f"recall@{kk}"]["mean"] for kk in ks},
                         **{f"mrr@{kk}": summary["all"][f"mrr@{kk}"]["mean"] for kk in ks},
                         "by_type": {v: {**{f"recall@{kk}": summary[v][f"recall@{kk}"]["mean"] for kk in ks},
                                         **{f"mrr@{kk}": summary[v][f"mrr@{kk}"]["mean"] for kk in ks}}
                                     for v in ("cit.", "cf.")},
                         "metrics": summary}
    report["classification"] = _classification(cands, y, labels_pred, gold, split, queries, qfold, cand_fold)
    report["sweep"] = _sweep(cands, labels_pred, gold, split, cand_fold, [s for s in sweep_ks if s <= depth] or [depth])
    timing["total_s"] = time.perf_counter() - t0
    report["timing"] = timing
    prog(1.0, "done")
    return _clean(report)


def _classification(cands, y, pred, gold, split, queries, qfold, cand_fold) -> dict:
    out = {}
    for view, cid in (("all", None), ("cit.", 1), ("cf.", 2)):
        folds = []
        for f in range(split.n_folds):
            rows = cand_fold == f
            qs = {queries[i] for i in np.nonzero(qfold == f)[0]}
            n_gold = sum(1 for (q, _), c in gold.items() if q in qs and (cid is None or c == cid))
            if cid is None:
                tp = int(((pred > 0) & (y > 0) & rows).sum())
                npred = int(((pred > 0) & rows).sum())
            else:
                tp = int(((pred == cid) & (y == cid) & rows).sum())
                npred = int(((pred == cid) & rows).sum())
            folds.append(P._prf(tp, npred, n_gold))
        out[view] = {"folds": folds, "mean": {m: M.mean_std([x[m] for x in folds]) for m in ("p", "r", "f1")}}
    return out


def _sweep(cands, pred, gold, split, cand_fold, sweep_ks) -> dict:
    out = {}
    for view in ("all", "cit.", "cf."):
        per_fold = [P.depth_sweep(cands.subset(np.nonzero(cand_fold == f)[0]), pred[cand_fold == f],
                                  {key: c for key, c in gold.items() if split.query_fold.get(key[0]) == f},
                                  sweep_ks, view) for f in range(split.n_folds)]
        rows = []
        for i, kk in enumerate(sweep_ks):
            row = {"k": kk}
            for stage in ("ret", "rer"):
                row[stage] = {m: M.mean_std([pf[i][stage][m] for pf in per_fold])
                              for m in ("inspect", "p", "r", "f1")}
            rows.append(row)
        out[view] = rows
    return out


def main(argv=None) -> int:
    """``python -m benchmarks.loci.rerank_eval --corpus-dir DIR --reranker feature-hgb [--retriever bm25-lemma]
    [--k 100] [--param name=value ...] --out report.json`` (the 545 pairs, the ref_type folds)."""
    import argparse
    import json

    from . import loci_commands, method_adapters, splits

    p = argparse.ArgumentParser(prog="python -m benchmarks.loci.rerank_eval")
    p.add_argument("--corpus-dir", help="query.csv/source.csv of build_corpus (default: the gold sources only)")
    p.add_argument("--retriever", default="bm25-lemma")
    p.add_argument("--reranker", default="feature-logreg")
    p.add_argument("--param", action="append", default=[], help="reranker parameter name=value")
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--out")
    a = p.parse_args(argv)
    bench, _ = loci_commands.load_545_with_corpus(a.corpus_dir)
    split = splits.split_from_file(bench, "ref_type")
    params = {}
    for item in a.param:
        key, _, value = item.partition("=")
        params[key] = json.loads(value) if value[:1] in "0123456789-[{tfn" else value
    rep = evaluate_rerank(bench, split, method_adapters.EngineRetrieverMethod(a.retriever), a.reranker, params, k=a.k,
                          pool="corpus" if a.corpus_dir else "gold",
                          progress=lambda f, m="": print(f"[{f:4.0%}] {m}", flush=True))
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            json.dump(rep, fh, indent=1)
    for stage in ("retrieval", "rerank"):
        print(f"{stage}: MRR@10 {rep[stage]['mrr@10']:.3f}  R@10 {rep[stage]['recall@10']:.3f}  "
              f"cit. MRR@10 {rep[stage]['by_type']['cit.']['mrr@10']:.3f}  "
              f"cf. MRR@10 {rep[stage]['by_type']['cf.']['mrr@10']:.3f}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
