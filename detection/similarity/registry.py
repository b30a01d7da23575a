"""Registry of verse-similarity methods: ``get_method(name, **params)``, ``available()``.

Each entry is a factory with preset parameters; keyword arguments override them, e.g.
``get_method("semantic_edit", vectors="word2vec_sg", lemmas=True)`` or
``get_method("sentence_transformer", model="/path/to/model")``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .methods import (
    CharNgramTfidf,
    ContextualMean,
    NormalisedLevenshtein,
    SemanticEditDistance,
    SentenceTransformerMethod,
    SimilarityMethod,
    StaticEmbedding,
)


@dataclass(frozen=True)
class MethodSpec:
    name: str
    factory: Callable[..., SimilarityMethod]
    description: str
    defaults: dict = field(default_factory=dict)
    needs_model: bool = False

    def as_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "defaults": dict(self.defaults),
                "needs_model": self.needs_model}


_REGISTRY: dict[str, MethodSpec] = {}


def register(name: str, factory, description: str, needs_model: bool = False, **defaults) -> None:
    if name in _REGISTRY:
        raise ValueError(f"method {name!r} already registered")
    _REGISTRY[name] = MethodSpec(name, factory, description, defaults, needs_model)


def available() -> list[str]:
    """Names of the registered methods, in registration order."""
    return list(_REGISTRY)


def method_specs() -> list[dict]:
    """Name, description, preset parameters and whether a model name/path is required, per method."""
    return [spec.as_dict() for spec in _REGISTRY.values()]


def get_method(name: str, **params) -> SimilarityMethod:
    try:
        spec = _REGISTRY[name]
    except KeyError:
        raise KeyError(f"unknown similarity method {name!r}; available: {', '.join(available())}") from None
    kwargs = {**spec.defaults, **params}
    method = spec.factory(**kwargs)
    method.name = name
    return method


register("levenshtein", NormalisedLevenshtein, "Character-level normalised Levenshtein similarity (baseline)")
register("char_ngram", CharNgramTfidf, "TF-IDF of character 2–4-grams, cosine (baseline)", ngram_min=2, ngram_max=4)
register("word2vec_sg", StaticEmbedding, "Word2Vec skip-gram on surface forms, mean verse vector, cosine",
         algorithm="word2vec", sg=1, lemmas=False)
register("word2vec_cbow", StaticEmbedding, "Word2Vec CBOW on surface forms, mean verse vector, cosine",
         algorithm="word2vec", sg=0, lemmas=False)
register("word2vec_sg_lemma", StaticEmbedding, "Word2Vec skip-gram on lemmas, mean verse vector, cosine",
         algorithm="word2vec", sg=1, lemmas=True)
register("word2vec_cbow_lemma", StaticEmbedding, "Word2Vec CBOW on lemmas, mean verse vector, cosine",
         algorithm="word2vec", sg=0, lemmas=True)
register("fasttext", StaticEmbedding, "FastText skip-gram (subword n-grams 3–5) on surface forms, mean, cosine",
         algorithm="fasttext", sg=1, lemmas=False)
register("fasttext_lemma", StaticEmbedding, "FastText skip-gram on lemmas, mean verse vector, cosine",
         algorithm="fasttext", sg=1, lemmas=True)
register("semantic_edit", SemanticEditDistance,
         "Semantically informed edit distance: word Levenshtein, substitution cost 1 − cos (FastText vectors)",
         vectors="fasttext", lemmas=False, normalise="max")
register("semantic_edit_w2v_lemma", SemanticEditDistance,
         "Semantically informed edit distance on lemmas with Word2Vec skip-gram vectors",
         vectors="word2vec_sg", lemmas=True, normalise="max")
register("semantic_edit_directional", SemanticEditDistance,
         "Semantic edit distance normalised by the reference's length (asymmetric: A→B ≠ B→A)",
         vectors="fasttext", lemmas=False, normalise="reference")
register("contextual", ContextualMean, "Contextual token embeddings (transformers AutoModel) averaged per verse",
         needs_model=True, model=None, layer=-1)
register("sentence_transformer", SentenceTransformerMethod, "sentence-transformers verse embeddings, cosine",
         needs_model=True, model=None)
