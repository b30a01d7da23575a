"""All-pairs similarity on the 1,388-verse DBBE sample (~1.93M ordered pairs) with each cheap method.

    .venv/bin/python perf/greek_similarity_bench.py [--verses PATH] [--methods a,b,...] [--python-dp-pairs 2000]

Prints, per method: fit seconds, all-pairs seconds, pairs/s, and the peak of Python-tracked memory
(tracemalloc, which numpy reports to) during the all-pairs call. The semantic edit distance is also compared
with a plain Python DP (one loop per pair) measured on a subset and extrapolated (labelled as such).
Transformer methods need a model and are not timed here.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.greek_sts.pilots import read_verses_csv  # noqa: E402
from benchmarks.greek_sts.training_texts import default_corpus_paths, training_corpus  # noqa: E402
from detection.methods.greek.greek_registry import get_method  # noqa: E402

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "dbbe" / "dbbe_verses_sample.csv"


def python_dp_similarity(method, a_texts, b_texts) -> np.ndarray:
    """The same semantic edit similarity with a plain Python double loop per pair (the alternative)."""
    emb = method.embedding
    out = np.empty(len(a_texts))
    for p, (x, y) in enumerate(zip(a_texts, b_texts)):
        ta, tb = emb.tokens(x), emb.tokens(y)
        va, vb = emb.word_vectors(ta), emb.word_vectors(tb)
        na = np.linalg.norm(va, axis=1)
        nb = np.linalg.norm(vb, axis=1)
        D = [[0.0] * (len(tb) + 1) for _ in range(len(ta) + 1)]
        for i in range(len(ta) + 1):
            D[i][0] = float(i)
        for j in range(len(tb) + 1):
            D[0][j] = float(j)
        for i in range(1, len(ta) + 1):
            for j in range(1, len(tb) + 1):
                if ta[i - 1] == tb[j - 1]:
                    c = 0.0
                elif na[i - 1] == 0 or nb[j - 1] == 0:
                    c = 1.0
                else:
                    c = 1.0 - min(1.0, max(0.0, float(va[i - 1] @ vb[j - 1]) / (na[i - 1] * nb[j - 1])))
                D[i][j] = min(D[i - 1][j] + 1, D[i][j - 1] + 1, D[i - 1][j - 1] + c)
        m = max(len(ta), len(tb))
        out[p] = 1.0 - D[-1][-1] / m if m else 1.0
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--verses", default=str(DEFAULT))
    ap.add_argument("--methods", default="levenshtein,char_ngram,word2vec_sg,word2vec_sg_lemma,fasttext,semantic_edit,"
                                         "semantic_edit_w2v_lemma")
    ap.add_argument("--python-dp-pairs", type=int, default=2000)
    a = ap.parse_args()
    verses = [v.text for v in read_verses_csv(a.verses)]
    corpus = training_corpus(default_corpus_paths(a.verses))
    n = len(verses)
    print(f"{n} verses → {n * n:,} ordered pairs; training corpus {len(corpus)} texts; cpu count {os.cpu_count()}")
    print(f"{'method':<26} {'fit s':>7} {'all-pairs s':>12} {'pairs/s':>12} {'peak MiB':>9}")
    for name in a.methods.split(","):
        m = get_method(name)
        t0 = time.perf_counter()
        m.fit(corpus)
        fit_s = time.perf_counter() - t0
        tracemalloc.start()
        t0 = time.perf_counter()
        S = m.similarity_matrix(verses, verses)
        secs = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        assert S.shape == (n, n) and S.dtype == np.float32
        print(f"{name:<26} {fit_s:7.2f} {secs:12.2f} {n * n / secs:12,.0f} {peak:9.1f}")
        if name == "semantic_edit" and a.python_dp_pairs:
            rng = np.random.default_rng(0)
            idx = rng.integers(0, n, size=(a.python_dp_pairs, 2))
            aa, bb = [verses[i] for i in idx[:, 0]], [verses[j] for j in idx[:, 1]]
            t0 = time.perf_counter()
            slow = python_dp_similarity(m, aa, bb)
            py_s = time.perf_counter() - t0
            assert np.allclose(slow, S[idx[:, 0], idx[:, 1]], atol=1e-4), "python DP disagrees"
            est = py_s / a.python_dp_pairs * n * n
            print(f"  plain Python DP on {a.python_dp_pairs} random pairs: {py_s:.2f}s → extrapolated to all "
                  f"{n * n:,} pairs: {est:,.0f}s; vectorised is {est / secs:,.0f}× faster (extrapolated)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
