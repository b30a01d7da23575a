"""Rank claims from posterior draws: how sure the posterior is of each adjacent order, and which orders can be
claimed together.

For the ranking by the reported strengths (ties broken by position, as the table lists them), the probability that
the candidate at rank r is stronger than the one at rank r + 1 is the share of posterior draws in which it is
(weighted for importance draws). No normal approximation is involved: with exact draws (Pólya-Gamma Gibbs,
`bt_bayes._gibbs_draws`) the probabilities are the posterior's, up to Monte Carlo error (≈ 1 / number of draws at the
ends of the scale).

The family-wise claim is made on the joint draws, not by Bonferroni: adjacent orders are taken in decreasing order of
their probability for as long as the posterior probability that *all* taken orders hold together stays at least
`level`; the taken ones are claimed. So "every claimed order holds" has posterior probability ≥ level, and orders whose
errors exclude one another (a candidate cannot be both above and below its neighbours) do not pay twice as they do
under a union bound. Candidates whose strengths are tied (identical records: `bt_bayes.tied_ranks`) share a rank and
their order is never claimed, whatever the draws say.

Pure numpy.
"""
from __future__ import annotations

import numpy as np

from .bt_bayes import bt_map, prior_sd_from_data, tied_ranks

__all__ = ["order_claims", "adjacent_probabilities", "favoured_order", "top_k_right", "top_k_settled",
           "top_k_leverage"]

LEVERAGE_CAP = 100  # removals tried at most; a claim that survives them is reported as "more than" the cap


