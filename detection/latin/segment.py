"""Sentence segmentation with stable, benchmark-style ids.

Loci Similes segments are sentences split on hard punctuation (``. ! ?``). A text arrives as *units* with the
edition's reference (a verse line ``2.774``, a prose section ``130.5.5``). Units are joined (verse lines with
`` / ``, as the benchmark prints them; prose with a space) and split into sentences. A sentence's id is the
reference of the unit it starts in plus its 1-based number among the sentences starting in that unit:
``verg. aen. 2.774.1``, ``hier. epist. 130.5.5.3``. ``Segment.ref`` keeps the edition reference span
(``2.773-2.774`` when a sentence runs over two lines).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

__all__ = ["Unit", "Segment", "split_sentences", "sentence_spans", "segment_units", "ABBREVIATIONS"]


@dataclass(frozen=True)
class Unit:
    """A piece of an edition with its reference (verse line, prose section) and source line number."""

    ref: str
    text: str
    line: int | None = None


@dataclass(frozen=True)
class Segment:
    """One text segment (a sentence) of a corpus: the project's one segment record (the Latin readers, the corpus
    builder and the Loci Similes benchmark all use it). ``ref`` is the locus inside the work (``21.2.5.1``,
    ``2.774-2.775``)."""

    seg_id: str
    text: str
    author: str = ""
    work: str = ""
    ref: str = ""


# Roman abbreviations ending in a full stop that do not end a sentence (praenomina, dates, titles).
ABBREVIATIONS = frozenset(
    """
    a ap c cn d d. f k l m m' mam n num p q s ser sex sp t ti tib u v
    kal id non cos coss procos imp trib pl leg praef pr
    cf sq al ca ep lib cap uol
    """.split()
)

_BOUNDARY = re.compile(r"[.!?]+(?:[\"'”’»)\]]*)")
_WORD_BEFORE = re.compile(r"([A-Za-z']+)$")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) character spans of the sentences of ``text``; whitespace between them is excluded.

    A run of ``.``, ``!``, ``?`` (with closing quotes/brackets) ends a sentence when followed by whitespace or
    the end of the text, except a single ``.`` after a Roman abbreviation (``M. Tullius``, ``Kal. Ian.``).
    """
    spans: list[tuple[int, int]] = []
    n = len(text)
    start = 0
    for m in _BOUNDARY.finditer(text):
        end = m.end()
        if end < n and not text[end].isspace():
            continue
        if m.group(0) == ".":
            w = _WORD_BEFORE.search(text[max(0, m.start() - 12): m.start()])
            if w is not None:
                word = w.group(1)
                if word.lower() in ABBREVIATIONS and (len(word) == 1 or word[0].isupper()):
                    continue
        s, e = _strip(text, start, end)
        if s < e:
            if _has_word(text[s:e]) or not spans:
                spans.append((s, e))
            else:  # punctuation only ("..."): glue to the previous sentence
                spans[-1] = (spans[-1][0], e)
        start = end
    s, e = _strip(text, start, n)
    if s < e:
        if _has_word(text[s:e]) or not spans:
            spans.append((s, e))
        else:
            spans[-1] = (spans[-1][0], e)
    return spans


def _strip(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


_WORDCHAR = re.compile(r"[^\W_]", re.UNICODE)


def _has_word(chunk: str) -> bool:
    return _WORDCHAR.search(chunk) is not None


def split_sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(text)]


def _clean_unit_text(text: str) -> str:
    return " ".join(text.split())


def segment_units(
    units: Sequence[Unit] | Iterable[Unit],
    prefix: str,
    *,
    author: str = "",
    work: str = "",
    verse: bool = False,
) -> list[Segment]:
    """Join ``units`` and split them into sentences with ids ``"{prefix} {unit.ref}.{n}"``."""
    units = [u for u in units if u.text and u.text.strip()]
    joiner = " / " if verse else " "
    pieces: list[str] = []
    starts: list[int] = []
    pos = 0
    for i, u in enumerate(units):
        if i:
            pieces.append(joiner)
            pos += len(joiner)
        t = _clean_unit_text(u.text)
        starts.append(pos)
        pieces.append(t)
        pos += len(t)
    full = "".join(pieces)
    out: list[Segment] = []
    per_unit: dict[int, int] = {}
    ui = 0
    for s, e in sentence_spans(full):
        if verse:
            while s < e and full[s] in " /":
                s += 1
            while e > s and full[e - 1] in " /":
                e -= 1
            if s >= e:
                continue
        while ui + 1 < len(starts) and starts[ui + 1] <= s:
            ui += 1
        uj = ui
        while uj + 1 < len(starts) and starts[uj + 1] < e:
            uj += 1
        k = per_unit.get(ui, 0) + 1
        per_unit[ui] = k
        text = full[s:e]
        ref = units[ui].ref if uj == ui else f"{units[ui].ref}-{units[uj].ref}"
        sid = f"{prefix} {units[ui].ref}.{k}" if prefix else f"{units[ui].ref}.{k}"
        out.append(Segment(seg_id=sid, text=text, author=author, work=work, ref=ref))
    return out
