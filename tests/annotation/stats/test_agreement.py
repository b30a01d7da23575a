"""Agreement: published worked examples, library cross-checks, degenerate cases, orientation."""

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from annotation.stats import (
    Judgements,
    cohen_kappa,
    cohen_kappa_matrix,
    cohen_kappa_matrix_from_labels,
    fleiss_kappa,
    fleiss_kappa_judgements,
    from_winner_ids,
    krippendorff_alpha_judgements,
    krippendorff_alpha_nominal,
    label_table,
    retest_agreement,
    simulate_judgements,
    split_half_reliability,
)

# Fleiss' kappa worked example from Wikipedia, "Fleiss' kappa" (10 subjects, 14 raters,
# 5 categories): P̄ = 0.378, P̄e = 0.213, κ = 0.210.
WIKI_FLEISS = np.array([
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
])


def test_fleiss_wikipedia_worked_example():
    r = fleiss_kappa(WIKI_FLEISS)
    assert r.observed == pytest.approx(0.378, abs=5e-4)
    assert r.expected == pytest.approx(0.213, abs=5e-4)
    assert r.value == pytest.approx(0.210, abs=5e-4)
    assert r.value == pytest.approx(sm_fleiss_kappa(WIKI_FLEISS, method="fleiss"), abs=1e-12)
    assert r.n_units == 10 and r.n_ratings == 140


def test_cohen_wikipedia_worked_example():
    # Wikipedia, "Cohen's kappa", simple example: 50 grant proposals, two readers;
    # yes/yes 20, yes/no 5, no/yes 10, no/no 15 → p_o = 0.7, p_e = 0.5, κ = 0.4.
    x = ["yes"] * 25 + ["no"] * 25
    y = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    r = cohen_kappa(x, y)
    assert (r.observed, r.expected) == pytest.approx((0.7, 0.5))
    assert r.value == pytest.approx(0.4)
    assert r.value == pytest.approx(cohen_kappa_score(x, y))


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_equal_counts_matches_statsmodels_and_fleiss_cuzick(seed):
    rng = np.random.default_rng(seed)
    k = 5
    table = np.column_stack([x := rng.binomial(k, rng.random(30)), k - x])
    ours = fleiss_kappa(table).value
    assert ours == pytest.approx(sm_fleiss_kappa(table, method="fleiss"), abs=1e-12)
    assert ours == pytest.approx(fleiss_kappa(table, method="fleiss-cuzick").value, abs=1e-12)


def test_fleiss_unequal_counts_hand_computed():
    # unit 1: 3 raters (2 a, 1 b): P = (2·1 + 0)/(3·2) = 1/3; unit 2: 2 raters both b: P = 1;
    # unit 3: one rater → dropped. P̄ = 2/3; p = (2/5, 3/5) → P̄e = 13/25; κ = (2/3 − 13/25)/(12/25) = 11/36.
    r = fleiss_kappa([[2, 1], [0, 2], [1, 0]])
    assert r.n_units == 2 and r.n_ratings == 5
    assert r.value == pytest.approx(11 / 36)
    with pytest.raises(AssertionError):  # the library refuses unequal counts (notes)
        sm_fleiss_kappa(np.array([[2, 1], [0, 2]]), method="fleiss")


@pytest.mark.parametrize("seed", range(6))
def test_krippendorff_matches_package_with_missing(seed):
    rng = np.random.default_rng(seed)
    n_raters, n_units, k = 6, 80, 2 + seed % 3
    data = rng.integers(0, k, (n_raters, n_units)).astype(float)
    # correlated raters so alpha is not ~0
    truth = rng.integers(0, k, n_units)
    keep = rng.random((n_raters, n_units)) < 0.6
    data = np.where(keep, truth, data)
    data[rng.random((n_raters, n_units)) < 0.4] = np.nan
    counts = np.stack([(data == c).sum(0) for c in range(k)], axis=1)
    ours = krippendorff_alpha_nominal(counts)
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    assert ours.value == pytest.approx(ref, abs=1e-10)


