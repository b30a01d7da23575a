"""Detection candidates: the top-k of a range of queries (one shard of ``benchmarks.detect``) as candidate
pairs, reranked when a reranker is given (class probabilities, ``cit.``/``cf.`` labels by per-class
thresholds), with the lexical overlap of every pair.

Pure: the caller builds and fits the retriever and builds the reranker (from the method registry) and stores
the result. Output is column arrays, one entry per candidate pair, so 100k candidates cost a few MB; shards'
columns concatenate (:meth:`Candidates.concat`) into exactly the columns of one range over all queries, since
every pair is scored with the whole query and source lists (query indices are global).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from detection.latin import overlap as lexical
from detection.methods.rerank.pipeline import Candidates as RerankCandidates

LABELS = ("cit.", "cf.")
Progress = Callable[[float, str], None]


@dataclass
class Candidates:
    """Candidate pairs as columns: query index, source index (into the inputs), rank from 1, retrieval score,
    class probabilities (n, 3) for (none, cit., cf.) or None without a reranker, label ("cit.", "cf." or ""),
    shared content lemmas and overlap bucket (see :mod:`detection.latin.overlap`), and the retriever's
    explanation of every pair (``explain``: JSON-able dicts, see :mod:`detection.channels.pairwise`; None when
    the retriever does not explain)."""

    query: np.ndarray
    source: np.ndarray
    rank: np.ndarray
    score: np.ndarray
    probs: np.ndarray | None
    label: list[str]
    shared: np.ndarray
    bucket: list[str]
    explain: list[dict] | None = None

    def __len__(self) -> int:
        return int(self.query.shape[0])

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The columns as plain arrays (``np.savez`` without pickles); ``probs`` only when reranked."""
        out = {"c_query": self.query, "c_source": self.source, "c_rank": self.rank, "c_score": self.score,
               "c_label": np.asarray(self.label, dtype="U4"), "c_shared": self.shared,
               "c_bucket": np.asarray(self.bucket, dtype="U12")}
        if self.probs is not None:
            out["c_probs"] = self.probs
        if self.explain is not None:  # JSON text, so the arrays load without pickles
            out["c_explain"] = np.asarray([json.dumps(e, ensure_ascii=False, separators=(",", ":"))
                                           for e in self.explain], dtype=str)
        return out

    @classmethod
    def from_arrays(cls, data) -> Candidates:
        return cls(np.asarray(data["c_query"]), np.asarray(data["c_source"]), np.asarray(data["c_rank"]),
                   np.asarray(data["c_score"]), np.asarray(data["c_probs"]) if "c_probs" in data else None,
                   [str(x) for x in data["c_label"]], np.asarray(data["c_shared"]),
                   [str(x) for x in data["c_bucket"]],
                   [json.loads(str(x)) for x in data["c_explain"]] if "c_explain" in data else None)

    @classmethod
    def concat(cls, parts: Sequence[Candidates]) -> Candidates:
        """The shards' candidates in order, as one (every part reranked, or none)."""
        probs = [p.probs for p in parts]
        if any(p is None for p in probs) and not all(p is None for p in probs):
            raise ValueError("some parts are reranked and some are not")
        explained = [p.explain for p in parts]
        if any(e is None for e in explained) and not all(e is None for e in explained):
            raise ValueError("some parts are explained and some are not")
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("query", "source", "rank", "score")),
                   None if probs[0] is None else np.concatenate(probs),
                   [x for p in parts for x in p.label], np.concatenate([p.shared for p in parts]),
                   [x for p in parts for x in p.bucket],
                   None if explained[0] is None else [x for e in explained for x in e])


def label_pairs(probs: np.ndarray, thresholds: dict[str, float]) -> list[str]:
    """``cit.`` where P(cit.) ≥ its threshold (it wins when both pass), else ``cf.`` where P(cf.) ≥ its
    threshold, else "" (no parallel)."""
    cit = probs[:, 1] >= thresholds.get("cit.", 0.5)
    cf = probs[:, 2] >= thresholds.get("cf.", 0.5)
    return ["cit." if c else ("cf." if f else "") for c, f in zip(cit.tolist(), cf.tolist())]


