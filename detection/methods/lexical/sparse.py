"""TF-IDF and BM25 as sparse matrix algebra.

Fit builds a term-major weight matrix ``W`` (V x N, CSR: one row of postings per term). Search turns a block
of queries into a sparse query-term matrix ``Q`` (B x V) and scores ``Q @ W`` with the compiled kernel of
:mod:`.sparse_kernel` (term-at-a-time accumulate-and-select: only the documents a query touches are scored, the
top k selected among them, no score matrix written). Blocks can run in several processes (``n_jobs``).

BM25 follows the Lucene variant that ``bm25s`` uses by default (``method="lucene"``)::

    score(q, d) = sum over query tokens t (every occurrence) of idf(t) tf(t,d) / (tf(t,d) + k1 (1 - b + b |d|/avgdl))
    idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))    (always > 0)

with N = number of source documents (empty ones included), |d| = number of analysed terms of d (after the
stoplist), avgdl = mean |d| over all N documents, no (k1 + 1) factor in the numerator (as Lucene >= 8 and bm25s;
it scales every score by the same constant, so rankings are unchanged). Query terms absent from the source
vocabulary contribute nothing; a term repeated in the query adds its weight once per occurrence (bm25s does the
same). k1 (default 1.5) and b (default 0.75) are constructor parameters. Weights are computed in float64, stored
as float32, and summed in float32. On the same terms this gives bm25s's scores to float32 rounding
(``tests/detection/latin/test_engine_bm25s_parity.py``).

TF-IDF follows scikit-learn's TfidfVectorizer as the paper configures it (sublinear tf, smooth idf,
l2-normalised rows, ``max_features`` most frequent terms, fit on the source side), scored by cosine.
"""
from __future__ import annotations

import multiprocessing as mp
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from detection.latin.analysis import Analyzer

from ..infrastructure import index_files
from ..retriever import Progress, Retriever, TopK
from .sparse_kernel import Postings, score_topk


def term_count_matrix(docs, vocab: dict, *, grow: bool) -> sp.csr_matrix:
    """The project's one document-term count matrix (float32 CSR, documents x ``len(vocab)``).

    ``docs`` is a list of term lists (any hashable terms: strings, lemma pairs). ``vocab`` maps term -> column
    and is extended in place when ``grow`` is true; otherwise unknown terms are dropped (query side). A term
    repeated in a document counts once per occurrence; a set of terms gives a binary matrix.
    """
    indptr = [0]
    indices: list[int] = []
    data: list[int] = []
    for terms in docs:
        c: Counter = Counter()
        for t in terms:
            j = vocab.get(t)
            if j is None:
                if not grow:
                    continue
                j = vocab[t] = len(vocab)
            c[j] += 1
        indices.extend(c.keys())
        data.extend(c.values())
        indptr.append(len(indices))
    m = sp.csr_matrix(
        (np.asarray(data, dtype=np.float32), np.asarray(indices, dtype=np.int32), np.asarray(indptr, dtype=np.int64)),
        shape=(len(docs), len(vocab)),
    )
    m.sum_duplicates()
    return m


_WORKER: dict = {}


def _score_block(args):
    q_block, k = args
    return score_topk(q_block, _WORKER["W"], k)


