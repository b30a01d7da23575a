"""Per-class decision thresholds: the plateau-high heuristic (seed 000, Appendix E.4) and the 3-class decision.

Thresholds are tuned on the *training* folds only and frozen on the held-out fold. A pair is ``cit.`` when its
``cit.`` probability reaches the ``cit.`` threshold, else ``cf.`` when its ``cf.`` probability reaches the ``cf.``
threshold, else no match: ``cit.`` wins when a pair passes both (the paper's precedence for verbatim quotes).
"""
from __future__ import annotations

import numpy as np

CLASSES = ("none", "cit.", "cf.")  # class ids 0, 1, 2


def f1_curve(scores: np.ndarray, y: np.ndarray, extra_positives: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Pooled F1 for every distinct threshold t (predict positive iff score >= t).

    ``extra_positives`` counts gold positives that were never scored (e.g. not retrieved): they are false
    negatives at every threshold. Ties: all pairs with the same score are decided together.

    Returns:
        (thresholds descending, f1 at each threshold); both empty for empty input.
    """
    s = np.asarray(scores, np.float64).ravel()
    yy = np.asarray(y, bool).ravel()
    order = np.argsort(-s, kind="stable")
    s, yy = s[order], yy[order]
    tp = np.cumsum(yy)
    npred = np.arange(1, s.size + 1)
    last = np.r_[s[1:] != s[:-1], True]  # last index of each group of equal scores
    tp, npred, thr = tp[last], npred[last], s[last]
    pos = yy.sum() + int(extra_positives)
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(pos + npred > 0, 2 * tp / (pos + npred), 0.0)
    return thr, f1


def plateau_threshold(scores: np.ndarray, y: np.ndarray, tol: float = 0.01, extra_positives: int = 0) -> dict:
    """The plateau-high threshold (Appendix E.4): the largest threshold whose pooled F1 is within ``tol`` of the
    best F1. Favours precision.

    Returns:
        ``{"threshold", "f1", "best_f1"}``; threshold ``inf`` (predict nothing) if there is no positive.
    """
    thr, f1 = f1_curve(scores, y, extra_positives)
    if thr.size == 0 or not np.any(np.asarray(y, bool)):
        return {"threshold": float("inf"), "f1": 0.0, "best_f1": 0.0}
    best = f1.max()
    i = np.nonzero(f1 >= best - tol)[0][0]  # thresholds are descending: the first is the largest
    return {"threshold": float(thr[i]), "f1": float(f1[i]), "best_f1": float(best)}


def class_thresholds(probs: np.ndarray, labels: np.ndarray, tol: float = 0.01,
                     extra_positives: dict | None = None) -> dict:
    """Plateau thresholds for ``cit.`` (column 1) and ``cf.`` (column 2) of (n, 3) class probabilities, each
    one-vs-rest against ``labels`` (0/1/2). ``extra_positives`` maps a class name to unscored gold pairs."""
    p = np.asarray(probs, np.float64)
    y = np.asarray(labels)
    extra = extra_positives or {}
    return {name: plateau_threshold(p[:, cid], y == cid, tol, extra.get(name, 0))
            for cid, name in ((1, "cit."), (2, "cf."))}


def decide(probs: np.ndarray, thresholds: dict) -> np.ndarray:
    """Class ids (int8) from (..., 3) probabilities and ``{"cit.": t1, "cf.": t2}`` (numbers or the dicts of
    :func:`class_thresholds`): ``cit.`` if p_cit ≥ t1, else ``cf.`` if p_cf ≥ t2, else 0."""
    t = {k: (v["threshold"] if isinstance(v, dict) else v) for k, v in thresholds.items()}
    p = np.asarray(probs, np.float64)
    cit = p[..., 1] >= t["cit."]
    cf = p[..., 2] >= t["cf."]
    return np.where(cit, 1, np.where(cf, 2, 0)).astype(np.int8)
