"""Mark the words of two passages whose lemmas both share (the overlap behind most detections)."""
from __future__ import annotations

import re

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def _word_lemmas(word: str) -> set[str]:
    from detection.latin.lemmatize import get_lemmatizer
    from detection.latin.normalize import tokenize

    tokens = tokenize(word)
    return set(get_lemmatizer().lemmatize(tokens)) | set(tokens)


def content_lemmas(text: str) -> set[str]:
    from benchmarks.loci import lexical

    return set(lexical.content_set(lexical.analyse(text)))


def shared_lemmas(query_text: str, source_text: str) -> set[str]:
    """Content lemmas (stopwords removed) the two passages share."""
    return content_lemmas(query_text) & content_lemmas(source_text)


def spans(text: str, lemmas: set[str]) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, shared) pieces: a word is shared when one of its lemmas is in ``lemmas``.
    Joining the pieces gives ``text`` back unchanged."""
    out: list[tuple[str, bool]] = []
    pos = 0
    for m in _WORD.finditer(text):
        if m.start() > pos:
            out.append((text[pos:m.start()], False))
        out.append((m.group(0), bool(lemmas and _word_lemmas(m.group(0)) & lemmas)))
        pos = m.end()
    if pos < len(text):
        out.append((text[pos:], False))
    return out


def highlight_pair(query_text: str, source_text: str) -> dict:
    """Both passages as pieces with shared words marked, and the shared lemmas (sorted)."""
    lemmas = shared_lemmas(query_text, source_text)
    return {"shared_lemmas": sorted(lemmas), "query": spans(query_text, lemmas), "source": spans(source_text, lemmas)}
