"""Retrieval speed on the full Loci Similes-style corpus, side by side with bm25s and rank_bm25.

    .venv/bin/python perf/retrieval_bench.py --corpus data/corpus [--texts ../shared/data/latin_texts]
        [--queries 0 (all)] [--jobs 2] [--tesserae-queries 300] [--rank-bm25-queries 20]

Every measurement runs in a forked child so its wall time and peak RSS (ru_maxrss) are its own. All methods
see the same lemma terms (our tokeniser + lemmatiser + stoplist, lemmas cached), so bm25s and our BM25 compute
the same scores (to float32 rounding) and must return the same top-k lists up to ties at the cut-off; the script
reports ``agreement`` (tie-aware, see there) and, for reference, the plain Jaccard of the top-k id sets, which
is below 1 only because of ties at the k-th score.

bm25s runs here with numpy's SIMD dispatch on, as numpy ships: on this CPU numpy 2.4's vectorised ``argpartition``
is pathological on mostly-zero rows and makes bm25s about 20x slower than it is, so the ratios printed here
overstate our lead; ``perf/kernel_bench.py`` measures bm25s fairly (dispatch off, one thread, ABBA).

Queries none of whose terms occur in the source vocabulary are given to bm25s as an empty query (all scores 0,
so nothing is kept). bm25s's own fallback for such queries, the empty-token slot ``""``, has no postings; an
earlier version of this script substituted the first vocabulary entry instead, which made bm25s return the
postings of an arbitrary term for those queries (0.45 % of queries, Jaccard 0 each).
"""
from __future__ import annotations

import argparse
import csv
import multiprocessing as mp
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from detection.latin.analysis import Analyzer  # noqa: E402
from detection.latin.lemmatize import default_cache_dir  # noqa: E402
from detection.latin.loci_corpus import build_corpus  # noqa: E402
from detection.methods import get_retriever  # noqa: E402


def _child(fn, conn):
    t0 = time.perf_counter()
    out = fn()
    wall = time.perf_counter() - t0
    conn.send((wall, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, out))
    conn.close()


def measure(fn):
    """(wall seconds, peak RSS MiB, result) of fn() run in a forked child."""
    ctx = mp.get_context("fork")
    a, b = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_child, args=(fn, b))
    p.start()
    b.close()  # the child holds the only write end: if it dies, recv() ends instead of waiting forever
    try:
        res = a.recv()
    except EOFError:
        p.join()
        raise RuntimeError(f"measured child failed (exit code {p.exitcode})") from None
    p.join()
    return res


def load(path):
    rows = list(csv.DictReader(open(path, encoding="utf-8")))
    return [r["seg_id"] for r in rows], [r["text"] for r in rows]


def overlap(a: np.ndarray, b: np.ndarray) -> float:
    """Mean Jaccard of the top-k id sets (not tie-aware: documents tied at the k-th score are cut arbitrarily)."""
    vals = []
    for x, y in zip(a, b):
        sx, sy = set(x[x >= 0].tolist()), set(y[y >= 0].tolist())
        vals.append(len(sx & sy) / max(len(sx | sy), 1) if (sx or sy) else 1.0)
    return float(np.mean(vals))


