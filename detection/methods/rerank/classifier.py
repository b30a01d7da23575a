"""The two feature classifiers (seed 000 §4.2): logistic regression and histogram gradient boosting, 3 classes.

Storage never uses pickle:

- :class:`LogRegClassifier` is saved as JSON (the scaler's mean/scale, the coefficients, the intercepts) and
  predicts with numpy, so loading it needs nothing but ``json``;
- :class:`HGBClassifier` is saved with skops (``.skops``) and loaded with an explicit list of trusted types
  (:data:`HGB_TRUSTED`): a file holding any other type is refused before anything in it is built.

Both return (n, 3) probabilities for (no match, ``cit.``, ``cf.``) even when a class is absent from the training
labels (its column is 0). Training without any positive pair is an error (:class:`TrainingError`).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .ltr import N_CLASSES, TrainingError, _one_thread, check_training  # noqa: F401  (callers import them from here)

# The one type in a fitted HistGradientBoostingClassifier that skops does not trust by default; anything else
# found in a file is refused (see HGBClassifier.load).
HGB_TRUSTED = ["sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor"]


def _full_proba(proba: np.ndarray, classes) -> np.ndarray:
    out = np.zeros((proba.shape[0], N_CLASSES), np.float64)
    for col, c in enumerate(classes):
        out[:, int(c)] = proba[:, col]
    return out


class LogRegClassifier:
    """Standardised features → multinomial logistic regression (scikit-learn), stored as JSON."""

    kind = "feature-logreg"

    def __init__(self, C: float = 1.0, class_weight: str | None = "balanced", max_iter: int = 300):
        self.C, self.class_weight, self.max_iter = float(C), class_weight, int(max_iter)
        self.coef_ = None

    def fit(self, X, y, seed: int = 0) -> LogRegClassifier:
        from sklearn.linear_model import LogisticRegression

        X, y = check_training(X, y)
        self.mean_ = X.mean(axis=0)
        scale = X.std(axis=0)
        self.scale_ = np.where(scale > 0, scale, 1.0)
        # newton-cg: converges in ~15 iterations on these features where lbfgs hits 300 without converging
        m = LogisticRegression(C=self.C, class_weight=self.class_weight, max_iter=self.max_iter, random_state=seed,
                               solver="newton-cg")
        with _one_thread():
            m.fit((X - self.mean_) / self.scale_, y)
        self.classes_ = [int(c) for c in m.classes_]
        coef, intercept = m.coef_, m.intercept_
        if len(self.classes_) == 2:  # binary: scikit-learn keeps one row, the log-odds of classes_[1]
            coef = np.vstack([np.zeros_like(coef[0]), coef[0]])
            intercept = np.array([0.0, intercept[0]])
        self.coef_, self.intercept_ = coef, intercept
        return self

    def predict_proba(self, X) -> np.ndarray:
        z = ((np.asarray(X, np.float64) - self.mean_) / self.scale_) @ np.asarray(self.coef_).T + self.intercept_
        z -= z.max(axis=1, keepdims=True)
        e = np.exp(z)
        return _full_proba(e / e.sum(axis=1, keepdims=True), self.classes_)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "C": self.C, "class_weight": self.class_weight, "max_iter": self.max_iter,
                "classes": self.classes_, "mean": self.mean_.tolist(), "scale": self.scale_.tolist(),
                "coef": np.asarray(self.coef_).tolist(), "intercept": np.asarray(self.intercept_).tolist()}

    @classmethod
    def from_dict(cls, d: dict) -> LogRegClassifier:
        if d.get("kind") != cls.kind:
            raise ValueError(f"not a {cls.kind} model file (kind {d.get('kind')!r})")
        m = cls(d["C"], d["class_weight"], d["max_iter"])
        m.classes_ = [int(c) for c in d["classes"]]
        m.mean_, m.scale_ = np.asarray(d["mean"]), np.asarray(d["scale"])
        m.coef_, m.intercept_ = np.asarray(d["coef"]), np.asarray(d["intercept"])
        if m.coef_.shape != (len(m.classes_), m.mean_.size):
            raise ValueError("corrupt logistic-regression file: coefficient shape does not match")
        return m

    def save(self, directory) -> list[str]:
        Path(directory, "classifier.json").write_text(json.dumps(self.to_dict()), encoding="utf-8")
        return ["classifier.json"]

    @classmethod
    def load(cls, directory) -> LogRegClassifier:
        try:
            return cls.from_dict(json.loads(Path(directory, "classifier.json").read_text(encoding="utf-8")))
        except (KeyError, TypeError, json.JSONDecodeError) as exc:
            raise ValueError(f"corrupt logistic-regression file in {Path(directory).name}: {exc}") from None


class HGBClassifier:
    """scikit-learn HistGradientBoostingClassifier, stored with skops and loaded with trusted types only."""

    kind = "feature-hgb"

    def __init__(self, max_iter: int = 200, learning_rate: float = 0.1, max_leaf_nodes: int = 31,
                 class_weight: str | None = "balanced"):
        self.max_iter, self.learning_rate = int(max_iter), float(learning_rate)
        self.max_leaf_nodes, self.class_weight = int(max_leaf_nodes), class_weight
        self.model = None

    def fit(self, X, y, seed: int = 0) -> HGBClassifier:
        from sklearn.ensemble import HistGradientBoostingClassifier

        X, y = check_training(X, y)
        self.model = HistGradientBoostingClassifier(
            max_iter=self.max_iter, learning_rate=self.learning_rate, max_leaf_nodes=self.max_leaf_nodes,
            class_weight=self.class_weight, random_state=seed, early_stopping=False)
        with _one_thread():
            self.model.fit(X, y)
        return self

    def predict_proba(self, X) -> np.ndarray:
        with _one_thread():
            return _full_proba(self.model.predict_proba(np.asarray(X, np.float64)), self.model.classes_)

    def save(self, directory) -> list[str]:
        import skops.io as sio

        sio.dump(self.model, Path(directory, "classifier.skops"))
        Path(directory, "classifier.json").write_text(json.dumps(
            {"kind": self.kind, "max_iter": self.max_iter, "learning_rate": self.learning_rate,
             "max_leaf_nodes": self.max_leaf_nodes, "class_weight": self.class_weight}), encoding="utf-8")
        return ["classifier.skops", "classifier.json"]

    @classmethod
    def load(cls, directory) -> HGBClassifier:
        import skops.io as sio

        meta = json.loads(Path(directory, "classifier.json").read_text(encoding="utf-8"))
        if meta.get("kind") != cls.kind:
            raise ValueError(f"not a {cls.kind} model file (kind {meta.get('kind')!r})")
        path = Path(directory, "classifier.skops")
        untrusted = set(sio.get_untrusted_types(file=path)) - set(HGB_TRUSTED)
        if untrusted:
            raise ValueError(f"refusing {path.name}: it holds types outside the trusted list: {sorted(untrusted)}")
        m = cls(meta["max_iter"], meta["learning_rate"], meta["max_leaf_nodes"], meta["class_weight"])
        m.model = sio.load(path, trusted=HGB_TRUSTED)
        return m


CLASSIFIERS = {LogRegClassifier.kind: LogRegClassifier, HGBClassifier.kind: HGBClassifier}


def load_classifier(directory):
    """The classifier stored in ``directory`` (kind read from its ``classifier.json``)."""
    try:
        kind = json.loads(Path(directory, "classifier.json").read_text(encoding="utf-8")).get("kind")
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"no readable classifier in {Path(directory).name}: {exc}") from None
    if kind not in CLASSIFIERS:
        raise ValueError(f"unknown classifier kind {kind!r} in {Path(directory).name}")
    return CLASSIFIERS[kind].load(directory)


def _register_ranker() -> None:
    """The learning-to-rank model (:mod:`ltr`) is stored and loaded like the classifiers above."""
    from .ltr import PairwiseLinearRanker

    CLASSIFIERS[PairwiseLinearRanker.kind] = PairwiseLinearRanker


_register_ranker()
