"""Offline lemmatisation of Byzantine Greek: simplemma ``grc`` plus orthographic rules.

Variants (``GreekLemmatizer(variant=...)``), measured on the DBBE 10k-token gold
(``lingAnn_GS_medievalGreek.tsv``) by :func:`measure_lemmatizer`; see docs/greek_similarity.md:

- ``"simplemma"``: the token as is, ``simplemma.lemmatize(token, lang="grc")``.
- ``"normalised"``: NFC, lowercase, grave → acute before the lookup.
- ``"rules"``: ``normalised`` plus rules for Byzantine orthography, each tried only when the plain lookup
  fails (returns the form unchanged) unless stated: editorial brackets removed (``Ἰωάν(ν)ης``), iota adscript
  written as subscript (``τῶι`` → ``τῷ``), a missing iota subscript restored on final ``-ῶ/-ῆ/-ᾶ``
  (``τῆ`` → ``τῇ``, also tried when the lookup succeeds but the subscript form gives a different lemma
  for the article/pronoun-like forms), elided forms expanded (``δ᾽`` → ``δέ``, ``παρ᾽`` → ``παρά``),
  and simplemma's greedy mode as the last resort.
"""
from __future__ import annotations

import unicodedata
from functools import lru_cache
from pathlib import Path

from .preprocess import grave_to_acute

VARIANTS = ("simplemma", "normalised", "rules")

_ELISION_MARKS = "᾽'’ʹ`´ʼ῾"
# Elided (or apocopated) forms of frequent particles and prepositions → full form.
_ELIDED = {
    "δ": "δέ", "τ": "τε", "γ": "γε", "θ": "τε",
    "ἀλλ": "ἀλλά", "οὐδ": "οὐδέ", "μηδ": "μηδέ", "οὔτ": "οὔτε", "μήτ": "μήτε",
    "παρ": "παρά", "κατ": "κατά", "καθ": "κατά", "μετ": "μετά", "μεθ": "μετά",
    "ἀπ": "ἀπό", "ἀφ": "ἀπό", "ἐπ": "ἐπί", "ἐφ": "ἐπί", "ὑπ": "ὑπό", "ὑφ": "ὑπό",
    "ἀντ": "ἀντί", "ἀνθ": "ἀντί", "δι": "διά", "ἀμφ": "ἀμφί",
}
_SUBSCRIPT = {"ῶ": "ῷ", "ῆ": "ῇ", "ᾶ": "ᾷ", "ώ": "ῴ", "ή": "ῄ", "ά": "ᾴ", "ω": "ῳ", "η": "ῃ", "α": "ᾳ"}


def _simplemma(token: str, greedy: bool = False) -> str:
    import simplemma

    return simplemma.lemmatize(token, lang="grc", greedy=greedy)


def _clean(token: str) -> str:
    t = unicodedata.normalize("NFC", token)
    return grave_to_acute(t).lower()


def _adscript_to_subscript(t: str) -> str:
    for base in ("ῶι", "ῆι", "ᾶι", "ώι", "ήι", "άι"):
        if t.endswith(base):
            return t[:-2] + _SUBSCRIPT[base[0]]
    return t


class GreekLemmatizer:
    """Token → lemma, cached: the same API as the Latin lemmatiser (``detection.latin.lemmatize.LatinLemmatizer``):
    ``lemma(token)`` for one token, ``lemmatize(tokens)`` for a list."""

    def __init__(self, variant: str = "rules"):
        if variant not in VARIANTS:
            raise ValueError(f"unknown lemmatiser variant {variant!r}; choose from {VARIANTS}")
        self.variant = variant
        self._cached = lru_cache(maxsize=200_000)(self._lemma)

    def __repr__(self) -> str:
        return f"GreekLemmatizer(variant={self.variant!r})"

    def lemma(self, token: str) -> str:
        return self._cached(token)

    def lemmatize(self, tokens: list[str]) -> list[str]:
        return [self._cached(t) for t in tokens]

    __call__ = lemma

    def _lemma(self, token: str) -> str:
        if not token:
            return token
        if self.variant == "simplemma":
            return _simplemma(token)
        t = _clean(token)
        if self.variant == "normalised":
            return _simplemma(t)
        return self._rules(t)

    def _rules(self, t: str) -> str:
        t = t.replace("(", "").replace(")", "").replace("[", "").replace("]", "").replace("<", "").replace(">", "")
        stripped = t.rstrip(_ELISION_MARKS)
        if stripped != t or stripped in _ELIDED:
            if stripped in _ELIDED:
                return _ELIDED[stripped]
            t = stripped
        if not t:
            return t
        t = _adscript_to_subscript(t)
        lemma = _simplemma(t)
        # Byzantine scribes often omit the iota subscript: try it on final long vowels.
        if t[-1] in "ῶῆᾶ":
            alt = _simplemma(t[:-1] + _SUBSCRIPT[t[-1]])
            if alt != t[:-1] + _SUBSCRIPT[t[-1]] and (lemma == t or len(t) <= 4 or _looks_nominal(alt)):
                lemma = alt
        if lemma == t:
            greedy = _simplemma(t, greedy=True)
            if greedy:
                lemma = greedy
        return lemma


def _looks_nominal(lemma: str) -> bool:
    # Lemmas of nouns/adjectives/pronouns in -ος/-ης/-η/-ον/-ός/-ή, not verbs in -ω/-μαι/-μι.
    return not lemma.endswith(("ω", "ῶ", "μαι", "μι", "ομαι"))


def read_lemma_gold(path: str | Path) -> list[tuple[str, str, str]]:
    """Rows (token, POS, lemma) of the DBBE gold TSV; blank rows skipped."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3:
                continue
            token, pos, lemma = parts[0].strip('"'), parts[1], parts[2]
            if token:
                rows.append((token, pos, lemma))
    return rows


def lemma_key(lemma: str) -> str:
    """Comparison key: NFC, lowercase, grave → acute (citation forms differ only in these)."""
    return _clean(lemma)


def measure_lemmatizer(path: str | Path, variant: str = "rules", *, halves: bool = True) -> dict:
    """Accuracy on the gold's word tokens (POS not punctuation, gold lemma present and not 'lacuna').

    ``accuracy``: normalised match (:func:`lemma_key`); ``exact``: NFC-identical; ``lemma_equals_form``: share of
    tokens whose lemma is their own (lowercased) form (right or wrong). With ``halves``, accuracies on the first and second
    half of the file are given too (the rules were written looking at errors on the first half).
    """
    rows = [r for r in read_lemma_gold(path) if r[1] and not r[1].startswith("u") and r[2] and r[2] != "lacuna"]
    lem = GreekLemmatizer(variant)
    correct = []
    exact = unchanged = 0
    for token, _pos, gold in rows:
        pred = lem(token)
        correct.append(lemma_key(pred) == lemma_key(gold))
        exact += unicodedata.normalize("NFC", pred) == unicodedata.normalize("NFC", gold)
        unchanged += _clean(pred) == _clean(token)
    n = len(rows)
    out = {
        "variant": variant,
        "n_tokens": n,
        "accuracy": sum(correct) / n if n else float("nan"),
        "exact": exact / n if n else float("nan"),
        "lemma_equals_form": unchanged / n if n else float("nan"),
    }
    if halves and n:
        h = n // 2
        out["accuracy_first_half"] = sum(correct[:h]) / h
        out["accuracy_second_half"] = sum(correct[h:]) / (n - h)
    return out
