"""Candidate scores per batch: wins, normalised similarity, win share, Bradley–Terry, directionality.

Released STS gold convention (checked on ``STS_benchmark_medievalGreek.tsv``): within a reference's
batch, a candidate's score is ``wins / max wins in the batch``; the top candidate scores 1.0 and
every score × the batch denominator (193, 190, 174 for ``16977 1``, ``16977 2``, ``17148 1``) is an
integer.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from .fast_bt import ilsr_fixed_point_batched
from .judgement_arrays import Judgements

BOOT_BLOCK = 50  # resamples fitted together by the batched Newton solver

__all__ = [
    "BatchScores",
    "BTResult",
    "BTBootstrap",
    "batch_scores",
    "normalised_scores",
    "connectivity",
    "comparison_graph_warning",
    "bradley_terry",
    "bradley_terry_batches",
    "bootstrap_bradley_terry",
    "directionality_table",
    "infer_denominator",
]


@dataclass(frozen=True)
class BatchScores:
    """Per-batch candidate scores; arrays are (n_batches × n_items).

    Attributes:
        wins: times the candidate was chosen.
        comparisons: times the candidate was shown (wins + losses).
        normalised: ``wins / max_j wins_j`` within the batch (released STS gold); NaN row when the batch
            has no judgements (max wins 0).
        win_share: ``wins / comparisons``; NaN for never-compared candidates.
    """

    wins: np.ndarray
    comparisons: np.ndarray
    normalised: np.ndarray
    win_share: np.ndarray


def normalised_scores(wins) -> np.ndarray:
    """Normalised similarity ``wins / max(wins)`` along the last axis.

    Args:
        wins: (n_items,) or (n_batches × n_items) win counts.

    Returns:
        Same shape, top candidate 1.0 (all tied top candidates get 1.0); rows whose max is 0
        (empty batch) are NaN.
    """
    w = np.asarray(wins, dtype=np.float64)
    mx = w.max(axis=-1, keepdims=True) if w.size else w
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(mx > 0, w / np.where(mx > 0, mx, 1.0), np.nan)


def batch_scores(j: Judgements) -> BatchScores:
    """Wins, comparisons, normalised score and win share for every batch (one bincount each).

    Args:
        j: judgements.

    Returns:
        :class:`BatchScores` with arrays of shape ``(j.n_batches, j.n_items)``.
    """
    n, nb = j.n_items, max(j.n_batches, 0)
    wins = np.bincount(j.batch * n + j.winner, minlength=nb * n).reshape(nb, n)
    losses = np.bincount(j.batch * n + j.loser, minlength=nb * n).reshape(nb, n)
    comp = wins + losses
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(comp > 0, wins / np.where(comp > 0, comp, 1), np.nan)
    return BatchScores(wins, comp, normalised_scores(wins), share)


def connectivity(counts) -> tuple[bool, int, np.ndarray]:
    """Strong connectivity of the comparison graph (edge i → j when i beat j at least once).

    The Bradley–Terry MLE (alpha = 0) exists iff this graph is strongly connected.

    Returns:
        ``(strongly_connected, n_components, labels)`` from
        ``scipy.sparse.csgraph.connected_components(connection="strong")``.
    """
    c = np.asarray(counts)
    if c.shape[0] == 0:
        return False, 0, np.zeros(0, np.int64)
    k, labels = connected_components(csr_matrix(c > 0), directed=True, connection="strong")
    return bool(k == 1), int(k), labels


def comparison_graph_warning(counts) -> str | None:
    """A plain-words warning when a batch's comparison graph (candidates with at least one comparison) is
    disconnected (groups never compared with one another: their relative order rests on the prior alone) or not
    strongly connected (some candidates won or lost every comparison: their strengths rest on the prior's tail);
    None when it is strongly connected or has fewer than two compared candidates."""
    c = np.asarray(counts, float)
    seen = np.flatnonzero((c.sum(0) + c.sum(1)) > 0)
    if len(seen) < 2:
        return None
    sub = c[np.ix_(seen, seen)]
    weak, _ = connected_components(csr_matrix((sub + sub.T) > 0), directed=False)
    if weak > 1:
        return (f"the comparison graph is disconnected: {weak} groups of candidates were never compared with one "
                f"another, so their relative order rests on the prior alone")
    strong, _ = connected_components(csr_matrix(sub > 0), directed=True, connection="strong")
    if strong > 1:
        return ("the comparison graph is not strongly connected: some candidates won (or lost) every comparison "
                "against the rest, so how far above (or below) them they lie rests on the prior")
    return None


@dataclass(frozen=True)
class BTResult:
    """Bradley–Terry fit of one batch.

    Attributes:
        strengths: log-strengths θ (mean 0), ``P(i beats j) = 1 / (1 + exp(θ_j − θ_i))``.
        alpha: regularisation actually used (raised ×10 from the request if choix failed).
        strongly_connected, n_components, components: see :func:`connectivity`.
        compared: bool mask of candidates with ≥ 1 comparison (others sit at the prior, θ ≈ 0).
    """

    strengths: np.ndarray
    alpha: float
    strongly_connected: bool
    n_components: int
    components: np.ndarray
    compared: np.ndarray


def bradley_terry(counts, alpha: float = 0.01, max_iter: int = 500, tol: float = 1e-8) -> BTResult:
    """Bradley–Terry strengths from a win-count matrix via ``choix.ilsr_pairwise_dense``.

    ``alpha`` > 0 regularises the LSR Markov chain (needed for sparse designs, never-winning
    candidates, perfectly transitive annotators and disconnected graphs, where alpha = 0 raises).
    If choix still fails to converge, alpha is multiplied by 10 (up to 10) and the used value
    is reported. Connectivity is always reported: with alpha > 0 a fit exists even when the graph is
    not strongly connected, but strengths across components are then driven by the prior.

    Args:
        counts: (n × n) ``counts[i, j]`` = times i beat j.
        alpha: regularisation (default 0.01).

    Returns:
        :class:`BTResult`. Empty matrix (n = 0) → empty strengths. All-zero counts → zeros.
    """
    import choix

    c = np.asarray(counts, dtype=np.float64)
    n = c.shape[0]
    ok, k, labels = connectivity(c)
    compared = (c.sum(0) + c.sum(1)) > 0
    if n == 0 or not compared.any():
        return BTResult(np.zeros(n), alpha, ok, k, labels, compared)
    a = float(alpha)
    while True:
        try:
            with np.errstate(all="ignore"):
                theta = choix.ilsr_pairwise_dense(c, alpha=a, max_iter=max_iter, tol=tol)
            if np.all(np.isfinite(theta)):
                break
            raise RuntimeError("non-finite strengths")
        except (RuntimeError, ValueError):
            if a <= 0:
                a = 1e-4
            elif a >= 10:
                raise
            else:
                a *= 10
    theta = np.asarray(theta, float)
    return BTResult(theta - theta.mean(), a, ok, k, labels, compared)


def bradley_terry_batches(j: Judgements, alpha: float = 0.01) -> dict[int, BTResult]:
    """:func:`bradley_terry` for every batch with judgements: ``{batch: BTResult}``."""
    n = j.n_items
    out = {}
    for bt, idx in sorted(j.batch_slices().items()):
        c = np.bincount(j.winner[idx] * n + j.loser[idx], minlength=n * n).reshape(n, n)
        out[bt] = bradley_terry(c, alpha=alpha)
    return out


@dataclass(frozen=True)
class BTBootstrap:
    """Bootstrap intervals for Bradley–Terry strengths (percentile method).

    Attributes:
        strengths: point estimate (fit on the observed data).
        lower, upper: percentile bounds (``level`` = 0.95 → 2.5 % and 97.5 %).
        rank_lower, rank_upper: percentile bounds of each candidate's rank (1 = strongest).
        n_boot, level, seed, alpha: settings.
    """

    strengths: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    rank_lower: np.ndarray
    rank_upper: np.ndarray
    n_boot: int
    level: float
    seed: int
    alpha: float


def bootstrap_bradley_terry(counts, n_boot: int = 200, level: float = 0.95, seed: int = 0,
                            alpha: float = 0.01) -> BTBootstrap:
    """Nonparametric bootstrap over judgements for Bradley–Terry strengths.

    Resampling N judgements with replacement (equivalently, the n² cell counts of the win matrix
    from ``Multinomial(N, counts / N)``): all ``n_boot`` resamples are drawn at once as uniform
    indices (seeded ``numpy.random.default_rng(seed)``), then all are fitted together by
    :func:`annotation.stats.fast_bt.ilsr_fixed_point_batched` (choix's fixed point, same ``alpha``),
    any that does not converge there one by one with choix.

    Args:
        counts: (n × n) win-count matrix of one batch (``Judgements.count_matrix(batch)``).
        n_boot: resamples; level: interval coverage; seed: RNG seed; alpha: BT regularisation.

    Returns:
        :class:`BTBootstrap`. No judgements → point estimate zeros and NaN bounds.
    """
    c = np.asarray(counts, dtype=np.float64)
    n = c.shape[0]
    point = bradley_terry(c, alpha=alpha)
    total = int(round(c.sum()))
    nan = np.full(n, np.nan)
    if total == 0 or n_boot <= 0:
        return BTBootstrap(point.strengths, nan, nan.copy(), nan.copy(), nan.copy(), n_boot, level, seed, alpha)
    rng = np.random.default_rng(seed)
    flat = c.ravel()
    if np.array_equal(flat, np.rint(flat)):  # whole counts: resample the judgements themselves
        draws = _resample_judgements(rng, flat.astype(np.int64), total, n_boot).reshape(n_boot, n, n)
    else:
        draws = rng.multinomial(total, flat / total, size=n_boot).reshape(n_boot, n, n)
    boots = np.empty((n_boot, n))
    init = point.strengths
    import choix

    refit = range(n_boot)
    if point.alpha > 0:  # all resamples at once (same fixed point as choix; blocks bound the memory)
        ok = np.zeros(n_boot, dtype=bool)
        for start in range(0, n_boot, BOOT_BLOCK):
            block = slice(start, start + BOOT_BLOCK)
            boots[block], ok[block] = ilsr_fixed_point_batched(draws[block], point.alpha, init)
        refit = np.flatnonzero(~ok)
    for r in refit:
        try:
            with np.errstate(all="ignore"):
                boots[r] = choix.ilsr_pairwise_dense(draws[r].astype(float), alpha=point.alpha,
                                                     initial_params=init, max_iter=500)
        except (RuntimeError, ValueError):
            boots[r] = bradley_terry(draws[r], alpha=point.alpha).strengths
    boots -= boots.mean(axis=1, keepdims=True)
    q = [(1 - level) / 2 * 100, (1 + level) / 2 * 100]
    lo, hi = np.percentile(boots, q, axis=0)
    ranks = (-boots).argsort(axis=1).argsort(axis=1) + 1
    rlo, rhi = np.percentile(ranks, q, axis=0)
    return BTBootstrap(point.strengths, lo, hi, rlo, rhi, n_boot, level, seed, point.alpha)


def _resample_judgements(rng: np.random.Generator, cell_counts: np.ndarray, total: int, n_boot: int) -> np.ndarray:
    """``n_boot`` resamples of ``total`` judgements drawn with replacement, as cell counts
    (n_boot × cells): the same distribution as ``Multinomial(total, counts / total)``, drawn as
    uniform indices and one bincount (numpy's multinomial walks every one of the n² cells per draw)."""
    cells = np.repeat(np.arange(len(cell_counts)), cell_counts)
    out = np.empty((n_boot, len(cell_counts)), dtype=np.int64)
    step = max(1, 2_000_000 // max(total, 1))  # about 16 MB of indices at a time
    for start in range(0, n_boot, step):
        k = min(step, n_boot - start)
        picks = cells[rng.integers(0, total, size=(k, total))] + (np.arange(k) * len(cell_counts))[:, None]
        out[start:start + k] = np.bincount(picks.ravel(), minlength=k * len(cell_counts)).reshape(k, -1)
    return out


def directionality_table(rows, include_one_way: bool = False) -> list[dict]:
    """Directed scores between verses that are references of each other's batches.

    Args:
        rows: iterable of ``(reference_id, candidate_id, score)``; ``score`` is how similar the
            candidate was judged to the reference (A → B = score of candidate B in A's batch).
        include_one_way: also list reference pairs where only one direction was scored
            (the missing direction is ``None``).

    Returns:
        One dict per unordered pair of references {A, B} (A < B as strings):
        ``{"a", "b", "a_to_b", "b_to_a", "difference" (a_to_b − b_to_a, None if one-way)}``,
        sorted by (a, b).
    """
    scores: dict[tuple, float] = {}
    refs = set()
    for ref, cand, score in rows:
        scores[(ref, cand)] = float(score)
        refs.add(ref)
    out = []
    refs_sorted = sorted(refs, key=str)
    for i, a in enumerate(refs_sorted):
        for b in refs_sorted[i + 1:]:
            ab, ba = scores.get((a, b)), scores.get((b, a))
            if ab is None and ba is None:
                continue
            if (ab is None or ba is None) and not include_one_way:
                continue
            diff = None if ab is None or ba is None else ab - ba
            out.append({"a": a, "b": b, "a_to_b": ab, "b_to_a": ba, "difference": diff})
    return out


def infer_denominator(scores, max_denominator: int = 100000, tol: float = 1e-9) -> int | None:
    """Smallest integer D such that every ``score × D`` is an integer (within ``tol``).

    Recovers the "max wins" of a released normalised batch (e.g. 193 for reference ``16977 1``).
    Returns ``None`` if no D ≤ ``max_denominator`` fits.
    """
    s = np.asarray(scores, float)
    from math import lcm

    d = 1
    for v in s:
        fr = Fraction(float(v)).limit_denominator(max_denominator)
        d = lcm(d, fr.denominator)
        if d > max_denominator:
            return None
    if np.all(np.abs(s * d - np.round(s * d)) <= tol * max(d, 1)):
        return d
    return None
