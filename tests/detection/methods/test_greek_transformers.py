"""Tiny offline BERT / sentence-transformer models run end to end through the registry."""
import numpy as np
import pytest

from benchmarks.greek_sts.evaluate import evaluate_method
from benchmarks.greek_sts.gold_files import read_sts_gold
from detection.methods import ParamError
from detection.methods.greek.greek_registry import get_method
from detection.methods.greek.greek_similarity import ModelUnavailable
from detection.methods.infrastructure import model_store


@pytest.fixture(scope="module")
def small_gold(sts_file):
    pairs = read_sts_gold(sts_file)
    by_ref = {}
    for p in pairs:
        by_ref.setdefault(p.reference_id, []).append(p)
    return [p for ps in by_ref.values() for p in ps[:8]]


@pytest.mark.parametrize("name, fixture", [("contextual", "tiny_bert_dir"),
                                           ("sentence_transformer", "tiny_sentence_transformer_dir")])
def test_transformer_methods_end_to_end(name, fixture, request, small_gold):
    model_dir = request.getfixturevalue(fixture)
    with model_store.using(model_dir.parent):  # a model is a name in the models directory, never a path
        method = get_method(name, model=model_dir.name, batch_size=8)
        S = method.similarity_matrix(["α"], ["α"])
    texts = [small_gold[0].reference_text, small_gold[1].candidate_text, small_gold[2].candidate_text]
    S = method.similarity_matrix(texts, texts)
    assert S.dtype == np.float32 and S.shape == (3, 3)
    assert np.allclose(np.diag(S), 1.0, atol=1e-4)
    assert np.allclose(S, S.T, atol=1e-5)
    pairs = method.pair_scores(texts, texts[::-1])
    assert np.allclose(pairs, S[[0, 1, 2], [2, 1, 0]], atol=1e-5)
    report = evaluate_method(small_gold, method)
    assert report["n_pairs"] == len(small_gold)
    assert set(report["per_reference"]) == {"16977 1", "17148 1", "16977 2"}
    assert report["directionality"]["reproduces_directionality"] is False


def test_missing_model_gives_clear_error(tmp_path):
    method = get_method("sentence_transformer", model="no-such-org/no-such-greek-model")
    with pytest.raises(ModelUnavailable, match="no-such-org/no-such-greek-model.*local"):
        method.similarity_matrix(["α"], ["β"])
    with pytest.raises(ModelUnavailable, match="model="):
        get_method("contextual").similarity_matrix(["α"], ["β"])
    with model_store.using(tmp_path), pytest.raises(ModelUnavailable, match="'missing' is not in the models dir"):
        get_method("contextual", model="missing").similarity_matrix(["α"], ["β"])


@pytest.mark.parametrize("bad", ["/etc/passwd", "../secret", "~/model", "a/b/c", "./x", "x\x00", "C:\\model"])
def test_model_paths_from_users_are_refused(bad):
    with pytest.raises(ParamError, match="parameter .model.: (model must be .* not a path|must not contain control)"):
        get_method("sentence_transformer", model=bad)
