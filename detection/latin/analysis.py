"""Turn segment texts into terms: surface tokens or lemmas, unigrams or unigrams+bigrams, stopwords."""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from .lemmatize import get_lemmatizer, lemmatize_corpus
from .normalize import tokenize
from .stopwords import LATIN_STOPWORDS


@lru_cache(maxsize=1 << 20)
def _known(word: str) -> bool:
    return get_lemmatizer().is_known(word)


def tokens_of(texts: Sequence[str]) -> list[list[str]]:
    return [tokenize(t, _known) for t in texts]


class Analyzer:
    """``kind`` = "surface" or "lemma"; ``ngram`` = 1 or 2 (1+2 grams); ``stopwords`` = True (our list),
    False, or a collection of terms. Bigrams are built after stopword removal."""

    def __init__(self, kind: str = "lemma", ngram: int = 1, stopwords=True, cache_dir=None):
        if kind not in ("surface", "lemma"):
            raise ValueError("kind must be 'surface' or 'lemma'")
        self.kind = kind
        self.ngram = ngram
        if stopwords is True:
            self.stop = LATIN_STOPWORDS
        elif not stopwords:
            self.stop = frozenset()
        else:
            self.stop = frozenset(stopwords)
        self.cache_dir = cache_dir

    def unigrams(self, texts: Sequence[str], progress=None) -> list[list[str]]:
        toks = tokens_of(texts)
        if self.kind == "lemma":
            toks = lemmatize_corpus(toks, cache_dir=self.cache_dir, progress=progress)
        stop = self.stop
        if stop:
            toks = [[t for t in ts if t not in stop] for ts in toks]
        return toks

    def __call__(self, texts: Sequence[str], progress=None) -> list[list[str]]:
        toks = self.unigrams(texts, progress)
        if self.ngram >= 2:
            toks = [ts + [a + "_" + b for a, b in zip(ts, ts[1:])] for ts in toks]
        return toks
