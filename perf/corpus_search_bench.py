"""One passage against a whole corpus index (``detection.corpus``): CPU time of the search itself, one core.

    .venv/bin/python perf/corpus_search_bench.py [--index var/corpora/tesserae-la] [--queries 1000] [--seed 0]
                                                 [--write perf/expected/corpus/corpus_search.yaml]

The index is the whole shipped Tesserae Latin corpus, built first with
``manage.py build_corpus_index --corpus tesserae-la --from data/tesserae/tesserae_la.tar.xz`` (its build seconds,
CPU seconds and size are read from it and from the build's own figures given with ``--build-cpu``/``--build-rss``).
Queries: ``--queries`` random segments of the corpus (seeded; those over 400 characters or without Latin words
skipped), each searched for its top 20 with every channel and the top 20 explained (``CorpusSearcher.search``),
after one warm-up search. Pinned to one core (BLAS and numba single-threaded). Beside it, in the same run and on
the same queries, the floor: the walk of the query's content-lemma postings alone (the lemma channel's
compiled scatter-add over every part) and its top 20, the query's features computed outside the timing. Times
are CPU seconds of this process (``time.process_time``) per query; p50 and p95 printed, and the ratio of the
search's to the floor's. Figures, no assertion.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from detection.channels import corpus_index, corpus_search  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def pct(xs, q) -> float:
    return round(float(np.percentile(np.asarray(xs) * 1000, q)), 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", default=str(ROOT / "var" / "corpora" / "tesserae-la"))
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--build-cpu", type=float, default=None, help="the build's CPU seconds, measured by the caller")
    ap.add_argument("--build-rss", type=float, default=None, help="the build's peak RSS in MiB, measured by the caller")
    ap.add_argument("--write", default="", help="store the figures as YAML")
    a = ap.parse_args()
    try:
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})
    except (AttributeError, OSError):
        pass
    settings = corpus_index.channel_settings()
    index = corpus_index.CorpusIndex(a.index, expected_digest=settings.digest)
    searcher = corpus_search.CorpusSearcher(index, settings)
    rng = np.random.default_rng(a.seed)
    queries = []
    for i in rng.permutation(index.n).tolist():
        try:
            queries.append(corpus_search.check_query(index.text(int(i))))
        except corpus_search.QueryError:
            continue
        if len(queries) >= a.queries:
            break
    searcher.search(queries[0], a.k, explain=a.k)
    full, floor, walk = [], [], []
    for q in queries:
        t = time.process_time()
        searcher.search(q, a.k, explain=a.k, checked=True)
        full.append(time.process_time() - t)
        _doc, qf = searcher.query_features(q)
        t = time.process_time()
        touched = searcher._walk("lemma", qf.feats["lemma"])
        v = searcher._channel("lemma", touched)
        if touched.size > a.k:
            np.argpartition(-v, a.k - 1)[:a.k]
        searcher._reset("lemma", touched)
        floor.append(time.process_time() - t)
        t = time.process_time()
        for ch in searcher.sparse:  # every sparse channel's walk (features given), for the breakdown
            searcher._reset(ch, searcher._walk(ch, qf.feats[ch]))
        walk.append(time.process_time() - t)
    manifest = index.manifest
    figures = {
        "corpus": Path(a.index).name, "segments": index.n, "works": len(index.works), "parts": len(index.parts),
        "queries": len(queries), "k": a.k, "explained": a.k, "channels": sorted(settings.weights),
        "search_ms": {"p50": pct(full, 50), "p95": pct(full, 95), "mean": round(float(np.mean(full)) * 1000, 2)},
        "floor_lemma_walk_ms": {"p50": pct(floor, 50), "p95": pct(floor, 95)},
        "all_sparse_walks_ms": {"p50": pct(walk, 50), "p95": pct(walk, 95)},
        "search_over_floor_p50": round(pct(full, 50) / max(pct(floor, 50), 1e-9), 1),
        "index_bytes": corpus_index.index_bytes(a.index),
        "build_seconds_wall": manifest.get("seconds_last_build"),
        "build_cpu_seconds": a.build_cpu, "build_peak_rss_mib": a.build_rss,
        "search_process_peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "load_average_1min": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(),
    }
    for key, val in figures.items():
        print(f"{key}: {val}")
    if a.write:
        import yaml

        setup = {k: figures.pop(k) for k in ("corpus", "segments", "works", "parts", "queries", "k", "explained",
                                             "channels", "load_average_1min", "cpus")}
        stored = {"name": "corpus_search", "command": " ".join(["perf/corpus_search_bench.py", *sys.argv[1:]]),
                  "setup": setup, "figures": figures}
        Path(a.write).write_text(yaml.safe_dump(stored, sort_keys=False), encoding="utf-8")
        print(f"written {a.write}")


if __name__ == "__main__":
    main()
