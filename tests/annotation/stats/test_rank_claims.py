"""Rank claims from posterior draws (`annotation.stats.rank_claims`): adjacent-order probabilities are shares of draws,
the family-wise claim is a joint statement on the draws, ties are never ordered, and on small batches with a known
order the exact posterior claims what is true and only that."""
import numpy as np
import pytest
from scipy.special import expit

from annotation.stats import bradley_terry_posterior
from annotation.stats.rank_claims import adjacent_probabilities, order_claims


def _expected_counts(theta, per_pair):
    n = len(theta)
    c = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                c[i, j] = per_pair * expit(theta[i] - theta[j])
    return np.round(c)


def test_probabilities_are_shares_of_the_draws_and_the_claim_is_joint():
    """Three candidates ranked 0 > 1 > 2. Order 0 > 1 fails in draws 0–3 of 100, order 1 > 2 in draws 4–7: each
    holds in 96 %, both together in 92 %. Bonferroni at 95 % (each ≥ 97.5 %) claims neither; the joint rule claims
    the first (96 % ≥ 95 %) and stops before the second (92 % < 95 %)."""
    draws = np.tile([2.0, 1.0, 0.0], (100, 1))
    draws[:4, 1] = 3.0  # 1 above 0
    draws[4:8, 2] = 1.5  # 2 above 1
    out = order_claims(np.array([2.0, 1.0, 0.0]), draws)
    np.testing.assert_allclose(out["p_next"][:2], [0.96, 0.96])
    assert np.isnan(out["p_next"][2])
    assert list(out["claim"]) == [True, False, False]
    assert out["p_joint"] == pytest.approx(0.96) and out["n_claims"] == 1 and out["n_adjacent"] == 2
    # when the two orders fail in the same draws the joint probability is 96 % and both are claimed
    draws[4:8, 2] = 0.0
    draws[:4, 2] = 3.5
    both = order_claims(np.array([2.0, 1.0, 0.0]), draws)
    assert list(both["claim"]) == [True, True, False] and both["p_joint"] == pytest.approx(0.96)


def test_weights_and_never_compared_candidates():
    draws = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    strengths = np.array([0.5, np.nan, -0.5])  # candidate 1 never compared: the draws have columns for 0 and 2
    out = order_claims(strengths, draws, weights=np.array([0.5, 0.25, 0.25]))
    assert out["p_next"][0] == pytest.approx(0.75) and np.isnan(out["p_next"][1]) and np.isnan(out["p_next"][2])
    assert out["n_adjacent"] == 1 and not out["claim"].any()
    order, above, probs = adjacent_probabilities(strengths, draws)
    assert list(order) == [0, 2] and above.shape == (3, 1) and probs[0] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="2 compared candidates"):
        order_claims(strengths, np.zeros((5, 3)))


def test_tied_records_are_never_ordered_whatever_the_draws_say():
    c = np.zeros((4, 4))
    c[0, 1] = c[0, 2] = c[0, 3] = 6  # 0 beats everyone
    c[1, 2] = c[2, 1] = 3  # 1 and 2: identical records
    c[1, 3] = c[2, 3] = 6  # both beat 3
    post = bradley_terry_posterior(c, exact=True, gibbs_draws=800, seed=3)
    assert post.rank[1] == post.rank[2] == 2  # reported as a tie
    out = order_claims(post.strengths, post.draws)
    tied_first = 1 if post.strengths[1] >= post.strengths[2] else 2  # the table lists the tie in position order
    assert not out["claim"][tied_first] and abs(out["p_next"][tied_first] - 0.5) < 0.1
    assert out["claim"][0]  # 0 over the tied pair: 18 wins of 18
    rigged = np.tile([3.0, 1.0, 0.0, -2.0], (50, 1))  # draws that always put 1 above 2 still claim no order there
    assert not order_claims(post.strengths, rigged)["claim"][tied_first]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_claims_on_a_small_batch_with_a_known_order(seed):
    """Six candidates, three clear gaps and two near-ties (0.15 apart), 12 judgements per pair drawn from the model:
    the family-wise claims from the exact draws hold in the truth, and cover the clear gaps (gap 2.5: every one of 12
    judgements of a pair is won by the stronger with probability 0.92)."""
    theta = np.array([5.0, 2.5, 2.35, 0.0, -2.5, -2.65])
    rng = np.random.default_rng(seed)
    n = len(theta)
    c = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            w = rng.binomial(12, expit(theta[i] - theta[j]))
            c[i, j], c[j, i] = w, 12 - w
    post = bradley_terry_posterior(c, exact=True, gibbs_draws=1000, seed=seed)
    # 1,000 draws, lengthened ×2 or ×4 when the convergence check fails (the far-ahead candidate 0 mixes slowly)
    assert post.method == "gibbs" and post.draws.shape == (post.convergence["draws"], 6)
    assert post.convergence["draws"] in (1000, 2000, 4000)
    out = order_claims(post.strengths, post.draws)
    order = np.argsort(-post.strengths, kind="stable")
    for r in range(n - 1):
        a, b = order[r], order[r + 1]
        if out["claim"][a]:
            assert theta[a] > theta[b], (seed, a, b)  # a claimed order is true
        # the draws' share, recomputed by hand
        assert out["p_next"][a] == pytest.approx(np.mean(post.draws[:, a] > post.draws[:, b]))
    assert out["claim"][order[0]] and order[0] == 0  # 5 over the near-tie 2.5 / 2.35: a clear gap
    assert out["claim"][order[2]] and out["claim"][order[3]]  # the gaps 2.35 → 0 and 0 → −2.5
    print(seed, np.round(out["p_next"][order[:-1]], 3), out["claim"][order].astype(int))
    assert out["p_joint"] >= 0.95


def test_claims_from_a_laplace_fallback_after_degenerate_importance_weights():
    """37 candidates, 75 judgements: the importance weights degenerate (effective sample < 100), so the posterior
    falls back to the Laplace approximation and draws its own 200 equal-weight draws. The importance weights must
    not travel with them (they did: 4,000 weights for 200 draws, and the analytics job failed in `order_claims`)."""
    rng = np.random.default_rng(0)
    k = int(rng.integers(20, 41))
    theta = rng.normal(0, float(rng.choice([1, 3, 6])), k)
    counts = np.zeros((k, k))
    for _ in range(int(rng.integers(50, 400))):
        i, j = rng.choice(k, 2, replace=False)
        if rng.random() < 1 / (1 + np.exp(theta[j] - theta[i])):
            counts[i, j] += 1
        else:
            counts[j, i] += 1
    post = bradley_terry_posterior(counts, n_draws=200, seed=0)
    assert (k, int(counts.sum()), post.method) == (37, 75, "laplace")
    assert post.draws.shape == (200, 37) and post.weights is None
    claims = order_claims(post.strengths, post.draws, post.weights)
    assert len(claims["p_next"]) == 37 and 0.0 <= claims["p_joint"] <= 1.0
