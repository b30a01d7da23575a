"""Learning to rank: a linear ranker trained on pairwise differences inside each query (RankNet/RankSVM
style, logistic loss), stored as JSON, keeping the rerankers' 3-class (no match, ``cit.``, ``cf.``) output.

Training (one call to :meth:`PairwiseLinearRanker.fit` with the candidates' query groups):

1. **Ranking objective.** Features are standardised (mean/scale of the training pairs). For every query with at
   least one positive and one negative candidate, every positive is paired with up to ``max_negatives`` negatives
   (the best-ranked by the first stage first: the hard ones, then the rest by a seeded draw). A logistic
   regression without intercept learns ``w`` from the differences ``x_pos - x_neg`` (label 1) and their
   negations (label 0), so ``s(x) = w · x`` orders a query's candidates. Each query weighs the same in total
   (its pairs share a weight of 1), so a query with many gold sources does not dominate.
2. **Probabilities.** ``P(reference) = sigmoid(a s + b)`` (Platt scaling of the ranking score on the training
   pairs, a one-feature logistic regression); the type split ``P(cf. | reference)`` is a logistic regression on
   the positives' features (``cit.`` vs ``cf.``; the training share of ``cf.`` when one type is missing). The
   three columns are ``1 - p``, ``p (1 - q)``, ``p q``. Ranking by ``P(reference)`` is ranking by ``s``.
3. **Options** (each measured for transfer across benchmarks, docs/benchmark_suite.md): ``anchor`` leaves the first
   stage's score unpenalised (the ranker starts from the first stage's order); ``signs`` constrains columns'
   weights to be non-negative (+1) or non-positive (-1), a monotone ranker (a better channel score never lowers a
   candidate); ``train_depth`` pairs only the candidates within that first-stage rank (the depth that decides
   R@10), a query without a positive there giving no pair.

Nothing here imports Django; scikit-learn is imported inside ``fit`` only (predicting needs numpy).
Licence: the code is ours (scikit-learn, BSD-3-Clause, does the logistic fits).
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

N_CLASSES = 3  # (no match, cit., cf.); the classifiers (classifier.py) import this and the training checks below


def _one_thread():
    """Fit in one BLAS/OpenMP thread: on a loaded machine the default thread pools spin against each other
    (measured here: logistic regression on 32k pairs 158 s with the default pools, 4 s with one thread)."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


class TrainingError(ValueError):
    """Training data that cannot give a model (no positives, wrong shapes, a label outside 0/1/2)."""


def check_training(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, np.float64)
    y = np.asarray(y)
    if X.ndim != 2 or X.shape[0] != y.shape[0]:
        raise TrainingError(f"features {X.shape} and labels {y.shape} do not match")
    if X.shape[0] == 0:
        raise TrainingError("no training pairs")
    if not np.isin(y, (0, 1, 2)).all():
        raise TrainingError("labels must be 0 (no match), 1 (cit.) or 2 (cf.)")
    if not (y > 0).any():
        raise TrainingError("the training folds hold no positive pair (no cit. or cf. label)")
    if (y == 0).all() or len(np.unique(y)) < 2:
        raise TrainingError("the training folds need at least two classes")
    return X, y.astype(np.int64)


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-np.clip(z, -700, 700)))


