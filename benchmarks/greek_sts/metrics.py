"""RMSE, Spearman and Pearson with explicit handling of degenerate inputs (returned as NaN)."""
from __future__ import annotations

import math

import numpy as np


def rmse(pred, gold) -> float:
    pred, gold = np.asarray(pred, float), np.asarray(gold, float)
    if pred.shape != gold.shape:
        raise ValueError("pred and gold differ in shape")
    if pred.size == 0:
        return float("nan")
    return float(np.sqrt(np.mean((pred - gold) ** 2)))


def pearson(pred, gold) -> float:
    pred, gold = np.asarray(pred, float), np.asarray(gold, float)
    if pred.size < 2 or np.ptp(pred) == 0 or np.ptp(gold) == 0:
        return float("nan")
    return float(np.corrcoef(pred, gold)[0, 1])


def _ranks(x: np.ndarray) -> np.ndarray:
    """Average ranks (ties share the mean rank), 1-based."""
    from scipy.stats import rankdata

    return rankdata(x, method="average")


def spearman(pred, gold) -> float:
    pred, gold = np.asarray(pred, float), np.asarray(gold, float)
    if pred.size < 2:
        return float("nan")
    return pearson(_ranks(pred), _ranks(gold))


def clean(x: float) -> float | None:
    """NaN → None (for JSON)."""
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def summary(pred, gold) -> dict:
    return {"rmse": clean(rmse(pred, gold)), "spearman": clean(spearman(pred, gold)),
            "pearson": clean(pearson(pred, gold)), "n": int(np.asarray(pred).size)}
