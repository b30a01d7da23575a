"""Pilot sweep on a tiny constructed set with hand-computed precision/recall/F1."""
import numpy as np
import pytest

from benchmarks.greek_sts.pilots import (
    DEFAULT_THRESHOLDS,
    PilotVerse,
    best_row,
    occurrence_similarity,
    read_verses_csv,
    sweep,
    sweep_scores,
    write_sweep_csv,
)

# v1..v5; groups g1 = {v1, v2}, g2 = {v3, v4}, g3 = {v5}; v6 has no group.
# occurrences O1 = {v1, v3} (type T1), O2 = {v2} (T1), O3 = {v4, v5, v6} (T2)
VERSES = [
    PilotVerse("v1", "T1", "O1", "g1", "α", 0), PilotVerse("v2", "T1", "O2", "g1", "β", 0),
    PilotVerse("v3", "T1", "O1", "g2", "γ", 1), PilotVerse("v4", "T2", "O3", "g2", "δ", 0),
    PilotVerse("v5", "T2", "O3", "g3", "ε", 1), PilotVerse("v6", "T2", "O3", None, "ζ", 2),
]
S = np.full((6, 6), 0.1)
np.fill_diagonal(S, 1.0)
for i, j, s in [(0, 1, 0.9), (0, 2, 0.7), (2, 3, 0.4)]:
    S[i, j] = S[j, i] = s


def _row(rows, t):
    return next(r for r in rows if abs(r.threshold - t) < 1e-9)


def test_verse_level_hand_computed():
    res = sweep(VERSES, level="verse", similarity=S, thresholds=[0.3, 0.5, 0.8, 0.95])
    assert res.n_items == 5 and res.n_pairs == 10 and res.n_positive == 2
    r = _row(res.rows, 0.3)   # predicted v1v2, v1v3, v3v4 → tp 2, fp 1, fn 0
    assert (r.tp, r.fp, r.fn) == (2, 1, 0)
    assert (r.precision, r.recall, r.f1) == pytest.approx((2 / 3, 1.0, 0.8))
    r = _row(res.rows, 0.5)   # v1v2, v1v3 → tp 1, fp 1, fn 1
    assert (r.precision, r.recall, r.f1) == pytest.approx((0.5, 0.5, 0.5))
    r = _row(res.rows, 0.8)   # v1v2 → P 1, R 0.5
    assert (r.precision, r.recall, r.f1) == pytest.approx((1.0, 0.5, 2 / 3))
    r = _row(res.rows, 0.95)  # nothing predicted
    assert (r.tp, r.fp, r.fn, r.precision, r.f1) == (0, 0, 2, 0.0, 0.0)
    assert res.best.threshold == 0.3 and res.best.f1 == pytest.approx(0.8)


def test_type_level_hand_computed():
    occs, O = occurrence_similarity(S, [v.occurrence_id for v in VERSES])
    assert occs == ["O1", "O2", "O3"]
    # O1→O2 = mean(.9, .1) = .5, O2→O1 = .9 → .7 ; O1→O3 = mean(.1, .4) = .25, O3→O1 = mean(.4, .1, .1) = .2 → .225
    assert O[0, 1] == pytest.approx(0.7) and O[0, 2] == pytest.approx(0.225) and O[1, 2] == pytest.approx(0.1)
    res = sweep(VERSES, level="type", similarity=S, thresholds=[0.2, 0.5, 0.75])
    assert res.n_items == 3 and res.n_pairs == 3 and res.n_positive == 1
    assert (_row(res.rows, 0.2).precision, _row(res.rows, 0.2).recall) == pytest.approx((0.5, 1.0))
    assert _row(res.rows, 0.5).f1 == pytest.approx(1.0)
    assert _row(res.rows, 0.75).f1 == 0.0
    assert res.best.threshold == 0.5


def test_sweep_scores_threshold_is_inclusive_and_best_ties_low():
    rows = sweep_scores(np.array([0.6, 0.6, 0.2], dtype=np.float32), np.array([True, False, False]), [0.6, 0.7])
    assert rows[0].tp == 1 and rows[0].fp == 1
    assert best_row(sweep_scores([0.5], [True], [0.3, 0.4])).threshold == 0.3
    assert len(DEFAULT_THRESHOLDS) == 19 and DEFAULT_THRESHOLDS[0] == 0.05 and DEFAULT_THRESHOLDS[-1] == 0.95


def test_sweep_with_registry_method_and_csv(verses_file, tmp_path):
    verses = read_verses_csv(verses_file)
    assert len(verses) == 1388
    assert len({v.occurrence_id for v in verses}) == 496 and len({v.type_id for v in verses}) == 21
    # 87 groups + 48 verses without a group (the data README counts the blank as an 88th group)
    assert len({v.group_id for v in verses if v.group_id}) == 87
    assert sum(v.group_id is None for v in verses) == 48
    subset = [v for v in verses if v.type_id in {"5030", "3436", "4155"}]
    res = sweep(subset, level="verse", method="char_ngram")
    assert len(res.rows) == 19 and 0 < res.best.f1 <= 1
    text = write_sweep_csv(res.rows, tmp_path / "s.csv")
    assert text.splitlines()[0] == "threshold,precision,recall,f1" and len(text.splitlines()) == 20
