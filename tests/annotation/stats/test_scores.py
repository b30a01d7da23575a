"""Scores: released STS gold conventions, round trip, directionality, Bradley–Terry, bootstrap."""

import numpy as np
import pytest

from annotation.stats import (
    Judgements,
    batch_scores,
    bootstrap_bradley_terry,
    bradley_terry,
    bradley_terry_batches,
    connectivity,
    directionality_table,
    from_winner_ids,
    infer_denominator,
    normalised_scores,
    simulate_judgements,
    spearman,
)

DENOMINATORS = {"16977 1": 193, "16977 2": 190, "17148 1": 174}


def by_reference(rows):
    out = {}
    for ref, cand, s in rows:
        out.setdefault(ref, []).append((cand, s))
    return out


def test_released_scores_are_wins_over_max_wins(sts_rows):
    refs = by_reference(sts_rows)
    assert {k: len(v) for k, v in refs.items()} == {"16977 1": 99, "16977 2": 98, "17148 1": 99}
    for ref, items in refs.items():
        s = np.array([float(x) for _, x in items])
        d = DENOMINATORS[ref]
        assert infer_denominator(s) == d
        w = s * d
        assert np.abs(w - np.round(w)).max() < 1e-9
        assert s.max() == 1.0


def construct_judgements(target_wins, seed=0):
    """Judgements whose win counts equal target_wins: candidate i beats each opponent ⌊w/(n−1)⌋ times,
    plus once more against the weakest w mod (n−1) opponents."""
    w = np.asarray(target_wins)
    n = len(w)
    rng = np.random.default_rng(seed)
    left, right, winner = [], [], []
    for i in range(n):
        opp = np.array([k for k in np.argsort(w, kind="stable") if k != i])
        q, r = divmod(int(w[i]), n - 1)
        times = np.full(n - 1, q)
        times[:r] += 1
        for k, t in zip(opp, times):
            left += [i] * t
            right += [int(k)] * t
            winner += [i] * t
    swap = rng.random(len(left)) < 0.5  # random screen sides
    lft = np.where(swap, right, left)
    rgt = np.where(swap, left, right)
    return from_winner_ids(rng.integers(0, 11, len(lft)), lft, rgt, winner, n, n_annotators=11)


@pytest.mark.parametrize("ref", sorted(DENOMINATORS))
def test_round_trip_reproduces_released_ranking(sts_rows, ref):
    items = by_reference(sts_rows)[ref]
    strings = [x for _, x in items]
    d = DENOMINATORS[ref]
    target = np.array([round(float(x) * d) for x in strings])
    j = construct_judgements(target)
    sc = batch_scores(j)
    assert sc.wins[0].tolist() == target.tolist()
    released = np.array([float(x) for x in strings])
    # the file prints 15 significant digits: equal to the file at its own precision
    np.testing.assert_allclose(sc.normalised[0], released, rtol=0, atol=1e-15)
    assert sc.normalised[0].max() == 1.0
    assert np.array_equal(np.argsort(-sc.normalised[0], kind="stable"), np.argsort(-released, kind="stable"))


def test_directionality_table_on_real_file(sts_rows):
    table = directionality_table((r, c, float(s)) for r, c, s in sts_rows)
    got = {(t["a"], t["b"]): (t["a_to_b"], t["b_to_a"]) for t in table}
    assert got == {
        ("16977 1", "16977 2"): (pytest.approx(91 / 193), pytest.approx(153 / 190)),
        ("16977 1", "17148 1"): (pytest.approx(29 / 193), pytest.approx(123 / 174)),
        ("16977 2", "17148 1"): (pytest.approx(42 / 190), pytest.approx(107 / 174)),
    }
    assert got[("16977 1", "16977 2")][0] == pytest.approx(0.4715025906735750)
    assert table[0]["difference"] == pytest.approx(91 / 193 - 153 / 190)


def test_directionality_one_way():
    rows = [("A", "B", 0.5), ("A", "x", 1.0), ("B", "y", 1.0), ("C", "A", 0.2), ("A", "C", 0.4)]
    assert directionality_table(rows) == [{"a": "A", "b": "C", "a_to_b": 0.4, "b_to_a": 0.2,
                                           "difference": pytest.approx(0.2)}]
    one = directionality_table(rows, include_one_way=True)
    assert {"a": "A", "b": "B", "a_to_b": 0.5, "b_to_a": None, "difference": None} in one


