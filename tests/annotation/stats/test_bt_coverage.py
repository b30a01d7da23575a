"""Bradley–Terry posterior: coverage in simulation, never-compared candidates, one judgement."""

import time

import numpy as np
import pytest
from scipy.special import expit

from annotation.stats import all_pairs, bradley_terry_posterior, bt_map


def _simulate(rng, n, per_pair, sd):
    theta = rng.normal(0, sd, n)
    pr = all_pairs(n)
    wins = rng.binomial(per_pair, expit(theta[pr[:, 0]] - theta[pr[:, 1]]))
    c = np.zeros((n, n))
    c[pr[:, 0], pr[:, 1]] = wins
    c[pr[:, 1], pr[:, 0]] = per_pair - wins
    return theta - theta.mean(), c


@pytest.mark.parametrize("n,per_pair,sd", [(10, 5, 1.0), (20, 2, 1.5), (8, 1, 1.0), (8, 1, 2.5)])
def test_nominal_95_percent_intervals_cover_the_true_strengths(n, per_pair, sd):
    """The percentile bootstrap covered 91.9 % (10 × 5), 93.1 % (20 × 2), 84.1 % (8 × 1)."""
    rng = np.random.default_rng(2026)
    hits = total = 0
    start = time.perf_counter()
    for _ in range(800):
        truth, c = _simulate(rng, n, per_pair, sd)
        post = bradley_terry_posterior(c, level=0.95, n_draws=0)
        hits += int(((post.lower <= truth) & (truth <= post.upper)).sum())
        total += n
    coverage = hits / total
    print(f"coverage {n} items × {per_pair} per pair, true SD {sd}: {coverage:.3f} "
          f"({time.perf_counter() - start:.1f} s for 800 fits)")
    assert 0.935 <= coverage <= 0.985, coverage


def test_level_changes_coverage_accordingly():
    rng = np.random.default_rng(7)
    hits = total = 0
    for _ in range(150):
        truth, c = _simulate(rng, 10, 3, 1.0)
        post = bradley_terry_posterior(c, level=0.8, n_draws=0)
        hits += int(((post.lower <= truth) & (truth <= post.upper)).sum())
        total += 10
    assert 0.76 <= hits / total <= 0.86


def test_never_compared_candidate_has_no_strength_rank_or_interval():
    # The 8-item example from the issue: item 7 never compared; before, it got θ 1.716, rank 2.
    rng = np.random.default_rng(0)
    _, c = _simulate(rng, 7, 2, 1.0)
    full = np.zeros((8, 8))
    full[:7, :7] = c
    post = bradley_terry_posterior(full)
    assert np.isnan(post.strengths[7]) and np.isnan(post.lower[7]) and np.isnan(post.upper[7])
    assert post.rank[7] == 0 and sorted(post.rank[:7]) == list(range(1, 8))
    assert np.nanmean(post.strengths) == pytest.approx(0, abs=1e-12)
    own = bradley_terry_posterior(c)
    np.testing.assert_allclose(post.strengths[:7], own.strengths, atol=1e-12)
    assert np.all((post.lower[:7] <= post.strengths[:7]) & (post.strengths[:7] <= post.upper[:7]))


def test_one_judgement_intervals_are_undefined_not_zero_width():
    c = np.zeros((4, 4))
    c[0, 1] = 1
    post = bradley_terry_posterior(c)
    assert post.reason and "undefined" in post.reason
    assert np.isnan(post.lower).all() and np.isnan(post.upper).all()
    assert post.strengths[0] > post.strengths[1] and np.isnan(post.strengths[2:]).all()
    empty = bradley_terry_posterior(np.zeros((3, 3)))
    assert np.isnan(empty.strengths).all() and empty.reason == "no judgements"


def test_posterior_mode_is_stationary_and_rank_intervals_contain_ranks():
    rng = np.random.default_rng(4)
    _, c = _simulate(rng, 12, 2, 1.5)
    theta, _ = bt_map(c, prior_sd=3.0)
    p = expit(theta[:, None] - theta[None, :])
    grad = -(c.sum(1) - ((c + c.T) * p).sum(1)) + theta / 9.0
    assert np.abs(grad).max() < 1e-8
    post = bradley_terry_posterior(c, seed=1)
    assert np.all((post.rank_lower <= post.rank) & (post.rank <= post.rank_upper))
    again = bradley_terry_posterior(c, seed=1)
    np.testing.assert_array_equal(post.rank_lower, again.rank_lower)