def adjacent_probabilities(strengths: np.ndarray, draws: np.ndarray, weights: np.ndarray | None = None
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the compared candidates (finite `strengths`) in rank order: ``(order, above, probs)`` with `order` the
    indices into `strengths` strongest first, `above` the (draws × k − 1) bool matrix "rank r beats rank r + 1 in
    this draw" and `probs` its (weighted) mean. `draws` has one column per compared candidate, in index order."""
    idx = np.flatnonzero(np.isfinite(strengths))
    if draws.shape[1] != len(idx):
        raise ValueError(f"draws have {draws.shape[1]} columns for {len(idx)} compared candidates")
    local = np.argsort(-strengths[idx], kind="stable")
    a, b = local[:-1], local[1:]
    above = draws[:, a] > draws[:, b]
    w = np.full(len(draws), 1.0 / len(draws)) if weights is None else np.asarray(weights, float)
    return idx[local], above, w @ above


def order_claims(strengths: np.ndarray, draws: np.ndarray, weights: np.ndarray | None = None,
                 level: float = 0.95) -> dict:
    """Adjacent-rank probabilities and the family-wise claim from posterior draws (module docstring).

    Args:
        strengths: (n,) reported strengths, NaN for never-compared candidates (left out).
        draws: (m × k) posterior draws of the k compared candidates' strengths (columns in index order).
        weights: (m,) importance weights summing to 1 (None: equal).
        level: the joint posterior probability the claimed orders must reach together.

    Returns:
        ``{"p_next": (n,) probability of beating the next-ranked candidate (NaN for the last and never-compared),
        "claim": (n,) bool, "p_joint": posterior probability that all claimed orders hold (1.0 when none is),
        "level": level, "n_claims": int, "n_adjacent": int, "n_draws": m, "rule": "joint"}``.
    """
    strengths = np.asarray(strengths, float)
    n = len(strengths)
    p_next = np.full(n, np.nan)
    claim = np.zeros(n, bool)
    k = int(np.isfinite(strengths).sum())
    p_joint = 1.0
    if k >= 2 and len(draws):
        order, above, probs = adjacent_probabilities(strengths, draws, weights)
        w = np.full(len(draws), 1.0 / len(draws)) if weights is None else np.asarray(weights, float)
        p_next[order[:-1]] = probs
        ranks = tied_ranks(strengths[order])
        tied = ranks[:-1] == ranks[1:]
        holds = np.ones(len(draws), bool)
        for e in np.argsort(-probs, kind="stable"):
            if tied[e]:
                continue
            joint = float(w @ (holds & above[:, e]))
            if joint < level:
                break
            holds &= above[:, e]
            claim[order[e]] = True
            p_joint = joint
    return {"p_next": p_next, "claim": claim, "p_joint": p_joint, "level": float(level),
            "n_claims": int(claim.sum()), "n_adjacent": max(k - 1, 0), "n_draws": int(len(draws)), "rule": "joint"}


def top_k_right(values: np.ndarray, top: np.ndarray, margin: float) -> np.ndarray:
    """How many of the candidates `top` (indices, k of them) are among the k strongest in each row of `values`
    (draws × candidates, or one row: the truth), a candidate within `margin` of the row's k-th strongest counting as
    among them (strengths closer than the margin are ties). Returns an int array, one count per row."""
    values = np.atleast_2d(np.asarray(values, float))
    k = len(top)
    kth = -np.partition(-values, k - 1, axis=1)[:, k - 1]
    return (values[:, top] >= (kth - margin)[:, None]).sum(1)


def top_k_settled(strengths: np.ndarray, draws: np.ndarray, *, k: int, recall: float, margin: float,
                  weights: np.ndarray | None = None) -> dict:
    """The stop rule's figure: the posterior probability that the reported top k (the k largest `strengths`, ties
    broken by position as the table lists them) contain at least ⌈recall · k⌉ of the true top k, a candidate within
    `margin` of the true k-th strongest counting as one of them (`top_k_right`).

    Args:
        strengths: (n,) reported strengths, NaN for never-compared candidates.
        draws: (m × c) posterior draws of the c compared candidates' strengths (columns in index order).
        k: how many of the strongest the lead wants; recall: the share of them that must be right (0–1];
        margin: strength differences below it are ties (the Bradley–Terry logit scale).
        weights: (m,) importance weights summing to 1 (None: equal).

    Returns:
        ``{"p": posterior probability of the claim, "expected_recall": posterior mean share of the reported top k that
        are right, "top": (k,) indices into strengths, "need": ⌈recall · k⌉, "compared_all": bool, "p_exact": posterior
        probability that the reported top k are exactly the k strongest, "p_none_missed": that no candidate left out
        lies more than `margin` above the weakest one listed, "held": per draw, whether the claim holds in it (what
        `bt_bayes.claim_converged` checks)}``; p is 0 while a candidate was never compared (its
        strength is unknown, so no top k is settled); the last two only when p is computed.
    """
    strengths = np.asarray(strengths, float)
    if not 1 <= k:
        raise ValueError(f"k must be at least 1, not {k}")
    if not 0.0 < recall <= 1.0 or margin < 0:
        raise ValueError(f"recall must be in (0, 1] and margin ≥ 0 (got {recall}, {margin})")
    idx = np.flatnonzero(np.isfinite(strengths))
    need = int(np.ceil(recall * k - 1e-9))
    compared_all = len(idx) == len(strengths)
    out = {"p": 0.0, "expected_recall": 0.0, "top": np.zeros(0, np.int64), "need": need, "compared_all": compared_all}
    if not compared_all or len(draws) == 0:
        return out
    if draws.shape[1] != len(idx):
        raise ValueError(f"draws have {draws.shape[1]} columns for {len(idx)} compared candidates")
    if k >= len(idx):
        out.update(p=1.0, expected_recall=1.0, top=np.arange(len(idx)))
        return out
    top = np.argsort(-strengths, kind="stable")[:k]
    right = top_k_right(draws, top, margin)
    w = np.full(len(draws), 1.0 / len(draws)) if weights is None else np.asarray(weights, float)
    listed, rest = draws[:, top].min(1), np.delete(draws, top, axis=1).max(1)
    out.update(p=float(w @ (right >= need)), expected_recall=float(w @ right) / k, top=top, held=right >= need,
               p_exact=float(w @ (rest < listed)), p_none_missed=float(w @ (rest <= listed + margin)))
    return out


def favoured_order(strengths: np.ndarray, draws: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """The ranking to show: ranks (1 = strongest; 0 for never-compared candidates, NaN `strengths`) in which every
    candidate is above the next with posterior probability above ½ or shares its rank (tied).

    The order starts from the posterior mean of the draws (the mode at one prior SD put 17 % of a 99-candidate
    adaptive batch's adjacent pairs against the draws' majority, the mean 3 %) and swaps any adjacent pair the draws
    order the other way, pass after pass (at most one per candidate). Candidates with identical records (equal
    `strengths`, `bt_bayes.tied_ranks`) and pairs the draws split evenly, or still against the order after the passes
    (a cycle), share a rank."""
    strengths = np.asarray(strengths, float)
    ranks = np.zeros(len(strengths), np.int64)
    idx = np.flatnonzero(np.isfinite(strengths))
    if not len(idx):
        return ranks
    if draws.shape[1] != len(idx):
        raise ValueError(f"draws have {draws.shape[1]} columns for {len(idx)} compared candidates")
    w = np.full(len(draws), 1.0 / len(draws)) if weights is None else np.asarray(weights, float)
    same = tied_ranks(strengths[idx])

    def above(a: int, b: int) -> float:
        return float(w @ (draws[:, a] > draws[:, b]))

    order = list(np.argsort(-(w @ draws), kind="stable"))
    for _ in range(len(order)):
        swapped = False
        for r in range(len(order) - 1):
            a, b = order[r], order[r + 1]
            if same[a] != same[b] and above(b, a) > 0.5:
                order[r], order[r + 1], swapped = b, a, True
        if not swapped:
            break
    local = np.empty(len(order), np.int64)
    rank = 1
    for pos, a in enumerate(order):
        if pos and same[order[pos - 1]] != same[a] and above(order[pos - 1], a) > 0.5:
            rank = pos + 1
        local[a] = rank
    ranks[idx] = local
    return ranks


def _boundary_gap(theta: np.ndarray, inside: np.ndarray) -> tuple[float, int, int]:
    """(weakest listed − strongest left out, the two indices) under strengths `theta`."""
    a = np.flatnonzero(inside)[np.argmin(theta[inside])]
    b = np.flatnonzero(~inside)[np.argmax(theta[~inside])]
    return float(theta[a] - theta[b]), int(a), int(b)


def top_k_leverage(counts: np.ndarray, top, *, prior_sd: float | None = None, cap: int = LEVERAGE_CAP) -> dict:
    """The fewest judgements whose removal flips the claim "`top` are the k strongest", found greedily.

    The point fit is the Bradley–Terry mode under an N(0, `prior_sd`²) prior (`bt_map`; None: the Type-II maximum
    likelihood SD of the whole batch, `prior_sd_from_data`, kept while judgements are removed; a fixed weak prior of
    3 shrank a 99-candidate batch's strengths of 12 to 6 and swapped its 5th and 6th). At each step the gap
    between the weakest listed candidate and the strongest one left out is linearised: removing one "i beat j"
    judgement moves the mode by −(1 − p_ij) H⁻¹(e_i − e_j) (H the Hessian of −log posterior), so the judgement whose
    removal narrows the gap most is taken out, the mode refitted (warm Newton), and the count goes on until a
    candidate left out is at least as strong as one listed. Greedy: an upper bound on the exact fewest (equal to a
    brute-force search on 29 of 30 random 4-candidate batches, one more on the 30th).

    Returns:
        ``{"n": removals that flip it (0: the point fit already disagrees; None: not within `cap`), "removed": the
        (winner, loser) index pairs taken out in order, "cap": cap}``.
    """
    c = np.array(counts, float)
    inside = np.zeros(len(c), bool)
    inside[np.asarray(top, np.int64)] = True
    removed: list[tuple[int, int]] = []
    if inside.all() or not inside.any():
        return {"n": None, "removed": removed, "cap": cap}
    if prior_sd is None:
        prior_sd, theta, h = prior_sd_from_data(c)
    else:
        theta, h = bt_map(c, prior_sd)
    while True:
        gap, a, b = _boundary_gap(theta, inside)
        if gap <= 1e-9:
            return {"n": len(removed), "removed": removed, "cap": cap}
        if len(removed) >= cap or c.sum() < 1:
            return {"n": None, "removed": removed, "cap": cap}
        e = np.zeros(len(c))
        e[a], e[b] = 1.0, -1.0
        v = np.linalg.solve(h, e)
        lose = 1.0 / (1.0 + np.exp(theta[:, None] - theta[None, :]))  # 1 − P(i beats j)
        change = np.where(c >= 1, -lose * (v[:, None] - v[None, :]), np.inf)
        i, j = np.unravel_index(np.argmin(change), c.shape)
        c[i, j] -= 1
        removed.append((int(i), int(j)))
        theta, h = bt_map(c, prior_sd, init=theta)