def test_hand_computed_scores_and_empty():
    # batch 0: 0 beats 1 twice, 1 beats 2 once, 2 beats 0 once; batch 1 empty
    j = Judgements(annotator=[0, 1, 0, 0], a=[0, 0, 1, 0], b=[1, 1, 2, 2], winner_is_b=[0, 0, 0, 1],
                   n_items=3, batch=[0, 0, 0, 0], n_batches=2)
    sc = batch_scores(j)
    assert sc.wins.tolist() == [[2, 1, 1], [0, 0, 0]]
    assert sc.comparisons.tolist() == [[3, 3, 2], [0, 0, 0]]
    np.testing.assert_allclose(sc.normalised[0], [1, 0.5, 0.5])
    np.testing.assert_allclose(sc.win_share[0], [2 / 3, 1 / 3, 0.5])
    assert np.isnan(sc.normalised[1]).all() and np.isnan(sc.win_share[1]).all()
    assert j.count_matrix().tolist() == [[0, 2, 0], [0, 0, 1], [1, 0, 0]]
    np.testing.assert_array_equal(normalised_scores([0, 0]), [np.nan, np.nan])
    np.testing.assert_allclose(normalised_scores([3, 3, 1]), [1, 1, 1 / 3])  # tied top both 1.0
    empty = Judgements([], [], [], [], 4)
    assert batch_scores(empty).wins.shape == (0, 4)
    assert bradley_terry_batches(empty) == {}
    r = bradley_terry(np.zeros((4, 4)))
    assert r.strengths.tolist() == [0, 0, 0, 0] and not r.compared.any()


def test_bradley_terry_recovers_truth_and_matches_win_share():
    theta = np.random.default_rng(0).normal(0, 1.5, 99)
    j = simulate_judgements(theta, None, n_annotators=11, annotators_per_pair=None,
                            annotator_noise=np.linspace(0.5, 2.5, 11), seed=0)
    fit = bradley_terry(j.count_matrix())
    assert fit.strongly_connected and fit.n_components == 1 and fit.alpha == 0.01
    assert spearman(fit.strengths, theta) > 0.98
    assert spearman(fit.strengths, batch_scores(j).win_share[0]) > 0.999
    assert abs(fit.strengths.mean()) < 1e-12


def test_bradley_terry_disconnected_and_never_winning():
    # two components {0,1,2} and {3,4}; item 2 never wins
    c = np.zeros((5, 5))
    c[0, 1] = 3; c[1, 0] = 1; c[0, 2] = 2; c[1, 2] = 2; c[3, 4] = 2; c[4, 3] = 1
    ok, k, labels = connectivity(c)
    assert not ok and k >= 2
    fit = bradley_terry(c, alpha=0.01)
    assert not fit.strongly_connected and np.all(np.isfinite(fit.strengths))
    assert fit.strengths[0] > fit.strengths[1] > fit.strengths[2]
    fit0 = bradley_terry(c, alpha=0.0)  # alpha 0 fails in choix → raised and reported
    assert fit0.alpha > 0 and np.all(np.isfinite(fit0.strengths))


def test_bootstrap_seeded_and_covers_point():
    theta = np.random.default_rng(1).normal(0, 1.5, 30)
    j = simulate_judgements(theta, None, n_annotators=2, annotators_per_pair=None, seed=2)
    c = j.count_matrix()
    b1 = bootstrap_bradley_terry(c, n_boot=60, seed=7)
    b2 = bootstrap_bradley_terry(c, n_boot=60, seed=7)
    np.testing.assert_array_equal(b1.lower, b2.lower)
    assert np.all(b1.lower < b1.upper)
    inside = (b1.lower <= b1.strengths) & (b1.strengths <= b1.upper)
    assert inside.mean() > 0.9
    assert np.all(b1.rank_lower <= b1.rank_upper)
    e = bootstrap_bradley_terry(np.zeros((3, 3)))
    assert np.isnan(e.lower).all()
