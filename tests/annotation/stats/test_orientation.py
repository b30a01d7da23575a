"""Orientation invariance: the same judgements under another "which candidate is a" rule.

The classic coefficients (Fleiss, Cohen, Krippendorff on "a won"/"b won") move when the orientation
changes; the symmetric ones and Kendall's u must not.
"""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotation.stats import (
    Judgements,
    cohen_kappa_matrix,
    cohen_kappa_symmetric_matrix,
    fleiss_kappa,
    fleiss_kappa_judgements,
    fleiss_kappa_symmetric,
    from_winner_ids,
    kendall_u,
    krippendorff_alpha_nominal,
    krippendorff_alpha_symmetric,
    label_table,
    orientation_invariant_agreement,
    simulate_judgements,
)


def _reoriented(j: Judgements, perm: np.ndarray) -> Judgements:
    """Same judgements with items renamed by ``perm`` (so canonical a/b flips for some units)."""
    return from_winner_ids(j.annotator, perm[j.a], perm[j.b], perm[j.winner], j.n_items, batch=j.batch,
                           timestamp=j.timestamp, n_annotators=j.n_annotators, n_batches=j.n_batches)


@pytest.fixture
def position_biased():
    """Strengths decreasing with position (lower position wins more often), 7 annotators, partial overlap."""
    theta = np.linspace(1.5, -1.5, 30)
    return simulate_judgements(theta, n_annotators=7, annotators_per_pair=3, annotator_noise=1.0, seed=3)


def test_symmetric_figures_do_not_change_with_orientation_classic_ones_do(position_biased):
    j = position_biased
    rng = np.random.default_rng(0)
    base = orientation_invariant_agreement(j)
    classic = fleiss_kappa_judgements(j).value
    moved = []
    for _ in range(5):
        r = _reoriented(j, rng.permutation(j.n_items))
        other = orientation_invariant_agreement(r)
        for key in ("fleiss_symmetric", "kendall_u", "krippendorff_symmetric"):
            assert other[key]["value"] == pytest.approx(base[key]["value"], abs=1e-12)
        assert other["cohen_symmetric"]["mean"] == pytest.approx(base["cohen_symmetric"]["mean"], abs=1e-12)
        assert fleiss_kappa_judgements(r).observed == pytest.approx(fleiss_kappa_judgements(j).observed, abs=1e-12)
        moved.append(fleiss_kappa_judgements(r).value)
    assert max(abs(v - classic) for v in moved) > 0.005  # the classic κ depends on the rule


def test_kendall_u_textbook_definition_and_equal_rater_identity():
    # 4 judges, 3 items, all pairs: a_ij = judges preferring i to j. u = 2Σ C(a_ij,2) / (C(m,2) C(n,2)) − 1.
    a = np.array([[0, 4, 3], [0, 0, 2], [1, 2, 0]])
    sigma = sum(a[i, k] * (a[i, k] - 1) / 2 for i in range(3) for k in range(3) if i != k)
    expected = 2 * sigma / (6 * 3) - 1
    table = np.array([[a[0, 1], a[1, 0]], [a[0, 2], a[2, 0]], [a[1, 2], a[2, 1]]])
    assert kendall_u(table).value == pytest.approx(expected)
    assert fleiss_kappa_symmetric(table).value == pytest.approx(expected)  # equal raters per unit
    assert kendall_u(np.array([[4, 0], [0, 4]])).value == 1.0
    # minimum −1/(m−1) for m even: every unit split 2–2
    assert kendall_u(np.array([[2, 2], [2, 2]])).value == pytest.approx(-1 / 3)


def test_symmetric_chance_equals_classic_on_the_doubled_table():
    rng = np.random.default_rng(1)
    ni = rng.integers(2, 6, 40)
    x = rng.binomial(ni, 0.7)
    t = np.column_stack([x, ni - x])
    both = np.vstack([t, t[:, ::-1]])  # every unit once in each orientation
    assert fleiss_kappa_symmetric(t).value == pytest.approx(fleiss_kappa(both).value, abs=1e-12)
    # Krippendorff: the coincidence matrix averaged over orientations has n_a = n_b
    sym = krippendorff_alpha_symmetric(t)
    assert sym.expected == pytest.approx(t.sum() / (2 * (t.sum() - 1)))
    assert sym.observed == pytest.approx(krippendorff_alpha_nominal(t).observed, abs=1e-12)


def test_cohen_symmetric_is_two_p_o_minus_one_and_differs_from_sklearn_on_skew():
    x = np.array([0] * 18 + [1] * 2)
    y = np.array([0] * 16 + [1] * 2 + [0, 1])
    j = Judgements(np.r_[np.zeros(20, int), np.ones(20, int)], np.tile(np.arange(20), 2),
                   np.tile(np.arange(20), 2) + 20, np.r_[x, y], 40)
    m = cohen_kappa_symmetric_matrix(j)
    p_o = (x == y).mean()
    assert m.kappa[0, 1] == pytest.approx(2 * p_o - 1)
    assert cohen_kappa_matrix(j).kappa[0, 1] == pytest.approx(cohen_kappa_score(x, y))
    assert m.kappa[0, 1] != pytest.approx(cohen_kappa_score(x, y))


def test_degenerate_inputs_say_why():
    assert np.isnan(kendall_u(np.array([[1, 0], [0, 1]])).value)
    assert fleiss_kappa_symmetric(np.zeros((0, 2))).reason
    unanimous = np.array([[3, 0], [3, 0]])  # classic κ is 0/0 here, the symmetric one is 1
    assert np.isnan(fleiss_kappa(unanimous).value)
    assert fleiss_kappa_symmetric(unanimous).value == 1.0
    assert label_table(Judgements([], [], [], [], 3)).labels.shape == (0, 0)
