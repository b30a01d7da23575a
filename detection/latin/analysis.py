"""The one Latin text pipeline: text -> tokens -> lemmas -> terms.

Every user of Latin text goes through :func:`latin_tokens` (the retrievers' :class:`Analyzer`, the benchmark's
reference-type rule and lexical-overlap audit in ``detection.latin.overlap``), so a word is cut the same way
everywhere: ``-que`` is split off unless the word merely ends in it, ``-ne``/``-ue`` only where the full word is
unknown to the lemmatiser and its host is known (``putasne -> putas ne``, ``carmine`` stays whole).

Words in another script (the Greek of Cicero's letters: ``σκήψεις atque ἀναβολαί``) are kept as tokens and
pass through the lemmatiser unchanged, so a mixed segment is indexed by its Latin lemmas and its Greek forms.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from .lemmatize import get_lemmatizer, lemmatize_corpus
from .normalize import tokenize
from .stopwords import LATIN_STOPWORDS

__all__ = ["Analyzer", "latin_tokens", "latin_lemmas", "tokens_of"]


@lru_cache(maxsize=1 << 20)
def _known(word: str) -> bool:
    return get_lemmatizer().is_known(word)


def latin_tokens(text: str) -> list[str]:
    """Normalised tokens of ``text`` with enclitics split off (the one tokenisation of the project)."""
    return tokenize(text, _known)


def latin_lemmas(tokens: Sequence[str]) -> list[str]:
    """Lemmas of normalised ``tokens`` (type-level; words in another script are returned unchanged)."""
    return get_lemmatizer().lemmatize(list(tokens))


def tokens_of(texts: Sequence[str]) -> list[list[str]]:
    return [latin_tokens(t) for t in texts]


class Analyzer:
    """Texts -> term lists for the retrievers.

    ``kind`` = "surface" or "lemma"; ``ngram`` = 1 or 2 (1+2 grams); ``stopwords`` = True (our list),
    False, or a collection of terms. Bigrams are built after stopword removal.
    """

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
