"""The supervised second stage without a database: thresholds, features, classifiers, pipeline, fold evaluation."""
import json

import numpy as np
import pytest

from detection.methods import registry
from detection.methods.rerank import pipeline as P
from detection.methods.rerank.classifier import (
    HGBClassifier,
    LogRegClassifier,
    TrainingError,
    load_classifier,
)
from detection.methods.rerank.features import (
    BASE_FEATURES,
    PairFeaturizer,
    analyse_texts,
)
from detection.methods.rerank.thresholds import (
    class_thresholds,
    decide,
    plateau_threshold,
)


def test_cit_wins_when_a_pair_passes_both_thresholds():
    probs = np.array([[0.1, 0.5, 0.6], [0.2, 0.7, 0.1], [0.3, 0.1, 0.6], [0.9, 0.05, 0.05]])
    assert decide(probs, {"cit.": 0.4, "cf.": 0.4}).tolist() == [1, 1, 2, 0]


def test_plateau_takes_the_largest_threshold_near_the_best_f1_and_counts_unscored_gold():
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    y = np.array([1, 1, 0, 1, 0])
    best = plateau_threshold(s, y, tol=0.0)
    assert best["threshold"] == 0.6 and best["best_f1"] == pytest.approx(6 / 7)
    assert plateau_threshold(s, y, tol=0.1)["threshold"] == 0.8  # F1 0.8 is within 0.1 of 0.857
    assert plateau_threshold(s, y, tol=0.0, extra_positives=3)["best_f1"] < best["best_f1"]
    assert plateau_threshold(s, np.zeros(5), 0.01)["threshold"] == float("inf")
    th = class_thresholds(np.column_stack([1 - s, s, s * 0]), y)
    assert th["cit."]["threshold"] == 0.6 and th["cf."]["threshold"] == float("inf")


TEXTS = ["arma uirumque cano Troiae qui primus ab oris", "Italiam fato profugus Lauinaque uenit litora",
         "multum ille et terris iactatus et alto", "cano arma et uirum qui primus uenit ab oris Troiae",
         "tempus erat quo prima quies mortalibus aegris incipit"]


def test_features_see_shared_words_their_order_their_place_from_the_end_and_their_sound():
    an = analyse_texts(TEXTS)
    f = PairFeaturizer(rare_df=1, gap=3).fit(TEXTS, an)
    X = f.transform(an, an, np.array([0, 0]), np.array([3, 4]), np.array([5.0, 1.0]), np.array([1, 2]))
    row = dict(zip(f.feature_names, X[0]))
    other = dict(zip(f.feature_names, X[1]))
    assert X.shape == (2, len(BASE_FEATURES)) and np.isfinite(X).all()
    assert row["shared_lemmas"] >= 4 and other["shared_lemmas"] <= 1  # prima ~ primus
    assert row["ordered_gapped_bigrams"] >= 1 and row["tesserae"] != 0 and other["tesserae"] == 0
    assert row["same_pos_from_end"] >= 1  # "oris"/"Troiae" close both lines
    assert row["tfidf_lemma_1"] > other["tfidf_lemma_1"] and row["char3_jaccard"] > other["char3_jaccard"]
    assert row["retrieval_score_rel"] == 1.0 and other["retrieval_rank_inv"] == 0.5
    # the fitted statistics travel as JSON and give the same features
    g = PairFeaturizer.from_state(json.loads(json.dumps(f.state())))
    assert np.allclose(g.transform(an, an, np.array([0, 0]), np.array([3, 4]), np.array([5.0, 1.0]),
                                   np.array([1, 2])), X)


def _toy(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] > 1.0, 1, np.where(X[:, 1] > 1.3, 2, 0))
    return X, y


@pytest.mark.parametrize("cls", [LogRegClassifier, HGBClassifier])
def test_classifiers_round_trip_without_pickle(cls, tmp_path):
    X, y = _toy()
    m = cls().fit(X, y) if cls is LogRegClassifier else cls(max_iter=20).fit(X, y)
    files = m.save(tmp_path)
    assert not any(f.endswith((".pkl", ".pickle", ".joblib")) for f in files)
    back = load_classifier(tmp_path)
    assert type(back) is cls and np.allclose(back.predict_proba(X), m.predict_proba(X))
    assert back.predict_proba(X).shape == (len(X), 3)