def pairwise_differences(X: np.ndarray, relevant: np.ndarray, groups: np.ndarray, order: np.ndarray, *,
                         max_negatives: int, seed: int, depth: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Differences ``x_pos - x_neg`` for the pairs of every query, and one weight per difference.

    Args:
        X: (n, d) standardised features.
        relevant: (n,) bool, a gold pair.
        groups: (n,) query of each row.
        order: (n,) first-stage rank of each row (smaller = better); the hard negatives come first.
        max_negatives: negatives per positive, at most.
        seed: seeds the draw of negatives beyond the hard ones.
        depth: only the rows of first-stage rank ``<= depth`` are paired (None: every row).

    Returns:
        (m, d) differences and (m,) weights (each query's weights sum to 1).
    """
    rng = np.random.default_rng(seed)
    diffs, weights = [], []
    for g in np.unique(groups):
        rows = np.flatnonzero(groups == g)
        if depth is not None:
            rows = rows[order[rows] <= depth]
        pos = rows[relevant[rows]]
        neg = rows[~relevant[rows]]
        if pos.size == 0 or neg.size == 0:
            continue
        neg = neg[np.argsort(order[neg], kind="stable")]
        if neg.size > max_negatives:
            hard = neg[: max_negatives // 2]
            rest = rng.choice(neg[max_negatives // 2:], max_negatives - hard.size, replace=False)
            neg = np.concatenate([hard, rest])
        d = (X[pos][:, None, :] - X[neg][None, :, :]).reshape(-1, X.shape[1])
        diffs.append(d)
        weights.append(np.full(d.shape[0], 1.0 / d.shape[0]))
    if not diffs:
        return np.zeros((0, X.shape[1])), np.zeros(0)
    return np.vstack(diffs), np.concatenate(weights)


def anchored_pairwise_fit(D: np.ndarray, weights: np.ndarray, C: float, anchor: int | None,
                          signs: Sequence[int] | None = None) -> np.ndarray:
    """``w`` minimising ``C * sum_i weights_i * 2 log(1 + exp(-D_i w)) + |w without w[anchor]|^2 / 2``: the same
    loss as the logistic regression on ``(D, 1)`` and ``(-D, 0)`` with the weights twice, except that the anchor's
    weight is free (L-BFGS, from the anchor alone; ``anchor`` None: every weight penalised, from 0). ``signs``: one
    entry a column, +1 keeps its weight ``>= 0``, -1 ``<= 0``, 0 leaves it free (L-BFGS-B bounds)."""
    from scipy.optimize import minimize

    if anchor is not None and not 0 <= anchor < D.shape[1]:
        raise ValueError(f"anchor column {anchor} outside the {D.shape[1]} features")
    bounds = None
    if signs is not None:
        if len(signs) != D.shape[1] or any(x not in (-1, 0, 1) for x in signs):
            raise ValueError(f"signs must give -1, 0 or +1 for each of the {D.shape[1]} features")
        bounds = [(0.0, None) if x > 0 else (None, 0.0) if x < 0 else (None, None) for x in signs]
    mask = np.ones(D.shape[1])
    if anchor is not None:
        mask[anchor] = 0.0

    def f(w):
        m = D @ w
        loss = 2.0 * C * float(weights @ np.logaddexp(0.0, -m)) + 0.5 * float((mask * w) @ w)
        grad = -2.0 * C * (D.T @ (weights * _sigmoid(-m))) + mask * w
        return loss, grad

    w0 = np.zeros(D.shape[1])
    if anchor is not None:
        w0[anchor] = 1.0 if signs is None or signs[anchor] >= 0 else -1.0
    res = minimize(f, w0, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 1000})
    return res.x


class PairwiseLinearRanker:
    """A linear scoring function learned from pairwise preferences, with Platt-scaled 3-class probabilities."""

    kind = "feature-ltr"
    uses_groups = True

    def __init__(self, C: float = 1.0, max_negatives: int = 50, query_norm: bool = False, anchor: int | None = None,
                 signs: Sequence[int] | None = None, train_depth: int | None = None):
        self.C, self.max_negatives, self.query_norm = float(C), int(max_negatives), bool(query_norm)
        # the column of the first stage's score: its weight is not penalised, so the ranker starts from the first
        # stage's order and the penalty pulls every other weight towards it (a small C: the first stage itself)
        self.anchor = None if anchor is None else int(anchor)
        # per column +1 (weight >= 0), -1 (<= 0) or 0 (free); None: unconstrained
        self.signs = None if signs is None else [int(x) for x in signs]
        self.train_depth = None if train_depth is None else int(train_depth)
        self.w_ = None

    def _query_normalised(self, X: np.ndarray, groups) -> np.ndarray:
        """With ``query_norm``: each feature as a z-score among the same query's candidates (how a candidate
        compares with the others retrieved for its query, whatever the texts' lengths and the collection)."""
        if not self.query_norm:
            return X
        if groups is None:
            raise ValueError("a query-normalised ranker needs each row's query (groups)")
        groups = np.asarray(groups)
        out = np.empty_like(X)
        for g in np.unique(groups):
            rows = groups == g
            block = X[rows]
            sd = block.std(axis=0)
            out[rows] = (block - block.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        return out

    def fit(self, X, y, seed: int = 0, *, groups=None, order=None) -> PairwiseLinearRanker:
        """Train on the candidates ``X`` with labels ``y`` (0/1/2), ``groups`` (query of each row) and ``order``
        (first-stage rank of each row; default: row order)."""
        from sklearn.linear_model import LogisticRegression

        X, y = check_training(X, y)
        groups = np.zeros(len(y), np.int64) if groups is None else np.asarray(groups)
        order = np.arange(len(y)) if order is None else np.asarray(order)
        X = self._query_normalised(X, groups)
        self.mean_ = X.mean(axis=0)
        scale = X.std(axis=0)
        self.scale_ = np.where(scale > 0, scale, 1.0)
        Z = (X - self.mean_) / self.scale_
        rel = y > 0
        D, wts = pairwise_differences(Z, rel, groups, order, max_negatives=self.max_negatives, seed=seed,
                                      depth=self.train_depth)
        if D.shape[0] == 0:
            within = "" if self.train_depth is None else f" within first-stage rank {self.train_depth}"
            raise TrainingError(f"no query holds both a positive and a negative candidate{within}: nothing to rank")
        Dx = np.vstack([D, -D])
        Dy = np.concatenate([np.ones(len(D)), np.zeros(len(D))])
        Dw = np.concatenate([wts, wts])
        with _one_thread():
            if self.anchor is None and self.signs is None:
                m = LogisticRegression(C=self.C, fit_intercept=False, max_iter=500, solver="lbfgs")
                m.fit(Dx, Dy, sample_weight=Dw * (len(Dw) / Dw.sum()))
                self.w_ = m.coef_[0].copy()
            else:
                self.w_ = anchored_pairwise_fit(D, wts * (len(wts) / wts.sum()), self.C, self.anchor, self.signs)
            s = Z @ self.w_
            platt = LogisticRegression(C=1e4, max_iter=500, class_weight="balanced").fit(s[:, None], rel)
            self.platt_ = (float(platt.coef_[0, 0]), float(platt.intercept_[0]))
            pos_cls = y[rel]
            self.cf_prior_ = float((pos_cls == 2).mean())
            self.type_w_, self.type_b_ = None, None
            if len(np.unique(pos_cls)) == 2:
                t = LogisticRegression(C=self.C, max_iter=500, class_weight="balanced").fit(Z[rel], pos_cls == 2)
                self.type_w_, self.type_b_ = t.coef_[0].copy(), float(t.intercept_[0])
        return self

    def score(self, X, groups=None) -> np.ndarray:
        """The ranking score ``w · standardised(x)``."""
        X = self._query_normalised(np.asarray(X, np.float64), groups)
        return ((X - self.mean_) / self.scale_) @ self.w_

    def predict_proba(self, X, groups=None) -> np.ndarray:
        X = self._query_normalised(np.asarray(X, np.float64), groups)
        Z = (X - self.mean_) / self.scale_
        z = self.platt_[0] * (Z @ self.w_) + self.platt_[1]
        p = _sigmoid(z)
        q = (_sigmoid(Z @ self.type_w_ + self.type_b_) if self.type_w_ is not None
             else np.full(len(p), self.cf_prior_))
        out = np.zeros((len(p), N_CLASSES))
        # P(no match) computed as sigmoid(-z), not 1 - p: near 1, p saturates to ties that would hide the order
        out[:, 0], out[:, 1], out[:, 2] = _sigmoid(-z), p * (1 - q), p * q
        return out

    def to_dict(self) -> dict:
        return {"kind": self.kind, "C": self.C, "max_negatives": self.max_negatives, "query_norm": self.query_norm,
                "anchor": self.anchor, "signs": self.signs, "train_depth": self.train_depth, "mean": self.mean_.tolist(),
                "scale": self.scale_.tolist(), "w": self.w_.tolist(), "platt": list(self.platt_),
                "cf_prior": self.cf_prior_, "type_w": None if self.type_w_ is None else self.type_w_.tolist(),
                "type_b": self.type_b_}

    @classmethod
    def from_dict(cls, d: dict) -> PairwiseLinearRanker:
        if d.get("kind") != cls.kind:
            raise ValueError(f"not a {cls.kind} model file (kind {d.get('kind')!r})")
        m = cls(d["C"], d["max_negatives"], bool(d.get("query_norm", False)), d.get("anchor"), d.get("signs"),
                d.get("train_depth"))
        m.mean_, m.scale_, m.w_ = np.asarray(d["mean"]), np.asarray(d["scale"]), np.asarray(d["w"])
        m.platt_ = (float(d["platt"][0]), float(d["platt"][1]))
        m.cf_prior_ = float(d["cf_prior"])
        m.type_w_ = None if d["type_w"] is None else np.asarray(d["type_w"])
        m.type_b_ = d["type_b"]
        if not (m.w_.shape == m.mean_.shape == m.scale_.shape) or (
                m.type_w_ is not None and m.type_w_.shape != m.w_.shape):
            raise ValueError("corrupt ranker file: weight shapes do not match")
        return m

    def save(self, directory) -> list[str]:
        Path(directory, "classifier.json").write_text(json.dumps(self.to_dict()), encoding="utf-8")
        return ["classifier.json"]

    @classmethod
    def load(cls, directory) -> PairwiseLinearRanker:
        try:
            return cls.from_dict(json.loads(Path(directory, "classifier.json").read_text(encoding="utf-8")))
        except (KeyError, TypeError, IndexError, json.JSONDecodeError) as exc:
            raise ValueError(f"corrupt ranker file in {Path(directory).name}: {exc}") from None
