"""The batched Newton solver reaches choix's ILSR fixed point (issue 16: vectorised refits)."""
import choix
import numpy as np
import pytest

from annotation.stats import bootstrap_bradley_terry
from annotation.stats.fast_bt import ilsr_fixed_point_batched


def _counts(rng, n, per_pair, share=1.0):
    theta = rng.normal(0, 1.5, n)
    a, b = np.triu_indices(n, 1)
    keep = rng.random(len(a)) < share
    a, b = a[keep], b[keep]
    c = np.zeros((n, n))
    for _ in range(per_pair):
        win = rng.random(len(a)) < 1 / (1 + np.exp(theta[b] - theta[a]))
        np.add.at(c, (np.where(win, a, b), np.where(win, b, a)), 1)
    return c


@pytest.mark.parametrize("n, per_pair, share, alpha", [(30, 2, 1.0, 0.01), (40, 1, 0.1, 0.01), (12, 3, 0.5, 0.1),
                                                       (25, 1, 0.03, 0.01)])
def test_resamples_fit_like_choix(n, per_pair, share, alpha):
    rng = np.random.default_rng(n)
    c = _counts(rng, n, per_pair, share)
    point = choix.ilsr_pairwise_dense(c, alpha=alpha)
    total = int(c.sum())
    draws = rng.multinomial(total, c.ravel() / total, size=40).reshape(40, n, n).astype(float)
    theta, converged = ilsr_fixed_point_batched(draws, alpha, point)
    expected = np.array([choix.ilsr_pairwise_dense(d, alpha=alpha, initial_params=point, max_iter=1000) for d in draws])
    expected -= expected.mean(axis=1, keepdims=True)
    assert converged.all()
    assert np.abs(theta - expected).max() < 1e-5


def test_a_never_winning_candidate_and_a_cold_start():
    rng = np.random.default_rng(3)
    c = _counts(rng, 15, 2)
    c[4, :] = 0  # candidate 4 never wins
    theta, converged = ilsr_fixed_point_batched(c[None], 0.01)
    expected = choix.ilsr_pairwise_dense(c, alpha=0.01, max_iter=1000)
    assert converged.all() and np.abs(theta[0] - (expected - expected.mean())).max() < 1e-5
    assert theta[0, 4] < np.median(theta[0])


def test_bootstrap_intervals_are_unchanged_by_the_batched_fit(monkeypatch):
    """The bootstrap with the batched solver gives choix's per-resample intervals."""
    from annotation.stats import scores

    c = _counts(np.random.default_rng(5), 20, 2)
    fast = bootstrap_bradley_terry(c, n_boot=60, seed=2)

    def unconverged(draws, alpha, init):  # forces the one-by-one choix path for every resample
        return np.zeros((len(draws), draws.shape[1])), np.zeros(len(draws), dtype=bool)

    monkeypatch.setattr(scores, "ilsr_fixed_point_batched", unconverged)
    slow = bootstrap_bradley_terry(c, n_boot=60, seed=2)
    np.testing.assert_allclose(fast.lower, slow.lower, atol=1e-5)
    np.testing.assert_allclose(fast.upper, slow.upper, atol=1e-5)
    np.testing.assert_array_equal(fast.rank_lower, slow.rank_lower)


def test_alpha_zero_is_refused():
    with pytest.raises(ValueError):
        ilsr_fixed_point_batched(np.ones((1, 3, 3)), 0.0)
