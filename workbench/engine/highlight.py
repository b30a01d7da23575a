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
    from detection.latin import overlap as lexical

    return set(lexical.content_set(lexical.analyse(text)))


def shared_lemmas(query_text: str, source_text: str) -> set[str]:
    """Content lemmas (stopwords removed) the two passages share."""
    return content_lemmas(query_text) & content_lemmas(source_text)


def spans(text: str, lemmas: set[str], channel_words: dict[str, set[str]] | None = None) -> list[list]:
    """``text`` cut into ``[piece, shared, channels]`` pieces: a word is shared when one of its lemmas is in
    ``lemmas``, and carries the names of the channels (in ``channel_words``' order) whose matched words hold
    one of its forms or lemmas. Joining the pieces gives ``text`` back unchanged."""
    channel_words = channel_words or {}
    out: list[list] = []
    pos = 0
    for m in _WORD.finditer(text):
        if m.start() > pos:
            out.append([text[pos:m.start()], False, []])
        keys = _word_lemmas(m.group(0)) if (lemmas or channel_words) else set()
        out.append([m.group(0), bool(keys & lemmas), [name for name, words in channel_words.items() if keys & words]])
        pos = m.end()
    if pos < len(text):
        out.append([text[pos:], False, []])
    return out


def _side_words(channels: list[dict], side: int) -> dict[str, set[str]]:
    """Per channel, every form and lemma of the words it matched on one side (0: query, 1: source)."""
    out: dict[str, set[str]] = {}
    for ch in channels:
        keys = out.setdefault(ch["name"], set())
        for pair in ch["matches"]:
            keys |= _word_lemmas(pair[side]) | {pair[side].lower()}
    return out


def highlight_pair(query_text: str, source_text: str, channels: list[dict] | None = None) -> dict:
    """Both passages as pieces with shared words marked (and, given an explanation's channels, see
    :func:`workbench.engine.explain.channels`, the channels each word matched in), and the shared lemmas."""
    lemmas = shared_lemmas(query_text, source_text)
    chans = channels or []
    return {"shared_lemmas": sorted(lemmas), "query": spans(query_text, lemmas, _side_words(chans, 0)),
            "source": spans(source_text, lemmas, _side_words(chans, 1))}