def test_a_skops_file_holding_an_untrusted_type_is_refused(tmp_path):
    import os

    import skops.io as sio
    from sklearn.preprocessing import FunctionTransformer

    HGBClassifier(max_iter=5).fit(*_toy()).save(tmp_path)
    sio.dump(FunctionTransformer(func=os.system), tmp_path / "classifier.skops")
    with pytest.raises(ValueError, match="trusted"):
        load_classifier(tmp_path)


def test_training_without_positives_or_with_bad_labels_is_refused():
    X, _ = _toy()
    with pytest.raises(TrainingError, match="no positive"):
        LogRegClassifier().fit(X, np.zeros(len(X), int))
    with pytest.raises(TrainingError, match="labels"):
        LogRegClassifier().fit(X, np.full(len(X), 5))


def test_a_class_absent_from_training_gets_probability_zero():
    X, y = _toy()
    y = np.where(y == 2, 0, y)
    p = LogRegClassifier().fit(X, y).predict_proba(X)
    assert p.shape == (len(X), 3) and np.allclose(p[:, 2], 0) and np.allclose(p.sum(1), 1)


def test_rerankers_are_registered_with_declared_parameters():
    assert set(registry.names(kind="reranker")) >= {"feature-logreg", "feature-hgb", "lexical-rule", "cross-encoder"}
    assert registry.get_spec("cross-encoder").queue == "gpu" and registry.get_spec("feature-hgb").queue == "cpu"
    with pytest.raises(registry.ParamError):
        registry.validate("feature-logreg", {"model": "/etc/passwd"})
    with pytest.raises(registry.ParamError):
        registry.validate("feature-logreg", {"pickle": "x"})


def test_pipeline_reorders_by_reference_probability_and_sweeps_depth():
    cands = P.from_topk(["q0", "q1"], ["a", "b"], ["s0", "s1", "s2"], ["x", "y", "z"],
                        np.array([[0, 1, 2], [2, -1, -1]]), np.array([[3.0, 2.0, 1.0], [5.0, 0, 0]]))
    probs = np.array([[0.9, 0.05, 0.05], [0.2, 0.7, 0.1], [0.5, 0.1, 0.4], [0.1, 0.1, 0.8]])
    idx, _ = P.reranked_topk(cands, probs)
    assert idx.tolist() == [[1, 2, 0], [2, -1, -1]]
    result = P.Reranked(cands, probs, decide(probs, {"cit.": 0.5, "cf.": 0.5}), {})
    # the log-odds keep apart what 1 - p_none rounds to the same 1.0 (a whole run's top is no tie)
    sure = np.array([[1e-20, 0.5, 0.5], [1e-25, 0.5, 0.5], [0.5, 0.25, 0.25]])
    assert (1 - sure[0, 0]) == (1 - sure[1, 0]) == 1.0
    assert P.reference_logit(sure).tolist() == pytest.approx([20 * np.log(10), 25 * np.log(10), 0.0])
    gold = {("q0", "s1"): 1, ("q1", "s2"): 2, ("q1", "s0"): 2}
    sweep = P.depth_sweep(cands, result.labels, gold, ks=(1, 3))
    assert sweep[0]["ret"] == {"inspect": 2, "tp": 1, "fp": 1, "fn": 2, "p": 0.5, "r": 1 / 3, "f1": 0.4}
    assert sweep[1]["rer"]["inspect"] == 2 and sweep[1]["rer"]["tp"] == 2 and sweep[1]["ret"]["inspect"] == 4


def test_feature_reranker_beats_bm25_on_held_out_folds_and_never_trains_on_them():
    from benchmarks.loci import data, method_adapters, splits
    from benchmarks.loci.rerank_eval import evaluate_rerank

    bench = data.load_default_545()
    split = splits.split_from_file(bench, "ref_type")
    rep = evaluate_rerank(bench, split, method_adapters.EngineRetrieverMethod("bm25-lemma"), "feature-logreg", {}, k=20,
                          ks=(1, 10), pool="gold")
    assert [f["leaked_queries"] for f in rep["folds"]] == [0] * 5
    assert all(f["n_train_queries"] == 463 - f["n_queries"] for f in rep["folds"])
    assert rep["rerank"]["mrr@10"] > rep["retrieval"]["mrr@10"]
    assert set(rep["classification"]) == {"all", "cit.", "cf."} and len(rep["thresholds"]) == 5
    assert rep["sweep"]["all"][0]["k"] == 1 and "rer" in rep["sweep"]["all"][0]


