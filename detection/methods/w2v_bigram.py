"""Bigram Word2Vec retriever (after Burns, Brofos, Li, Chaudhuri & Dexter, "Profiling of intertextuality in
Latin literature using word embeddings", NAACL 2021): a segment is the set of its lemma bigrams, a bigram
vector is the sum of its two word vectors; pair score = mean cosine over all bigram pairs. Because the mean
of cosines equals the dot product of the means of unit bigram vectors, each segment is embedded once and
scoring is a dense matrix product in blocks with top-k per row.

The gensim model is trained on the fitted source texts (plus ``extra_texts``) or loaded with
``model_path`` (a gensim ``KeyedVectors``/``Word2Vec`` file).
"""
from __future__ import annotations

import numpy as np

from detection.latin.analysis import Analyzer

from .base import Progress, Retriever, TopK
from .topk import topk_dense


class W2VBigramRetriever(Retriever):
    name = "w2v-bigram"

    def __init__(self, model_path: str | None = None, vector_size: int = 100, window: int = 5, min_count: int = 2,
                 epochs: int = 5, seed: int = 42, workers: int = 1, cache_dir=None, block_size: int = 1024,
                 **_ignored):
        self.analyzer = Analyzer("lemma", 1, stopwords=True, cache_dir=cache_dir)
        self.model_path = model_path
        self.params = dict(vector_size=vector_size, window=window, min_count=min_count, epochs=epochs, seed=seed,
                           workers=workers)
        self.block_size = block_size

    def _load(self, sentences):
        from gensim.models import KeyedVectors, Word2Vec

        if self.model_path:
            try:
                return KeyedVectors.load(self.model_path)
            except Exception:
                return Word2Vec.load(self.model_path).wv
        return Word2Vec(sentences=sentences, sg=0, **self.params).wv

    def _embed(self, docs) -> np.ndarray:
        kv = self.kv
        out = np.zeros((len(docs), kv.vector_size), np.float32)
        for i, ls in enumerate(docs):
            vecs = [kv[w] for w in ls if w in kv.key_to_index]
            if len(vecs) < 2:
                if vecs:
                    v = vecs[0] / (np.linalg.norm(vecs[0]) or 1.0)
                    out[i] = v
                continue
            V = np.asarray(vecs, np.float32)
            bi = V[:-1] + V[1:]
            bi /= np.maximum(np.linalg.norm(bi, axis=1, keepdims=True), 1e-9)
            out[i] = bi.mean(axis=0)
        return out

    def fit(self, source_ids, source_texts, *, progress: Progress | None = None, extra_texts=()):
        self.source_ids = self._check_fit(source_ids, source_texts)
        docs = self.analyzer(source_texts)
        extra = self.analyzer(list(extra_texts)) if extra_texts else []
        self.kv = self._load(docs + extra)
        self.S = self._embed(docs)
        if progress:
            progress(1.0, f"embedded {len(docs)} sources")
        return self

    def search(self, query_texts, k: int, *, progress: Progress | None = None) -> TopK:
        Q = self._embed(self.analyzer(query_texts))
        nq, k_eff = len(query_texts), min(k, len(self.source_ids))
        idx = np.full((nq, k), -1, np.int32)
        val = np.full((nq, k), np.nan, np.float32)
        for a in range(0, nq, self.block_size):
            b = min(a + self.block_size, nq)
            bi, bv = topk_dense(Q[a:b] @ self.S.T, k_eff)
            idx[a:b, :k_eff], val[a:b, :k_eff] = bi, bv
            if progress:
                progress(b / nq, f"w2v-bigram: scored {b}/{nq}")
        return TopK(indices=idx, scores=val, source_ids=self.source_ids)