def candidates_for(query_ids, query_texts, source_ids, source_texts, qi, si, score, rank, *,
                   signals: np.ndarray | None = None, signal_names=(), first_stage: str | None = None
                   ) -> RerankCandidates:
    """The pairs in the shape the registry's rerankers take (flat arrays with the texts, scores and ranks), with
    the first stage's per-candidate ``signals`` (n, m) named by ``signal_names`` when it gives them."""
    return RerankCandidates(list(query_ids), list(query_texts), list(source_ids), list(source_texts),
                            np.asarray(qi, np.int64), np.asarray(si, np.int64), np.asarray(score, np.float64),
                            np.asarray(rank, np.int64), int(rank.max()) if len(rank) else 0,
                            {"retriever": first_stage} if first_stage else {},
                            None if signals is None else np.asarray(signals, np.float64), tuple(signal_names))


def score_candidates(reranker, query_texts: Sequence[str], source_texts: Sequence[str], qi: np.ndarray,
                     si: np.ndarray, *, query_ids: Sequence[str] | None = None, source_ids: Sequence[str] | None = None,
                     score: np.ndarray | None = None, rank: np.ndarray | None = None, block: int = 64,
                     progress: Progress | None = None, signals: np.ndarray | None = None, signal_names=(),
                     first_stage: str | None = None) -> np.ndarray:
    """(n, 3) class scores of the candidate pairs (qi[n], si[n]) for (no match, cit., cf.).

    A reranker offers one of: ``predict_proba(candidates)`` (the registry's rerankers: flat candidate arrays
    with the texts, retrieval scores and ranks, and the first stage's ``signals`` (n, m) named ``signal_names``),
    ``score_pairs(query_texts, source_texts) -> (n, 3)`` for
    aligned pairs, or the benchmark protocol ``score_grid(query_ids, query_texts, source_ids, source_texts) ->
    (nq, ns, 3)``, which is called per block of queries on the union of their candidates only.
    """
    n = len(qi)
    if hasattr(reranker, "predict_proba"):
        cands = candidates_for(query_ids if query_ids is not None else [str(i) for i in range(len(query_texts))],
                               query_texts,
                               source_ids if source_ids is not None else [str(j) for j in range(len(source_texts))],
                               source_texts, qi, si, score if score is not None else np.zeros(n),
                               rank if rank is not None else np.ones(n, np.int64), signals=signals,
                               signal_names=signal_names, first_stage=first_stage)
        return _three(np.asarray(reranker.predict_proba(cands, progress=progress), np.float64), n)
    if hasattr(reranker, "score_pairs"):
        out = np.asarray(reranker.score_pairs([query_texts[i] for i in qi], [source_texts[j] for j in si]),
                         np.float64)
        return _three(out, n)
    if not hasattr(reranker, "score_grid"):
        raise TypeError(f"reranker {getattr(reranker, 'name', reranker)!r} has none of predict_proba, score_pairs, "
                        "score_grid")
    out = np.zeros((n, 3), np.float64)
    queries = np.unique(qi)
    for start in range(0, len(queries), block):
        qs = queries[start:start + block]
        rows = np.nonzero(np.isin(qi, qs))[0]
        srcs = np.unique(si[rows])
        qpos = {int(q): a for a, q in enumerate(qs)}
        spos = {int(s): b for b, s in enumerate(srcs)}
        grid = np.asarray(reranker.score_grid([str(q) for q in qs], [query_texts[q] for q in qs],
                                              [str(s) for s in srcs], [source_texts[s] for s in srcs]), np.float64)
        if grid.ndim == 2:
            grid = np.stack([1.0 - grid, grid, np.zeros_like(grid)], axis=-1)
        for r in rows:
            out[r] = grid[qpos[int(qi[r])], spos[int(si[r])]]
        if progress:
            progress(min(1.0, (start + block) / len(queries)), f"reranked {min(start + block, len(queries))} queries")
    return out


