"""Normalisation and tokenisation of Latin text.

* case folded, diacritics (macrons, breves, accents) stripped, ``j -> i``, ``v -> u``, ``æ -> ae``, ``œ -> oe``;
* punctuation and digits removed;
* enclitics ``-que``, ``-ne``, ``-ve`` split off by :func:`tokenize` (``virumque -> uirum que``), with an
  exception list of words that merely end in those letters (``quoque``, ``atque``, ``bene``, ``siue`` ...).
"""
from __future__ import annotations

import re
import unicodedata

__all__ = ["normalize_text", "tokenize", "split_enclitic", "latin_share", "has_latin_word", "ENCLITICS"]

ENCLITICS = ("que", "ne", "ue")

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_LETTERS = _WORD
_ASCII_LETTERS = re.compile(r"[A-Za-z]+")
_TRANS = str.maketrans({"j": "i", "v": "u", "æ": "ae", "œ": "oe", "ſ": "s", "ß": "ss"})

# Words ending in -que that are not word + enclitic (u/i spelling, lower case).
_QUE_WORDS = frozenset(
    """
    que atque neque quoque itaque namque usque ubique undique utique denique quisque quaeque quodque quidque
    quicque cuique cuiusque quemque quamque quoque quaque quique quibusque quorumque quarumque quosque
    quasque uterque utraque utrumque utriusque utrique utrisque utramque utrosque utrasque utroque
    plerumque plerique pleraque plerosque plerasque plerisque plerorumque quandoque quotienscumque
    quacumque quicumque quaecumque quodcumque quocumque absque aeque oblique quinque
    unusquisque unumquodque unaquaeque uniuscuiusque unicuique unumquemque unamquamque unoquoque
    undecumque ubicumque utcumque quousque adusque hucusque eousque inque ut usquequaque
    abusque torque torqueque coque decoque concoque detorque retorque extorque contorque intorque
    quoquo quotquot cumque susque deque uterque
    """.split()
)
# Words ending in -ne / -ue that are never split (the rest is split only when asked to and when the
# remainder is a plausible word: see split_enclitic).
_NE_WORDS = frozenset(
    """
    ne bene sine pone paene pene sane plane certe mane tene ante ne nonne siue neue seu ceu aue
    caue moue faue boue ue
    """.split()
)


def _strip_marks(text: str) -> str:
    if text.isascii():  # nothing to decompose (most Latin lines): the same string, about 5x faster
        return text
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def normalize_text(text: str) -> str:
    """Return ``text`` lower-cased, without diacritics or punctuation, in u/i spelling, single-spaced."""
    if not text:
        return ""
    if not text.isascii():  # NFKC and NFD leave ASCII as it is
        text = _strip_marks(unicodedata.normalize("NFKC", text))
    text = text.lower().translate(_TRANS)
    return " ".join(_WORD.findall(text))


def split_enclitic(word: str, known: "callable | None" = None) -> tuple[str, str | None]:
    """Split a normalised word into (host, enclitic) or (word, None).

    ``-que`` is split unless the word is in the exception list. ``-ne`` and ``-ue`` are ambiguous
    (``carmine``, ``breue``): they are split only when ``known`` (a predicate on words) says the full
    word is unknown and the host is known. Without ``known`` only ``-que`` is split.
    """
    if len(word) > 4 and word.endswith("que") and word not in _QUE_WORDS:
        host = word[:-3]
        if host.endswith("cum") or host in {"quis", "quae", "quod", "quid", "qua", "quo", "qui", "quam", "quem"}:
            return word, None
        return host, "que"
    if known is not None and len(word) > 4 and word not in _NE_WORDS:
        for enc in ("ne", "ue"):
            if word.endswith(enc):
                host = word[: -len(enc)]
                if not known(word) and known(host):
                    return host, enc
    return word, None


def tokenize(text: str, known: "callable | None" = None) -> list[str]:
    """Normalised tokens of ``text`` with enclitics split off (``virumque cano`` -> ``uirum que cano``)."""
    out: list[str] = []
    for word in normalize_text(text).split():
        host, enc = split_enclitic(word, known)
        out.append(host)
        if enc is not None:
            out.append(enc)
    return out


def latin_share(text: str) -> float:
    """Share of letters in ``text`` that are Latin script (1.0 for text without letters)."""
    letters = _LETTERS.findall(text)
    if not letters:
        return 1.0
    total = sum(len(chunk) for chunk in letters)
    ascii_letters = sum(len(chunk) for chunk in _ASCII_LETTERS.findall(text))
    if ascii_letters == total:
        return 1.0
    latin = ascii_letters + sum(
        1 for chunk in letters for ch in chunk if ord(ch) > 127 and "LATIN" in unicodedata.name(ch, "")
    )
    return latin / total


def has_latin_word(text: str) -> bool:
    """True when ``text`` holds at least one word in Latin script (after normalisation, an ASCII word).

    A mixed segment (``σκήψεις atque ἀναβολαί; sed nescio an``) qualifies: its Latin words are indexed and its
    Greek words pass through as they are.
    """
    return any(word.isascii() for word in normalize_text(text).split())