def test_degenerate_cases_are_nan_with_reason():
    # unanimous: alpha and Fleiss undefined (the krippendorff package raises)
    r = krippendorff_alpha_nominal([[3, 0], [2, 0]])
    assert np.isnan(r.value) and "identical" in r.reason
    f = fleiss_kappa([[3, 0], [2, 0]])
    assert np.isnan(f.value) and f.reason
    assert np.isnan(fleiss_kappa([[1, 0]]).value)  # nothing with ≥ 2 raters
    assert np.isnan(krippendorff_alpha_nominal(np.zeros((0, 2))).value)
    # Cohen: both constant same category → NaN (sklearn: nan); one constant → 0 (as sklearn)
    c = cohen_kappa([1, 1, 1], [1, 1, 1])
    assert np.isnan(c.value) and c.reason
    assert cohen_kappa([1, 1, 1, 1], [1, 0, 1, 0]).value == pytest.approx(0.0)
    assert cohen_kappa_score([1, 1, 1, 1], [1, 0, 1, 0]) == 0.0
    e = cohen_kappa([], [])
    assert np.isnan(e.value) and e.reason == "no shared units"


def test_kappa_matrix_matches_sklearn_on_partial_overlap():
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 2, 300)
    lab = np.where(rng.random((300, 5)) < 0.7, truth[:, None], rng.integers(0, 2, (300, 5)))
    lab = np.where(rng.random((300, 5)) < 0.3, -1, lab).astype(np.int8)
    lab[:, 4] = np.where(np.arange(300) < 150, -1, lab[:, 4])
    lab[:150, 3] = -1
    lab[150:, 3] = np.where(lab[150:, 3] >= 0, 1, -1)  # annotator 3 constant
    lab[150:, 2] = -1  # annotators 2 and 3 share nothing
    km = cohen_kappa_matrix_from_labels(lab)
    for i in range(5):
        for k in range(i + 1, 5):
            both = (lab[:, i] >= 0) & (lab[:, k] >= 0)
            assert km.n_shared[i, k] == both.sum() == km.n_shared[k, i]
            if both.sum() == 0:
                assert np.isnan(km.kappa[i, k]) and km.reasons[(i, k)] == "no shared units"
                continue
            ref = cohen_kappa_score(lab[both, i], lab[both, k])
            assert km.kappa[i, k] == pytest.approx(ref, abs=1e-6)
    assert (2, 3) in km.reasons
    vals = km.kappa[np.triu_indices(5, 1)]
    assert km.mean == pytest.approx(np.nanmean(vals))


