"""Greek verse similarity with word vectors trained offline on a large corpus (``train_embeddings --language grc``).

The vectors are a registered model (e.g. ``grc-lemma-cbow200``: Word2Vec CBOW on the lemmas of the Tesserae
Greek texts, 7.8 M words); verses are tokenised exactly as the model's training text was (the default
:class:`GreekPreprocessor`, and :class:`GreekLemmatizer` ``rules`` when the model's unit is ``lemma``).

- :class:`CorpusStaticEmbedding`: verse vector = mean (or SIF-weighted mean with the common component removed,
  fitted on the texts given to ``fit``) of the word vectors, cosine;
- :class:`CorpusSemanticEdit`: the semantically informed edit distance with these vectors.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from detection.greek.lemmatize import GreekLemmatizer
from detection.greek.preprocess import GreekPreprocessor

from ..semantic.static_semantic import SegmentEncoder
from ..semantic.word_vectors import load_vectors
from .greek_similarity import EmbeddingMethod, SemanticEditDistance, _report


class CorpusVectors:
    """A registered Greek word-vector model with the tokenisation it was trained with."""

    def __init__(self, model: str):
        self.wv = load_vectors(model, language="grc")
        self.model = self.wv  # SemanticEditDistance checks that a model is present
        self.dim = self.wv.dim
        self._pre = GreekPreprocessor()
        self._lem = GreekLemmatizer("rules") if self.wv.unit == "lemma" else None
        self._unit = lru_cache(maxsize=200_000)(self._unit_of)

    def fit(self, texts):
        return self

    def _unit_of(self, token: str) -> str:
        return self._pre.normalise(self._lem.lemma(token)) or token

    def tokens(self, text: str) -> list[str]:
        toks = self._pre.tokenize(text)
        return [self._unit(t) for t in toks] if self._lem is not None else toks

    def word_vectors(self, tokens) -> np.ndarray:
        out = np.zeros((len(tokens), self.dim), np.float32)
        for i, t in enumerate(tokens):
            v = self.wv.vector(t)
            if v is not None:
                out[i] = v
        return out


class CorpusStaticEmbedding(EmbeddingMethod):
    """Mean or SIF verse vectors from corpus-trained Greek word vectors, cosine."""

    def __init__(self, model: str = "grc-lemma-cbow200", scheme: str = "mean", preprocess=None):
        super().__init__(None, model=model, scheme=scheme)
        self.vectors = CorpusVectors(model)
        self.encoder = SegmentEncoder(self.vectors.wv, scheme)
        self._fitted = False

    def tokens(self, text: str) -> list[str]:
        return self.vectors.tokens(text)

    def fit(self, texts):
        self.encoder.fit([self.tokens(t) for t in texts])
        self._fitted = True
        return self

    def embed(self, texts, progress=None) -> np.ndarray:
        if not self._fitted:
            self.fit(texts)
        out = self.encoder.encode([self.tokens(t) for t in texts])
        _report(progress, 0.9, f"embedded {len(texts)} verses")
        return out


class CorpusSemanticEdit(SemanticEditDistance):
    """Semantic edit distance (substitution cost 1 − cos) with corpus-trained Greek vectors."""

    def __init__(self, model: str = "grc-lemma-cbow200", normalise: str = "max", max_block_cells: int = 8_000_000,
                 preprocess=None):
        super().__init__(vectors={"": [0.0]}, normalise=normalise, max_block_cells=max_block_cells)
        self.embedding = CorpusVectors(model)
        self.params.update(vectors=model)
