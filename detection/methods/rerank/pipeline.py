"""Retrieve and rerank: any registered retriever → any registered reranker (seed 000 §4.2, Table 12).

1. :func:`retrieve` ranks the source segments for every query with a first-stage retriever and keeps the top
   ``k`` as :class:`Candidates` (flat arrays: one row per (query, candidate) pair, with retrieval score and rank);
2. a reranker (:mod:`detection.methods.rerank.rerankers`) gives every candidate class probabilities for
   (no match, ``cit.``, ``cf.``) and, with its thresholds, a label (:func:`rerank`);
3. :func:`reranked_topk` reorders each query's candidates by the probability of a reference (1 − p_none) for
   Recall/MRR; :func:`depth_sweep` the Table 12 trade-off: at each
   depth k, retrieval alone (every top-k pair is a positive to inspect) against retrieve-and-rerank (only the
   pairs the reranker labels positive), with precision, recall, F1 and the passages a philologist must read.

No Django here.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .thresholds import decide

Progress = Callable[[float, str], None]
SWEEP_KS = (1, 5, 10, 20, 50, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000)


@dataclass
class Candidates:
    """The first stage's top-k for every query, flattened: row n is (query ``qi[n]``, source ``si[n]``)."""

    query_ids: list[str]
    query_texts: list[str]
    source_ids: list[str]
    source_texts: list[str]
    qi: np.ndarray  # int64 (n,)
    si: np.ndarray  # int64 (n,)
    score: np.ndarray  # float64 (n,)
    rank: np.ndarray  # int64 (n,), 1-based within the query
    k: int = 0
    meta: dict = field(default_factory=dict)
    # the first stage's own per-candidate signals (e.g. ``channels``' score of each channel), one column a name;
    # a feature reranker appends them to its features (``first_stage_features``)
    extra: np.ndarray | None = None  # float (n, len(extra_names))
    extra_names: tuple[str, ...] = ()

    def __len__(self) -> int:
        return int(self.qi.size)

    def subset(self, rows: np.ndarray) -> Candidates:
        """The same queries/sources, only the given rows."""
        return Candidates(self.query_ids, self.query_texts, self.source_ids, self.source_texts, self.qi[rows],
                          self.si[rows], self.score[rows], self.rank[rows], self.k, self.meta,
                          None if self.extra is None else self.extra[rows], self.extra_names)

    @staticmethod
    def concat(parts: Sequence[Candidates]) -> Candidates:
        """The rows of several candidate sets over the same queries and sources (e.g. each fold's held-out rows,
        retrieved by that fold's own first-stage model), in the order given."""
        if not parts:
            raise ValueError("nothing to concatenate")
        first = parts[0]
        for p in parts[1:]:
            if p.query_ids != first.query_ids or p.source_ids != first.source_ids:
                raise ValueError("candidate sets over different queries or sources cannot be concatenated")
            if p.extra_names != first.extra_names or (p.extra is None) != (first.extra is None):
                raise ValueError("candidate sets with different first-stage signals cannot be concatenated")
        return Candidates(first.query_ids, first.query_texts, first.source_ids, first.source_texts,
                          *(np.concatenate([getattr(p, a) for p in parts]) for a in ("qi", "si", "score", "rank")),
                          max(p.k for p in parts), first.meta,
                          None if first.extra is None else np.concatenate([p.extra for p in parts]),
                          first.extra_names)

    def labels(self, gold: dict[tuple[str, str], int]) -> np.ndarray:
        """Class ids (0/1/2) of every row from ``{(query_id, source_id): class id}``."""
        return np.asarray([gold.get((self.query_ids[q], self.source_ids[s]), 0) for q, s in zip(self.qi, self.si)],
                          np.int64)