def test_orientation_screen_side_does_not_matter():
    theta = np.random.default_rng(2).normal(0, 1.5, 20)
    j = simulate_judgements(theta, None, n_annotators=4, annotators_per_pair=None, annotator_noise=0.7, seed=5)
    rng = np.random.default_rng(9)
    swap = rng.random(len(j)) < 0.5  # randomised left/right per screen
    left, right = np.where(swap, j.b, j.a), np.where(swap, j.a, j.b)
    j2 = from_winner_ids(j.annotator, left, right, j.winner, 20)
    assert cohen_kappa_matrix(j2).mean == pytest.approx(cohen_kappa_matrix(j).mean)
    # kappa on "clicked left" would be ~0: the right quantity is clearly positive
    clicked_left = (j.winner == left).astype(int)
    lab_left = np.full((len(j) // 4, 4), -1)
    lab_left[np.repeat(np.arange(len(j) // 4), 4), j.annotator] = clicked_left
    assert abs(cohen_kappa_matrix_from_labels(lab_left).mean) < 0.1 < cohen_kappa_matrix(j).mean


def test_agreement_falls_with_noise_and_libraries_agree():
    theta = np.random.default_rng(0).normal(0, 1.5, 40)
    values = []
    for tau in (0.3, 1.0, 3.0):
        j = simulate_judgements(theta, None, n_annotators=5, annotators_per_pair=None, annotator_noise=tau, seed=1)
        lt = label_table(j)
        f = fleiss_kappa_judgements(j).value
        assert f == pytest.approx(sm_fleiss_kappa(lt.counts(), method="fleiss"), abs=1e-12)
        a = krippendorff_alpha_judgements(j).value
        assert a == pytest.approx(krippendorff.alpha(reliability_data=lt.labels.T.astype(float),
                                                     level_of_measurement="nominal"), abs=1e-10)
        values.append((f, cohen_kappa_matrix(j).mean))
    assert values[0][0] > values[1][0] > values[2][0]
    assert values[0][1] > values[1][1] > values[2][1]


def test_partial_overlap_first_judgement_and_alpha_with_missing():
    theta = np.random.default_rng(3).normal(0, 1.5, 30)
    j = simulate_judgements(theta, None, n_annotators=6, annotators_per_pair=3, annotator_noise=1.0,
                            retest_share=0.2, seed=2)
    lt = label_table(j)
    assert (lt.labels >= 0).sum(1).max() == 3  # repeats do not add raters
    data = np.where(lt.labels.T >= 0, lt.labels.T, np.nan).astype(float)
    assert krippendorff_alpha_judgements(j).value == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), abs=1e-10)
    assert np.isfinite(fleiss_kappa_judgements(j).value)


def test_retest_hand_case_and_empty():
    # annotator 0: unit (0,1) 0 then 0; unit (1,2) 1 then 0; annotator 1: no repeat
    j = Judgements(annotator=[0, 0, 1, 0, 0], a=[0, 1, 0, 0, 1], b=[1, 2, 1, 1, 2],
                   winner_is_b=[0, 1, 1, 0, 0], n_items=3, timestamp=[1, 2, 3, 4, 5])
    rows = retest_agreement(j)
    assert rows[0]["n_repeated"] == 2 and rows[0]["agreement"] == 0.5
    assert rows[0]["kappa"] == 0.0  # symmetric: 2 · 0.5 − 1
    assert rows[0]["kappa_oriented"] == pytest.approx(cohen_kappa([0, 1], [0, 0]).value)
    assert rows[1]["n_repeated"] == 0 and np.isnan(rows[1]["kappa"])
    assert retest_agreement(Judgements([], [], [], [], 3, n_annotators=2))[1]["reason"] == "no repeated unit"


def test_label_table_uses_first_judgement_by_timestamp():
    j = Judgements(annotator=[0, 0], a=[0, 0], b=[1, 1], winner_is_b=[1, 0], n_items=2, timestamp=[5.0, 1.0])
    assert label_table(j).labels.tolist() == [[0]]


def test_split_half_reliability():
    theta = np.random.default_rng(4).normal(0, 1.5, (2, 30))
    j = simulate_judgements(theta, None, n_annotators=6, annotators_per_pair=None, annotator_noise=1.0, seed=6)
    rows = split_half_reliability(j, n_splits=5, seed=1)
    assert [r["batch"] for r in rows] == [0, 1] and all(r["by"] == "annotator" for r in rows)
    assert all(0.8 < r["rho"] <= r["rho_sb"] <= 1 for r in rows)
    bt = split_half_reliability(j.for_batch(0), n_splits=2, score="bt")
    assert bt[0]["rho"] > 0.8
    one = simulate_judgements(theta[0], None, n_annotators=1, annotators_per_pair=None, seed=1)
    assert split_half_reliability(one, n_splits=3)[0]["by"] == "judgement"
    assert split_half_reliability(Judgements([], [], [], [], 3)) == []


def test_label_table_reuse_gives_same_results():
    theta = np.random.default_rng(8).normal(0, 1.5, 15)
    j = simulate_judgements(theta, None, n_annotators=4, annotators_per_pair=2, seed=3)
    lt = label_table(j)
    assert cohen_kappa_matrix(lt).mean == cohen_kappa_matrix(j).mean
    assert fleiss_kappa_judgements(lt).value == fleiss_kappa_judgements(j).value
    assert krippendorff_alpha_judgements(lt).value == krippendorff_alpha_judgements(j).value


def test_retest_kappa_does_not_depend_on_orientation():
    """Issue 26: the same repeats gave κ −0.10 by stored position and +0.57 after shuffling positions. The
    reported κ (S = 2·same − 1) must not move when items are relabelled; the oriented κ does."""
    theta = np.random.default_rng(5).normal(0, 1.5, 25)
    j = simulate_judgements(theta, None, n_annotators=4, annotators_per_pair=1, annotator_noise=1.5,
                            retest_share=0.5, seed=4)
    base = retest_agreement(j)
    assert all(r["n_repeated"] > 5 for r in base)
    oriented = set()
    for seed in range(6):
        perm = np.random.default_rng(seed).permutation(25)
        a, b = perm[j.a], perm[j.b]
        flipped = Judgements(annotator=j.annotator, a=np.minimum(a, b), b=np.maximum(a, b),
                             winner_is_b=np.where(a < b, j.winner_is_b, 1 - j.winner_is_b), n_items=25,
                             timestamp=j.timestamp)
        for r0, r in zip(base, retest_agreement(flipped)):
            assert r["agreement"] == pytest.approx(r0["agreement"])
            assert r["kappa"] == pytest.approx(2 * r0["agreement"] - 1)
            oriented.add(round(r["kappa_oriented"], 6))
    assert len(oriented) > len(base)  # the classic κ does move with the orientation
