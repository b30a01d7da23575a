"""Simulated judgements: shapes, noise effects, recovery."""

import numpy as np
import pytest

from annotation.stats import (
    Judgements,
    batch_scores,
    bradley_terry,
    choice_probability,
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


def test_judgements_validation():
    with pytest.raises(ValueError):
        Judgements([0], [1], [0], [0], 3)  # not canonical
    with pytest.raises(ValueError):
        Judgements([0], [0], [5], [0], 3)  # out of range
    with pytest.raises(ValueError):
        Judgements([0], [0], [1], [2], 3)  # winner flag
    assert len(Judgements([], [], [], [], 3)) == 0
