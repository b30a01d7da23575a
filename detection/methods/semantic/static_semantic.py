"""Segment similarity from static word vectors: SIF / uSIF averages, soft cosine, idf-weighted MaxSim.

All functions take documents as lists of units (lemmas or tokens, keyed like the vectors) and a
:class:`detection.methods.semantic.word_vectors.WordVectors`; units without a vector are skipped.

- **SIF** (Arora, Liang & Ma 2017): segment vector = Σ_w a / (a + p(w)) · v_w / |s| with p(w) the word's corpus
  frequency (from the vectors' training counts) and a = 1e-3; then the projection on the first principal
  component of the *source* segment vectors is removed from every vector (queries and sources alike).
- **uSIF** (Ethayarajh 2018): unit-length word vectors, weight a / (a/2 + p(w)) with a derived from the
  vocabulary size and the mean segment length (no tuning), and the first 5 principal components removed, each
  weighted by its share of the squared singular values.
- **Soft cosine** (Sidorov et al. 2014): x^T S y / sqrt(x^T S x · y^T S y) over idf-weighted bags of units,
  with S_ij = max(0, cos(v_i, v_j))^2 (1 on the diagonal).
- **MaxSim** (late interaction with static vectors, as ColBERT does with contextual ones): for every query unit,
  the best cosine with any unit of the candidate (counted only above ``threshold``; an identical unit scores 1),
  averaged with idf weights over the query units. Asymmetric: it asks how much of the *query* the candidate
  covers. It is meant to rescore a lexical top-k (:mod:`detection.methods.semantic.hybrid`), not to scan a corpus.

Idf here is BM25's ``ln(1 + (N - df + 0.5) / (df + 0.5))`` over the fitted source documents.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .word_vectors import WordVectors

SIF_A = 1e-3


def idf_table(docs: Sequence[Sequence[str]]) -> dict[str, float]:
    """BM25 idf of every unit of ``docs`` (document frequency over the documents)."""
    df: dict[str, int] = {}
    for d in docs:
        for t in set(d):
            df[t] = df.get(t, 0) + 1
    n = len(docs)
    return {t: float(np.log(1.0 + (n - c + 0.5) / (c + 0.5))) for t, c in df.items()}


def _rows(doc: Sequence[str], wv: WordVectors) -> np.ndarray:
    idx = wv.index
    return np.fromiter((idx[t] for t in doc if t in idx), dtype=np.int64)


def _pcs(X: np.ndarray, n: int, sample: int = 50_000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """First ``n`` right singular vectors of ``X`` (no centring, as SIF) and their squared singular values."""
    if X.shape[0] > sample:
        X = X[np.random.default_rng(seed).choice(X.shape[0], sample, replace=False)]
    # the right singular vectors are the eigenvectors of the small d x d Gram matrix (a full SVD of X took
    # 7.6 s for 22k x 100 rows on this machine, the Gram route milliseconds); signs do not matter to SIF
    X = X.astype(np.float64)
    w, v = np.linalg.eigh(X.T @ X)
    order = np.argsort(w)[::-1]
    n = min(n, v.shape[1])
    return v[:, order[:n]].T.astype(np.float32), np.maximum(w[order[:n]], 0.0).astype(np.float64)


@dataclass
class SegmentEncoder:
    """SIF or uSIF segment vectors; ``fit`` on the source documents (common components), then ``encode``."""

    wv: WordVectors
    scheme: str = "sif"  # "sif" | "usif" | "mean"
    n_components: int | None = None

    def __post_init__(self):
        if self.scheme not in ("sif", "usif", "mean"):
            raise ValueError("scheme must be 'sif', 'usif' or 'mean'")
        self.components = np.zeros((0, self.wv.dim), np.float32)
        self.component_weights = np.zeros(0, np.float32)
        self._weights = None

    def _word_weights(self, docs) -> np.ndarray:
        p = self.wv.frequencies()
        if self.scheme == "mean":
            return np.ones(len(p), np.float32)
        if self.scheme == "sif":
            return (SIF_A / (SIF_A + p)).astype(np.float32)
        v = len(p)
        n = max(np.mean([len(d) for d in docs]) if len(docs) else 10.0, 1.0)
        threshold = 1.0 - (1.0 - 1.0 / v) ** n
        alpha = max(float((p > threshold).sum()) / v, 1e-9)
        z = 0.5 * v
        a = (1.0 - alpha) / (alpha * z)
        return (a / (0.5 * a + p)).astype(np.float32)

    def _raw(self, docs) -> np.ndarray:
        vecs = self.wv.unit_vectors() if self.scheme == "usif" else np.asarray(self.wv.vectors, np.float32)
        out = np.zeros((len(docs), self.wv.dim), np.float32)
        w = self._weights
        for i, d in enumerate(docs):
            r = _rows(d, self.wv)
            if len(r):
                out[i] = (w[r, None] * vecs[r]).sum(axis=0) / len(r)
        return out

    def fit(self, docs: Sequence[Sequence[str]]) -> "SegmentEncoder":
        self._weights = self._word_weights(docs)
        X = self._raw(docs)
        X = X[np.any(X != 0, axis=1)]
        n = self.n_components if self.n_components is not None else {"sif": 1, "usif": 5, "mean": 0}[self.scheme]
        if n and len(X) >= 2:
            self.components, sq = _pcs(X, n)
            self.component_weights = ((sq / sq.sum()) if self.scheme == "usif" else np.ones(len(sq))).astype(np.float32)
        return self

    def state(self) -> dict:
        """The fitted common components as JSON-safe data (the word weights follow from the vectors for SIF and
        mean; uSIF's also need the fitted documents' mean length, so it is not stored this way)."""
        if self.scheme == "usif":
            raise ValueError("a uSIF encoder is not stored: its word weights depend on the fitted documents")
        return {"scheme": self.scheme, "components": self.components.tolist(),
                "component_weights": self.component_weights.tolist()}

    @classmethod
    def from_state(cls, wv: WordVectors, state: dict) -> "SegmentEncoder":
        enc = cls(wv, state["scheme"])
        enc._weights = enc._word_weights([])
        comps = np.asarray(state["components"], np.float32).reshape(-1, wv.dim)
        enc.components = comps
        enc.component_weights = np.asarray(state["component_weights"], np.float32).reshape(len(comps))
        return enc

    def encode(self, docs: Sequence[Sequence[str]]) -> np.ndarray:
        """Unit-length segment vectors (zero rows for segments without a known unit)."""
        if self._weights is None:
            raise RuntimeError("fit() first")
        X = self._raw(docs)
        if len(self.components):
            proj = X @ self.components.T
            X = X - (proj * self.component_weights) @ self.components
        n = np.linalg.norm(X, axis=1, keepdims=True)
        return X / np.maximum(n, 1e-12)


class TokenMatcher:
    """Word-level similarity between a query and candidate segments: MaxSim and soft cosine.

    ``idf`` weights the query's units (unknown units get the largest idf: they are rare). ``threshold``: cosines
    at or below it count 0 (unrelated words are not partial matches).
    """

    def __init__(self, wv: WordVectors, idf: dict[str, float], threshold: float = 0.5):
        self.wv, self.idf, self.threshold = wv, idf, float(threshold)
        self.max_idf = max(idf.values()) if idf else 1.0
        self.U = wv.unit_vectors()

    def _weights(self, doc) -> np.ndarray:
        return np.asarray([self.idf.get(t, self.max_idf) for t in doc], np.float32)

    def maxsim(self, query: Sequence[str], candidates: Sequence[Sequence[str]]) -> np.ndarray:
        """idf-weighted mean over the query's units of their best match in each candidate, in [0, 1]."""
        index = UnitIndex(self.wv, candidates)
        return self.maxsim_index(query, index, np.arange(len(candidates)))

    def maxsim_index(self, query: Sequence[str], index: "UnitIndex", cand: np.ndarray) -> np.ndarray:
        """:meth:`maxsim` against documents ``cand`` of a prepared :class:`UnitIndex` (no Python loop over their
        words: the cosines are computed once per distinct unit of the candidates)."""
        out = np.zeros(len(cand), np.float32)
        q = list(dict.fromkeys(query))
        if not q or not len(cand):
            return out
        crows, lens = index.gather(np.asarray(cand, np.int64))
        if not len(crows):
            return out
        uniq, inv = np.unique(crows, return_inverse=True)
        Qv = np.zeros((len(q), self.wv.dim), np.float32)
        for i, t in enumerate(q):
            r = self.wv.index.get(t)
            if r is not None:
                Qv[i] = self.U[r]
        sims_u = Qv @ index.M[uniq].T
        sims_u[sims_u <= self.threshold] = 0.0
        for i, t in enumerate(q):  # an identical unit is a full match, with or without a vector
            j = index.ids.get(t)
            if j is not None:
                k = np.searchsorted(uniq, j)
                if k < len(uniq) and uniq[k] == j:
                    sims_u[i, k] = 1.0
        sims = sims_u[:, inv.ravel()]
        starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
        nonempty = lens > 0
        best = np.zeros((len(q), len(cand)), np.float32)
        best[:, nonempty] = np.maximum.reduceat(sims, starts[nonempty], axis=1)
        w = self._weights(q)
        return ((w @ best) / w.sum()).astype(np.float32)

    def soft_cosine(self, query: Sequence[str], candidates: Sequence[Sequence[str]]) -> np.ndarray:
        """Soft cosine of the idf-weighted bags (S = max(0, cos)^2, identity on equal units)."""
        out = np.zeros(len(candidates), np.float32)
        qa, qw, qv = self._bag(query)
        if not len(qa):
            return out
        qq = qw @ self._S(qa, qv, qa, qv) @ qw
        for i, c in enumerate(candidates):
            ca, cw, cv = self._bag(c)
            if not len(ca):
                continue
            cc = cw @ self._S(ca, cv, ca, cv) @ cw
            qc = qw @ self._S(qa, qv, ca, cv) @ cw
            out[i] = qc / np.sqrt(max(qq * cc, 1e-12))
        return out

    def _bag(self, doc):
        units = list(dict.fromkeys(doc))
        counts = {}
        for t in doc:
            counts[t] = counts.get(t, 0) + 1
        w = np.asarray([counts[t] * self.idf.get(t, self.max_idf) for t in units], np.float32)
        rows = np.asarray([self.wv.index.get(t, -1) for t in units])
        V = np.zeros((len(units), self.wv.dim), np.float32)
        V[rows >= 0] = self.U[rows[rows >= 0]]
        return units, w, V

    def _S(self, a, av, b, bv):
        S = np.maximum(av @ bv.T, 0.0) ** 2
        S[S <= self.threshold ** 2] = 0.0
        bpos = {t: j for j, t in enumerate(b)}
        for i, t in enumerate(a):
            j = bpos.get(t)
            if j is not None:
                S[i, j] = 1.0
        return S


class UnitIndex:
    """Documents as integer unit ids (one flat array with offsets) and a table of their unit vectors.

    Ids are local to the indexed documents; a unit without a vector has a zero row (it can still match an
    identical query unit).
    """

    def __init__(self, wv: WordVectors, docs: Sequence[Sequence[str]]):
        self.ids: dict[str, int] = {}
        flat: list[int] = []
        offsets = [0]
        for d in docs:
            flat.extend(self.ids.setdefault(t, len(self.ids)) for t in d)
            offsets.append(len(flat))
        self.flat = np.asarray(flat, np.int64)
        self.offsets = np.asarray(offsets, np.int64)
        U = wv.unit_vectors()
        self.M = np.zeros((len(self.ids), wv.dim), np.float32)
        for t, j in self.ids.items():
            r = wv.index.get(t)
            if r is not None:
                self.M[j] = U[r]

    def gather(self, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(unit ids of the documents ``cand`` one after another, their lengths)."""
        starts = self.offsets[cand]
        lens = self.offsets[cand + 1] - starts
        total = int(lens.sum())
        if not total:
            return np.zeros(0, np.int64), lens
        pos = np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens) + np.repeat(starts, lens)
        return self.flat[pos], lens
