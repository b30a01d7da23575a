"""The exact Bradley–Terry sampler as several chains with a convergence check (issue 39, item 1): R-hat and effective
sample sizes from ArviZ (`arviz_stats`), a check that fails on chains that have not mixed, the lengthening of failed
chains, and the labelled Laplace fallback. No database."""
import numpy as np
import pytest

from annotation.stats import bt_bayes
from annotation.stats.bt_bayes import _gibbs_draws, bradley_terry_posterior, convergence
from annotation.stats.pair_selection import simulate_design


def _counts(theta, design="exhaustive", budget=None, seed=0):
    n = len(theta)
    return simulate_design(theta, design, annotator_scales=np.ones(5), budget=budget or n * (n - 1), seed=seed,
                           return_counts=True)["counts"]


def test_check_agrees_with_arviz_on_known_draws():
    """Independent normal draws: R-hat near 1 and effective sizes near the number of draws; four chains at four
    different places: R-hat far above 1.05 and the check fails."""
    rng = np.random.default_rng(0)
    good = convergence(rng.standard_normal((4, 500, 3)))
    assert good["ok"] and good["max_rhat"] < 1.02 and good["min_ess_bulk"] > 1000 and good["draws"] == 2000
    apart = rng.standard_normal((4, 500, 3)) + np.arange(4)[:, None, None]
    bad = convergence(apart)
    assert not bad["ok"] and bad["max_rhat"] > 1.5
    assert "R-hat" in bt_bayes.convergence_warning(bad) and "4 chains" in bt_bayes.convergence_warning(bad)


def test_chains_start_apart_and_a_short_run_on_a_hard_batch_fails_the_check():
    """Pathological: a candidate that won every comparison and a gold-shaped spread (its strength is bound above only
    by the prior) with no burn-in and 40 draws per chain from dispersed starts: the check sees the chains disagree.
    The same batch with the default burn-in and lengthening passes."""
    theta = np.r_[np.linspace(-3, 3, 28), 12.0, 12.5]  # two far-ahead candidates
    c = _counts(theta, seed=1)
    assert (c[29].sum() + c[28].sum()) / (c[29].sum() + c[28].sum() + c[:, 28:].sum()) > 0.97
    chains = _gibbs_draws(c, 160, np.random.default_rng(0), burn=0)
    assert chains.shape == (4, 40, 30)
    assert np.ptp(chains[:, 0, 29]) > 0.5  # the four starts differ
    short = convergence(chains)
    assert not short["ok"], short
    post = bradley_terry_posterior(c, n_draws=0, exact=True, seed=0)
    assert post.method == "gibbs" and post.convergence["ok"] and post.note is None, post.convergence
    assert post.convergence["chains"] == 4 and post.convergence["draws"] >= 1000


def test_chains_run_on_until_the_targets_or_the_budget_and_only_the_alarm_warns(monkeypatch):
    """With an effective-size target no run reaches, the chains run on until the CPU budget and stop there; the fit
    carries no warning unless the alarm levels are crossed, and then the warning (the intervals are still the
    draws'). The strengths are the draws' posterior means, inside their own intervals, each interval end with its
    Monte Carlo error."""
    theta = np.linspace(-2, 2, 8)
    c = _counts(theta)
    monkeypatch.setattr(bt_bayes, "ESS_MIN", 10 ** 9)
    post = bradley_terry_posterior(c, n_draws=0, exact=True, gibbs_draws=400, seed=3, cpu_budget=1.0)
    assert post.method == "gibbs" and not post.convergence["ok"] and not post.convergence["alarm"]
    assert post.convergence["draws"] > 400 and post.note is None
    group = bt_bayes._same_records(c)  # exchangeable candidates (here 1 and 3) share their draws' mean
    means = post.draws.mean(0)
    assert group.tolist() == [0, 1, 2, 1, 4, 5, 6, 7]
    assert np.allclose(post.strengths, [means[group == g].mean() for g in group]) and ((post.lower < post.strengths)
                                                                & (post.strengths < post.upper)).all()
    assert (post.mcse > 0).all() and post.convergence["max_mcse_ends"] == pytest.approx(post.mcse.max(), abs=1e-4)
    monkeypatch.setattr(bt_bayes, "ALARM_ESS", 10 ** 9)
    post = bradley_terry_posterior(c, n_draws=0, exact=True, gibbs_draws=400, seed=3, cpu_budget=0)
    assert post.convergence["draws"] == 400 and post.convergence["alarm"]
    assert post.note == bt_bayes.convergence_warning(post.convergence)
    assert np.isfinite(post.lower).all() and (post.lower < post.upper).all()


def test_sampler_sees_counts_per_pair_only():
    """The sampler's input is the count matrix: the same counts give the same draws however many judgements were
    behind them one by one (nothing per judgement is kept), and ten times the counts narrow the intervals."""
    theta = np.linspace(-1.5, 1.5, 12)
    c = _counts(theta)
    a = _gibbs_draws(c, 200, np.random.default_rng(5))
    b = _gibbs_draws(c.copy(), 200, np.random.default_rng(5))
    assert np.array_equal(a, b)
    wide = bradley_terry_posterior(c, n_draws=0, exact=True, seed=1)
    narrow = bradley_terry_posterior(10 * c, n_draws=0, exact=True, seed=1)
    assert np.median(narrow.upper - narrow.lower) < 0.5 * np.median(wide.upper - wide.lower)


def test_sampler_failure_falls_back_to_a_labelled_laplace():
    """Counts the sampler cannot draw from (a pair judged 10³⁰⁰ times: its Pólya-Gamma variables overflow) give the
    Laplace intervals, labelled as the fallback, not an error and not unlabelled intervals."""
    c = np.array([[0.0, 1e300, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    with np.errstate(all="ignore"):
        post = bradley_terry_posterior(c, n_draws=0, exact=True)
    assert post.method == "laplace" and post.convergence is None
    assert post.note.startswith("Laplace approximation (fallback: the exact sampler failed")


@pytest.mark.parametrize("n", [6, 30])
def test_small_batches_get_exact_draws_that_pass_the_check(n):
    """Every size gets the exact sampler (one learnt normal below 60 candidates): converged on ordinary data."""
    theta = np.random.default_rng(n).normal(0, 1.5, n)
    post = bradley_terry_posterior(_counts(theta, "random", budget=4 * n * (n - 1) // 2, seed=n), n_draws=0,
                                   exact=True, seed=0)
    assert post.method == "gibbs" and post.convergence["ok"], post.convergence
