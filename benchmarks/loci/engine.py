"""Adapter to the Latin engine (``detection.latin``), with a small labelled fallback.

The benchmark code only talks to this module. When the engine is importable its tokeniser, lemmatiser,
stopword list and retriever registry are used; otherwise a minimal stand-in is used (u/i spelling, lower
case, no lemmatisation, a short stopword list, sparse TF-IDF/BM25 with scipy) so that the benchmark code can be
tested on its own. :func:`engine_info` says which one was used; every report records it.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

_FALLBACK_STOPWORDS = frozenset(
    """
    a ab ac ad at atque aut autem cum de dum e ex et etiam enim ergo est esse sum sunt sit fuit hic haec hoc
    huius hunc hanc his iam idem ille illa illud in inter ipse ita igitur is ea id eius eum eam eo me mihi
    nam ne nec neque nisi non nos nunc o per post pro quam que qui quae quod quid quia quo quoque se sed si sic
    sine sub tam tamen te tibi tu tum ubi uel ut uero uos ego nobis uobis quidem an apud ob quasi
    """.split()
)


def _engine_modules():
    try:
        from detection.latin import normalize  # noqa: F401
    except Exception:  # pragma: no cover - engine absent
        return None
    return True


@lru_cache(maxsize=1)
def engine_info() -> dict:
    """Which tokeniser/lemmatiser/stopwords/retriever registry are in use."""
    info = {"tokenizer": "fallback", "lemmatizer": "identity (fallback)", "stopwords": "fallback",
            "retrievers": "fallback"}
    try:
        from detection.latin.normalize import tokenize as _t  # noqa: F401
        info["tokenizer"] = "detection.latin.normalize.tokenize"
    except Exception:
        pass
    try:
        from detection.latin.lemmatize import get_lemmatizer
        lem = get_lemmatizer()
        info["lemmatizer"] = f"detection.latin.lemmatize ({type(lem).__name__})"
    except Exception:
        pass
    try:
        from detection.latin.stopwords import LATIN_STOPWORDS  # noqa: F401
        info["stopwords"] = "detection.latin.stopwords.LATIN_STOPWORDS"
    except Exception:
        pass
    try:
        from detection.methods import get_retriever as _g  # noqa: F401
        info["retrievers"] = "detection.methods"
    except Exception:
        pass
    return info


_TRANS = str.maketrans({"j": "i", "v": "u", "æ": "ae", "œ": "oe"})
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def _fallback_tokenize(text: str) -> list[str]:
    t = unicodedata.normalize("NFD", text or "")
    t = "".join(c for c in t if not unicodedata.combining(c)).lower().translate(_TRANS)
    return _WORD.findall(t)


def tokenize(text: str) -> list[str]:
    """Normalised tokens (engine tokeniser when available)."""
    try:
        from detection.latin.normalize import tokenize as t
    except Exception:
        return _fallback_tokenize(text)
    return t(text)


@lru_cache(maxsize=1)
def _lemmatizer():
    try:
        from detection.latin.lemmatize import get_lemmatizer
        return get_lemmatizer()
    except Exception:
        return None


def lemmatize(tokens: list[str]) -> list[str]:
    """Lemmas for ``tokens`` (identity when no engine lemmatiser is available)."""
    lem = _lemmatizer()
    if lem is None:
        return list(tokens)
    return list(lem.lemmatize(list(tokens)))


@lru_cache(maxsize=1)
def stopwords() -> frozenset:
    try:
        from detection.latin.stopwords import LATIN_STOPWORDS
        return frozenset(LATIN_STOPWORDS)
    except Exception:
        return _FALLBACK_STOPWORDS


def analyse(text: str) -> tuple[list[str], list[str]]:
    """(tokens, lemmas) of one text."""
    toks = tokenize(text)
    return toks, lemmatize(toks)


# ---------------------------------------------------------------------------------------------- retrievers
@dataclass
class TopK:
    """Ranked results: ``indices`` (nq, k) int32 into the fitted source list (-1 = padding), ``scores``
    (nq, k) float32, best first."""

    indices: np.ndarray
    scores: np.ndarray
    source_ids: list


class FallbackSparseRetriever:
    """Minimal TF-IDF (cosine, sublinear tf) / BM25 (k1=1.5, b=0.75) over surface tokens or lemmas.

    Used only when ``detection.methods`` is not importable; reports name it ``fallback:<name>``.
    """

    def __init__(self, kind: str = "bm25", unit: str = "lemma", ngram: int = 1, k1: float = 1.5, b: float = 0.75):
        self.kind, self.unit, self.ngram, self.k1, self.b = kind, unit, ngram, k1, b

    def _terms(self, text):
        toks = tokenize(text)
        terms = lemmatize(toks) if self.unit == "lemma" else toks
        out = list(terms)
        if self.ngram >= 2:
            out += [a + " " + b for a, b in zip(terms, terms[1:])]
        return out

    def _matrix(self, texts, grow: bool):
        from scipy import sparse
        rows, cols, vals = [], [], []
        for i, t in enumerate(texts):
            counts: dict[int, int] = {}
            for term in self._terms(t):
                j = self.vocab.get(term)
                if j is None:
                    if not grow:
                        continue
                    j = self.vocab[term] = len(self.vocab)
                counts[j] = counts.get(j, 0) + 1
            rows += [i] * len(counts)
            cols += list(counts)
            vals += list(counts.values())
        return sparse.csr_matrix((np.asarray(vals, np.float32), (rows, cols)), shape=(len(texts), len(self.vocab)))

    def fit(self, source_ids, source_texts, progress=None):
        from scipy import sparse
        self.vocab: dict[str, int] = {}
        self.source_ids = list(source_ids)
        tf = self._matrix(source_texts, grow=True)
        n = tf.shape[0]
        df = np.bincount(tf.indices, minlength=tf.shape[1]).astype(np.float64)
        if self.kind == "bm25":
            self.idf = np.log1p((n - df + 0.5) / (df + 0.5)).astype(np.float32)
            dl = np.asarray(tf.sum(axis=1)).ravel()
            norm = self.k1 * (1 - self.b + self.b * dl / max(dl.mean(), 1e-9))
            tf = tf.tocoo()
            v = tf.data * (self.k1 + 1) / (tf.data + norm[tf.row]) * self.idf[tf.col]
            self.doc = sparse.csr_matrix((v.astype(np.float32), (tf.row, tf.col)), shape=tf.shape)
        else:
            self.idf = (np.log((1 + n) / (1 + df)) + 1).astype(np.float32)
            m = tf.copy()
            m.data = (1 + np.log(m.data)) * self.idf[m.indices]
            nr = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
            nr[nr == 0] = 1
            self.doc = sparse.diags(1 / nr) @ m
        self.doc_t = self.doc.T.tocsr()
        return self

    def search(self, query_texts, k, progress=None) -> TopK:
        from scipy import sparse
        q = self._matrix(query_texts, grow=False)
        if self.kind == "bm25":
            q.data = np.ones_like(q.data)
        else:
            q.data = (1 + np.log(q.data)) * self.idf[q.indices]
            nr = np.sqrt(np.asarray(q.multiply(q).sum(axis=1)).ravel())
            nr[nr == 0] = 1
            q = sparse.diags(1 / nr) @ q
        nq, ns = q.shape[0], self.doc.shape[0]
        k_eff = min(k, ns)
        idx = np.full((nq, k), -1, np.int32)
        sc = np.full((nq, k), -np.inf, np.float32)
        block = 256
        for start in range(0, nq, block):
            s = (q[start:start + block] @ self.doc_t).toarray()
            part = np.argpartition(-s, k_eff - 1, axis=1)[:, :k_eff] if k_eff < ns else np.tile(np.arange(ns), (len(s), 1))
            ps = np.take_along_axis(s, part, 1)
            order = np.lexsort((part, -ps), axis=1)
            idx[start:start + block, :k_eff] = np.take_along_axis(part, order, 1)
            sc[start:start + block, :k_eff] = np.take_along_axis(ps, order, 1)
            if progress:
                progress(min(1.0, (start + block) / max(nq, 1)))
        return TopK(idx, sc, self.source_ids)


_FALLBACK_SPECS = {
    "bm25-lemma": dict(kind="bm25", unit="lemma"), "bm25-surface": dict(kind="bm25", unit="surface"),
    "tfidf-lemma": dict(kind="tfidf", unit="lemma"), "tfidf-surface": dict(kind="tfidf", unit="surface"),
    "tfidf-lemma-12": dict(kind="tfidf", unit="lemma", ngram=2),
}


def engine_retriever_names() -> list[str]:
    try:
        from detection import methods as r
    except Exception:
        return []
    for attr in ("available", "available_retrievers", "list_retrievers", "names", "REGISTRY", "RETRIEVERS"):
        obj = getattr(r, attr, None)
        if obj is None:
            continue
        try:
            return sorted(obj() if callable(obj) else obj)
        except Exception:
            continue
    return []


def get_retriever(name: str, *, allow_fallback: bool = True, **params):
    """The engine retriever ``name`` (``detection.methods.get_retriever``), or the labelled fallback.

    Returns:
        (retriever, implementation) where implementation is ``"engine"`` or ``"fallback"``.
    """
    try:
        from detection.methods import get_retriever as g
    except Exception:
        g = None
    if g is not None:
        return g(name, **params), "engine"
    if allow_fallback and name in _FALLBACK_SPECS:
        spec = dict(_FALLBACK_SPECS[name])
        spec.update(params)
        return FallbackSparseRetriever(**spec), "fallback"
    raise KeyError(f"retriever {name!r} not available (engine missing: {g is None})")
