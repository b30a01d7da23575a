"""Annotator-aware Bradley–Terry: each annotator's reliability is learnt jointly with the strengths.

Model (a mixture with guessing): annotator w is attentive with probability r_w and then chooses by
Bradley–Terry, otherwise picks one of the two candidates at random:

    P(i beats j | w) = r_w · σ(θ_i − θ_j) + (1 − r_w) / 2.

r_w = 1 is plain Bradley–Terry; r_w = 0 is a coin-flipping annotator whose judgements carry no
weight. Fitted by EM: the E-step gives each judgement the posterior probability π that it was an
attentive choice, ``π = r_w σ(θ_win − θ_lose) / (r_w σ(θ_win − θ_lose) + (1 − r_w)/2)``; the M-step sets
``r_w = (Σ π + 1) / (n_w + 2)`` (a uniform Beta prior) and refits each batch's θ by the posterior mode
of :func:`bt_map` on the π-weighted win counts (same N(0, s²) prior as plain scores, warm-started).

crowd-kit's ``NoisyBradleyTerry`` is the reference implementation of this idea (its model adds a
per-annotator bias towards the left screen side, meaningless here because judgements are stored by
winning candidate); tests compare the two on simulated data. Unlike crowd-kit (one global item set,
gradient loop in Python) this fits every batch's strengths with one reliability per annotator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from .agreement import spearman
from .bt_bayes import DEFAULT_PRIOR_SD, bt_map
from .judgements import Judgements

__all__ = ["AnnotatorAwareBT", "annotator_aware_bt", "ranking_shift"]


@dataclass(frozen=True)
class AnnotatorAwareBT:
    """Result of :func:`annotator_aware_bt`.

    Attributes:
        strengths: (n_batches × n_items) centred θ; NaN for never-compared candidates / empty batches.
        reliability: (n_annotators,) r_w (NaN for annotators without judgements).
        n_judgements: (n_annotators,) judgements per annotator.
        iterations: EM iterations run; converged: whether the change fell below ``tol``.
    """

    strengths: np.ndarray
    reliability: np.ndarray
    n_judgements: np.ndarray
    iterations: int
    converged: bool


def _batch_counts(j: Judgements, idx: np.ndarray, weight: np.ndarray) -> np.ndarray:
    n = j.n_items
    return np.bincount(j.winner[idx] * n + j.loser[idx], weights=weight, minlength=n * n).reshape(n, n)


def annotator_aware_bt(j: Judgements, prior_sd: float = DEFAULT_PRIOR_SD, max_iter: int = 200,
                       tol: float = 1e-6) -> AnnotatorAwareBT:
    """Fit the annotator-aware model by EM (see module docstring).

    Args:
        j: judgements (all batches; reliabilities are shared across batches).
        prior_sd: prior SD of the log-strengths; max_iter, tol: EM stopping rule (max change of θ or r).

    Returns:
        :class:`AnnotatorAwareBT`.
    """
    m, nb, n = j.n_annotators, max(j.n_batches, 1), j.n_items
    n_w = np.bincount(j.annotator, minlength=m)
    rel = np.where(n_w > 0, 0.8, np.nan)
    theta = np.zeros((nb, n))
    slices = j.batch_slices()
    compared = np.zeros((nb, n), bool)
    for bt, idx in slices.items():
        compared[bt, j.winner[idx]] = True
        compared[bt, j.loser[idx]] = True
    it, converged = 0, not len(j)
    pi = np.ones(len(j))
    while it < max_iter and len(j):
        it += 1
        old_theta, old_rel = theta.copy(), rel.copy()
        for bt, idx in slices.items():
            theta[bt], _ = bt_map(_batch_counts(j, idx, pi[idx]), prior_sd, init=theta[bt])
        d = theta[j.batch, j.winner] - theta[j.batch, j.loser]
        r = rel[j.annotator]
        att = r * expit(d)
        pi = att / (att + (1.0 - r) / 2.0)
        rel = np.where(n_w > 0, (np.bincount(j.annotator, weights=pi, minlength=m) + 1.0) / (n_w + 2.0), np.nan)
        change = max(np.nanmax(np.abs(theta - old_theta)), np.nanmax(np.abs(rel - old_rel)))
        if change < tol:
            converged = True
            break
    strengths = np.full((nb, n), np.nan)
    for bt in range(nb):
        k = compared[bt]
        if k.any():
            strengths[bt, k] = theta[bt, k] - theta[bt, k].mean()
    return AnnotatorAwareBT(strengths, rel, n_w, it, converged)


def ranking_shift(plain, aware) -> dict:
    """How much a ranking moves between plain and annotator-aware strengths (one batch).

    Returns:
        ``{"spearman": ρ between the two, "max_rank_change", "mean_rank_change", "n"}`` over the
        candidates both rank (finite in both); NaN/0 when fewer than 2 candidates.
    """
    x = np.asarray(plain, float)
    y = np.asarray(aware, float)
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 2:
        return {"spearman": float("nan"), "max_rank_change": 0, "mean_rank_change": float("nan"), "n": int(ok.sum())}
    rx = (-x[ok]).argsort(kind="stable").argsort(kind="stable")
    ry = (-y[ok]).argsort(kind="stable").argsort(kind="stable")
    diff = np.abs(rx - ry)
    return {"spearman": spearman(x[ok], y[ok]), "max_rank_change": int(diff.max()),
            "mean_rank_change": float(diff.mean()), "n": int(ok.sum())}
