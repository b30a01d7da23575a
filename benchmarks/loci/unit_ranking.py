"""An evaluation searched in units other than its segments (``unit``: ``window-2``, ``window-3``, ``sentence``;
:mod:`detection.latin.units`), scored on the segments each hit covers.

A unit joins a segment with the ones that follow it in its text, so it needs segments that are the **lines of a
text**: a segment continues the one before it when their ids differ only in a final number one higher
(``luc. 2.5`` → ``luc. 2.6``); a unit never joins two segments that do not follow each other (a gap, another
book, another work). :func:`unit_problem` says in a sentence why a benchmark cannot be searched so (its segments
are separate passages, or sentences already: prose); an evaluation run refuses such a unit when it is created.

:func:`unit_plan` makes the units of the held-out queries and of the pool: each pool unit covers pool segments,
each held-out query is covered by one unit (a window starts on it) or several (sentences that touch it). A
method is fitted on the pool's units and searches the queries' units; :func:`expand` turns a query's unit hits
into pool segments (each hit's segments in text order, a segment once at its best hit, cut at the depth): what
the metrics score, as for ``line``. Pure (no Django).
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Sequence

import numpy as np

from detection.latin.units import make_units, window_size

_NUMBERED = re.compile(r"^(.*?)(\d+)$")
_SENTENCE_END = re.compile(r"[.!?;][\"'»”’)\]]*$")  # what ends a sentence unit
MIN_RUN_ON = 0.5  # at least this share of the segments must be followed by their next line
MAX_SENTENCE_ENDS = 0.8  # verse lines end a sentence a fifth to a third of the time; prose sentences always


def follows(previous: str, current: str) -> bool:
    """True when ``current`` is the line after ``previous``: the ids differ only in a final number one higher."""
    a, b = _NUMBERED.match(previous.strip()), _NUMBERED.match(current.strip())
    return bool(a and b and a.group(1) == b.group(1) and int(b.group(2)) == int(a.group(2)) + 1)


def runs_of_lines(ids: Sequence[str]) -> list[list[int]]:
    """Positions of ``ids`` cut into runs of consecutive lines (a new run where a segment does not follow the one
    before it)."""
    runs: list[list[int]] = []
    for i, seg_id in enumerate(ids):
        if runs and follows(ids[i - 1], seg_id):
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def unit_problem(unit: str, *, name: str, side: str, ids: Sequence[str], texts: Sequence[str],
                 held: Sequence[str] | None = None) -> str | None:
    """Why the segments ``ids``/``texts`` (in text order) cannot be searched as ``unit``, as a sentence; None when
    they can. ``held``: the segments that are searched (default: all); ``name``: the benchmark, ``side``: which
    segments ("query segments", "segments of the gold pool") for the message."""
    if window_size(unit) == 1:
        return None
    held_ids = list(ids) if held is None else list(held)
    if not held_ids:
        return None
    nxt = {a: b for a, b in zip(ids, list(ids)[1:])}
    run_on = sum(1 for s in held_ids if s in nxt and follows(s, nxt[s]))
    text_of = dict(zip(ids, texts))
    ends = sum(1 for s in held_ids if _SENTENCE_END.search((text_of.get(s) or "").strip()))
    n = len(held_ids)
    if run_on < MIN_RUN_ON * n:
        return (f"unit {unit!r} joins a line with the lines after it, but only {run_on:,} of the {n:,} {side} of "
                f"{name} are followed by their next line (ids such as {held_ids[0]!r}): they are separate passages, "
                f"not the lines of a text; search them with unit 'line'")
    if ends > MAX_SENTENCE_ENDS * n:
        return (f"unit {unit!r} needs lines that run on into the next, but {ends:,} of the {n:,} {side} of {name} "
                f"end a sentence: they are sentences already (prose), not verse lines; search them with unit 'line'")
    return None


@dataclass
class UnitPlan:
    """The units of an evaluation: the pool's (``pool_ids``, ``pool_texts``, ``pool_cover``: the pool positions
    each covers) and the queries' (``query_texts`` in text order; ``query_units[r]``: the units covering held-out
    query ``r``)."""

    unit: str
    pool_ids: list[str]
    pool_texts: list[str]
    pool_cover: list[list[int]]
    query_texts: list[str]
    query_units: list[list[int]]

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "UnitPlan":
        return cls(**data)


def _units_of(ids: Sequence[str], texts: Sequence[str], unit: str):
    """(unit ids, unit texts, positions each covers) over runs of consecutive lines."""
    out_ids, out_texts, cover = [], [], []
    for run in runs_of_lines(ids):
        run_ids = [ids[i] for i in run]
        pos = {s: i for s, i in zip(run_ids, run)}
        for u in make_units(run_ids, [texts[i] for i in run], unit):
            out_ids.append(u.id)
            out_texts.append(u.text)
            cover.append([pos[s] for s in u.lines])
    return out_ids, out_texts, cover


def unit_plan(unit: str, *, pool_ids: Sequence[str], pool_texts: Sequence[str], query_corpus_ids: Sequence[str],
              query_corpus_texts: Sequence[str], queries: Sequence[str]) -> UnitPlan:
    """The units of the pool (in pool order) and of the held-out ``queries`` (units over the query corpus, in its
    order; only the units that cover a held-out query are kept, still in text order)."""
    p_ids, p_texts, p_cover = _units_of(list(pool_ids), list(pool_texts), unit)
    q_ids, q_texts, q_cover = _units_of(list(query_corpus_ids), list(query_corpus_texts), unit)
    row_of = {q: r for r, q in enumerate(queries)}
    covering: list[list[int]] = [[] for _ in queries]
    kept: list[int] = []
    for u, positions in enumerate(q_cover):
        # a window is the held-out query it starts on; a sentence covers every query it touches
        touched = positions[:1] if window_size(unit) >= 1 else positions
        rows = [row_of[query_corpus_ids[p]] for p in touched if query_corpus_ids[p] in row_of]
        if rows:
            for r in rows:
                covering[r].append(len(kept))
            kept.append(u)
    return UnitPlan(unit, p_ids, p_texts, p_cover, [q_texts[u] for u in kept], covering)


def units_of_rows(plan: UnitPlan, start: int, stop: int) -> tuple[int, int]:
    """The span of query units (``lo``, ``hi``) that covers held-out queries ``start..stop-1``."""
    used = [u for r in range(start, stop) for u in plan.query_units[r]]
    return (min(used), max(used) + 1) if used else (0, 0)


def expand(plan: UnitPlan, rows: Sequence[int], unit_idx: np.ndarray, unit_scores: np.ndarray, at: dict[int, int],
           depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Pool positions and scores (``len(rows)`` x ``depth``, ``-1``/``-inf`` padding) of held-out queries ``rows``
    from their units' hits (``unit_idx[at[u]]``: the pool units found for query unit ``u``): each hit's segments
    in text order, a segment once at its best hit; several units of one query (sentences) interleave by rank."""
    out_idx = np.full((len(rows), depth), -1, np.int32)
    out_sc = np.full((len(rows), depth), -np.inf, np.float32)
    for i, r in enumerate(rows):
        hits = sorted((rank, -float(unit_scores[at[u], rank]), int(unit_idx[at[u], rank]))
                      for u in plan.query_units[r] for rank in range(unit_idx.shape[1])
                      if unit_idx[at[u], rank] >= 0)
        seen: set[int] = set()
        n = 0
        for _rank, neg_score, j in hits:
            for p in plan.pool_cover[j]:
                if p not in seen and n < depth:
                    seen.add(p)
                    out_idx[i, n], out_sc[i, n] = p, -neg_score
                    n += 1
            if n >= depth:
                break
    return out_idx, out_sc