def agreement(idx_a, val_a, idx_b, val_b, k: int, rtol: float = 1e-5) -> dict:
    """Tie-aware comparison of two top-k results (indices with -1 padding, scores).

    Per query, with tol = rtol * max(1, top score) and cut = the k-th score (-inf when a list has fewer than
    k hits): the lists *agree* when they hold the same number of hits, their k-th scores are equal within tol,
    and the documents scoring above cut + tol are the same set. Documents whose score is within tol of the
    k-th score are ties at the cut-off; which of them make the list is arbitrary and not counted. Also returns
    the largest score difference on documents in both lists, and the share of queries with a tie at the cut-off
    (several documents within tol of the k-th score in a list, or different ones in the two lists).
    """
    n_agree, n_tie, max_diff, jac = 0, 0, 0.0, []
    for xa, sa, xb, sb in zip(idx_a, val_a, idx_b, val_b):
        ma, mb = xa >= 0, xb >= 0
        xa, sa, xb, sb = xa[ma], sa[ma].astype(np.float64), xb[mb], sb[mb].astype(np.float64)
        top = max(sa.max(initial=0.0), sb.max(initial=0.0))
        tol = rtol * max(1.0, top)
        cut_a = sa.min() if len(xa) >= k else -np.inf
        cut_b = sb.min() if len(xb) >= k else -np.inf
        cut = max(cut_a, cut_b)
        above_a = set(xa[sa > cut + tol].tolist())
        above_b = set(xb[sb > cut + tol].tolist())
        same_cut = (cut_a == cut_b == -np.inf) or abs(cut_a - cut_b) <= tol
        n_agree += bool(len(xa) == len(xb) and same_cut and above_a == above_b)
        at_a, at_b = set(xa.tolist()) - above_a, set(xb.tolist()) - above_b
        n_tie += bool(np.isfinite(cut) and (len(at_a) > 1 or len(at_b) > 1 or at_a != at_b))
        u = above_a | above_b
        jac.append(len(above_a & above_b) / len(u) if u else 1.0)
        common, ia, ib = np.intersect1d(xa, xb, return_indices=True)
        if len(common):
            max_diff = max(max_diff, float(np.abs(sa[ia] - sb[ib]).max()))
    n = len(jac)
    return {"queries": n, "agree": n_agree / max(n, 1), "jaccard_above_cut": float(np.mean(jac)) if n else 1.0,
            "ties_at_cut": n_tie / max(n, 1), "max_score_diff": max_diff}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="data/corpus")
    ap.add_argument("--texts", default="../shared/data/latin_texts")
    ap.add_argument("--queries", type=int, default=0, help="number of queries (0 = all)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--tesserae-queries", type=int, default=300)
    ap.add_argument("--rank-bm25-queries", type=int, default=20)
    ap.add_argument("--ks", default="100,1000")
    args = ap.parse_args()
    corpus = Path(args.corpus)
    if not (corpus / "source.csv").exists():
        build_corpus(args.texts, corpus)
    sid, stext = load(corpus / "source.csv")
    qid, qtext = load(corpus / "query.csv")
    if args.queries:
        qtext = qtext[: args.queries]
    cache = str(default_cache_dir())
    print(f"corpus: {len(qtext)} queries x {len(stext)} sources = {len(qtext) * len(stext):.3g} pairs; "
          f"cores: {os.cpu_count()}, load avg {os.getloadavg()[0]:.1f}")
    an = Analyzer("lemma", 1, True, cache)
    t0 = time.perf_counter()
    s_terms, q_terms = an(stext), an(qtext)
    print(f"analysis (tokenise + cached lemmas + stoplist), both sides: {time.perf_counter() - t0:.1f} s")
    ks = [int(k) for k in args.ks.split(",")]
    results = {}

    for k in ks:
        for jobs in sorted({1, args.jobs}):
            def ours(k=k, jobs=jobs):
                r = get_retriever("bm25-lemma", cache_dir=cache, n_jobs=jobs).fit(sid, stext)
                t = time.perf_counter()
                res = r.search(qtext, k)
                return time.perf_counter() - t, res.indices, res.scores
            wall, rss, (search_s, idx, val) = measure(ours)
            results[("ours", k, jobs)] = idx, val
            print(f"bm25-lemma (ours, {jobs} proc) top-{k}: {wall:.1f} s wall incl. fit+analysis, "
                  f"search {search_s:.1f} s, peak {rss:.0f} MiB")

        def theirs(k=k):
            import bm25s
            m = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
            m.index(s_terms, show_progress=False)
            vocab = m.vocab_dict
            # out-of-vocabulary terms dropped; a query left empty scores 0 everywhere (see module docstring)
            qt = [[t for t in q if t in vocab] for q in q_terms]
            t = time.perf_counter()
            docs, scores = m.retrieve(qt, k=k, show_progress=False, n_threads=args.jobs)
            return time.perf_counter() - t, np.asarray(docs, dtype=np.int32), np.asarray(scores)
        wall, rss, (search_s, idx, sc) = measure(theirs)
        idx = np.where(sc > 0, idx, -1)
        sc = np.where(idx >= 0, sc, np.nan)
        print(f"bm25s 0.3.16 (numpy backend, {args.jobs} threads) top-{k}: {wall:.1f} s wall incl. index, "
              f"search {search_s:.1f} s, peak {rss:.0f} MiB (terms given pre-analysed)")
        ours_idx, ours_val = results[("ours", k, args.jobs)]
        ag = agreement(ours_idx, ours_val, idx, sc, k)
        print(f"  top-{k} ours vs bm25s, tie-aware: {ag['agree']:.4f} of {ag['queries']} queries identical up to "
              f"ties at the k-th score (Jaccard above the cut {ag['jaccard_above_cut']:.4f}); "
              f"{ag['ties_at_cut']:.3f} of queries have a tie at the cut; max score diff {ag['max_score_diff']:.2e}")
        print(f"  top-{k} plain Jaccard of the id sets (ties cut arbitrarily), mean: {overlap(ours_idx, idx):.4f}")

        def tfidf(k=k):
            r = get_retriever("tfidf-lemma", cache_dir=cache, n_jobs=args.jobs).fit(sid, stext)
            t = time.perf_counter()
            r.search(qtext, k)
            return time.perf_counter() - t
        wall, rss, search_s = measure(tfidf)
        print(f"tfidf-lemma (ours, {args.jobs} proc) top-{k}: {wall:.1f} s wall incl. fit, search {search_s:.1f} s, "
              f"peak {rss:.0f} MiB")

    nt = min(args.tesserae_queries, len(qtext))
    def tess():
        r = get_retriever("tesserae", cache_dir=cache).fit(sid, stext)
        t = time.perf_counter()
        r.search(qtext[:nt], 100)
        return time.perf_counter() - t
    wall, rss, search_s = measure(tess)
    print(f"tesserae top-100 on {nt} queries: search {search_s:.1f} s -> extrapolated "
          f"{search_s * len(qtext) / nt:.0f} s for all; peak {rss:.0f} MiB")

    nr = min(args.rank_bm25_queries, len(qtext))
    def rb():
        from rank_bm25 import BM25Okapi
        m = BM25Okapi(s_terms)
        t = time.perf_counter()
        for q in q_terms[:nr]:
            np.argpartition(-m.get_scores(q), 100)[:100]
        return time.perf_counter() - t
    wall, rss, search_s = measure(rb)
    print(f"rank_bm25 0.2.2 top-100 on {nr} queries: {search_s:.1f} s -> extrapolated "
          f"{search_s * len(qtext) / nr:.0f} s for all; peak {rss:.0f} MiB")


if __name__ == "__main__":
    main()
