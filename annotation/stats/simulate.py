"""Simulated pairwise judgements. The design simulation (which pairs, how many judgements; planning) is
`pair_selection.simulate_design`, the service's own pair rule.

Choice model for annotator k with noise scale τ_k on the pair (a, b) with latent strengths θ:

* ``model="bt"`` (Bradley–Terry / logistic): ``P(b wins) = 1 / (1 + exp(−(θ_b − θ_a)/τ_k))``
* ``model="thurstone"`` (Case V): each candidate is perceived as θ + N(0, τ_k²), so
  ``P(b wins) = Φ((θ_b − θ_a) / (τ_k √2))``

τ → 0 is a perfectly transitive annotator, τ → ∞ a coin flip.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, ndtr

from .judgement_arrays import Judgements

__all__ = ["all_pairs", "choice_probability", "simulate_judgements"]


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
