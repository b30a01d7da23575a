"""The rerankers behind the registry (``kind="reranker"``; registered in :mod:`detection.methods.catalog_rerank`).

Every reranker has ``fit(cands, labels)`` (training folds only; records the query ids it saw in
``training_queries``), ``predict_proba(cands) -> (n, 3)`` for (no match, ``cit.``, ``cf.``), ``thresholds``
(per class, plateau heuristic on the training folds) and ``save(directory) -> files``. A stored model is
named with the ``model`` parameter and resolved in the models directory (never a path from a user).

- :class:`FeatureReranker`: :mod:`features` → logistic regression or gradient boosting (:mod:`classifier`);
  thresholds from out-of-fold probabilities *inside* the training folds (grouped by query), so they are tuned on
  predictions for queries the classifier did not train on.
- :class:`LexicalRuleReranker`: no training; p = TF-IDF lemma cosine, typed ``cit.`` when two shared lemmas stand
  close together in the same order on both sides (the §3.3 rule), else ``cf.``.
- :class:`CrossEncoderReranker`: a trained 3-class cross-encoder (:mod:`cross_encoder`).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .classifier import CLASSIFIERS, load_classifier
from .features import Analysed, PairFeaturizer, analyse_texts
from .pipeline import Candidates
from .thresholds import class_thresholds, decide

RERANKER_FILE = "reranker.json"


class RerankerError(ValueError):
    """A reranker that cannot run: no model, a model of another kind, training data without positives."""


def _model_dir(name: str) -> Path:
    from detection.methods.infrastructure import model_store

    path = model_store.local_path(name)
    if path is None:
        raise RerankerError(f"model {name!r} is not in the models directory {model_store.models_dir()}")
    return path


def _read_meta(directory: Path) -> dict:
    try:
        return json.loads((directory / RERANKER_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        from .neural import TrainingFailed, read_card

        try:
            kind = read_card(directory).get("kind")
        except TrainingFailed:
            kind = None
        if kind:  # a neural model card without reranker.json: a bi-encoder, or not a model trained as a reranker
            raise RerankerError(f"model {directory.name} is a {kind}, not a reranker") from None
        raise RerankerError(f"model {directory.name} has no readable {RERANKER_FILE}") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise RerankerError(f"model {directory.name} has no readable {RERANKER_FILE}: {exc}") from None


def _missing_positives(cands: Candidates, gold: dict | None) -> dict:
    """Gold pairs of the candidates' queries that were not retrieved, per class (for the plateau's FN)."""
    if not gold:
        return {}
    qset = {cands.query_ids[q] for q in np.unique(cands.qi)}
    seen = {(cands.query_ids[q], cands.source_ids[s]) for q, s in zip(cands.qi, cands.si)}
    out = {"cit.": 0, "cf.": 0}
    for (q, s), c in gold.items():
        if q in qset and (q, s) not in seen and c in (1, 2):
            out["cit." if c == 1 else "cf."] += 1
    return out


class FeatureReranker:
    """Per-pair features + a scikit-learn classifier (``classifier``: ``feature-logreg`` or ``feature-hgb``) or the
    pairwise learning-to-rank model (``feature-ltr``, :mod:`ltr`)."""

    supervised = True

    def __init__(self, classifier: str = "feature-logreg", model: str | None = None, rare_df: int = 50,
                 gap: int = 3, tol: float = 0.01, C: float = 1.0, max_iter: int = 200, learning_rate: float = 0.1,
                 seed: int = 0, inner_folds: int = 4, vectors: str | None = None, cache_dir=None,
                 featurizer: PairFeaturizer | None = None, max_negatives: int = 50, query_norm: bool = False,
                 first_stage_features: bool = True, anchor: bool = False, monotone: bool = False,
                 train_depth: int | None = None):
        if classifier not in CLASSIFIERS:
            raise RerankerError(f"classifier must be one of {', '.join(CLASSIFIERS)}")
        self.classifier_kind = classifier
        self.name = classifier
        self.rare_df, self.gap, self.tol, self.seed = rare_df, gap, tol, seed
        self.C, self.max_iter, self.learning_rate = C, max_iter, learning_rate
        self.inner_folds = inner_folds
        self.max_negatives, self.query_norm, self.anchor = max_negatives, query_norm, bool(anchor)
        self.monotone, self.train_depth = bool(monotone), train_depth
        self.vectors = vectors or None  # a word-vector model: adds the SIF embedding cosine to the features
        self.cache_dir = cache_dir
        self.featurizer = featurizer
        self.clf = None
        self.thresholds: dict = {}
        self.training_queries: set[str] = set()
        self.first_stage: str | None = None
        self.first_stage_config: dict | None = None
        self.first_stage_unit: str | None = None
        self.label_distribution: dict | None = None
        # the first stage's signals appended to the features (``Candidates.extra_names``), fixed by the first
        # candidates featurised (or the stored model); () = none
        self.use_first_stage_features = bool(first_stage_features)
        self.extra_names: tuple[str, ...] | None = None
        self._analysed: dict[str, Analysed] = {}
        if model is not None:
            self._load(_model_dir(model))

    # ------------------------------------------------------------------------------------- features
    def prepare(self, pool_texts) -> FeatureReranker:
        """Fit the featurizer's corpus statistics on the source pool (no labels)."""
        an = self._analyse(list(pool_texts))
        self.featurizer = PairFeaturizer(self.rare_df, self.gap, cache_dir=self.cache_dir,
                                         vectors=self.vectors).fit(pool_texts, an)
        return self

    def prepared_like(self, other: FeatureReranker) -> FeatureReranker:
        """This reranker with ``other``'s fitted featurizer and first-stage signal names (a pool's statistics use no
        label: every fold over the same pool shares them)."""
        self.featurizer, self.extra_names, self._analysed = other.featurizer, other.extra_names, other._analysed
        return self

    def _analyse(self, texts: list[str]) -> list[Analysed]:
        todo = [t for t in dict.fromkeys(texts) if t not in self._analysed]
        if todo:
            self._analysed.update(zip(todo, analyse_texts(todo, cache_dir=self.cache_dir)))
        return [self._analysed[t] for t in texts]

    def features(self, cands: Candidates) -> np.ndarray:
        if self.featurizer is None:
            self.prepare(cands.source_texts)
        uq = np.unique(cands.qi)
        us = np.unique(cands.si)
        qa: list = [None] * len(cands.query_texts)
        sa: list = [None] * len(cands.source_texts)
        for i, a in zip(uq, self._analyse([cands.query_texts[i] for i in uq])):
            qa[i] = a
        for j, a in zip(us, self._analyse([cands.source_texts[j] for j in us])):
            sa[j] = a
        X = self.featurizer.transform(qa, sa, cands.qi, cands.si, cands.score, cands.rank)
        extra = self._first_stage_columns(cands)
        return X if extra is None else np.hstack([X, extra.astype(X.dtype)])

    def _first_stage_columns(self, cands: Candidates) -> np.ndarray | None:
        """The first stage's signals of the candidates in this reranker's column order (None when it uses
        none); a model that learned from signals the candidates lack is refused, naming them."""
        if self.extra_names is None:
            self.extra_names = tuple(cands.extra_names) if self.use_first_stage_features else ()
        if not self.extra_names:
            return None
        have = {n: i for i, n in enumerate(cands.extra_names)} if cands.extra is not None else {}
        refusal = signals_refusal(self.name, self.extra_names, have, cands.meta.get("retriever"), self.first_stage)
        if refusal:
            raise RerankerError(refusal)
        return np.asarray(cands.extra, np.float64)[:, [have[n] for n in self.extra_names]]

    @property
    def feature_names(self) -> list[str]:
        return self.featurizer.feature_names + list(self.extra_names or ())

    # ------------------------------------------------------------------------------------- training
    def _new_classifier(self):
        if self.classifier_kind == "feature-logreg":
            return CLASSIFIERS["feature-logreg"](C=self.C)
        if self.classifier_kind == "feature-ltr":
            anchor = self.feature_names.index("retrieval_score") if self.anchor else None
            return CLASSIFIERS["feature-ltr"](C=self.C, max_negatives=self.max_negatives, query_norm=self.query_norm,
                                              anchor=anchor, signs=self.monotone_signs() if self.monotone else None,
                                              train_depth=self.train_depth)
        return CLASSIFIERS["feature-hgb"](max_iter=self.max_iter, learning_rate=self.learning_rate)

    def monotone_signs(self) -> list[int]:
        """Per feature: +1 for the first stage's own evidence (its score, the score's share of the query's best,
        1/rank and every signal it gives, e.g. each channel's score), -1 for its log rank, 0 (free) for the pair
        features: with ``monotone`` a better first-stage or channel score never lowers a candidate."""
        up = {"retrieval_score", "retrieval_score_rel", "retrieval_rank_inv", *(self.extra_names or ())}
        return [1 if n in up else -1 if n == "retrieval_log_rank" else 0 for n in self.feature_names]

    def _fit_classifier(self, X, y, groups, order):
        """A new classifier fitted on these rows; a ranker (``uses_groups``) also gets each row's query and
        first-stage rank."""
        clf = self._new_classifier()
        if getattr(clf, "uses_groups", False):
            return clf.fit(X, y, seed=self.seed, groups=groups, order=order)
        return clf.fit(X, y, seed=self.seed)

    def fit(self, cands: Candidates, labels, *, gold: dict | None = None, X: np.ndarray | None = None,
            progress=None) -> FeatureReranker:
        """Train on the candidates of the training folds (``X``: their features when already computed)."""
        labels = np.asarray(labels, np.int64)
        X = self.features(cands) if X is None else X
        if not (labels > 0).any():
            raise RerankerError("the training folds hold no positive pair among the retrieved candidates")
        groups = cands.qi
        order = np.asarray(cands.rank)
        oof = self._out_of_fold(X, labels, groups, order)
        self.thresholds = class_thresholds(oof, labels, self.tol, _missing_positives(cands, gold))
        self.clf = self._fit_classifier(X, labels, groups, order)
        self.training_queries = {cands.query_ids[q] for q in np.unique(groups)}
        self.first_stage = cands.meta.get("retriever")
        self.first_stage_config = cands.meta.get("retriever_params")
        self.first_stage_unit = cands.meta.get("unit")
        self.label_distribution = label_shares(decide(oof, self.thresholds))
        return self

    def fit_features(self, X: np.ndarray, labels, groups, order, *, queries, first_stage: str | None = None,
                     first_stage_config: dict | None = None) -> FeatureReranker:
        """Train on features computed by the caller (several pools' candidates stacked, each with its own pool's
        statistics; ``groups`` distinct per query): the decision thresholds come from the in-sample predictions,
        there being no held-out rows here; ``queries`` are the training queries' ids."""
        labels = np.asarray(labels, np.int64)
        self.clf = self._fit_classifier(X, labels, groups, order)
        predicted = self._predict(self.clf, X, groups)
        self.thresholds = class_thresholds(predicted, labels, self.tol, {})
        self.training_queries = set(queries)
        self.first_stage, self.first_stage_config = first_stage, first_stage_config
        self.label_distribution = label_shares(decide(predicted, self.thresholds))
        return self

    def _out_of_fold(self, X, y, groups, order) -> np.ndarray:
        from sklearn.model_selection import GroupKFold

        uniq = np.unique(groups)
        n_splits = min(self.inner_folds, len(uniq))
        oof = np.zeros((len(y), 3))
        if n_splits < 2:
            return self._predict(self._fit_classifier(X, y, groups, order), X, groups)
        for tr, te in GroupKFold(n_splits=n_splits).split(X, y, groups):
            if not (y[tr] > 0).any() or len(np.unique(y[tr])) < 2:
                continue
            oof[te] = self._predict(self._fit_classifier(X[tr], y[tr], groups[tr], order[tr]), X[te], groups[te])
        return oof

    def predict_proba(self, cands: Candidates, *, X: np.ndarray | None = None, progress=None) -> np.ndarray:
        if self.clf is None:
            raise RerankerError(f"reranker {self.name} has no trained model: train it or name one with 'model'")
        if len(cands) == 0:
            return np.zeros((0, 3))
        return self._predict(self.clf, self.features(cands) if X is None else X, cands.qi)

    @staticmethod
    def _predict(clf, X, groups) -> np.ndarray:
        """A ranker (``uses_groups``) also gets each row's query (its features may be normalised per query)."""
        if getattr(clf, "uses_groups", False):
            return clf.predict_proba(X, groups=groups)
        return clf.predict_proba(X)

    # ------------------------------------------------------------------------------------- storage
    def save(self, directory) -> list[str]:
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        files = self.clf.save(d)
        (d / "featurizer.json").write_text(json.dumps(self.featurizer.state()), encoding="utf-8")
        (d / RERANKER_FILE).write_text(json.dumps({
            "kind": "feature-classifier", "reranker": self.classifier_kind, "thresholds": self.thresholds,
            "feature_names": self.feature_names, "vectors": self.featurizer.vectors,
            "first_stage_features": list(self.extra_names or ()),
            "training_queries": sorted(self.training_queries), "first_stage": self.first_stage,
            "first_stage_config": self.first_stage_config, "first_stage_unit": self.first_stage_unit,
            "label_distribution": self.label_distribution}),
            encoding="utf-8")
        return files + ["featurizer.json", RERANKER_FILE]

    def _load(self, d: Path) -> None:
        meta = _read_meta(d)
        if meta.get("kind") != "feature-classifier" or meta.get("reranker") != self.classifier_kind:
            raise RerankerError(f"model {d.name} is a {meta.get('reranker') or meta.get('kind')}, not a "
                                f"{self.classifier_kind} reranker")
        self.clf = load_classifier(d)
        try:
            state = json.loads((d / "featurizer.json").read_text(encoding="utf-8"))
            self.featurizer = PairFeaturizer.from_state(state, cache_dir=self.cache_dir)
        except (OSError, KeyError, ValueError) as exc:
            raise RerankerError(f"model {d.name}: unreadable featurizer.json: {exc}") from None
        stored = self.featurizer.vectors
        if self.vectors is not None and self.vectors != stored:
            raise RerankerError(f"model {d.name} was trained with vectors={stored!r}, not {self.vectors!r}: leave "
                                f"'vectors' unset to use the model's own")
        self.vectors = stored
        self.thresholds = meta["thresholds"]
        self.training_queries = set(meta.get("training_queries", []))
        self.first_stage = meta.get("first_stage")
        self.first_stage_config = meta.get("first_stage_config")
        self.first_stage_unit = meta.get("first_stage_unit")
        self.extra_names = tuple(meta.get("first_stage_features", ()))
        self.label_distribution = meta.get("label_distribution")


