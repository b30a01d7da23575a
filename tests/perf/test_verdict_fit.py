"""Channel weights from verdicts (`perf.verdict_fit`, an experiment out of the product), pure: no database."""
import numpy as np
import pytest

from perf.verdict_fit import MIN_NEGATIVE, MIN_POSITIVE, auc, fit_weights, verify_next

NAMES = ["lemma", "sound", "semantic", "context"]
SHIPPED = {"lemma": 1.0, "sound": 1.0, "semantic": 1.0, "context": 0.0}


def _planted(n=3000, seed=0):
    """Channel scores and verdicts drawn from a logistic model whose true weights are lemma x4, sound x1,
    semantic x0.25 of the shipped ones (context: off in the run, all zero)."""
    rng = np.random.default_rng(seed)
    X = rng.exponential(1.0, size=(n, 4))
    X[:, 3] = 0.0
    z = -6.0 + 2.0 * (4.0 * X[:, 0] + 1.0 * X[:, 1] + 0.25 * X[:, 2])
    y = (rng.random(n) < 1 / (1 + np.exp(-z))).astype(int)
    return X, y


def test_recovers_planted_weights():
    X, y = _planted()
    fit = fit_weights(X, NAMES, SHIPPED, y, prior=1.0)
    assert fit.fitted, fit.message
    w = fit.weights
    # the planted ratios are lemma : sound : semantic = 16 : 4 : 1; the fit gets the order and most of the spread
    assert w["lemma"] / w["sound"] > 2.5 and w["sound"] / w["semantic"] > 2.5
    assert w["context"] == 0.0  # a channel that is off stays off
    changes = {c["channel"]: c["ratio"] for c in fit.changes()}
    assert list(changes) == ["lemma", "sound", "semantic"] and changes["lemma"] > 1 > changes["semantic"]
    assert "Gained weight: lemma" in fit.message and "semantic" in fit.message.split("Lost weight:")[1]
    assert fit.held_out["fitted"] > fit.held_out["shipped"]
    # the new scores order the verdicts better than the shipped ones
    assert auc(fit.score(X, NAMES), y) > auc(X @ np.array([1.0, 1.0, 1.0, 0.0]), y)


def test_too_few_confirmed_keeps_the_shipped_weights_and_says_how_many_more():
    X, y = _planted()
    rows = np.concatenate([np.flatnonzero(y == 1)[:MIN_POSITIVE - 3], np.flatnonzero(y == 0)[:40]])
    fit = fit_weights(X[rows], NAMES, SHIPPED, y[rows])
    assert not fit.fitted and fit.weights == SHIPPED
    assert fit.needed == {"confirmed": 3}
    assert "needs 3 more confirmed" in fit.message and "shipped order is kept" in fit.message
    rows = np.concatenate([np.flatnonzero(y == 1)[:30], np.flatnonzero(y == 0)[:MIN_NEGATIVE - 1]])
    assert fit_weights(X[rows], NAMES, SHIPPED, y[rows]).needed == {"rejected": 1}


def test_one_class_gets_a_sentence_not_a_model():
    X, y = _planted()
    pos = np.flatnonzero(y == 1)[:25]
    fit = fit_weights(X[pos], NAMES, SHIPPED, y[pos])
    assert not fit.fitted and fit.weights == SHIPPED and fit.needed == {}
    assert fit.message.startswith("All 25 of your verdicts confirm a parallel") and "rejections" in fit.message
    neg = np.flatnonzero(y == 0)[:12]
    assert "All 12 of your verdicts reject" in fit_weights(X[neg], NAMES, SHIPPED, y[neg]).message
    empty = fit_weights(np.zeros((0, 4)), NAMES, SHIPPED, np.zeros(0, int))
    assert not empty.fitted and empty.message.startswith("No verdicts yet")


def test_verdicts_the_shipped_weights_already_order_keep_them():
    rng = np.random.default_rng(1)
    X = rng.exponential(1.0, size=(400, 4))
    X[:, 3] = 0
    s = X @ np.array([1.0, 1.0, 1.0, 0.0])
    y = (s > np.median(s)).astype(int)  # the shipped score separates them perfectly: nothing to gain
    fit = fit_weights(X, NAMES, SHIPPED, y)
    assert not fit.fitted and fit.weights == SHIPPED and fit.held_out["shipped"] == 1.0
    assert "do not rank held-out verdicts clearly better" in fit.message


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="labels must be 0"):
        fit_weights(np.ones((3, 4)), NAMES, SHIPPED, np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="finite"):
        fit_weights(np.full((2, 4), np.nan), NAMES, SHIPPED, np.array([0, 1]))


def test_verify_next_picks_the_largest_disagreements():
    shipped = np.arange(100, 0, -1, dtype=float)  # row 0 best
    fitted = shipped.copy()
    fitted[90] = 1000.0  # the fitted weights put row 90 first: the shipped order has it 91st
    fitted[5] = 500.0
    rows = verify_next(shipped, fitted, n=2)
    assert rows.tolist() == [90, 5]
    assert verify_next(np.zeros(0), np.zeros(0)).size == 0
