"""Bigram Word2Vec retriever after Burns, Brofos, Li, Chaudhuri & Dexter, "Profiling of intertextuality in
Latin literature using word embeddings" (NAACL 2021).

Burns et al. rank *phrases*: a query bigram (two content lemmas) is compared with every bigram of the source
texts, and a candidate bigram is similar when its two words are each close to one of the query's words. Here
that is applied per segment (``match="bigram"``, the default):

- a segment's bigrams are its adjacent content lemmas (stopwords removed first);
- bigram similarity sim((x, y), (a, b)) = max(cos(x, a) + cos(y, b), cos(x, b) + cos(y, a)) / 2 (word order
  free; a word without a vector matches only itself, with cosine 1);
- a source segment's score for a query = the mean, over the query's bigrams, of the best-matching bigram of
  the source (so one strongly matching phrase counts, instead of being averaged away over whole lines).

``match="lines"`` keeps the older whole-segment variant (mean cosine over all bigram pairs = dot product of
mean unit bigram vectors), which is near useless on unseen data (R@10 0.02 on the 545 pairs).

Vectors: a registered word-vector model (``vectors``: a name made with ``manage.py train_embeddings``), or, when
none is named, Word2Vec trained on the fitted source texts. Platform code may pass ``model_path``: a gensim file
it made itself (``KeyedVectors`` or a full ``Word2Vec`` model; both load).
"""
from __future__ import annotations

import numpy as np

from detection.latin.analysis import Analyzer

from ..infrastructure.topk import topk_dense
from ..retriever import Progress, Retriever, TopK
from .word_vectors import WordVectors, load_gensim_file, load_vectors