def from_topk(query_ids, query_texts, source_ids, source_texts, indices: np.ndarray, scores: np.ndarray,
              meta: dict | None = None, extra: np.ndarray | None = None, extra_names=()) -> Candidates:
    """Candidates from (nq, k) retrieval arrays (``-1`` padding dropped); ``extra`` (nq, k, m): the first stage's
    own signals of each candidate, named by ``extra_names``."""
    indices = np.asarray(indices)
    ok = indices >= 0
    qi, r = np.nonzero(ok)
    if extra is not None:
        extra = np.asarray(extra, np.float64)
        if extra.shape != indices.shape + (len(extra_names),):
            raise ValueError(f"first-stage signals of shape {extra.shape}, not {indices.shape + (len(extra_names),)}")
        extra = extra[ok]
    return Candidates(list(query_ids), list(query_texts), list(source_ids), list(source_texts), qi.astype(np.int64),
                      indices[ok].astype(np.int64), np.asarray(scores, np.float64)[ok], (r + 1).astype(np.int64),
                      int(indices.shape[1]), meta or {}, extra, tuple(extra_names))


def neighbour_runs(lines: Sequence[str], line_index: Sequence[int]) -> tuple[list[str], list[int]]:
    """The query lines ``lines[i]`` (``i`` in ``line_index``) with one line either side, as runs of consecutive
    lines separated by an empty text (no channel fires on it, so a run's edge reads no false neighbour), and the
    row of each query among them: what a first stage that reads neighbouring lines searches."""
    keep = sorted({j for i in line_index for j in (i - 1, i, i + 1) if 0 <= j < len(lines)})
    texts, row_of, prev = [], {}, None
    for i in keep:
        if prev is not None and i != prev + 1:
            texts.append("")
        row_of[i] = len(texts)
        texts.append(lines[i])
        prev = i
    return texts, [row_of[i] for i in line_index]


def signal_names(retriever) -> tuple[str, ...]:
    """The per-candidate signals a retriever gives with its candidates (``search_signals``; ``channels``: each
    channel's score and the context term), () for the others."""
    return tuple(getattr(retriever, "signal_names", ()) or ()) if callable(
        getattr(retriever, "search_signals", None)) else ()


def search_with_signals(retriever, query_texts: Sequence[str], k: int, *, lines: Sequence[str] | None = None,
                        line_index: Sequence[int] | None = None, progress: Progress | None = None):
    """(indices (nq, k), scores, signals (nq, k, m) or None, their names) of a fitted retriever over the queries:
    the one code path by which the suite, training, evaluations, ``detect`` and the detection job get a first
    stage's per-candidate signals (:func:`signal_names`). A retriever that reads neighbouring lines (a context
    term) searches each query with its true neighbours when ``lines`` (every line in the text's order) and
    ``line_index`` (each query's position there) are given."""
    texts, rows = list(query_texts), None
    if lines is not None and line_index is not None and getattr(retriever, "context_weight", 0) > 0:
        texts, rows = neighbour_runs(lines, line_index)
    names = signal_names(retriever)
    if names:
        top, sig, _ = retriever.search_signals(texts, int(k), progress=progress)
    else:
        top, sig = retriever.search(texts, int(k), progress=progress), None
    idx, sc = np.asarray(top.indices), np.asarray(top.scores, np.float64)
    if rows is not None:
        rows = np.asarray(rows, np.int64)
        idx, sc, sig = idx[rows], sc[rows], None if sig is None else sig[rows]
    return idx, sc, sig, names


def retrieve(retriever, query_ids, query_texts, source_ids, source_texts, k: int, *,
             progress: Progress | None = None, fitted: bool = False) -> Candidates:
    """Top-``k`` candidates of a ``detection.methods`` retriever (fitted here on the sources unless ``fitted``)."""
    if not fitted:
        retriever.fit(list(source_ids), list(source_texts), progress=progress)
    res = retriever.search(list(query_texts), int(k), progress=progress)
    return from_topk(query_ids, query_texts, source_ids, source_texts, res.indices, res.scores,
                     {"retriever": getattr(retriever, "name", type(retriever).__name__)})


@dataclass
class Reranked:
    """A reranker's output for a set of candidates."""

    candidates: Candidates
    probs: np.ndarray  # (n, 3)
    labels: np.ndarray  # int8 (n,)
    thresholds: dict


