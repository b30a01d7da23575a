"""Simulated pairwise judgements and design planning (how many judgements, which pairs).

Choice model for annotator k with noise scale τ_k on the pair (a, b) with latent strengths θ:

* ``model="bt"`` (Bradley–Terry / logistic): ``P(b wins) = 1 / (1 + exp(−(θ_b − θ_a)/τ_k))``
* ``model="thurstone"`` (Case V): each candidate is perceived as θ + N(0, τ_k²), so
  ``P(b wins) = Φ((θ_b − θ_a) / (τ_k √2))``

τ → 0 is a perfectly transitive annotator, τ → ∞ a coin flip.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, ndtr

from .agreement import spearman
from .judgement_arrays import Judgements
from .scores import bradley_terry, connectivity

__all__ = ["all_pairs", "choice_probability", "simulate_judgements", "choose_pairs", "simulate_design",
           "plan_budget"]


def all_pairs(n_items: int) -> np.ndarray:
    """All ``n(n−1)/2`` canonical pairs as an (P × 2) int array, rows ``(a, b)`` with ``a < b``."""
    a, b = np.triu_indices(n_items, 1)
    return np.column_stack([a, b]).astype(np.int64)


def choice_probability(theta_a, theta_b, noise=1.0, model: str = "bt") -> np.ndarray:
    """``P(b wins)`` under the chosen model (see module docstring); broadcasts."""
    diff = (np.asarray(theta_b, float) - np.asarray(theta_a, float)) / np.asarray(noise, float)
    if model == "bt":
        return expit(diff)
    if model == "thurstone":
        return ndtr(diff / np.sqrt(2.0))
    raise ValueError(f"unknown model {model!r}")


def simulate_judgements(strengths, pairs=None, n_annotators: int = 1, annotators_per_pair: int | None = 1,
                        annotator_noise=1.0, model: str = "bt", retest_share: float = 0.0,
                        seed: int | np.random.Generator = 0) -> Judgements:
    """Draw judgements from latent strengths.

    Args:
        strengths: (n_items,) for one batch or (n_batches × n_items).
        pairs: (P × 2) canonical pairs judged in every batch (default: all pairs).
        n_annotators: annotator pool size m.
        annotators_per_pair: R distinct annotators (drawn at random per pair) judge each pair;
            ``None`` = full overlap (every annotator judges every pair, R = m).
        annotator_noise: τ_k, scalar or (m,) array (per-annotator noise levels).
        model: ``"bt"`` or ``"thurstone"``.
        retest_share: share of judgements that the same annotator repeats later (test–retest),
            drawn independently from the same model.
        seed: int seed or a numpy Generator.

    Returns:
        :class:`Judgements` with ``timestamp`` = draw order (repeats come after all first judgements).
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    th = np.atleast_2d(np.asarray(strengths, float))
    nb, n = th.shape
    pr = all_pairs(n) if pairs is None else np.asarray(pairs, np.int64).reshape(-1, 2)
    if len(pr) and np.any(pr[:, 0] >= pr[:, 1]):
        raise ValueError("pairs must be canonical (a < b)")
    m = int(n_annotators)
    r = m if annotators_per_pair is None else int(annotators_per_pair)
    if r > m:
        raise ValueError("annotators_per_pair exceeds n_annotators")
    tau = np.broadcast_to(np.asarray(annotator_noise, float), (m,))
    p = len(pr)
    rows = nb * p
    batch = np.repeat(np.arange(nb), p)
    a = np.tile(pr[:, 0], nb)
    b = np.tile(pr[:, 1], nb)
    if r == m:
        ann = np.tile(np.arange(m), rows)
    elif r == 1:
        ann = rng.integers(0, m, rows)
    else:
        ann = rng.random((rows, m)).argsort(axis=1)[:, :r].ravel()
    batch, a, b = (np.repeat(x, r) for x in (batch, a, b))
    if retest_share > 0 and len(a):
        rep = np.flatnonzero(rng.random(len(a)) < retest_share)
        batch, a, b, ann = (np.concatenate([x, x[rep]]) for x in (batch, a, b, ann))
    prob = choice_probability(th[batch, a], th[batch, b], tau[ann] if m else 1.0, model)
    win = (rng.random(len(a)) < prob).astype(np.int8)
    return Judgements(ann, a, b, win, n, batch, np.arange(len(a), dtype=float), m, nb)


def choose_pairs(n_items: int, n_pairs: int, rng: np.random.Generator, exclude=None,
                 strengths=None, spanning_tree: bool = False) -> np.ndarray:
    """Pick canonical pairs: random, or most uncertain under current strengths.

    Args:
        n_items: candidates; n_pairs: how many to pick (capped at the available pairs).
        rng: numpy Generator.
        exclude: (P × 2) pairs already chosen.
        strengths: if given, pick the pairs with the highest Bernoulli variance
            ``p(1 − p)``, ``p = σ(θ_b − θ_a)`` (ties broken at random); else uniformly at random.
        spanning_tree: start with a random Hamiltonian path (a spanning tree) so the comparison graph
            is connected from the first round.

    Returns:
        (k × 2) int array of new canonical pairs.
    """
    allp = all_pairs(n_items)
    code = allp[:, 0] * n_items + allp[:, 1]
    avail = np.ones(len(allp), bool)
    if exclude is not None and len(exclude):
        ex = np.asarray(exclude)
        avail &= ~np.isin(code, ex[:, 0] * n_items + ex[:, 1])
    chosen = []
    if spanning_tree and n_items > 1:
        perm = rng.permutation(n_items)
        u, v = np.minimum(perm[:-1], perm[1:]), np.maximum(perm[:-1], perm[1:])
        tcode = u * n_items + v
        tree = np.isin(code, tcode) & avail
        chosen.append(np.flatnonzero(tree)[: n_pairs])
        avail &= ~tree
    k = n_pairs - sum(len(c) for c in chosen)
    idx = np.flatnonzero(avail)
    if k > 0 and len(idx):
        if strengths is None:
            chosen.append(rng.choice(idx, size=min(k, len(idx)), replace=False))
        else:
            th = np.asarray(strengths, float)
            pp = expit(th[allp[idx, 1]] - th[allp[idx, 0]])
            var = pp * (1 - pp) + rng.random(len(idx)) * 1e-9
            chosen.append(idx[np.argsort(-var, kind="stable")[:k]])
    sel = np.concatenate(chosen) if chosen else np.zeros(0, np.int64)
    return allp[sel]