class SparseRetriever(Retriever):
    block_size = 1024

    def __init__(self, kind: str = "lemma", ngram: int = 1, stopwords=True, cache_dir=None, n_jobs: int = 1,
                 block_size: int | None = None):
        self.analyzer = Analyzer(kind, ngram, stopwords, cache_dir)
        self.n_jobs = max(1, int(n_jobs or 1))
        if block_size:
            self.block_size = int(block_size)
        self.vocab: dict[str, int] = {}
        self.W: sp.csr_matrix | None = None
        self.source_ids: list[str] = []

    # subclasses: _weights(counts) -> doc-term weights (N x V); _query(counts) -> query weights (B x V)
    def fit(self, source_ids, source_texts, *, progress: Progress | None = None):
        self.source_ids = self._check_fit(source_ids, source_texts)
        docs = self.analyzer(source_texts, progress=_sub(progress, 0.0, 0.7, "source"))
        self.vocab = {}
        counts = term_count_matrix(docs, self.vocab, grow=True)
        counts = self._select_features(counts)
        self.W = self._weights(counts).T.tocsr().astype(np.float32)  # V x N, postings per term
        self.W.sort_indices()
        if progress:
            progress(1.0, f"indexed {len(self.source_ids)} sources, {len(self.vocab)} terms")
        return self

    def _select_features(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        return counts

    def index_arrays(self) -> dict | None:
        """The fitted index as arrays (``detection.methods.infrastructure.index_files``): terms in column order, the weight
        matrix's CSR arrays, the idf and the source ids. None before ``fit`` or for non-string terms."""
        if self.W is None:
            return None
        terms = sorted(self.vocab, key=self.vocab.get)
        if not all(isinstance(t, str) for t in terms):
            return None
        return {"terms": index_files.strings(terms), "source_ids": index_files.strings(self.source_ids),
                "w_data": self.W.data, "w_indices": self.W.indices, "w_indptr": self.W.indptr,
                "w_shape": np.asarray(self.W.shape, np.int64),
                "idf": np.asarray(getattr(self, "idf", np.zeros(0)), np.float64)}

    def use_index_arrays(self, arrays: dict) -> None:
        """Become the retriever :meth:`index_arrays` was taken from (the weight matrix stays memory-mapped)."""
        self.vocab = {t: j for j, t in enumerate(arrays["terms"].tolist())}
        self.source_ids = arrays["source_ids"].tolist()
        self.W = sp.csr_matrix((arrays["w_data"], arrays["w_indices"], arrays["w_indptr"]),
                               shape=tuple(int(x) for x in arrays["w_shape"]), copy=False)
        self.idf = np.asarray(arrays["idf"])

    def query_matrix(self, query_texts: Sequence[str], progress: Progress | None = None) -> sp.csr_matrix:
        docs = self.analyzer(query_texts, progress=progress)
        return self._query(term_count_matrix(docs, self.vocab, grow=False)).tocsr().astype(np.float32)

    def search(self, query_texts, k: int, *, progress: Progress | None = None) -> TopK:
        if self.W is None:
            raise RuntimeError("fit() first")
        k = int(k)
        if k < 1:
            raise ValueError("k must be >= 1")
        Q = self.query_matrix(query_texts, _sub(progress, 0.0, 0.3, "queries"))
        nq = Q.shape[0]
        idx = np.full((nq, k), -1, dtype=np.int32)
        val = np.full((nq, k), np.nan, dtype=np.float32)
        bs = self.block_size
        blocks = [(s, min(s + bs, nq)) for s in range(0, nq, bs)]
        if getattr(self, "_postings", None) is None or self._postings_of is not self.W:  # checked once per index
            self._postings, self._postings_of = Postings(self.W), self.W
        _WORKER["W"] = self._postings
        done = 0
        if self.n_jobs > 1 and len(blocks) > 1 and "fork" in mp.get_all_start_methods():
            with ProcessPoolExecutor(self.n_jobs, mp_context=mp.get_context("fork")) as ex:
                results = ex.map(_score_block, [(Q[a:b], k) for a, b in blocks])
                for (a, b), (bi, bv) in zip(blocks, results):
                    idx[a:b], val[a:b] = bi, bv
                    done += b - a
                    if progress:
                        progress(0.3 + 0.7 * done / nq, f"scored {done}/{nq} queries")
        else:
            for a, b in blocks:
                idx[a:b], val[a:b] = _score_block((Q[a:b], k))
                done += b - a
                if progress:
                    progress(0.3 + 0.7 * done / nq, f"scored {done}/{nq} queries")
        _WORKER.pop("W", None)
        return TopK(indices=idx, scores=val, source_ids=self.source_ids)


def _sub(progress: Progress | None, lo: float, hi: float, label: str) -> Progress | None:
    if progress is None:
        return None
    return lambda f, msg: progress(lo + (hi - lo) * f, f"{label}: {msg}")


class BM25Retriever(SparseRetriever):
    """BM25, Lucene/bm25s variant (formula in the module docstring); ``k1`` and ``b`` are settable."""

    name = "bm25"

    def __init__(self, kind: str = "lemma", k1: float = 1.5, b: float = 0.75, **kw):
        super().__init__(kind=kind, ngram=1, **kw)
        self.k1, self.b = float(k1), float(b)

    def _weights(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        n = counts.shape[0]
        df = np.bincount(counts.indices, minlength=counts.shape[1]).astype(np.float64)
        self.idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
        dl = np.asarray(counts.sum(axis=1)).ravel()
        avgdl = dl.mean() if n else 1.0
        norm = self.k1 * (1.0 - self.b + self.b * dl / max(avgdl, 1e-9))
        w = counts.copy().astype(np.float64)
        rows = np.repeat(np.arange(n), np.diff(w.indptr))
        tf = w.data
        w.data = self.idf[w.indices] * tf / (tf + norm[rows])
        return w

    def _query(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        return counts


class TfidfRetriever(SparseRetriever):
    name = "tfidf"

    def __init__(self, kind: str = "lemma", ngram: int = 1, max_features: int | None = 50_000, **kw):
        kw.setdefault("stopwords", True)
        super().__init__(kind=kind, ngram=ngram, **kw)
        self.max_features = max_features

    def _select_features(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        if self.max_features is None or counts.shape[1] <= self.max_features:
            return counts
        tf = np.asarray(counts.sum(axis=0)).ravel()
        # most frequent terms, ties by term string as scikit-learn does
        terms = sorted(self.vocab, key=self.vocab.get)
        order = sorted(range(len(terms)), key=lambda j: (-tf[j], terms[j]))[: self.max_features]
        keep = np.sort(np.asarray(order))
        new_vocab = {terms[j]: i for i, j in enumerate(keep)}
        self.vocab = new_vocab
        return counts[:, keep].tocsr()

    def _tf(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        w = counts.copy().astype(np.float64)
        w.data = 1.0 + np.log(w.data)
        return w

    def _l2(self, w: sp.csr_matrix) -> sp.csr_matrix:
        norms = np.sqrt(np.asarray(w.multiply(w).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.diags(1.0 / norms) @ w

    def _weights(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        n = counts.shape[0]
        df = np.bincount(counts.indices, minlength=counts.shape[1]).astype(np.float64)
        self.idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
        w = self._tf(counts)
        w.data *= self.idf[w.indices]
        return self._l2(w.tocsr())

    def _query(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        w = self._tf(counts)
        w.data *= self.idf[w.indices]
        return self._l2(w.tocsr())


