"""Search units: a text searched as its lines, as sliding windows of n lines, or as sentences.

A unit keeps the ids of the lines it covers (``lines``): a hit between two units is reported on those lines, so
ids stay the text's own line ids (``luc. 2.5``), whatever the unit. ``unit.id`` is its first line's id (a
sentence that starts on a line where another one started gets ``#2``, ``#3``...).

Units: ``line`` (each line alone), ``window-2`` / ``window-3`` (the line and the next one or two joined by a
newline, so line ends stay visible to the channels; sliding:
every line starts one window, the last ones are shorter), ``sentence`` (the lines joined and cut after ``.``,
``!``, ``?`` or ``;``; a sentence covers every line it touches).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from core.run_limits import UNIT

UNITS = UNIT.values  # declared once with every run's options (core/run_limits.py)
UNIT_HELP = UNIT.help
_SENTENCE_END = re.compile(r"[.!?;]+[\"'»”’)\]]*")


class UnitError(ValueError):
    """An unknown unit name."""


@dataclass(frozen=True)
class TextUnit:
    id: str
    text: str
    lines: tuple[str, ...]


def check_unit(unit: str) -> str:
    return UNIT.check(unit, UnitError)


def window_size(unit: str) -> int:
    """Lines a window covers (1 for ``line``; 0 for ``sentence``, which is not a window)."""
    check_unit(unit)
    if unit == "line":
        return 1
    return int(unit.split("-")[1]) if unit.startswith("window-") else 0


def make_units(ids: Sequence[str], texts: Sequence[str], unit: str = "line") -> list[TextUnit]:
    """The units of a text given as lines (``ids[i]`` the id of line ``texts[i]``), in text order."""
    if len(ids) != len(texts):
        raise ValueError("ids and texts differ in length")
    n = window_size(unit)
    if n >= 1:
        return [TextUnit(ids[i], "\n".join(t.strip() for t in texts[i:i + n]), tuple(ids[i:i + n]))
                for i in range(len(ids))]
    return _sentences(ids, texts)


def _sentences(ids: Sequence[str], texts: Sequence[str]) -> list[TextUnit]:
    out: list[TextUnit] = []
    seen: dict[str, int] = {}
    parts: list[str] = []
    covered: list[str] = []

    def close():
        text = " ".join(p for p in parts if p).strip()
        if text and covered:
            first = covered[0]
            seen[first] = seen.get(first, 0) + 1
            uid = first if seen[first] == 1 else f"{first}#{seen[first]}"
            out.append(TextUnit(uid, text, tuple(dict.fromkeys(covered))))
        parts.clear()
        covered.clear()

    for lid, line in zip(ids, texts):
        pos = 0
        line = line.strip()
        for m in _SENTENCE_END.finditer(line):
            piece = line[pos:m.end()].strip()
            if piece:
                parts.append(piece)
                covered.append(lid)
            close()
            pos = m.end()
        rest = line[pos:].strip()
        if rest:
            parts.append(rest)
            covered.append(lid)
    close()
    return out


def line_rankings(query_units: Sequence[TextUnit], source_units: Sequence[TextUnit], indices, scores=None,
                  *, depth: int | None = None) -> tuple[dict[str, list[str]], dict[str, list[float]]]:
    """Unit hits as line rankings: for each query unit's first line, the lines of its source hits in rank order
    (each hit's lines in text order, a line listed once, at its best hit), cut at ``depth`` lines.

    ``indices[i]`` are indices into ``source_units`` (``-1`` = padding), ``scores[i]`` their scores (a line
    inherits its hit's score)."""
    ranked: dict[str, list[str]] = {}
    ranked_scores: dict[str, list[float]] = {}
    for i, qu in enumerate(query_units):
        lines: list[str] = []
        line_scores: list[float] = []
        seen: set[str] = set()
        row = indices[i]
        for r, j in enumerate(row):
            if j < 0:
                break
            for line in source_units[j].lines:
                if line not in seen:
                    seen.add(line)
                    lines.append(line)
                    line_scores.append(float(scores[i][r]) if scores is not None else 0.0)
            if depth is not None and len(lines) >= depth:
                break
        if depth is not None:
            lines, line_scores = lines[:depth], line_scores[:depth]
        key = qu.lines[0]
        if key not in ranked:  # sentences starting on the same line: the first keeps the line
            ranked[key], ranked_scores[key] = lines, line_scores
    return ranked, ranked_scores
