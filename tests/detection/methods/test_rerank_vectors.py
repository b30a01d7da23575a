"""The feature rerankers with the first stage's embedding signal: ``vectors`` names a registered word-vector model,
the featurizer adds the SIF cosine, and a stored model keeps (and reuses) its vectors."""
import numpy as np
import pytest

from benchmarks.loci import data
from detection.methods import registry
from detection.methods.rerank import pipeline as P
from detection.methods.rerank.features import BASE_FEATURES, EMBEDDING_FEATURE
from detection.methods.semantic.word_vectors import TrainConfig, train_from_texts


@pytest.fixture(scope="module")
def bench():
    return data.load_default_545()


@pytest.fixture
def vectors(models_dir, bench):
    """A tiny lemma word2vec model (dim 16) trained here on the benchmark's texts and registered as ``la-tiny``."""
    texts = [s.text for s in bench.queries + bench.sources]
    train_from_texts(texts, "la-tiny", TrainConfig(dim=16, epochs=2, min_count=1, workers=1, dtype="float32"),
                     models_dir=models_dir)
    return "la-tiny"


def _candidates(bench, n_queries=60, k=8):
    q = bench.queries[:n_queries]
    gold_src = list(dict.fromkeys(g.source_id for g in bench.gold if g.query_id in {s.seg_id for s in q}))
    pool = [s for s in bench.sources if s.seg_id in set(gold_src)][:120]
    r = registry.build("bm25-lemma", {})
    return P.retrieve(r, [s.seg_id for s in q], [s.text for s in q], [s.seg_id for s in pool],
                      [s.text for s in pool], k)


@pytest.mark.parametrize("method", ["feature-logreg", "feature-hgb"])
def test_vectors_add_the_sif_cosine_and_a_stored_model_predicts_with_the_same_vectors(models_dir, vectors, bench,
                                                                                     method, tmp_path):
    from benchmarks.loci.rerank_eval import gold_classes

    cands = _candidates(bench)
    y = cands.labels(gold_classes(bench))
    assert (y > 0).sum() >= 10
    params = {"vectors": vectors} if method == "feature-logreg" else {"vectors": vectors, "max_iter": 20}
    rr = registry.build(method, params).prepare(cands.source_texts)
    X = rr.features(cands)
    names = rr.featurizer.feature_names
    assert names == list(BASE_FEATURES) + [EMBEDDING_FEATURE] and X.shape == (len(cands), len(names))
    cos = X[:, -1]
    assert np.all(np.abs(cos) <= 1 + 1e-5) and cos.std() > 0  # a real cosine, not a constant column
    # the same pair scored twice gets the same cosine; an identical query/source text scores ~1
    same = P.from_topk(["x"], [cands.source_texts[0]], cands.source_ids, cands.source_texts, np.array([[0]]),
                       np.array([[1.0]]))
    assert rr.features(same)[0, -1] == pytest.approx(1.0, abs=1e-4)
    rr.fit(cands, y, X=X)
    probs = rr.predict_proba(cands, X=X)
    rr.save(models_dir / "fr")
    back = registry.build(method, {"model": "fr"})
    assert back.vectors == vectors and back.featurizer.feature_names[-1] == EMBEDDING_FEATURE
    assert np.allclose(back.features(cands), X, atol=1e-5)
    assert np.allclose(back.predict_proba(cands), probs, atol=1e-6)
    # without vectors the column is absent
    plain = registry.build(method, {}).prepare(cands.source_texts)
    assert EMBEDDING_FEATURE not in plain.featurizer.feature_names
    from detection.methods.rerank.rerankers import FeatureReranker, RerankerError

    with pytest.raises(RerankerError, match="trained with vectors='la-tiny', not 'la-other'"):
        FeatureReranker(classifier=method, model="fr", vectors="la-other")


def test_vectors_are_validated_against_the_registered_word_vector_models(models_dir, vectors):
    assert registry.validate("feature-hgb", {"vectors": vectors})["vectors"] == vectors
    assert registry.validate("feature-logreg", {})["vectors"] is None
    with pytest.raises(registry.ParamError, match="no word-vector model 'nope'.*registered: la-tiny"):
        registry.validate("feature-logreg", {"vectors": "nope"})
    with pytest.raises(registry.ParamError, match="not a path"):
        registry.validate("feature-logreg", {"vectors": "../la-tiny"})
    (models_dir / "enc").mkdir()
    (models_dir / "enc" / "manifest.json").write_text('{"kind": "bi-encoder"}')
    with pytest.raises(registry.ParamError, match="not 'word-vectors'"):
        registry.validate("feature-hgb", {"vectors": "enc"})