def _three(scores: np.ndarray, n: int) -> np.ndarray:
    if scores.ndim == 1:  # one match score: (no match, match as cit., 0)
        scores = np.stack([1.0 - scores, scores, np.zeros_like(scores)], axis=-1)
    if scores.shape != (n, 3):
        raise ValueError(f"reranker returned shape {scores.shape}, expected ({n}, 3)")
    return scores


def overlap(query_texts: Sequence[str], source_texts: Sequence[str], qi: np.ndarray, si: np.ndarray):
    """Shared content lemmas and the overlap bucket of every candidate pair (see
    :func:`detection.latin.overlap.pair_overlap`); each text is analysed once, each pair is two set
    intersections."""
    def sets(text):
        a = lexical.analyse(text)
        return lexical.content_set(a), lexical.content_bigrams(a)

    an_q = {int(i): sets(query_texts[i]) for i in np.unique(qi)}
    an_s = {int(j): sets(source_texts[j]) for j in np.unique(si)}
    shared = np.zeros(len(qi), np.int16)
    buckets = []
    for n, (i, j) in enumerate(zip(qi.tolist(), si.tolist())):
        (ql, qb), (sl, sb) = an_q[i], an_s[j]
        n_lemmas = len(ql & sl)
        shared[n] = min(n_lemmas, 32767)
        buckets.append(lexical.overlap_bucket(n_lemmas, len(qb & sb)))
    return shared, buckets


def detect_range(top_indices: np.ndarray, top_scores: np.ndarray, start: int, query_texts: Sequence[str],
                 source_ids: Sequence[str], source_texts: Sequence[str], *, reranker=None,
                 thresholds: dict[str, float] | None = None, min_score: float | None = None,
                 query_ids: Sequence[str] | None = None, progress: Progress | None = None,
                 explain=None, signals: np.ndarray | None = None, signal_names=(),
                 first_stage: str | None = None) -> Candidates:
    """Candidates of queries ``start .. start + len(top_indices) - 1`` from their top-k rows (a fitted
    retriever's ``search_range``): drop padding and scores below ``min_score``, rerank when a reranker is
    given (labels by ``thresholds``), and measure the lexical overlap of every pair.

    ``query_texts``/``query_ids`` and the sources are the whole lists, so a pair is scored the same in any
    shard; the candidates' query indices are indices into ``query_texts``. ``explain(row, rank)`` (row into
    ``top_indices``, rank from 0), when given, returns each kept pair's explanation. ``signals`` (rows, k, m): the
    first stage's per-candidate signals named ``signal_names`` (``pipeline.search_with_signals``), handed to the
    reranker with the pairs; ``first_stage``: the retriever's name (the reranker's refusal names it)."""
    prog = progress or (lambda f, m="": None)
    idx = np.asarray(top_indices)
    sc = np.asarray(top_scores, np.float64)
    keep = idx >= 0
    if min_score is not None:
        keep &= np.nan_to_num(sc, nan=-np.inf) >= min_score
    row, r = np.nonzero(keep)
    si = idx[row, r]
    qi = row + int(start)
    score = np.nan_to_num(sc[row, r], nan=0.0, neginf=0.0, posinf=0.0)
    probs, labels = None, [""] * len(qi)
    if reranker is not None:
        probs = np.zeros((0, 3)) if not len(qi) else score_candidates(
            reranker, query_texts, source_texts, qi, si, query_ids=query_ids, source_ids=source_ids, score=score,
            rank=r + 1, progress=lambda f, m="": prog(0.8 * f, f"reranking {len(qi)} pairs: {m}"),
            signals=None if signals is None else np.asarray(signals)[row, r], signal_names=signal_names,
            first_stage=first_stage)
        labels = label_pairs(probs, thresholds or {})
    prog(0.8, "measuring lexical overlap")
    shared, buckets = overlap(query_texts, source_texts, qi, si)
    prog(1.0, f"{len(qi)} candidates")
    explained = [explain(int(a), int(b)) for a, b in zip(row.tolist(), r.tolist())] if explain else None
    return Candidates(qi.astype(np.int32), si.astype(np.int32), (r + 1).astype(np.int32), score, probs, labels,
                      shared, buckets, explained)
