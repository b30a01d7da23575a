"""Hybrid retrieval: fusion arithmetic, semantic rescoring of a lexical top-k, weight tuned on training data only,
and the registry entries built from a model trained by the test."""
import numpy as np
import pytest

from benchmarks.loci.data import GoldLink
from benchmarks.loci.method_adapters import EngineRetrieverMethod, TrainData
from detection.methods import ParamError, registry
from detection.methods.semantic.hybrid import HybridRetriever, StaticDenseRetriever, fuse, normalise
from detection.methods.semantic.word_vectors import TrainConfig, train_and_save

from .conftest import LATIN_LINES, toy_vectors

VEC = {"gladius": [1, 0, 0], "ensis": [0.97, 0.2, 0], "mare": [0, 1, 0], "pelagus": [0, 0.98, 0.15],
       "rex": [0, 0, 1], "urbs": [0.5, 0, 0.8], "magnus": [0.1, 0.1, 0.1]}
SOURCES = ["gladius rex urbs", "ensis pelagus magnus", "rex magnus urbs", "mare urbs rex"]
IDS = ["s0", "s1", "s2", "s3"]


def _hybrid(**kw):
    return HybridRetriever(vectors=toy_vectors(VEC, manifest={"unit": "surface"}),
                           lexical=registry.build("bm25-surface"), **kw).fit(IDS, SOURCES)


def test_normalise_and_fuse():
    np.testing.assert_allclose(normalise(np.array([2.0, 4.0, 3.0]), "minmax"), [0, 1, 0.5])
    assert normalise(np.array([5.0, 5.0]), "minmax").tolist() == [0, 0]
    lex, sem = np.array([3.0, 1.0, np.nan]), np.array([0.0, 1.0, 0.5])
    np.testing.assert_allclose(fuse(lex, sem, 0.0), [1, 0, 0])  # missing lexical score = the list's minimum
    np.testing.assert_allclose(fuse(lex, sem, 1.0), [0, 1, 0.5])
    np.testing.assert_allclose(fuse(lex, sem, 0.5, "rrf"), [0.5 / 61 + 0.5 / 63, 0.5 / 62 + 0.5 / 61,
                                                            0.5 / 63 + 0.5 / 62])


def test_semantic_signal_lifts_the_paraphrase_over_a_lexical_tie():
    # "gladius mare" shares one word with s0 and s3 each; s1 says the same with synonyms and no shared word
    lexical_only = _hybrid(weight=0.0).search(["gladius mare"], 4)
    assert set(lexical_only.ids(0)) == {"s0", "s3"}  # BM25 candidates only
    union = _hybrid(weight=0.7, semantic="sif", candidates="union").search(["gladius mare"], 4)
    assert union.ids(0)[0] == "s1"
    maxsim = _hybrid(weight=0.5, depth=4)
    assert maxsim.search(["gladius mare urbs"], 2).ids(0)[0] in ("s0", "s3")


def test_weight_is_tuned_on_the_given_training_queries_only():
    r = _hybrid(semantic="sif", candidates="union")
    assert r.effective_weight() == 0.5  # the declared default without training data
    tuned = r.tune(["gladius mare"], [[1]], ks=(1,))  # the paraphrase is the relevant source
    assert tuned["tuned"] and tuned["weight"] > 0.0 and tuned["grid"]["0.0"] == 0.0
    assert r.search(["gladius mare"], 1).ids(0) == ["s1"]
    fixed = _hybrid(semantic="sif", candidates="union", weight=0.2)
    assert fixed.tune(["gladius mare"], [[1]]) == {"weight": 0.2, "tuned": False}


def test_benchmark_adapter_tunes_per_fold_on_training_links(models_dir, latin_corpus):
    train_and_save(latin_corpus, "la-tiny", TrainConfig(dim=16, epochs=2, min_count=1, workers=1))
    m = EngineRetrieverMethod("hybrid", model="la-tiny", depth=5)
    assert m.supervised
    src = LATIN_LINES[:10]
    ids = [f"s{i}" for i in range(10)]
    train = TrainData(["q0"], ["arma cano troiae oris"], ["s0"], [src[0]], [GoldLink("q0", "s0", "cit.")])
    m.fit(ids, src, train=train)
    assert m.tunings[0]["n_queries"] == 1 and m.describe()["tuning_per_fold"]
    idx, _ = m.search(["q1"], ["gallia omnis diuisa partes"], 3)
    assert idx[0, 0] == 5


def test_registry_entries_validate_and_build(models_dir, latin_corpus):
    train_and_save(latin_corpus, "la-tiny", TrainConfig(dim=16, epochs=2, min_count=1, workers=1))
    spec = registry.get_spec("hybrid")
    assert spec.supervised and spec.queue == "cpu" and spec.validate({})["weight"] is None
    with pytest.raises(ParamError, match="not a path"):
        registry.validate("hybrid", {"model": "/var/models/x"})
    with pytest.raises(ParamError, match="must be ≤ 1.0"):
        registry.validate("hybrid", {"weight": 2})
    r = registry.build("static-dense", {"model": "la-tiny", "scheme": "usif"})
    assert isinstance(r, StaticDenseRetriever)
    top = r.fit([f"s{i}" for i in range(10)], LATIN_LINES[:10]).search([LATIN_LINES[7]], 3)
    assert top.ids(0)[0] == "s7"
    with pytest.raises(ValueError, match="union.*needs a dense semantic score"):
        registry.build("hybrid", {"model": "la-tiny", "candidates": "union", "semantic": "maxsim"})
