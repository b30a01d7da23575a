"""Channel weights learnt from one researcher's verdicts on one run (pure: no Django).

A ``channels`` run scores a candidate as ``sum_c w_c x_c``: ``x_c`` the channel's score, ``w_c`` the profile's
weight (the context term is one more channel). From the verdicts on some candidates (confirmed cit./cf. = 1,
rejected = 0) :func:`fit_weights` fits a logistic model on the same scores,

    P(confirmed | x) = sigmoid(b + t * sum_c w_c exp(u_c) x_c),

with a normal prior on each ``u_c`` (the log ratio of the new weight to the shipped one): the verdicts move a weight
only as far as they outweigh the prior, and a channel they say nothing about keeps its weight. The new weights are
``w_c exp(u_c)``; ``t`` and ``b`` only calibrate and are not kept. :func:`refit_scores` turns them into the run's
new whole-run order (each query's own order kept).

It never changes the order without evidence: it keeps the shipped weights (and says why) with fewer than
:data:`MIN_POSITIVE` confirmed or :data:`MIN_NEGATIVE` rejected candidates, with verdicts of one class only, and when
the fitted weights do not rank the verdicts better than the shipped ones held out (five folds, area under the ROC
curve, by more than the folds' standard error).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

MIN_POSITIVE = 10  # confirmed candidates before a fit is tried
MIN_NEGATIVE = 10  # rejected candidates before a fit is tried
PRIOR = 4.0  # precision of the normal prior on log(new weight / shipped weight); chosen on Lucan books 2-5
MAX_LOG_RATIO = 3.0  # a weight moves at most e^3 (about x20) either way
FOLDS = 5


@dataclass(frozen=True)
class Refit:
    """What the verdicts did to a run's channel weights: ``fitted`` (new weights) or kept (``weights`` equal to
    ``shipped``), with the sentence the page and the API show."""

    fitted: bool
    message: str
    shipped: dict[str, float]
    weights: dict[str, float]
    n_positive: int
    n_negative: int
    needed: dict[str, int] = field(default_factory=dict)  # more verdicts of a kind ("confirmed", "rejected")
    held_out: dict[str, float] = field(default_factory=dict)  # held-out AUC of the verdicts: shipped, fitted

    def changes(self) -> list[dict]:
        """Every channel with its shipped and new weight and their ratio, the largest gain first."""
        rows = [{"channel": c, "shipped": self.shipped[c], "fitted": round(self.weights[c], 4),
                 "ratio": round(self.weights[c] / self.shipped[c], 3)} for c in self.shipped if self.shipped[c] > 0]
        return sorted(rows, key=lambda r: -r["ratio"])

    def score(self, X: np.ndarray, names: Sequence[str]) -> np.ndarray:
        """The fused score of candidates ``X`` (rows, channels in ``names``' order) under :attr:`weights`."""
        return np.asarray(X, np.float64) @ np.asarray([self.weights.get(c, 0.0) for c in names], np.float64)

    def to_json(self) -> dict:
        return {"fitted": self.fitted, "message": self.message, "n_positive": self.n_positive,
                "n_negative": self.n_negative, "needed": dict(self.needed), "held_out": dict(self.held_out),
                "shipped": dict(self.shipped), "weights": {c: round(w, 6) for c, w in self.weights.items()},
                "changes": self.changes()}


def _kept(message: str, shipped: dict, n_pos: int, n_neg: int, **extra) -> Refit:
    return Refit(False, message, dict(shipped), dict(shipped), n_pos, n_neg, **extra)


def fit_weights(X, names: Sequence[str], shipped: Mapping[str, float], labels, *, prior: float = PRIOR,
                min_positive: int = MIN_POSITIVE, min_negative: int = MIN_NEGATIVE) -> Refit:
    """New channel weights from verdicts: ``X`` (n, channels) the verified candidates' channel scores in
    ``names``' order, ``labels`` (n,) 1 confirmed / 0 rejected, ``shipped`` the run's weights by channel name (a
    channel without a positive weight is not learnt). Returns a :class:`Refit`, fitted or kept with the reason."""
    X = np.asarray(X, np.float64).reshape(len(labels), len(names)) if len(labels) else np.zeros((0, len(names)))
    y = np.asarray(labels, np.float64)
    if y.size and not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("labels must be 0 (rejected) or 1 (confirmed)")
    if not np.isfinite(X).all():
        raise ValueError("channel scores must be finite numbers")
    shipped = {c: float(shipped.get(c, 0.0)) for c in names}
    n_pos, n_neg = int(y.sum()), int(y.size - y.sum())
    if n_pos == 0 and n_neg == 0:
        return _kept(f"No verdicts yet: confirm (cit. or cf.) or reject candidates, at least {min_positive} "
                     f"confirmed and {min_negative} rejected; the shipped order is kept.", shipped, 0, 0,
                     needed={"confirmed": min_positive, "rejected": min_negative})
    if n_neg == 0 or n_pos == 0:
        kind, other = ("confirm a parallel", "rejections") if n_neg == 0 else ("reject the candidate", "confirmations")
        return _kept(f"All {n_pos + n_neg} of your verdicts {kind}: the weights can only learn what tells "
                     f"parallels from the rest with {other} as well, so the shipped order is kept.",
                     shipped, n_pos, n_neg)
    needed = {k: v for k, v in (("confirmed", max(0, min_positive - n_pos)),
                                ("rejected", max(0, min_negative - n_neg))) if v}
    if needed:
        more = " and ".join(f"{v} more {k}" for k, v in needed.items())
        return _kept(f"{n_pos} confirmed and {n_neg} rejected so far: re-ranking needs {more}; the shipped order "
                     "is kept.", shipped, n_pos, n_neg, needed=needed)
    on = [i for i, c in enumerate(names) if shipped[c] > 0]
    w0 = np.asarray([shipped[names[i]] for i in on])
    Xo = X[:, on]
    u = fit_log_ratios(Xo, y, w0, prior)
    folds = _held_out(Xo, y, w0, prior)
    auc_shipped, auc_fitted = (float(np.mean(v)) for v in zip(*folds))
    gain = np.asarray([f - s for s, f in folds])
    margin = float(gain.std(ddof=1) / np.sqrt(gain.size)) if gain.size > 1 else np.inf
    held = {"shipped": round(auc_shipped, 4), "fitted": round(auc_fitted, 4), "margin": round(margin, 4)}
    if not gain.mean() > margin:
        return _kept(f"Weights fitted to your {n_pos} confirmed and {n_neg} rejected candidates do not rank held-out "
                     f"verdicts clearly better than the shipped weights (AUC {auc_fitted:.3f} against "
                     f"{auc_shipped:.3f}, fold-to-fold spread ±{margin:.3f}): the shipped order is kept.",
                     shipped, n_pos, n_neg, held_out=held)
    weights = dict(shipped)
    for j, i in enumerate(on):
        weights[names[i]] = float(w0[j] * np.exp(u[j]))
    fit = Refit(True, "", shipped, weights, n_pos, n_neg, held_out=held)
    moved = [r for r in fit.changes() if abs(np.log(r["ratio"])) >= np.log(1.1)]
    gained = ", ".join(f"{r['channel']} ×{r['ratio']:.2f}" for r in moved if r["ratio"] > 1) or "none"
    lost = ", ".join(f"{r['channel']} ×{r['ratio']:.2f}" for r in reversed(moved) if r["ratio"] < 1) or "none"
    message = (f"Re-ranked with {n_pos} confirmed and {n_neg} rejected candidates (held-out AUC {auc_fitted:.3f}, "
               f"shipped weights {auc_shipped:.3f}). Gained weight: {gained}. Lost weight: {lost}.")
    return Refit(True, message, shipped, weights, n_pos, n_neg, held_out=held)


def fit_log_ratios(X: np.ndarray, y: np.ndarray, w0: np.ndarray, prior: float) -> np.ndarray:
    """The log weight ratios ``u`` (one per column of ``X``, shipped weights ``w0``) maximising the penalised
    likelihood of ``y`` (L-BFGS-B, analytic gradient)."""
    from scipy.optimize import minimize
    from scipy.special import expit

    base = X @ w0
    spread = float(np.std(base)) or 1.0
    p0 = min(max(y.mean(), 1e-3), 1 - 1e-3)
    m = len(w0)

    def loss(theta):
        b, a, u = theta[0], theta[1], theta[2:]
        wu = w0 * np.exp(u)
        s = X @ wu
        z = b + np.exp(a) * s
        p = expit(z)
        nll = np.sum(np.logaddexp(0.0, z) - y * z)
        r = p - y
        grad = np.empty_like(theta)
        grad[0] = r.sum()
        grad[1] = np.exp(a) * (r @ s)
        grad[2:] = np.exp(a) * (r @ X) * wu + prior * u
        return nll + 0.5 * prior * float(u @ u), grad

    theta0 = np.concatenate([[np.log(p0 / (1 - p0)), np.log(1.0 / spread)], np.zeros(m)])
    bounds = [(None, None), (-20, 20)] + [(-MAX_LOG_RATIO, MAX_LOG_RATIO)] * m
    res = minimize(loss, theta0, jac=True, method="L-BFGS-B", bounds=bounds)
    return res.x[2:]


def auc(scores: np.ndarray, y: np.ndarray) -> float:
    """Area under the ROC curve: the share of (confirmed, rejected) pairs the scores order right (ties: half)."""
    pos, neg = scores[y == 1], scores[y == 0]
    if not pos.size or not neg.size:
        return float("nan")
    order = np.argsort(np.concatenate([pos, neg]), kind="mergesort")
    ranks = np.empty(order.size)
    allv = np.concatenate([pos, neg])[order]
    # average ranks over ties
    _, start, counts = np.unique(allv, return_index=True, return_counts=True)
    avg = start + (counts - 1) / 2.0 + 1
    ranks[order] = np.repeat(avg, counts)
    return float((ranks[:pos.size].sum() - pos.size * (pos.size + 1) / 2) / (pos.size * neg.size))


def _held_out(X: np.ndarray, y: np.ndarray, w0: np.ndarray, prior: float) -> list[tuple[float, float]]:
    """Per fold of :data:`FOLDS` stratified folds, the AUC of the shipped weights and of weights fitted on the other
    folds (folds by position within each class, so the result does not depend on a random draw)."""
    fold = np.empty(y.size, np.int64)
    for cls in (0, 1):
        rows = np.flatnonzero(y == cls)
        fold[rows] = np.arange(rows.size) % FOLDS
    out = []
    for f in range(FOLDS):
        test, train = fold == f, fold != f
        if not (y[test] == 1).any() or not (y[test] == 0).any():
            continue
        u = fit_log_ratios(X[train], y[train], w0, prior)
        out.append((auc(X[test] @ w0, y[test]), auc(X[test] @ (w0 * np.exp(u)), y[test])))
    return out


def verify_next(p_scores: np.ndarray, fitted_scores: np.ndarray, n: int = 10) -> np.ndarray:
    """Rows of the undecided candidates that would teach the weights most: those the shipped and the fitted
    weights disagree on most (rank in one order against rank in the other), among the fitted order's top
    ``10 n``. Returns up to ``n`` row indices, the largest disagreement first."""
    p_scores, fitted_scores = np.asarray(p_scores, np.float64), np.asarray(fitted_scores, np.float64)
    if not p_scores.size:
        return np.zeros(0, np.int64)
    rank_shipped = np.empty(p_scores.size)
    rank_shipped[np.argsort(-p_scores, kind="stable")] = np.arange(p_scores.size)
    rank_fitted = np.empty(p_scores.size)
    order = np.argsort(-fitted_scores, kind="stable")
    rank_fitted[order] = np.arange(p_scores.size)
    head = order[:10 * n]
    gap = np.abs(rank_shipped[head] - rank_fitted[head])
    return head[np.argsort(-gap, kind="stable")[:n]]


def refit_scores(fit: Refit, X, names: Sequence[str], score, query, rank) -> np.ndarray:
    """The score each candidate is ordered by after ``fit``, for the run's whole-run order: the fused score under
    the fitted weights, lowered where needed so that it never exceeds that of a candidate ranked above it in its
    own query (a running minimum in the shipped rank order). So the verdicts re-order the run across queries (which
    queries' candidates come first) while every query keeps its own order, and its recall at any k: verdicts
    gathered down the run are on each query's best candidates and say nothing about the order within a query
    (docs/guide/workbench.md; ``perf/verdict_rerank.py`` measured re-ordering within queries too, and it did not
    carry over to the held-out books). ``X`` (n, channels in ``names``' order), ``score`` the shipped scores,
    ``query`` a query key and ``rank`` the shipped rank per candidate; kept weights: ``score`` as it is."""
    score = np.asarray(score, np.float64)
    if not fit.fitted:
        return score.copy()
    new = fit.score(X, names)
    order = np.lexsort((np.asarray(rank), np.asarray(query)))  # by query, then shipped rank
    q = np.asarray(query)[order]
    vals = new[order]
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    out = np.empty_like(vals)
    for a, b in zip(starts, np.r_[starts[1:], len(q)]):
        out[a:b] = np.minimum.accumulate(vals[a:b])
    result = np.empty_like(new)
    result[order] = out
    return result