def rerank(reranker, cands: Candidates, *, progress: Progress | None = None) -> Reranked:
    """Class probabilities and labels (the reranker's frozen thresholds; ``cit.`` wins when both pass)."""
    probs = np.asarray(reranker.predict_proba(cands, progress=progress), np.float64)
    if probs.shape != (len(cands), 3):
        raise ValueError(f"reranker {getattr(reranker, 'name', '?')} returned {probs.shape}, not ({len(cands)}, 3)")
    th = reranker.thresholds
    return Reranked(cands, probs, decide(probs, th) if len(cands) else np.zeros(0, np.int8), th)


def reference_logit(probs: np.ndarray) -> np.ndarray:
    """log((1 − p_none) / p_none) of every row: the odds of a reference, ordered as 1 − p_none but never saturated
    (a ranker's p_none = sigmoid(−margin) gives the margin back where 1 − p_none rounds to exactly 1)."""
    p = np.clip(np.asarray(probs, np.float64)[:, 0], 1e-300, 1.0)
    with np.errstate(divide="ignore"):
        return np.log1p(-p) - np.log(p)


def reranked_topk(cands: Candidates, probs: np.ndarray, n_queries: int | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(indices, scores) (nq, k): each query's candidates ordered by the odds of a reference
    (:func:`reference_logit`; ties: retrieval rank); the scores are 1 − p_none."""
    nq = len(cands.query_ids) if n_queries is None else n_queries
    k = max(cands.k, int(cands.rank.max()) if len(cands) else 0)
    rel = 1.0 - np.asarray(probs, np.float64)[:, 0]
    order = np.lexsort((cands.rank, -reference_logit(probs), cands.qi))
    indices = np.full((nq, k), -1, np.int32)
    scores = np.full((nq, k), np.nan, np.float32)
    qi = cands.qi[order]
    starts = np.searchsorted(qi, np.arange(nq))
    pos = np.arange(qi.size) - starts[qi]
    indices[qi, pos] = cands.si[order]
    scores[qi, pos] = rel[order]
    return indices, scores


def depth_sweep(cands: Candidates, labels_pred: np.ndarray | None, gold: dict[tuple[str, str], int],
                ks: Sequence[int] = SWEEP_KS, view: str = "all") -> list[dict]:
    """Table 12 for one set of queries: per depth k, retrieval-only vs retrieve-and-rerank.

    Retrieval-only predicts every candidate of rank ≤ k positive; rerank keeps a candidate of rank ≤ k only
    when the reranker labels it positive (for a class ``view``, that class). Gold pairs of the queries that were
    never retrieved are false negatives at every k. ``inspect`` = pairs predicted positive (to be read).

    Returns:
        one dict per k: ``{"k", "ret": {...}, "rer": {...}}`` with inspect, tp, fp, fn, p, r, f1.
    """
    cid = {"all": None, "cit.": 1, "cf.": 2}[view]
    qset = set(cands.query_ids)
    y = cands.labels(gold)
    is_gold = (y > 0) if cid is None else (y == cid)
    n_gold = sum(1 for (q, _), c in gold.items() if q in qset and (c > 0 if cid is None else c == cid))
    out = []
    for k in ks:
        top = cands.rank <= k
        row = {"k": int(k), "ret": _prf(int((top & is_gold).sum()), int(top.sum()), n_gold)}
        if labels_pred is not None:
            lp = np.asarray(labels_pred)
            keep = top & ((lp > 0) if cid is None else (lp == cid))
            row["rer"] = _prf(int((keep & is_gold).sum()), int(keep.sum()), n_gold)
        out.append(row)
    return out


def _prf(tp: int, npred: int, n_gold: int) -> dict:
    fp, fn = npred - tp, n_gold - tp
    return {"inspect": npred, "tp": tp, "fp": fp, "fn": fn, "p": tp / npred if npred else 0.0,
            "r": tp / n_gold if n_gold else 0.0,
            "f1": 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) else 0.0}
