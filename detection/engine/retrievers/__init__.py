"""Retrievers behind one interface, in a registry keyed by name.

>>> r = get_retriever("bm25-lemma", k1=1.2, b=0.75)
>>> r.fit(source_ids, source_texts).search(query_texts, k=100)   # -> TopK
"""
from .base import Retriever, TopK, available, get_retriever, register
from . import sparse as _sparse  # noqa: F401  (registers bm25-*, tfidf-*)
from . import tesserae as _tesserae  # noqa: F401
from . import w2v as _w2v  # noqa: F401

__all__ = ["Retriever", "TopK", "available", "get_retriever", "register"]
