"""Many Bradley–Terry fits at once: the fixed point of choix's ILSR, reached by Newton steps on a
stack of win-count matrices (bootstrap resamples of one batch).

``choix.ilsr_pairwise_dense(c, alpha)`` iterates the LSR Markov chain until its stationary
distribution stops moving (≈ 17 linear solves per fit). Its fixed point w (``Σ w = n``) solves,
for every item i,

    G_i(w) = Σ_{j≠i} (c_ij w_j − c_ji w_i) / (w_i + w_j) + α Σ_{j≠i} (w_j − w_i) = 0

(flow into i equals flow out of i in the chain built from w itself). Newton's method in
θ = log w solves the same equations in 3–5 steps from the point estimate; every step is one batched
``numpy.linalg.solve`` over all resamples. The result is choix's, to its tolerance: the test
compares the two on random resamples.
"""
from __future__ import annotations

import numpy as np

__all__ = ["ilsr_fixed_point_batched"]

QUADRATIC_ACCEPT = 1e-5
MAX_STEP = 1.0


def ilsr_fixed_point_batched(counts, alpha: float, initial_params=None, max_iter: int = 60,
                             tol: float = 1e-8) -> tuple[np.ndarray, np.ndarray]:
    """Bradley–Terry log-strengths of every matrix in a stack, as choix's ILSR with ``alpha`` > 0.

    Args:
        counts: (B × n × n) win counts, ``counts[b, i, j]`` = times i beat j in resample b.
        alpha: LSR regularisation (> 0, as in :func:`annotation.stats.bradley_terry`).
        initial_params: (n,) or (B × n) starting log-strengths (e.g. the point estimate).
        max_iter: Newton steps at most.
        tol: convergence as choix: L1 norm of the change of the centred parameters ≤ ``tol · n``.

    Returns:
        ``(theta, converged)``: (B × n) centred log-strengths and a (B,) bool mask; rows that did not
        converge (or became non-finite) are left for the caller to refit another way.
    """
    c = np.asarray(counts, dtype=np.float64)
    n_fits, n, _ = c.shape
    if alpha <= 0:
        raise ValueError("alpha must be > 0 (the fixed point is not unique without it)")
    theta = np.zeros((n_fits, n)) if initial_params is None else np.broadcast_to(
        np.asarray(initial_params, dtype=np.float64), (n_fits, n)).copy()
    theta -= theta.mean(axis=1, keepdims=True)
    diag = np.arange(n)
    converged = np.zeros(n_fits, dtype=bool)
    active = np.arange(n_fits)
    for _ in range(max_iter):
        if not len(active):
            break
        th = theta[active]
        ca = c[active]
        w = np.exp(th)
        w *= n / w.sum(axis=1, keepdims=True)
        r = 1.0 / (w[:, :, None] + w[:, None, :])  # 1 / (w_i + w_j), symmetric
        m = ca * r
        # G_i = Σ_j c_ij w_j/(w_i+w_j) − w_i Σ_j c_ji/(w_i+w_j) + α (Σ_j w_j − n w_i)   (j = i adds 0)
        g = np.einsum("bij,bj->bi", m, w) - w * m.sum(axis=1) + alpha * (w.sum(axis=1, keepdims=True) - n * w)
        # ∂G_i/∂θ_k = w_k ∂G_i/∂w_k with ∂G_i/∂w_k = w_i s_ik + α (k ≠ i), s = (c + cᵀ)/(w_i + w_j)²;
        # ∂G_i/∂w_i = −Σ_{j≠i} w_j s_ij − α (n − 1).
        s = (m + m.transpose(0, 2, 1)) * r
        s[:, diag, diag] = 0.0
        jac = w[:, :, None] * s
        jac += alpha
        jac[:, diag, diag] = -np.einsum("bij,bj->bi", s, w) - alpha * (n - 1)
        jac *= w[:, None, :]
        # G sums to zero: replace the last equation by the normalisation Σ w = n (linearised).
        jac[:, -1, :] = w
        g[:, -1] = w.sum(axis=1) - n
        with np.errstate(all="ignore"):
            try:
                step = np.linalg.solve(jac, -g[:, :, None])[:, :, 0]
            except np.linalg.LinAlgError:
                break
        # A damped step far from the solution (sparse data, cold start): at most MAX_STEP in log-strength.
        big = np.abs(step).max(axis=1, keepdims=True)
        step *= np.minimum(1.0, MAX_STEP / np.where(big > 0, big, 1.0))
        new = th + step
        new -= new.mean(axis=1, keepdims=True)
        ok = np.isfinite(new).all(axis=1)
        moved = np.abs(new - th).sum(axis=1)
        # Newton converges quadratically: after a step of L1 size ≤ 1e-5·n the next one would be ~1e-10·n,
        # far below choix's own stopping error, so that iterate is accepted without one more solve.
        done = ok & ((moved <= tol * n) | (moved <= QUADRATIC_ACCEPT * n))
        theta[active[ok]] = new[ok]
        converged[active[done]] = True
        active = active[ok & ~done]
    return theta, converged