def rank_units(method, plan: UnitPlan, depth: int, start: int, stop: int) -> tuple[np.ndarray, np.ndarray,
                                                                                     np.ndarray]:
    """``(rows, indices, scores)`` of held-out queries ``start..stop-1`` for a method fitted on the pool's units
    (:func:`fit_units`): their units searched with the whole unit list's statistics (``search_range``: one span
    of the units in text order), expanded to pool segments."""
    rows = np.arange(start, stop)
    lo, hi = units_of_rows(plan, start, stop)
    if hi <= lo:
        return rows, np.full((len(rows), depth), -1, np.int32), np.full((len(rows), depth), -np.inf, np.float32)
    ids = [str(u) for u in range(len(plan.query_texts))]
    if (lo == 0 and hi == len(ids)) or not hasattr(method, "search_range"):
        idx, sc = method.search(ids[lo:hi], plan.query_texts[lo:hi], depth)
    else:
        idx, sc = method.search_range(ids, plan.query_texts, depth, lo, hi)
    idx, sc = expand(plan, rows, np.asarray(idx), np.asarray(sc), {u: u - lo for u in range(lo, hi)}, depth)
    return rows, idx, sc


def search_rows(method, plan: UnitPlan, rows: Sequence[int], depth: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices, scores) of held-out queries ``rows`` (one fold of a supervised method, fitted on the pool's
    units): the units covering them searched together (in text order), expanded to pool segments."""
    used = sorted({u for r in rows for u in plan.query_units[r]})
    if not used:
        return np.full((len(rows), depth), -1, np.int32), np.full((len(rows), depth), -np.inf, np.float32)
    idx, sc = method.search([str(u) for u in used], [plan.query_texts[u] for u in used], depth)
    return expand(plan, rows, np.asarray(idx), np.asarray(sc), {u: i for i, u in enumerate(used)}, depth)


def fit_units(method, plan: UnitPlan, train=None):
    """Fit ``method`` on the pool's units (``train``: a supervised method's training folds)."""
    return method.fit(plan.pool_ids, plan.pool_texts, train=train)
