"""RMSE, Spearman and Pearson with explicit handling of degenerate inputs (returned as NaN)."""
from __future__ import annotations

import numpy as np

from core.numeric import finite_or_none, spearman


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


def summary(pred, gold) -> dict:
    """RMSE, Spearman (:func:`core.numeric.spearman`, defined from 2 pairs) and Pearson; ``None`` when undefined."""
    return {"rmse": finite_or_none(rmse(pred, gold)), "spearman": spearman(pred, gold, min_n=2).as_dict()["rho"],
            "pearson": finite_or_none(pearson(pred, gold)), "n": int(np.asarray(pred).size)}
