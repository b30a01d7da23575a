"""SIF/uSIF segment vectors, soft cosine and idf-weighted MaxSim on hand-made vectors."""
import numpy as np
import pytest

from detection.methods.semantic.static_semantic import SegmentEncoder, TokenMatcher, idf_table

from .conftest import toy_vectors

VEC = {"arma": [1, 0, 0, 0], "telum": [0.9, 0.1, 0, 0], "mare": [0, 1, 0, 0], "pelagus": [0, 0.95, 0.1, 0],
       "deus": [0, 0, 1, 0], "et": [0.3, 0.3, 0.3, 0.8]}


def test_idf_is_bm25s():
    idf = idf_table([["a", "b"], ["a"], ["c"]])
    assert idf["a"] == pytest.approx(np.log(1 + (3 - 2 + 0.5) / 2.5))
    assert idf["c"] > idf["a"]


def test_maxsim_counts_best_match_of_each_query_word_weighted_by_idf():
    wv = toy_vectors(VEC)
    idf = {"arma": 2.0, "mare": 1.0}
    m = TokenMatcher(wv, idf, threshold=0.5)
    cos_tp = 0.9 / np.hypot(0.9, 0.1)
    cos_mp = 0.95 / np.hypot(0.95, 0.1)
    s = m.maxsim(["arma", "mare"], [["arma", "mare"], ["telum", "pelagus"], ["deus"], [], ["telum"]])
    np.testing.assert_allclose(s, [1.0, (2 * cos_tp + cos_mp) / 3, 0.0, 0.0, 2 * cos_tp / 3], rtol=1e-5)


def test_maxsim_identical_unknown_word_is_a_full_match():
    m = TokenMatcher(toy_vectors(VEC), {}, threshold=0.5)
    assert m.maxsim(["hapax"], [["hapax"], ["arma"]]).tolist() == [1.0, 0.0]


def test_soft_cosine_is_one_for_identical_bags_symmetric_and_sees_synonyms():
    m = TokenMatcher(toy_vectors(VEC), {"arma": 1.0, "mare": 1.0, "telum": 1.0, "pelagus": 1.0}, threshold=0.5)
    a, b = ["arma", "mare"], ["telum", "pelagus"]
    assert m.soft_cosine(a, [a])[0] == pytest.approx(1.0)
    ab, ba = m.soft_cosine(a, [b])[0], m.soft_cosine(b, [a])[0]
    assert ab == pytest.approx(ba) and 0.8 < ab < 1.0
    assert m.soft_cosine(a, [["deus"]])[0] == 0.0


@pytest.mark.parametrize("scheme", ["sif", "usif"])
def test_segment_vectors_are_unit_and_free_of_the_common_component(scheme):
    rng = np.random.default_rng(0)
    words = {f"w{i}": rng.normal(size=8).tolist() for i in range(40)}
    wv = toy_vectors(words, counts={f"w{i}": 1000 // (i + 1) for i in range(40)})
    docs = [[f"w{j}" for j in rng.choice(40, 6)] for _ in range(50)]
    enc = SegmentEncoder(wv, scheme).fit(docs)
    X = enc.encode(docs + [["unknown"]])
    np.testing.assert_allclose(np.linalg.norm(X[:-1], axis=1), 1.0, rtol=1e-5)
    assert not X[-1].any()
    assert enc.components.shape[0] == (1 if scheme == "sif" else 5)
    if scheme == "sif":  # projection on the removed component is zero
        np.testing.assert_allclose(X[:-1] @ enc.components[0], 0.0, atol=1e-5)


def test_sif_weights_down_frequent_words():
    wv = toy_vectors(VEC, counts={"et": 10_000, "arma": 5, "mare": 5, "telum": 5, "pelagus": 5, "deus": 5})
    enc = SegmentEncoder(wv, "sif", n_components=0).fit([["arma"]])
    v = enc.encode([["arma", "et"]])[0]
    assert v @ np.asarray(VEC["arma"]) > 0.99