class W2VBigramRetriever(Retriever):
    name = "w2v-bigram"

    def __init__(self, model_path: str | None = None, vectors: str | None = None, match: str = "bigram",
                 vector_size: int = 100, window: int = 5, min_count: int = 2, epochs: int = 5, seed: int = 42,
                 workers: int = 1, cache_dir=None, block_size: int = 1024, word_vectors: WordVectors | None = None,
                 **_ignored):
        if match not in ("bigram", "lines"):
            raise ValueError("match must be 'bigram' or 'lines'")
        self.model_path, self.vectors_name, self.match = model_path, vectors, match
        self.params = dict(vector_size=vector_size, window=window, min_count=min_count, epochs=epochs, seed=seed,
                           workers=workers)
        self.block_size = block_size
        self.wv = word_vectors
        if self.wv is None and vectors:
            self.wv = load_vectors(vectors, language="la")
        unit = self.wv.unit if self.wv is not None else "lemma"
        self.analyzer = Analyzer(unit, 1, stopwords=True, cache_dir=cache_dir)

    def _load(self, sentences) -> WordVectors:
        if self.wv is not None:
            return self.wv
        if self.model_path:
            return load_gensim_file(self.model_path)
        from gensim.models import Word2Vec

        return WordVectors.from_gensim(Word2Vec(sentences=sentences, sg=0, **self.params).wv)

    # ---------------------------------------------------------------------------------- units and bigrams
    def _unit_ids(self, docs, grow: bool) -> list[np.ndarray]:
        out = []
        for d in docs:
            ids = []
            for t in d:
                j = self.uid.get(t)
                if j is None:
                    if not grow:
                        j = -1  # unknown to the sources: can match nothing
                    else:
                        j = self.uid[t] = len(self.uid)
                ids.append(j)
            out.append(np.asarray(ids, np.int64))
        return out

    def _unit_matrix(self) -> np.ndarray:
        """Unit vectors of the source units (zero rows for units without a vector)."""
        U = self.kv.unit_vectors()
        M = np.zeros((len(self.uid), self.kv.dim), np.float32)
        for t, j in self.uid.items():
            i = self.kv.index.get(t)
            if i is not None:
                M[j] = U[i]
        return M

    def fit(self, source_ids, source_texts, *, progress: Progress | None = None, extra_texts=()):
        self.source_ids = self._check_fit(source_ids, source_texts)
        docs = self.analyzer(list(source_texts))
        extra = self.analyzer(list(extra_texts)) if extra_texts else []
        self.kv = self._load(docs + extra)
        self.uid: dict[str, int] = {}
        ids = self._unit_ids(docs, grow=True)
        self.M = self._unit_matrix()
        # every source bigram as (first unit, second unit), segment boundaries in ``starts``
        firsts, seconds, lens = [], [], []
        for a in ids:
            if len(a) >= 2:
                firsts.append(a[:-1])
                seconds.append(a[1:])
                lens.append(len(a) - 1)
            elif len(a) == 1:  # a one-word segment: its word paired with itself
                firsts.append(a)
                seconds.append(a)
                lens.append(1)
            else:
                lens.append(0)
        self.bi_a = np.concatenate(firsts) if firsts else np.zeros(0, np.int64)
        self.bi_b = np.concatenate(seconds) if seconds else np.zeros(0, np.int64)
        self.lens = np.asarray(lens, np.int64)
        self.starts = np.concatenate([[0], np.cumsum(self.lens)[:-1]]).astype(np.int64)
        if self.match == "lines":
            self.S = self._line_vectors(ids)
        if progress:
            progress(1.0, f"indexed {len(docs)} sources, {len(self.bi_a)} bigrams")
        return self

    def _line_vectors(self, ids) -> np.ndarray:
        out = np.zeros((len(ids), self.M.shape[1]), np.float32)
        for i, a in enumerate(ids):
            a = a[a >= 0]
            if len(a) == 0:
                continue
            V = self.M[a] if len(a) >= 2 else self.M[a][:1]
            bi = V[:-1] + V[1:] if len(a) >= 2 else V
            bi /= np.maximum(np.linalg.norm(bi, axis=1, keepdims=True), 1e-9)
            out[i] = bi.mean(axis=0)
        return out

    def _query_vector(self, t: str) -> np.ndarray:
        v = self.kv.vector(t) if t in self.kv.index or self.kv.ngrams is not None else None
        if v is None:
            return np.zeros(self.M.shape[1], np.float32)
        return (v / max(float(np.linalg.norm(v)), 1e-12)).astype(np.float32)

    def _cos_to_units(self, t: str) -> np.ndarray:
        """Cosine of query unit ``t`` with every source unit (1 for the identical unit)."""
        s = self.M @ self._query_vector(t)
        j = self.uid.get(t)
        if j is not None:
            s[j] = 1.0
        return s

    def _score_query(self, units: list[str]) -> np.ndarray:
        n = len(self.source_ids)
        if not units or not len(self.bi_a):
            return np.zeros(n, np.float32)
        pairs = list(zip(units[:-1], units[1:])) if len(units) >= 2 else [(units[0], units[0])]
        cos = {t: self._cos_to_units(t) for t in set(units)}
        total = np.zeros(n, np.float64)
        nonempty = self.lens > 0
        for x, y in dict.fromkeys(pairs):
            sx, sy = cos[x], cos[y]
            sim = np.maximum(sx[self.bi_a] + sy[self.bi_b], sx[self.bi_b] + sy[self.bi_a]) * 0.5
            best = np.zeros(n, np.float64)
            best[nonempty] = np.maximum.reduceat(sim, self.starts[nonempty])
            total += best
        return (total / len(dict.fromkeys(pairs))).astype(np.float32)

    def search(self, query_texts, k: int, *, progress: Progress | None = None) -> TopK:
        docs = self.analyzer(list(query_texts))
        nq, k_eff = len(docs), min(k, len(self.source_ids))
        idx = np.full((nq, k), -1, np.int32)
        val = np.full((nq, k), np.nan, np.float32)
        if self.match == "lines":
            Q = self._line_vectors(self._unit_ids(docs, grow=False))
            for a in range(0, nq, self.block_size):
                b = min(a + self.block_size, nq)
                bi, bv = topk_dense(Q[a:b] @ self.S.T, k_eff)
                idx[a:b, :k_eff], val[a:b, :k_eff] = bi, bv
            return TopK(indices=idx, scores=val, source_ids=self.source_ids)
        for i, units in enumerate(docs):
            scores = self._score_query(units)
            bi, bv = topk_dense(scores[None, :], k_eff)
            idx[i, :k_eff], val[i, :k_eff] = bi[0], bv[0]
            if progress and (i % 50 == 0 or i == nq - 1):
                progress((i + 1) / nq, f"w2v-bigram: scored {i + 1}/{nq}")
        return TopK(indices=idx, scores=val, source_ids=self.source_ids)
