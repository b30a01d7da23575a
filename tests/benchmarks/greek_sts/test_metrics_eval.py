"""RMSE / Spearman / Pearson against hand-computed cases; calibration; directionality; gold reading."""
import math

import numpy as np
import pytest

from benchmarks.greek_sts.evaluate import (
    calibrate_leave_one_reference_out,
    evaluate_method,
)
from benchmarks.greek_sts.gold_files import (
    GoldFormatError,
    GoldPair,
    read_sts_gold,
    references,
    write_sts_gold,
)
from benchmarks.greek_sts.metrics import pearson, rmse


def test_rmse_hand_case():
    # errors 0.1, -0.2, 0.2 → mean square (0.01 + 0.04 + 0.04) / 3 = 0.03
    assert rmse([0.6, 0.3, 0.9], [0.5, 0.5, 0.7]) == pytest.approx(math.sqrt(0.03))
    assert rmse([1, 1], [1, 1]) == 0.0


def test_pearson_hand_case():
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    # x=(1,2,3), y=(1,3,2): cov = 1, var x = 2, var y = 2 (sums of squares) → 0.5
    assert pearson([1, 2, 3], [1, 3, 2]) == pytest.approx(0.5)


def test_sts_file_reads_296_pairs_three_references(sts_file):
    pairs = read_sts_gold(sts_file)
    assert len(pairs) == 296
    assert set(references(pairs)) == {"16977 1", "17148 1", "16977 2"}
    assert all(0.0 <= p.score <= 1.0 for p in pairs)
    first = pairs[0]
    assert first.reference_id == "16977 1" and first.candidate_id == "18150 1"
    assert first.reference_text.startswith("+ Αἶνος θ(ε)ῶ")
    assert first.score == pytest.approx(0.865284974093264)
    by = {(p.reference_id, p.candidate_id): p.score for p in pairs}
    # the paper's Table 4 asymmetry: 16977 2 → 16977 1 high, 16977 1 → 16977 2 lower
    assert by[("16977 2", "16977 1")] > by[("16977 1", "16977 2")]


def test_gold_errors_name_file_and_line(tmp_path):
    header = "verse1_id\tverse2_id\tverse1\tverse2\tnormalized_counts\n"
    p = tmp_path / "bad.tsv"
    p.write_text(header + "a 1\tb 1\tα\tβ\t0.5\na 1\tc 1\tα\tγ\tnot-a-number\n", encoding="utf-8")
    with pytest.raises(GoldFormatError, match=r"bad\.tsv:3: score 'not-a-number'"):
        read_sts_gold(p)
    p.write_text(header + "a 1\tb 1\tα\n", encoding="utf-8")
    with pytest.raises(GoldFormatError, match=r"bad\.tsv:2: expected 5"):
        read_sts_gold(p)
    p.write_text(header + "a 1\tb 1\tα\tβ\t1.5\n", encoding="utf-8")
    with pytest.raises(GoldFormatError, match=r"bad\.tsv:2: .*outside"):
        read_sts_gold(p)
    p.write_text(header + "a 1\tb 1\tα\tβ\t0.5\na 1\tb 1\tα\tβ\t0.4\n", encoding="utf-8")
    with pytest.raises(GoldFormatError, match=r"bad\.tsv:3: .*repeats line 2"):
        read_sts_gold(p)
    p.write_text("x\ty\n", encoding="utf-8")
    with pytest.raises(GoldFormatError, match=r"bad\.tsv:1: unexpected header"):
        read_sts_gold(p)


def test_gold_roundtrip(tmp_path):
    pairs = [GoldPair("r", "c1", "α β", "γ", 0.25), GoldPair("r", "c2", "α β", "δ\tε", 1.0)]
    write_sts_gold(pairs, tmp_path / "g.tsv")
    back = read_sts_gold(tmp_path / "g.tsv")
    assert [p.score for p in back] == [0.25, 1.0] and back[1].candidate_text == "δ ε"


class _Fixed:
    """A fake method returning given scores per (a, b) text pair."""

    name = "fixed"

    def __init__(self, table, symmetric=True):
        self.table, self.symmetric = table, symmetric

    def pair_scores(self, a, b):
        return np.array([self.table.get((x, y), self.table.get((y, x), 0.0)) if self.symmetric
                         else self.table.get((x, y), 0.0) for x, y in zip(a, b)])


def _gold():
    return [GoldPair("A", "B", "a", "b", 0.9), GoldPair("A", "C", "a", "c", 0.1),
            GoldPair("B", "A", "b", "a", 0.3), GoldPair("B", "C", "b", "c", 0.5)]


def test_evaluate_method_hand_case_and_directionality():
    table = {("a", "b"): 0.8, ("a", "c"): 0.2, ("b", "c"): 0.5}
    rep = evaluate_method(_gold(), _Fixed(table))
    # predictions 0.8, 0.2, 0.8, 0.5 vs gold 0.9, 0.1, 0.3, 0.5 → errors .1 .1 .5 0
    assert rep["rmse"] == pytest.approx(math.sqrt((0.01 + 0.01 + 0.25) / 4))
    assert rep["n_pairs"] == 4
    assert rep["per_reference"]["A"] == {"rmse": pytest.approx(0.1), "spearman": pytest.approx(1.0),
                                         "pearson": pytest.approx(1.0), "n": 2}
    d = rep["directionality"]
    assert d["method_symmetric"] and d["max_abs_asymmetry_measured"] == 0.0
    assert d["bidirectional_pairs"][0]["gold_a_to_b"] == 0.9 and d["bidirectional_pairs"][0]["gold_b_to_a"] == 0.3
    assert d["gold_mean_abs_asymmetry"] == pytest.approx(0.6)
    assert d["reproduces_directionality"] is False
    assert len(rep["predictions"]) == 4 and {"gold", "predicted", "predicted_reverse"} <= set(rep["predictions"][0])
    # an asymmetric method ordering A→B above B→A as the gold does reproduces the direction
    asym = {("a", "b"): 0.9, ("b", "a"): 0.4, ("a", "c"): 0.1, ("b", "c"): 0.5}
    d2 = evaluate_method(_gold(), _Fixed(asym, symmetric=False))["directionality"]
    assert d2["reproduces_directionality"] is True and d2["direction_agreement"] == 1.0


def test_calibration_leave_one_reference_out():
    pred = np.array([0.6, 0.7, 0.8, 0.6, 0.7, 0.8])
    gold = np.array([0.0, 0.5, 1.0, 0.0, 0.5, 1.0])
    groups = ["A", "A", "A", "B", "B", "B"]
    cal = calibrate_leave_one_reference_out(pred, gold, groups, "linear")
    assert np.allclose(cal, gold)  # map fit on B (y = 5x − 3) applied to A and vice versa
    iso = calibrate_leave_one_reference_out(pred, gold, groups, "isotonic")
    assert np.allclose(iso, gold)
    with pytest.raises(ValueError):
        calibrate_leave_one_reference_out(pred[:3], gold[:3], groups[:3], "linear")
    table = {("a", "b"): 0.8, ("a", "c"): 0.2, ("b", "c"): 0.5}
    rep = evaluate_method(_gold(), _Fixed(table), calibration="linear")
    assert rep["calibration"] == "linear" and "raw" in rep and rep["raw"]["rmse"] != rep["rmse"]
