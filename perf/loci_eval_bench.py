"""Loci Similes evaluation cost.

1. A full 5-fold retrieval-only evaluation of ``bm25-lemma`` on the 545 pairs against the whole source corpus
   (corpus built with the engine's ``build_corpus`` into a temporary folder unless ``--corpus-dir`` is given):
   wall time per stage and peak RSS.
2. The fold-level pairwise grid at the paper's size (Table 4 mean: 282 queries x 565 sources = 159k pairs per
   fold, 5 folds) through the classification metrics (per-query P/R/F1 for 3 views, confusion, SMR/FPR/FNR,
   plateau thresholds tuned on the 4 other folds, the 15-depth retrieve-and-rerank sweep): time and peak traced
   memory, against a named alternative measured in the same run: a per-pair Python loop computing the same
   per-query counts and confusion matrix for one fold.

    .venv/bin/python perf/loci_eval_bench.py [--corpus-dir DIR] [--skip-corpus]
"""
from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.loci import data, matching, method_adapters, splits  # noqa: E402
from benchmarks.loci import metrics as M
from benchmarks.loci.data import read_corpus_dir  # noqa: E402
from benchmarks.loci.evaluate import evaluate_retrieval  # noqa: E402


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def corpus_run(corpus_dir: str | None) -> None:
    t0 = time.perf_counter()
    if corpus_dir is None:
        from detection.latin.loci_corpus import build_corpus
        corpus_dir = tempfile.mkdtemp(prefix="loci_corpus_")
        build_corpus(Path(__file__).resolve().parents[2] / "shared" / "data" / "latin_texts" / "tesserae"
                     if (Path(__file__).resolve().parents[2] / "shared").is_dir()
                     else "/work/shared/data/latin_texts/tesserae", corpus_dir)
        print(f"build_corpus: {time.perf_counter() - t0:.1f} s -> {corpus_dir}")
    t = time.perf_counter()
    qc, sc = read_corpus_dir(corpus_dir)
    bench, match = matching.attach_corpus(data.load_default_545(), qc, sc)
    t_attach = time.perf_counter() - t
    sp = splits.split_from_file(bench, "ref_type")
    t = time.perf_counter()
    rep = evaluate_retrieval(bench, sp, method_adapters.EngineRetrieverMethod("bm25-lemma"), pool="corpus")
    t_eval = time.perf_counter() - t
    tm = rep["timing"]
    print(f"retrieval-only bm25-lemma, 5 folds, {rep['pool']['n_queries']} queries x {rep['pool']['n_sources']:,} "
          f"sources, depth {rep['pool']['depth']}")
    print(f"  load+match corpus {t_attach:.1f} s; evaluate {t_eval:.1f} s = fit {tm['fit_s']:.1f} s + search "
          f"{tm['search_s']:.2f} s + metrics {tm['metrics_s']:.3f} s + overlap audit/strata {tm['overlap_s']:.2f} s")
    print(f"  peak RSS so far {rss_mib():.0f} MiB; R@10 {rep['recall@10']:.3f} R@100 {rep['recall@100']:.3f} "
          f"R@1000 {rep['recall@1000']:.3f} MRR@10 {rep['mrr@10']:.3f}")
    # the retrieval metrics alone, vectorised vs a Python loop over queries and ranked items
    idx = np.random.default_rng(0).integers(0, 87_000, (463, 1000)).astype(np.int32)
    gq = np.repeat(np.arange(463), 2)
    gs = np.random.default_rng(1).integers(0, 87_000, gq.size)
    gc = np.ones(gq.size, np.int8)
    t = time.perf_counter()
    for _ in range(5):
        hits = M.retrieved_gold_classes(idx, gq, gs, gc, 87_000)
        cnt = M.gold_counts(gq, gc, 463)
        for k in M.DEFAULT_KS:
            M.recall_at_k(hits, cnt["all"], k)
            M.mrr_at_k(hits, cnt["all"], k)
    t_vec = (time.perf_counter() - t) / 5
    t = time.perf_counter()
    gold = {}
    for q, s in zip(gq.tolist(), gs.tolist()):
        gold.setdefault(q, set()).add(s)
    for k in M.DEFAULT_KS:
        for q in range(463):
            row = idx[q, :k].tolist()
            found = sum(1 for s in row if s in gold[q])
            first = next((i for i, s in enumerate(row) if s in gold[q]), None)
            _ = found / len(gold[q]), (1 / (first + 1) if first is not None else 0)
    t_loop = time.perf_counter() - t
    print(f"  Recall/MRR at 7 cut-offs, 463 x 1000 ranking: vectorised {1e3 * t_vec:.1f} ms vs Python loop over "
          f"items {1e3 * t_loop:.1f} ms (x{t_loop / t_vec:.1f})")


