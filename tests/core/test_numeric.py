"""The one Spearman helper and the one JSON cleaner (core/numeric.py), on hand-computed cases."""
import json
import math

import numpy as np
import pytest
from scipy.stats import spearmanr

from core.numeric import finite_or_none, json_safe, spearman


def test_spearman_hand_cases():
    assert spearman([0.1, 0.2, 0.3, 0.4], [1, 2, 3, 4]).rho == pytest.approx(1.0)
    assert spearman([0.4, 0.3, 0.2, 0.1], [1, 2, 3, 4]).rho == pytest.approx(-1.0)
    # ranks x: 1,2,3,4 ; y: 2,1,4,3 → d² = 1+1+1+1 = 4 → 1 − 6·4 / (4·15) = 0.6
    assert spearman([1, 2, 3, 4], [2, 1, 4, 3]).rho == pytest.approx(0.6)
    # ties get average ranks: x ranks 1.5,1.5,3 vs y 1,2,3 → Pearson of ranks = √3/2
    assert spearman([0.5, 0.5, 0.9], [0.1, 0.2, 0.3]).rho == pytest.approx(math.sqrt(3) / 2)


def test_spearman_undefined_cases_and_finite_mask():
    assert math.isnan(spearman([0.5, 0.5, 0.5], [0.1, 0.2, 0.3]).rho)  # constant side
    assert math.isnan(spearman([1, 2], [1, 2]).rho)  # fewer than 3 pairs by default
    assert spearman([1, 2], [2, 1], min_n=2).rho == pytest.approx(-1.0)
    r = spearman([1, 2, np.nan, 3, 4], [1, 2, 9, 4, np.inf])  # positions 0, 1, 3 used
    assert r.n == 3 and r.rho == pytest.approx(1.0)
    assert spearman([1, 1, 1], [0, 1, 0]).as_dict() == {"rho": None, "p": None, "n": 3}
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=50), rng.normal(size=50)
    ref = spearmanr(x, y)
    assert spearman(x, y).rho == pytest.approx(ref.statistic) and spearman(x, y).p == pytest.approx(ref.pvalue)
    with pytest.raises(ValueError):
        spearman([1, 2, 3], [1, 2])


def test_json_safe_and_finite_or_none():
    value = {1: np.float32(0.5), "a": [np.nan, np.inf, np.int64(3), np.bool_(True)], "b": np.arange(2),
             "c": (np.str_("x"), None)}
    out = json_safe(value)
    assert out == {"1": 0.5, "a": [None, None, 3, True], "b": [0, 1], "c": ["x", None]}
    json.dumps(out, allow_nan=False)
    assert finite_or_none(np.float64(0.25)) == 0.25 and finite_or_none(float("nan")) is None
    assert finite_or_none(float("inf")) is None and finite_or_none("0.3") is None and finite_or_none(True) is None
    assert finite_or_none(np.int32(4)) == 4