def stored_rerankers() -> list[dict]:
    """Every stored reranker model in the models directory (``NAME`` or ``NAME/all``, ``NAME/fold-<f>``): its name,
    kind, the first stage it learned from and how many queries it trained on."""
    from detection.methods.infrastructure import model_store

    root = model_store.models_dir()
    out = []
    if not root.is_dir():
        return out
    for meta_file in sorted(root.glob("*/reranker.json")) + sorted(root.glob("*/*/reranker.json")):
        try:
            meta = json.loads(meta_file.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        out.append({"name": meta_file.parent.relative_to(root).as_posix(),
                    "kind": meta.get("reranker") or meta.get("kind"), "first_stage": meta.get("first_stage"),
                    "training_queries": len(meta.get("training_queries", []))})
    return out


def format_stored_rerankers() -> str:
    rows = stored_rerankers()
    if not rows:
        return "stored reranker models: none (train one with manage.py train_model or the models page)\n"
    lines = ["stored reranker models (use with --reranker KIND --reranker-param model=NAME):"]
    lines += [f"  {r['name']}: {r['kind']}, first stage {r['first_stage'] or 'not recorded'}, "
              f"{r['training_queries']} training queries" for r in rows]
    return "\n".join(lines) + "\n"


LABEL_NAMES = ("none", "cit.", "cf.")
FAR_OFF = 0.25  # total variation distance between label distributions that earns a warning


def label_shares(labels) -> dict[str, float]:
    """Share of each decision (``none``, ``cit.``, ``cf.``) among the candidates."""
    lab = np.asarray(labels, np.int64)
    n = max(lab.size, 1)
    return {name: float((lab == i).sum() / n) for i, name in enumerate(LABEL_NAMES)}


def use_warnings(reranker, result) -> list[str]:
    """What a user should hear when a reranker is used outside what it learned from: another first stage than
    its model card names, or labels distributed far from its training candidates' (total variation distance
    above :data:`FAR_OFF`), or no positive label at all."""
    return label_warnings(reranker.name, getattr(reranker, "first_stage", None),
                          getattr(reranker, "label_distribution", None), result.candidates.meta.get("retriever"),
                          result.labels)


def trained_on_warnings(params: dict, first_stage: str, first_params: dict | None = None, unit: str | None = None,
                        card: dict | None = None, defaults: dict | None = None) -> list[str]:
    """One sentence for each way a stored model (``params["model"]``) is used outside what it learned from beyond
    the first stage's name (:func:`label_warnings` says that one), naming what it was trained on: another
    ``profile`` of the same first stage, another search unit. ``first_params``: the first stage's parameters now;
    ``defaults``: its declared defaults (what a card's config left out)."""
    if not params.get("model"):
        return []
    card = _stored_card(str(params["model"])) if card is None else card
    model, out = params["model"], []
    trained = card.get("first_stage")
    used = (first_params or {}).get("profile")
    profiles = _trained_profiles(card.get("first_stage_config"), defaults or {})
    if trained == first_stage and used and profiles and used not in profiles:
        out.append(f"model {model} was trained on {trained} with profile {' and '.join(sorted(profiles))}, not "
                   f"{used}: expect a lower recall (retrain it on this profile, or set profile={sorted(profiles)[0]})")
    trained_unit = card.get("first_stage_unit")
    if unit and trained_unit and trained_unit != unit:
        out.append(f"model {model} was trained on {trained_unit} units, not {unit}")
    return out


def _trained_profiles(config, defaults: dict) -> set[str]:
    """The first stage's ``profile`` values in a card's ``first_stage_config`` (its parameters, or the suite's
    ``{benchmark: parameters}``); a config without one had the first stage's declared default (``defaults``)."""
    if not isinstance(config, dict) or "profile" not in defaults:
        return set()
    parts = list(config.values()) if config and all(isinstance(v, dict) for v in config.values()) else [config]
    return {str(p.get("profile", defaults["profile"])) for p in parts}


def card_check(name: str, params: dict, first_stage: str, labels: list[str], first_params: dict | None = None,
               unit: str | None = None, defaults: dict | None = None) -> dict:
    """What a detection's labels say against a stored model's card (``params["model"]``), without loading the
    model (a detection job's merge): the first stage it learned from and the one used, the share of each label
    now and on its training candidates, their total variation distance, and :func:`label_warnings`. Labels are
    given as text (``""``, ``cit.``, ``cf.``)."""
    card = {}
    if params.get("model"):
        try:
            card = _read_meta(_model_dir(params["model"]))
        except RerankerError:
            card = {}
    ids = {"": 0, "none": 0, "cit.": 1, "cf.": 2}
    lab = np.asarray([ids.get(x, 0) for x in labels], np.int64)
    train = card.get("label_distribution")
    return {"reranker": name, "model": params.get("model"), "trained_first_stage": card.get("first_stage"),
            "first_stage": first_stage, "n": int(lab.size), "labels": label_shares(lab), "training_labels": train,
            "distance": label_distance(label_shares(lab), train) if train else None,
            "far_off": FAR_OFF, "warnings": label_warnings(name, card.get("first_stage"), train, first_stage, lab)
            + trained_on_warnings(params, first_stage, first_params, unit, card, defaults)}


def signals_refusal(name: str, needed, given, first_stage: str | None, trained_first_stage: str | None = None
                    ) -> str | None:
    """The sentence refusing a reranker that learned from first-stage signals (``needed``) a first stage does not
    give (``given``), naming the missing ones; None when every one is given."""
    missing = [n for n in needed if n not in set(given)]
    if not missing:
        return None
    return (f"{name} learned from the first stage's {', '.join(missing)}, which these candidates "
            f"({first_stage or 'unknown first stage'}) do not carry"
            + (f": use it after the first stage {trained_first_stage}" if trained_first_stage
               and trained_first_stage != first_stage else ""))


def _stored_card(model: str) -> dict:
    """A stored reranker's card: ``model``'s own, else (a model stored per fold) its ``all`` or ``fold-0`` member's."""
    for name in (model, f"{model}/all", f"{model}/fold-0"):
        try:
            return _read_meta(_model_dir(name))
        except (RerankerError, ValueError):
            continue
    return {}


def check_first_stage(name: str, params: dict, first_stage: str, given) -> None:
    """Refuse, before any work, a stored model (``params["model"]``) that learned from first-stage signals the
    retriever ``first_stage`` does not give (``given``: its spec's ``signals``): :func:`signals_refusal`'s sentence as the
    registry's ``ParamError`` on ``model`` (a 400 on the API, a plain sentence in a command). Another first stage than the card's that gives them, or none needed: only the
    warnings of :func:`label_warnings` after the run."""
    if not params.get("model"):
        return
    from ..specs import ParamError

    card = _stored_card(str(params["model"]))
    refusal = signals_refusal(f"{name} model {params['model']}", card.get("first_stage_features") or (), given,
                              first_stage, card.get("first_stage"))
    if refusal:
        raise ParamError(refusal, "model")


def label_distance(now: dict, train: dict) -> float:
    """Total variation distance between two label distributions (``none``, ``cit.``, ``cf.`` shares)."""
    return 0.5 * sum(abs(now.get(k, 0.0) - train.get(k, 0.0)) for k in LABEL_NAMES)


def label_warnings(name: str, first: str | None, train: dict | None, used: str | None, labels) -> list[str]:
    out = []
    if first and used and first != used:
        out.append(f"{name} learned to rerank {first}'s candidates, not {used}'s: its probabilities and "
                   f"thresholds may not hold")
    now = label_shares(labels)
    n = len(labels)
    fmt = ", ".join
    if train:
        tv = label_distance(now, train)
        if tv > FAR_OFF:
            out.append(f"{name} labels these {n} candidates "
                       f"{fmt(f'{k} {now[k]:.0%}' for k in LABEL_NAMES)}; on its training data "
                       f"{fmt(f'{k} {train.get(k, 0.0):.0%}' for k in LABEL_NAMES)} (distance {tv:.2f}): these "
                       "texts are far from what it learned from")
    if n and now["none"] == 1.0:
        out.append(f"{name} labels none of the {n} candidates as a reference")
    return out


class LexicalRuleReranker:
    """Parameter-free: p = TF-IDF lemma cosine, ``cit.`` when the pair shares an ordered pair of lemmas at most
    ``gap`` words apart on both sides, else ``cf.``; only the thresholds are tuned on the training folds."""

    supervised = False

    def __init__(self, gap: int = 3, tol: float = 0.01, cache_dir=None, featurizer: PairFeaturizer | None = None):
        self.name = "lexical-rule"
        self._inner = FeatureReranker(gap=gap, tol=tol, cache_dir=cache_dir, featurizer=featurizer)
        self.thresholds = {"cit.": {"threshold": 0.5}, "cf.": {"threshold": 0.5}}
        self.training_queries: set[str] = set()

    def prepare(self, pool_texts):
        self._inner.prepare(pool_texts)
        return self

    def features(self, cands):
        return self._inner.features(cands)

    def _proba(self, X: np.ndarray) -> np.ndarray:
        names = self._inner.featurizer.feature_names
        p = np.clip(X[:, names.index("tfidf_lemma_1")].astype(np.float64), 0, 1)
        rule = X[:, names.index("ordered_gapped_bigrams")] > 0
        return np.column_stack([1 - p, np.where(rule, p, 0), np.where(rule, 0, p)])

    def fit(self, cands, labels, *, gold=None, X=None, progress=None):
        X = self.features(cands) if X is None else X
        self.thresholds = class_thresholds(self._proba(X), labels, self._inner.tol, _missing_positives(cands, gold))
        self.training_queries = {cands.query_ids[q] for q in np.unique(cands.qi)}
        return self

    def predict_proba(self, cands, *, X=None, progress=None):
        if len(cands) == 0:
            return np.zeros((0, 3))
        return self._proba(self.features(cands) if X is None else X)


class CrossEncoderReranker:
    """A trained 3-class cross-encoder from the models directory (``model``), on ``device``."""

    supervised = True

    def __init__(self, model: str | None = None, batch_size: int = 64, max_length: int = 256, device: str = "auto"):
        self.name = "cross-encoder"
        self.model_name, self.batch_size, self.max_length, self.device = model, batch_size, max_length, device
        self.thresholds: dict = {"cit.": {"threshold": 0.5}, "cf.": {"threshold": 0.5}}
        self.training_queries: set[str] = set()
        self._loaded = None
        if model is not None:
            meta_dir = _model_dir(model)
            if (meta_dir / RERANKER_FILE).is_file():
                meta = _read_meta(meta_dir)
                if meta.get("kind") != "cross-encoder":
                    raise RerankerError(f"model {model} is a {meta.get('kind')}, not a cross-encoder")
                self.thresholds = meta.get("thresholds", self.thresholds)
                self.training_queries = set(meta.get("training_queries", []))

    def _model(self):
        from . import cross_encoder
        from .neural import pick_device

        if self.model_name is None:
            raise RerankerError("the cross-encoder reranker needs a trained model: name one with 'model'")
        if self._loaded is None:
            device = pick_device(self.device)
            self._loaded = (*cross_encoder.load(_model_dir(self.model_name), device)[:2], device)
        return self._loaded

    def fit(self, cands, labels, *, gold=None, X=None, progress=None):
        """Tune the thresholds of the stored model on the training folds' candidates (the paper tunes them on
        the training fold)."""
        probs = self.predict_proba(cands, progress=progress)
        self.thresholds = class_thresholds(probs, labels, 0.01, _missing_positives(cands, gold))
        self.training_queries = {cands.query_ids[q] for q in np.unique(cands.qi)}
        return self

    def predict_proba(self, cands, *, X=None, progress=None):
        from . import cross_encoder

        if len(cands) == 0:
            return np.zeros((0, 3))
        tok, model, device = self._model()
        return cross_encoder.predict_proba(tok, model, [cands.query_texts[q] for q in cands.qi],
                                           [cands.source_texts[s] for s in cands.si], batch_size=self.batch_size,
                                           max_length=self.max_length, device=device, progress=progress)