def grid_run(nq=282, ns=565, n_folds=5, pos=294, seed=0) -> None:
    rng = np.random.default_rng(seed)
    folds = []
    for f in range(n_folds):
        gold = np.zeros((nq, ns), np.int8)
        qi = rng.integers(0, nq // 2, pos)  # positives on the citing half of the queries
        si = rng.integers(0, ns, pos)
        gold[qi, si] = np.where(rng.random(pos) < 0.12, 2, 1)
        probs = rng.dirichlet((8, 1, 1), (nq, ns))
        probs[gold == 1, 1] += 0.6
        probs[gold == 2, 2] += 0.3
        idx = np.argsort(-(probs[..., 1] + probs[..., 2]), axis=1)[:, :1000].astype(np.int32)
        folds.append((gold, probs, idx))
    tracemalloc.start()
    t = time.perf_counter()
    for f, (gold, probs, idx) in enumerate(folds):
        others = [x for i, x in enumerate(folds) if i != f]
        th = {}
        for cname, cid in (("cit.", 1), ("cf.", 2)):
            s = np.concatenate([o[1][..., cid].ravel() for o in others])
            y = np.concatenate([(o[0] == cid).ravel() for o in others])
            th[cname] = M.plateau_threshold(s, y)["threshold"]
        pred = M.decide(probs, th)
        for v in M.VIEWS:
            M.prf_summary(M.per_query_prf(pred, gold, v))
        M.confusion_matrix(pred, gold)
        pq = M.per_query_prf(pred, gold, "all")
        M.error_rates(pq["fp"], pq["fn"], ns, query_mask=pq["n_gold"] > 0)
        gq, gs = np.nonzero(gold)
        for v in M.VIEWS:
            M.depth_sweep(idx, gq, gs, gold[gq, gs], ns, M.SWEEP_KS, rerank_pred=pred, view=v)
    t_vec = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"pairwise grid: {n_folds} folds x {nq} x {ns} = {nq * ns:,} pairs per fold "
          f"({n_folds * nq * ns:,} in all)")
    print(f"  thresholds (tuned on 4 folds = {4 * nq * ns:,} pairs per class) + P/R/F1 x3 views + confusion + "
          f"SMR/FPR/FNR + 15-depth sweep x3 views: {t_vec:.2f} s for 5 folds ({t_vec / n_folds * 1e3:.0f} ms per fold),"
          f" peak traced memory {peak / 2 ** 20:.0f} MiB")
    gold, probs, _ = folds[0]
    pred = M.decide(probs, {"cit.": 0.5, "cf.": 0.5})
    t = time.perf_counter()
    counts = {}
    conf = [[0] * 3 for _ in range(3)]
    gl, pl = gold.tolist(), pred.tolist()
    for q in range(nq):
        tp = fp = fn = 0
        for s in range(ns):
            g, p = gl[q][s], pl[q][s]
            conf[g][p] += 1
            if p and g:
                tp += 1
            elif p:
                fp += 1
            elif g:
                fn += 1
        counts[q] = (tp, fp, fn)
    t_loop = time.perf_counter() - t
    t = time.perf_counter()
    pq = M.per_query_prf(pred, gold, "all")
    cm = M.confusion_matrix(pred, gold)
    t_one = time.perf_counter() - t
    assert cm.tolist() == conf and [counts[q] for q in range(nq)] == list(zip(pq["tp"], pq["fp"], pq["fn"]))
    print(f"  one fold, per-query TP/FP/FN + confusion: vectorised {1e3 * t_one:.1f} ms vs per-pair Python loop "
          f"{1e3 * t_loop:.0f} ms (x{t_loop / t_one:.0f}); same numbers")


def main(argv=None) -> int:
    a = argparse.ArgumentParser()
    a.add_argument("--corpus-dir")
    a.add_argument("--skip-corpus", action="store_true")
    args = a.parse_args(argv)
    grid_run()
    if not args.skip_corpus:
        corpus_run(args.corpus_dir)
    print(f"peak RSS of the process: {rss_mib():.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
