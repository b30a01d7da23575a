"""Tesserae over the whole Loci Similes corpus: the vectorised retriever against the per-pair one it replaced.

    .venv/bin/python perf/tesserae_bench.py [--corpus DIR] [--texts ../shared/data/latin_texts]
        [--queries 0 (all 27,238)] [--k 100] [--jobs 2] [--skip-reference]

Both see the same lemma lists (analysed once, from the lemma cache) and run in forked children, one after
the other, so each wall time and peak RSS (ru_maxrss) is its own. Printed: the search time of the
per-pair version (``tesserae_reference.TesseraeReference``), of the vectorised one in 1 and ``--jobs``
processes, their ratios, and whether every top-k list and every float32 score is identical (they must be).
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

from detection.latin.analysis import Analyzer
from detection.latin.lemmatize import default_cache_dir
from detection.latin.loci_corpus import build_corpus
from detection.methods.lexical.tesserae import TesseraeRetriever
from detection.methods.lexical.tesserae_reference import TesseraeReference


class _Given:
    """Both retrievers get the lemma lists analysed once by the parent."""

    def __call__(self, docs, progress=None):
        return docs


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the pool's workers)."""
    return sum(r.ru_utime + r.ru_stime for r in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))


def _child(fn, conn):
    out = fn()
    peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    conn.send((peak / 1024.0, out))  # the largest single process (a worker of the pool, or the child itself)
    conn.close()


def measure(fn):
    """(peak RSS MiB, result) of fn() run in a forked child."""
    a, b = mp.get_context("fork").Pipe(duplex=False)
    p = mp.get_context("fork").Process(target=_child, args=(fn, b))
    p.start()
    res = a.recv()
    p.join()
    return res


def load(path):
    with open(path, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return [r["seg_id"] for r in rows], [r["text"] for r in rows]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="data/corpus")
    ap.add_argument("--texts", default="../shared/data/latin_texts")
    ap.add_argument("--queries", type=int, default=0, help="number of queries (0 = all)")
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--skip-reference", action="store_true")
    args = ap.parse_args()
    corpus = Path(args.corpus)
    if not (corpus / "source.csv").exists():
        build_corpus(args.texts, corpus)
    sid, stext = load(corpus / "source.csv")
    _, qtext = load(corpus / "query.csv")
    if args.queries:
        qtext = qtext[: args.queries]
    an = Analyzer("lemma", 1, stopwords=False, cache_dir=str(default_cache_dir()))
    t0 = time.perf_counter()
    s_lem, q_lem = an(stext), an(qtext)
    print(f"corpus: {len(qtext)} queries x {len(stext)} sources, top-{args.k}; analysis {time.perf_counter() - t0:.1f} s;"
          f" cores {os.cpu_count()}, load avg {os.getloadavg()[0]:.1f}", flush=True)

    def run(cls, **kw):
        def fn():
            r = cls(**kw)
            r.analyzer = _Given()
            t, c = time.perf_counter(), _cpu()
            r.fit(sid, s_lem)
            res = r.search(q_lem, args.k)
            return time.perf_counter() - t, _cpu() - c, res.indices, res.scores
        return fn

    results = {}
    for label, cls, kw in [("vectorised, 1 process", TesseraeRetriever, {}),
                           (f"vectorised, {args.jobs} processes", TesseraeRetriever, {"n_jobs": args.jobs}),
                           ("per-pair reference", TesseraeReference, {})]:
        if cls is TesseraeReference and args.skip_reference:
            continue
        rss, (secs, cpu, idx, val) = measure(run(cls, **kw))
        results[label] = (secs, idx, val)
        print(f"{label:<26} fit + search {secs:8.1f} s wall, {cpu:8.1f} s CPU   peak RSS {rss:6.0f} MiB   "
              f"load avg {os.getloadavg()[0]:.1f}", flush=True)
    new = results["vectorised, 1 process"]
    par = results[f"vectorised, {args.jobs} processes"]
    same = np.array_equal(new[1], par[1]) and np.array_equal(new[2], par[2], equal_nan=True)
    print(f"1 vs {args.jobs} processes: identical lists and scores: {same}")
    if "per-pair reference" in results:
        ref = results["per-pair reference"]
        idx_same = np.array_equal(new[1], ref[1])
        val_same = np.array_equal(new[2], ref[2], equal_nan=True)
        rows = int(((new[1] != ref[1]).any(1) | ~((new[2] == ref[2]) | np.isnan(new[2]) & np.isnan(ref[2])).all(1)).sum())
        print(f"vectorised vs per-pair: identical top-{args.k} lists {idx_same}, bit-identical float32 scores {val_same}"
              f" ({rows} of {len(qtext)} queries differ; {int((new[1] >= 0).sum())} results)")
        print(f"speed-up: {ref[0] / new[0]:.1f}x (1 process), {ref[0] / par[0]:.1f}x ({args.jobs} processes)")


if __name__ == "__main__":
    main()
