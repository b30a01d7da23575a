"""Circular triads (Kendall & Babington Smith 1940) for pairwise-similarity judgements.

A triple {i, j, k} is *circular* (cyclic) when the three decided pairs form a cycle
i → j → k → i (each candidate wins exactly once, the pattern [1 1 1]); otherwise it is
transitive ([2 1 0]). Under random choice a complete triple is circular with probability 2/8 = 1/4.

Tournament conventions (ties): a tournament is built from win counts ``C`` (``C[i, j]`` = times i
beat j). Pair {i, j} is *decided* i → j when ``C[i, j] > C[j, i]``; when both counts are equal
and positive (e.g. an annotator who answered a repeated pair differently, or a pooled majority
split 1–1) the pair is a *tie*: it is left undecided, so every triple containing it is not
"complete" and is neither counted as circular nor in the chance baseline. Ties are reported.

Counting uses boolean adjacency matrices: with ``A[i, j] = 1`` iff i → j and
``U = A + Aᵀ`` (decided pairs), the number of circular triads is ``trace(A³) / 3`` and the number
of complete triples (all three pairs decided) is ``trace(U³) / 6``. Both are O(n³) BLAS work;
n = 99 takes microseconds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from math import comb

import numpy as np

from .judgement_arrays import Judgements

__all__ = [
    "KendallTriads",
    "TriadCount",
    "tournament_from_counts",
    "count_circular_triads",
    "list_circular_triads",
    "kendall_triads",
    "triads_per_annotator",
    "majority_triads",
    "model_expected_circular",
]


@dataclass(frozen=True)
class TriadCount:
    """Circular triads among the complete triples of a (possibly incomplete) tournament.

    Attributes:
        n_circular: number of cyclic triples.
        n_complete_triples: triples whose three pairs are all decided.
        expected_random: ``n_complete_triples / 4`` (expected count under random choice).
        share: ``n_circular / n_complete_triples`` (NaN when there is no complete triple).
        n_decided_pairs: decided pairs (edges) of the tournament.
        n_tied_pairs: judged but tied pairs (left undecided), when known.
    """

    n_circular: int
    n_complete_triples: int
    expected_random: float
    share: float
    n_decided_pairs: int
    n_tied_pairs: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class KendallTriads:
    """Kendall & Babington Smith statistics of a complete tournament (one decision per pair).

    Attributes:
        n: number of items.
        d: circular triads, ``n(n−1)(2n−1)/12 − ½ Σ aᵢ²`` (aᵢ = wins of item i).
        d_max: ``(n³ − n)/24`` for odd n, ``(n³ − 4n)/24`` for even n.
        zeta: coefficient of consistence ``ζ = 1 − d/d_max`` (1 = perfectly transitive; NaN if n < 3).
        expected_random: ``C(n, 3)/4``, the expectation of d under random choice.
    """

    n: int
    d: int
    d_max: int
    zeta: float
    expected_random: float

    def as_dict(self) -> dict:
        return asdict(self)


def tournament_from_counts(counts: np.ndarray) -> tuple[np.ndarray, int]:
    """Majority tournament of a win-count matrix.

    Args:
        counts: square array, ``counts[i, j]`` = times i beat j.

    Returns:
        ``(A, n_tied)``: boolean adjacency ``A[i, j] = counts[i, j] > counts[j, i]`` and the number of
        judged pairs with equal counts in both directions (ties, left undecided).
    """
    c = np.asarray(counts)
    adj = c > c.T
    judged = (c + c.T) > 0
    tied = judged & ~adj & ~adj.T
    return adj, int(np.triu(tied, 1).sum())


def count_circular_triads(adj: np.ndarray, n_tied_pairs: int = 0) -> TriadCount:
    """Count circular triads of a tournament given as a boolean adjacency matrix.

    Args:
        adj: ``adj[i, j]`` true iff i beat j; at most one direction per pair (antisymmetric).
        n_tied_pairs: passed through to the result (see :func:`tournament_from_counts`).

    Returns:
        :class:`TriadCount` with ``n_circular = trace(A³)/3`` and ``n_complete_triples = trace(U³)/6``.
        An empty or < 3-item tournament gives zeros and ``share = NaN``.
    """
    a = np.asarray(adj, dtype=bool)
    if a.size and np.any(a & a.T):
        raise ValueError("adjacency must be antisymmetric (one direction per pair)")
    n = a.shape[0]
    if n < 3:
        return TriadCount(0, 0, 0.0, float("nan"), int(a.sum()), n_tied_pairs)
    af = a.astype(np.float64)
    uf = af + af.T
    a2 = af @ af
    n_circ = int(round(float(np.einsum("ij,ji->", a2, af)) / 3.0))
    u2 = uf @ uf
    n_comp = int(round(float(np.einsum("ij,ji->", u2, uf)) / 6.0))
    share = n_circ / n_comp if n_comp else float("nan")
    return TriadCount(n_circ, n_comp, n_comp / 4.0, share, int(a.sum()), n_tied_pairs)


def list_circular_triads(adj: np.ndarray, cap: int | None = 1000) -> np.ndarray:
    """List circular triads as index triples.

    Args:
        adj: boolean adjacency (``adj[i, j]`` iff i beat j).
        cap: stop after this many triads (``None`` = all). Listing is O(n³); counting is cheaper,
            see :func:`count_circular_triads`.

    Returns:
        int array of shape ``(k, 3)``; each row ``(i, j, k)`` is one cycle ``i → j → k → i`` written
        with its smallest index first, rows in lexicographic order of ``i`` then ``j``, ``k``.
    """
    a = np.asarray(adj, dtype=bool)
    n = a.shape[0]
    out: list[np.ndarray] = []
    total = 0
    for i in range(n - 2):
        # i → j, j → k, k → i with j, k > i
        js = np.flatnonzero(a[i, i + 1:]) + i + 1
        ks = np.flatnonzero(a[i + 1:, i]) + i + 1
        if not len(js) or not len(ks):
            continue
        sub = a[np.ix_(js, ks)]
        jj, kk = np.nonzero(sub)
        if not len(jj):
            continue
        tri = np.column_stack([np.full(len(jj), i), js[jj], ks[kk]])
        out.append(tri)
        total += len(tri)
        if cap is not None and total >= cap:
            break
    if not out:
        return np.zeros((0, 3), dtype=np.int64)
    res = np.concatenate(out).astype(np.int64)
    return res if cap is None else res[:cap]


def kendall_triads(scores, n: int | None = None) -> KendallTriads:
    """Kendall & Babington Smith (1940) circular-triad count from the score vector.

    Valid only for a *complete* tournament: every pair decided exactly once, so the scores (wins)
    sum to ``C(n, 2)``.

    Args:
        scores: wins per item ``aᵢ``.
        n: number of items (default ``len(scores)``).

    Returns:
        :class:`KendallTriads` with ``d = n(n−1)(2n−1)/12 − ½ Σ aᵢ²``, ``d_max``, ``ζ = 1 − d/d_max``
        and the random-choice expectation ``C(n, 3)/4``.

    Raises:
        ValueError: if the scores do not sum to ``C(n, 2)``.
    """
    s = np.asarray(scores, dtype=np.int64)
    n = len(s) if n is None else int(n)
    if len(s) != n or int(s.sum()) != comb(n, 2):
        raise ValueError("kendall_triads needs a complete tournament: scores must sum to n(n-1)/2")
    # 2d = n(n-1)(2n-1)/6 - Σ a²  (integers)
    two_d = n * (n - 1) * (2 * n - 1) // 6 - int((s * s).sum())
    d = two_d // 2
    d_max = (n ** 3 - n) // 24 if n % 2 else (n ** 3 - 4 * n) // 24
    zeta = 1.0 - d / d_max if d_max > 0 else float("nan")
    return KendallTriads(n, int(d), int(d_max), zeta, comb(n, 3) / 4.0)


def _group_counts(j: Judgements, key: np.ndarray):
    """Yield (key_value, counts matrix) for each distinct key (one argsort)."""
    n = j.n_items
    if not len(j):
        return
    order = np.argsort(key, kind="stable")
    ks = key[order]
    cuts = np.flatnonzero(np.diff(ks)) + 1
    code = (j.winner * n + j.loser)[order]
    starts = np.concatenate([[0], cuts])
    ends = np.concatenate([cuts, [len(ks)]])
    for s, e in zip(starts, ends):
        yield int(ks[s]), np.bincount(code[s:e], minlength=n * n).reshape(n, n)


def _row(adj, n_tied, list_cap):
    tc = count_circular_triads(adj, n_tied)
    row = tc.as_dict()
    n = adj.shape[0]
    complete = tc.n_decided_pairs == comb(n, 2)
    row["complete"] = complete
    if complete and n >= 3:
        kt = kendall_triads(adj.sum(axis=1))
        row.update(d_max=kt.d_max, zeta=kt.zeta)
    else:
        row.update(d_max=None, zeta=None)
    if list_cap:
        row["triads"] = list_circular_triads(adj, cap=list_cap)
    return row


def triads_per_annotator(j: Judgements, list_cap: int = 0) -> list[dict]:
    """Circular triads of each annotator's own tournament, per batch.

    Each (batch, annotator) tournament uses that annotator's judgements only; a pair judged
    several times (test–retest repeats) is decided by that annotator's majority, equal splits are
    ties (undecided). Only triples whose three pairs the annotator decided are candidates.

    Args:
        j: judgements.
        list_cap: if > 0, add ``"triads"``: an ``(k, 3)`` array of at most ``list_cap`` cycles.

    Returns:
        One dict per (batch, annotator) with judgements: ``batch, annotator, n_circular,
        n_complete_triples, expected_random, share, n_decided_pairs, n_tied_pairs, complete``
        and, for a complete tournament, ``d_max`` and Kendall's ``zeta`` (else ``None``).
        Empty input → ``[]``.
    """
    rows = []
    m = max(j.n_annotators, 1)
    for key, counts in _group_counts(j, j.batch * m + j.annotator):
        size = j.items_in_batch(key // m)  # a smaller batch's complete tournament is complete
        adj, n_tied = tournament_from_counts(counts[:size, :size])
        row = {"batch": key // m, "annotator": key % m}
        row.update(_row(adj, n_tied, list_cap))
        rows.append(row)
    return rows


def majority_triads(j: Judgements, list_cap: int = 0) -> list[dict]:
    """Circular triads of the pooled per-batch majority tournament.

    All judgements of a batch are pooled; pair {i, j} is decided by the majority of its
    judgements; an exact split (e.g. 1–1 with two judgements per pair) is a tie and the pair is
    left undecided (reported as ``n_tied_pairs``).

    Returns:
        One dict per batch, same fields as :func:`triads_per_annotator` without ``annotator``.
    """
    rows = []
    for key, counts in _group_counts(j, j.batch):
        size = j.items_in_batch(key)
        adj, n_tied = tournament_from_counts(counts[:size, :size])
        row = {"batch": key}
        row.update(_row(adj, n_tied, list_cap))
        rows.append(row)
    return rows


def model_expected_circular(decided: np.ndarray, strengths: np.ndarray) -> float:
    """Circular triads the fitted Bradley–Terry model expects on the complete triples of a decision pattern.

    `decided` (n × n, symmetric 0/1): the pairs an annotator decided; `strengths`: fitted θ (NaN = never compared,
    such candidates count in no triple). With P[i, j] = σ(θ_i − θ_j) on decided pairs (0 elsewhere), a triple is
    complete iff its three pairs are decided, and its chance of being circular is P_ij P_jk P_ki + P_ik P_kj P_ji,
    so the expected count is trace(P³)/3 (each directed cycle appears three times in the trace). Compare with the
    observed count: the model's rate, not chance's one in four, is what a consistent annotator of these near-ties
    would show."""
    theta = np.where(np.isfinite(strengths), strengths, 0.0)
    ok = np.isfinite(strengths)
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    p = p * (np.asarray(decided, float) > 0) * ok[:, None] * ok[None, :]
    np.fill_diagonal(p, 0.0)
    return float(np.trace(p @ p @ p) / 3.0)