def simulate_design(truth, share: float, method: str = "random", judgements_per_pair: int = 1,
                    n_annotators: int = 11, annotator_noise=1.0, model: str = "bt", rounds: int = 4,
                    alpha: float = 0.1, seed: int = 0) -> dict:
    """Simulate one budget/design on one batch and fit Bradley–Terry.

    Args:
        truth: (n_items,) latent strengths.
        share: share of the n(n−1)/2 pairs to judge.
        method: ``"random"`` (uniform pairs) or ``"adaptive"`` (random spanning-tree seed plus
            random pairs for the first ``1/rounds`` of the budget, then ``rounds − 1`` rounds of the
            most uncertain pairs under the current BT fit).
        judgements_per_pair: R distinct annotators per chosen pair.

    Returns:
        ``{"strengths", "pairs", "judgements", "strongly_connected"}``.
    """
    rng = np.random.default_rng(seed)
    n = len(truth)
    total = int(round(share * n * (n - 1) / 2))
    r = judgements_per_pair

    def draw(pairs):
        return simulate_judgements(truth, pairs, n_annotators, r, annotator_noise, model, seed=rng)

    if method == "random":
        pairs = choose_pairs(n, total, rng)
        j = draw(pairs)
    elif method == "adaptive":
        per = [total // rounds + (1 if i < total % rounds else 0) for i in range(rounds)]
        pairs = choose_pairs(n, per[0], rng, spanning_tree=True)
        js = [draw(pairs)]
        for k in per[1:]:
            c = sum(x.count_matrix() for x in js)
            th = bradley_terry(c, alpha=alpha).strengths
            new = choose_pairs(n, k, rng, exclude=pairs, strengths=th)
            pairs = np.concatenate([pairs, new])
            js.append(draw(new))
        j = Judgements(np.concatenate([x.annotator for x in js]), np.concatenate([x.a for x in js]),
                       np.concatenate([x.b for x in js]), np.concatenate([x.winner_is_b for x in js]),
                       n, n_annotators=n_annotators)
    else:
        raise ValueError(f"unknown method {method!r}")
    c = j.count_matrix()
    fit = bradley_terry(c, alpha=alpha)
    return {"strengths": fit.strengths, "pairs": pairs, "judgements": j,
            "strongly_connected": connectivity(c)[0]}


def plan_budget(n_items: int = 99, shares=(0.05, 0.1, 0.2, 0.3, 0.5), judgements_per_pair=(1,),
                methods=("random", "adaptive"), strengths_sd: float = 1.5, n_annotators: int = 11,
                annotator_noise=1.0, model: str = "bt", n_reps: int = 3, alpha: float = 0.1,
                seed: int = 0) -> list[dict]:
    """Ranking quality as a function of budget, for the planning page.

    For each repetition, true strengths θ ~ N(0, strengths_sd²) are drawn and a *full design*
    (every pair judged by ``judgements_per_pair`` annotators) is simulated as the reference. Each
    (method, share, R) design is then simulated on the same θ and fitted with Bradley–Terry.

    Returns:
        Rows ``{"method", "share", "judgements_per_pair", "n_pairs", "n_judgements",
        "rho_truth", "rho_truth_sd", "rho_full", "connected_share", "n_reps"}`` where
        ``rho_truth`` is the mean Spearman between recovered and true strengths and ``rho_full``
        the mean Spearman against the full design's BT ranking.
    """
    rng = np.random.default_rng(seed)
    reps = []
    for _ in range(n_reps):
        theta = rng.normal(0, strengths_sd, n_items)
        s = int(rng.integers(2 ** 31))
        full = {r: bradley_terry(simulate_judgements(theta, None, n_annotators, r, annotator_noise, model,
                                                     seed=s).count_matrix(), alpha=alpha).strengths
                for r in judgements_per_pair}
        reps.append((theta, full, s))
    rows = []
    p_all = n_items * (n_items - 1) // 2
    for method in methods:
        for r in judgements_per_pair:
            for share in shares:
                rt, rf, conn = [], [], []
                for i, (theta, full, s) in enumerate(reps):
                    res = simulate_design(theta, share, method, r, n_annotators, annotator_noise, model,
                                          alpha=alpha, seed=s + 1 + i)
                    rt.append(spearman(res["strengths"], theta))
                    rf.append(spearman(res["strengths"], full[r]))
                    conn.append(res["strongly_connected"])
                n_pairs = int(round(share * p_all))
                rows.append({"method": method, "share": share, "judgements_per_pair": r, "n_pairs": n_pairs,
                             "n_judgements": n_pairs * r, "rho_truth": float(np.mean(rt)),
                             "rho_truth_sd": float(np.std(rt)), "rho_full": float(np.mean(rf)),
                             "connected_share": float(np.mean(conn)), "n_reps": n_reps})
    return rows
