"""Simulation and planning: shapes, noise effects, recovery, budget table."""

import numpy as np
import pytest

from annotation.stats import (
    Judgements,
    all_pairs,
    batch_scores,
    bradley_terry,
    choice_probability,
    choose_pairs,
    plan_budget,
    simulate_judgements,
    spearman,
)


def test_shapes_full_overlap_partial_and_retest():
    theta = np.zeros((3, 10))
    j = simulate_judgements(theta, None, n_annotators=4, annotators_per_pair=None, seed=0)
    assert len(j) == 3 * 45 * 4 and j.n_batches == 3 and j.n_annotators == 4
    j2 = simulate_judgements(theta[0], None, n_annotators=5, annotators_per_pair=2, seed=0)
    assert len(j2) == 90
    per_pair = np.stack([j2.annotator[0::2], j2.annotator[1::2]])
    assert np.all(per_pair[0] != per_pair[1])  # distinct annotators on a pair
    j3 = simulate_judgements(theta[0], None, n_annotators=2, retest_share=0.5, seed=0)
    assert 45 < len(j3) < 90
    with pytest.raises(ValueError):
        simulate_judgements(theta[0], None, n_annotators=2, annotators_per_pair=3)


def test_choice_models():
    assert choice_probability(0, 0) == 0.5
    assert choice_probability(0, 1, model="bt") == pytest.approx(1 / (1 + np.exp(-1)))
    assert choice_probability(0, 1, noise=1e-9, model="thurstone") == pytest.approx(1.0)
    with pytest.raises(ValueError):
        choice_probability(0, 1, model="x")


@pytest.mark.parametrize("model", ["bt", "thurstone"])
def test_recovery_degrades_with_annotator_noise(model):
    theta = np.random.default_rng(0).normal(0, 1.5, 60)
    taus = [0.3, 1.0, 3.0, 10.0]
    j = simulate_judgements(theta, None, n_annotators=4, annotators_per_pair=None, annotator_noise=taus,
                            model=model, seed=1)
    rhos = []
    for k in range(4):
        sub = j.subset(j.annotator == k)
        rhos.append(spearman(bradley_terry(sub.count_matrix()).strengths, theta))
    assert rhos[0] > 0.95 and rhos[0] > rhos[1] > rhos[2] > rhos[3]
    pooled = spearman(batch_scores(j).win_share[0], theta)
    assert pooled > 0.9


def test_choose_pairs_random_tree_and_uncertainty():
    rng = np.random.default_rng(0)
    p = choose_pairs(10, 12, rng, spanning_tree=True)
    assert len(p) == 12 and np.all(p[:, 0] < p[:, 1]) and len({tuple(x) for x in p.tolist()}) == 12
    # the first 9 pairs form a spanning tree (connected)
    import scipy.sparse.csgraph as cg
    from scipy.sparse import csr_matrix
    g = np.zeros((10, 10)); g[p[:9, 0], p[:9, 1]] = 1
    assert cg.connected_components(csr_matrix(g), directed=False)[0] == 1
    more = choose_pairs(10, 5, rng, exclude=p, strengths=np.arange(10.0))
    assert not ({tuple(x) for x in more.tolist()} & {tuple(x) for x in p.tolist()})
    assert np.all(more[:, 1] - more[:, 0] == 1)  # most uncertain = neighbours in strength
    assert len(choose_pairs(4, 100, rng)) == len(all_pairs(4)) == 6


def test_plan_budget_table():
    rows = plan_budget(n_items=40, shares=(0.05, 0.5), judgements_per_pair=(1, 2), n_reps=2, seed=1)
    assert len(rows) == 2 * 2 * 2
    keys = {"method", "share", "judgements_per_pair", "n_pairs", "n_judgements", "rho_truth",
            "rho_truth_sd", "rho_full", "connected_share", "n_reps"}
    assert all(set(r) == keys for r in rows)
    by = {(r["method"], r["judgements_per_pair"], r["share"]): r for r in rows}
    for m in ("random", "adaptive"):
        for rr in (1, 2):
            assert by[(m, rr, 0.5)]["rho_truth"] > by[(m, rr, 0.05)]["rho_truth"]
    assert by[("random", 2, 0.5)]["n_judgements"] == 2 * by[("random", 1, 0.5)]["n_pairs"]


def test_judgements_validation():
    with pytest.raises(ValueError):
        Judgements([0], [1], [0], [0], 3)  # not canonical
    with pytest.raises(ValueError):
        Judgements([0], [0], [5], [0], 3)  # out of range
    with pytest.raises(ValueError):
        Judgements([0], [0], [1], [2], 3)  # winner flag
    assert len(Judgements([], [], [], [], 3)) == 0