def test_a_stored_reranker_configuration_is_built_as_it_is_not_configured_again():
    """An evaluation run hands its stored reranker ``MethodConfig`` to ``evaluate_rerank``: built per fold as it is
    (the same figures as the name configured once), and a configuration stored before a range narrowed is not
    refused by a second validation."""
    from benchmarks.loci import data, method_adapters, splits
    from benchmarks.loci.rerank_eval import evaluate_rerank

    bench = data.load_default_545()
    split = splits.split_from_file(bench, "ref_type")

    def rerank(reranker, params=None):
        return evaluate_rerank(bench, split, method_adapters.EngineRetrieverMethod("bm25-lemma"), reranker, params,
                               k=10, ks=(1, 10), pool="gold")

    config = registry.configure("feature-logreg", {"C": "0.5"}, kind="reranker")
    by_config, by_name = rerank(config), rerank("feature-logreg", {"C": "0.5"})
    assert by_config["rerank"] == by_name["rerank"] and by_config["thresholds"] == by_name["thresholds"]
    assert by_config["reranker"] == by_name["reranker"] == {"name": "feature-logreg", "params": dict(config.params)}
    with pytest.raises(registry.ParamError, match="C"):
        registry.configure("feature-logreg", {"C": 1e5}, kind="reranker")
    from .conftest import stored_config

    older = stored_config("feature-logreg", "reranker", {**config.params, "C": 1e5})
    assert rerank(older)["reranker"]["params"]["C"] == 1e5


def test_a_stored_feature_model_reranks_by_name_and_knows_its_training_queries(tmp_path):
    from detection.methods.infrastructure import model_store

    an_texts = TEXTS
    cands = P.from_topk(["q0", "q1", "q2"], an_texts[:3], ["s0", "s1", "s2"], an_texts[2:],
                        np.array([[0, 1, 2]] * 3), np.array([[3.0, 2.0, 1.0]] * 3))
    labels = np.array([0, 1, 0, 0, 0, 2, 1, 0, 0])
    rr = registry.build("feature-logreg", {}).fit(cands, labels)
    rr.save(tmp_path / "toy")
    with model_store.using(tmp_path):
        back = registry.build("feature-logreg", {"model": "toy"})
        assert back.training_queries == {"q0", "q1", "q2"}
        assert np.allclose(back.predict_proba(cands), rr.predict_proba(cands))
        with pytest.raises(ValueError, match="not a feature-hgb"):
            registry.build("feature-hgb", {"model": "toy"})


def test_detect_reranks_with_a_stored_model_and_refuses_a_supervised_reranker_without_one(tmp_path):
    import csv

    from core.cli import CommandInputError
    from detection.commands import run_detect
    from detection.methods.infrastructure import model_store

    q, s = tmp_path / "q.csv", tmp_path / "s.csv"
    q.write_text("seg_id,text\n" + "".join(f"q{i},{t}\n" for i, t in enumerate(TEXTS[:3])), encoding="utf-8")
    s.write_text("seg_id,text\n" + "".join(f"s{i},{t}\n" for i, t in enumerate(TEXTS[2:])), encoding="utf-8")
    cands = P.from_topk(["q0", "q1", "q2"], TEXTS[:3], ["s0", "s1", "s2"], TEXTS[2:],
                        np.array([[0, 1, 2]] * 3), np.array([[3.0, 2.0, 1.0]] * 3))
    registry.build("feature-logreg", {}).fit(cands, np.array([0, 1, 0, 0, 0, 2, 1, 0, 0])).save(tmp_path / "m" / "toy")
    out = tmp_path / "out.csv"
    common = {"query": str(q), "source": str(s), "output": str(out), "method": "tfidf-surface", "top_k": 3,
              "cache_dir": tmp_path / "cache"}
    with model_store.using(tmp_path / "m"):
        summary = run_detect(**common, reranker="feature-logreg", reranker_params={"model": "toy"})
        rows = list(csv.DictReader(out.open(encoding="utf-8")))
        assert summary["reranker"] == "feature-logreg" and len(rows) == summary["rows"] > 0
        assert set(rows[0]) == {"query_id", "source_id", "rank", "score", "retrieval_rank", "retrieval_score",
                                "p_none", "p_cit", "p_cf", "label"}
        assert {r["label"] for r in rows} <= {"none", "cit.", "cf."}
        run_detect(**common, reranker="lexical-rule")
        with pytest.raises(CommandInputError, match="needs a trained model"):
            run_detect(**common, reranker="feature-hgb")
        with pytest.raises(CommandInputError, match="not a reranker"):
            run_detect(**common, reranker="bm25-lemma")
        with pytest.raises(CommandInputError, match="not in the models directory"):
            run_detect(**common, reranker="feature-hgb", reranker_params={"model": "absent"})
