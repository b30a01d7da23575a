"""The learning-to-rank reranker on real Loci Similes candidates: trained on four folds, stored as JSON and loaded
back through the registry, scoring the fifth; its 3-class output and its leave-one-out model card."""
import json

import numpy as np
import pytest

from benchmarks.suite import measures as MS
from benchmarks.suite import suite as S
from core.paths import shared_data_dir
from detection.methods import model_store, registry
from detection.methods.rerank.ltr import PairwiseLinearRanker, pairwise_differences

needs_data = pytest.mark.skipif(not (shared_data_dir() / "lucan_vergil" / "all_lucan.txt").is_file(),
                                reason="shared data folder not here")


@pytest.fixture(scope="module")
def loci():
    return S.loci_benchmark()


def test_pairwise_differences_weigh_each_query_the_same():
    X = np.arange(12, dtype=float).reshape(6, 2)
    rel = np.array([1, 0, 0, 1, 1, 0], bool)
    groups = np.array([0, 0, 0, 1, 1, 1])
    D, w = pairwise_differences(X, rel, groups, np.array([1, 2, 3, 1, 2, 3]), max_negatives=5, seed=0)
    assert D.shape == (4, 2)  # query 0: 1 pos x 2 neg; query 1: 2 pos x 1 neg
    assert np.allclose(D[0], X[0] - X[1]) and np.allclose(D[2], X[3] - X[5])
    assert np.isclose(w[:2].sum(), 1.0) and np.isclose(w[2:].sum(), 1.0)


@needs_data
def test_trained_stored_loaded_and_used_like_any_reranker(loci, tmp_path):
    cache = {}
    cands = S.candidates(loci, "bm25-lemma", 50, cache)
    y = S.labels_of(loci, cands)
    held = {q for q in loci.query_ids if loci.folds[q] == 0}
    tr = S._rows_of(cands, set(loci.query_ids) - held)
    te = S._rows_of(cands, held)
    rr = registry.build("feature-ltr", {}).prepare(loci.source_texts)
    rr.fit(cands.subset(tr), y[tr])
    assert not (rr.training_queries & held)
    probs = rr.predict_proba(cands.subset(te))
    assert probs.shape == (len(te), 3) and np.allclose(probs.sum(axis=1), 1.0) and (probs >= 0).all()
    # P(reference) orders a query's candidates exactly as the ranking score does
    score = rr.clf.score(rr.features(cands.subset(te)))
    assert np.array_equal(np.argsort(-score, kind="stable"), np.argsort(probs[:, 0], kind="stable"))
    # it ranks the held-out fold better than the first stage (measured: see docs/benchmark_suite.md)
    rer = S._reranked(cands.subset(te), probs)
    first = {q: [s for s, _ in v] for q, v in S._as_ranked(loci, *S.retrieve(loci, "bm25-lemma", 50, cache)).items()
             if q in held}
    g = {q: loci.gold[q] for q in held}
    mrr_first = MS.mean(MS.per_query(first, g, ["RR@10"])["RR@10"])
    mrr_ltr = MS.mean(MS.per_query({q: [s for s, _ in v] for q, v in rer.items()}, g, ["RR@10"])["RR@10"])
    assert mrr_ltr > mrr_first
    # stored as JSON only, then loaded by name through the registry like today's rerankers
    files = rr.save(tmp_path / "ltr-test")
    assert sorted(files) == ["classifier.json", "featurizer.json", "reranker.json"]
    meta = json.loads((tmp_path / "ltr-test" / "classifier.json").read_text())
    assert meta["kind"] == "feature-ltr" and len(meta["w"]) == len(rr.featurizer.feature_names)
    with model_store.using(tmp_path):
        loaded = registry.build("feature-ltr", {"model": "ltr-test"})
    assert np.allclose(loaded.predict_proba(cands.subset(te)), probs, atol=1e-12)
    assert loaded.thresholds == rr.thresholds and loaded.training_queries == rr.training_queries


def test_a_corrupt_ranker_file_is_refused(tmp_path):
    (tmp_path / "classifier.json").write_text(json.dumps({"kind": "feature-ltr", "C": 1, "max_negatives": 5,
                                                          "mean": [0, 0], "scale": [1, 1], "w": [1],
                                                          "platt": [1, 0], "cf_prior": 0.1, "type_w": None,
                                                          "type_b": None}))
    with pytest.raises(ValueError, match="weight shapes do not match"):
        PairwiseLinearRanker.load(tmp_path)


@needs_data
def test_leave_one_benchmark_out_card_and_leak_count(loci):
    lucan = S.lucan_benchmark()
    small = S.SuiteBenchmark(loci.name, loci.query_ids[:60], loci.query_texts[:60], loci.source_ids,
                             loci.source_texts, {q: loci.gold[q] for q in loci.query_ids[:60]},
                             {q: loci.folds[q] for q in loci.query_ids[:60]}, loci.pool)
    res = S.rerank_transfer(lucan, [small], "bm25-lemma", "feature-ltr", 20, {})
    card = res.training
    assert card["mode"] == "leave-one-benchmark-out" and card["held_out"] == "lucan-vergil"
    assert card["trained_on"][0]["benchmark"] == "loci-similes" and card["trained_on"][0]["queries"] == 60
    assert card["leaked_queries"] == 0 and card["first_stage"] == "bm25-lemma"
    assert set(res.ranked) == set(lucan.query_ids)
