"""Numeric helpers every package shares (pure: numpy and scipy, no Django).

- :func:`json_safe`: the one NaN → None cleaner for reports stored as JSON (numpy scalars and arrays become
  Python values; NaN and ±inf become ``None``, which JSON can hold);
- :func:`finite_or_none`: one number for a database column (``None`` unless a finite int/float);
- :func:`spearman`: the one Spearman rank correlation (average ranks for ties), with its p-value and the
  number of pairs used.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = ["Spearman", "finite_or_none", "json_safe", "spearman"]


def json_safe(value):
    """``value`` made JSON-safe, recursively: NaN/inf → None, numpy scalars/arrays → Python, keys → str."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.str_):
        return str(value)
    return value


def finite_or_none(value) -> float | int | None:
    """``value`` when it is a finite int or float (numpy included), else ``None``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return int(value)


class Spearman(NamedTuple):
    rho: float  # NaN when undefined
    p: float  # two-sided, NaN when undefined
    n: int  # pairs used (both values finite)

    def as_dict(self) -> dict:
        """``{"rho", "p", "n"}`` with ``None`` where undefined (for JSON reports)."""
        return {"rho": finite_or_none(self.rho), "p": finite_or_none(self.p), "n": self.n}


def spearman(x, y, *, min_n: int = 3) -> Spearman:
    """Spearman's rho (Pearson on average ranks) over the positions where both ``x`` and ``y`` are finite.

    Undefined (rho = p = NaN) with fewer than ``min_n`` such positions or when either side is constant.
    """
    from scipy.stats import spearmanr

    x = np.asarray(x, np.float64).ravel()
    y = np.asarray(y, np.float64).ravel()
    if x.shape != y.shape:
        raise ValueError(f"spearman: {x.size} values against {y.size}")
    ok = np.isfinite(x) & np.isfinite(y)
    n = int(ok.sum())
    x, y = x[ok], y[ok]
    if n < max(min_n, 2) or np.all(x == x[0]) or np.all(y == y[0]):
        return Spearman(math.nan, math.nan, n)
    r = spearmanr(x, y)
    return Spearman(float(r.statistic), float(r.pvalue), n)
