"""The per-pair Tesserae implementation (before the vectorised one in ``tesserae.py``), kept as the oracle.

``tests/detection/methods/test_tesserae_identity.py`` and ``perf/tesserae_bench.py`` compare
``TesseraeRetriever`` with it: the same top-k lists and bit-identical scores. It computes the distance term
pair by pair in Python, in decreasing order of the bound ln(numerator / 4), and stops once the bound falls
below the k-th exact score; about 30 ms per query on the full Loci Similes corpus.
"""
from __future__ import annotations

import heapq
import math
from collections import Counter

import numpy as np
import scipy.sparse as sp

from detection.latin.analysis import Analyzer

from ..retriever import Progress, Retriever, TopK


def _positions(lemmas: list[str]) -> dict[str, list[int]]:
    pos: dict[str, list[int]] = {}
    for i, l in enumerate(lemmas):
        pos.setdefault(l, []).append(i)
    return pos


def _distance(shared: list[str], pos: dict[str, list[int]], freq: dict[str, float]) -> int:
    # the two matched token instances of lowest frequency; d = tokens from first to second inclusive
    inst = sorted((freq.get(l, 0.0), p) for l in shared for p in pos[l])
    if len(inst) < 2:
        return 2
    a, b = inst[0][1], inst[1][1]
    return abs(a - b) + 1


class TesseraeReference(Retriever):
    name = "tesserae-reference"

    def __init__(self, stop_top: int = 10, cache_dir=None, block_size: int = 512, **_ignored):
        self.analyzer = Analyzer("lemma", 1, stopwords=False, cache_dir=cache_dir)
        self.stop_top = stop_top
        self.block_size = block_size

    def fit(self, source_ids, source_texts, *, progress: Progress | None = None):
        self.source_ids = self._check_fit(source_ids, source_texts)
        self.src_lemmas = self.analyzer(source_texts, progress=progress)
        self.src_counts = Counter(l for ls in self.src_lemmas for l in ls)
        return self

    def _matrix(self, docs, vocab, weight=None):
        rows, cols, vals = [], [], []
        for i, ls in enumerate(docs):
            c = Counter(l for l in ls if l in vocab)
            for l, n in c.items():
                rows.append(i)
                cols.append(vocab[l])
                vals.append(n * weight[l] if weight is not None else 1.0)
        return sp.csr_matrix((np.asarray(vals, np.float64), (rows, cols)), shape=(len(docs), len(vocab)))

    def search(self, query_texts, k: int, *, progress: Progress | None = None) -> TopK:
        q_lemmas = self.analyzer(query_texts)
        q_counts = Counter(l for ls in q_lemmas for l in ls)
        both = self.src_counts + q_counts
        stop = {l for l, _ in both.most_common(self.stop_top)}
        vocab = {l: i for i, l in enumerate(sorted(set(self.src_counts) & set(q_counts) - stop))}
        ns, nq_tok = max(sum(self.src_counts.values()), 1), max(sum(q_counts.values()), 1)
        f_s = {l: self.src_counts[l] / ns for l in vocab}
        f_q = {l: q_counts[l] / nq_tok for l in vocab}
        Sb = self._matrix(self.src_lemmas, vocab).T.tocsr()
        Sw = self._matrix(self.src_lemmas, vocab, {l: 1.0 / f for l, f in f_s.items()}).T.tocsr()
        Qb = self._matrix(q_lemmas, vocab)
        Qw = self._matrix(q_lemmas, vocab, {l: 1.0 / f for l, f in f_q.items()})
        src_pos = [None] * len(self.src_lemmas)
        inv_vocab = sorted(vocab, key=vocab.get)
        nq = len(query_texts)
        idx = np.full((nq, k), -1, np.int32)
        val = np.full((nq, k), np.nan, np.float32)
        for a in range(0, nq, self.block_size):
            b = min(a + self.block_size, nq)
            shared = (Qb[a:b] @ Sb).tocsr()  # number of shared lemmas
            num = (Qw[a:b] @ Sb + Qb[a:b] @ Sw).tocsr()
            for i in range(b - a):
                s0, s1 = shared.indptr[i], shared.indptr[i + 1]
                cnt = shared.data[s0:s1]
                ok = cnt >= 2
                if not ok.any():
                    continue
                docs = shared.indices[s0:s1][ok]
                n0, n1 = num.indptr[i], num.indptr[i + 1]
                numrow = dict(zip(num.indices[n0:n1].tolist(), num.data[n0:n1].tolist()))
                bounds = np.log(np.array([numrow[d] for d in docs.tolist()]) / 4.0)
                order = np.argsort(-bounds, kind="stable")
                qi = a + i
                qpos = _positions(q_lemmas[qi])
                qset = {inv_vocab[j] for j in Qb.indices[Qb.indptr[qi]:Qb.indptr[qi + 1]]}
                heap: list[tuple[float, int]] = []
                for o in order.tolist():
                    if len(heap) >= k and bounds[o] < heap[0][0]:
                        break
                    d = int(docs[o])
                    if src_pos[d] is None:
                        src_pos[d] = _positions(self.src_lemmas[d])
                    sp_ = src_pos[d]
                    sh = [l for l in qset if l in sp_]
                    dq = _distance(sh, qpos, f_q)
                    ds = _distance(sh, sp_, f_s)
                    score = math.log(numrow[d] / (dq + ds))
                    item = (score, -d)
                    if len(heap) < k:
                        heapq.heappush(heap, item)
                    elif item > heap[0]:
                        heapq.heapreplace(heap, item)
                best = sorted(heap, reverse=True)
                for r, (s, negd) in enumerate(best):
                    idx[qi, r] = -negd
                    val[qi, r] = s
            if progress:
                progress(b / nq, f"tesserae: scored {b}/{nq} queries")
        return TopK(indices=idx, scores=val, source_ids=self.source_ids)


