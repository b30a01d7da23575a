"""Semantically informed edit distance on constructed examples, and the vectorised DP against a plain DP."""
import numpy as np
import pytest

from detection.methods.greek.greek_registry import get_method
from detection.methods.greek.greek_similarity import SemanticEditDistance, edit_distance_dp


def _plain_dp(cost, la, lb):
    D = np.zeros((la + 1, lb + 1))
    D[:, 0] = np.arange(la + 1)
    D[0, :] = np.arange(lb + 1)
    for i in range(1, la + 1):
        for j in range(1, lb + 1):
            D[i, j] = min(D[i - 1, j] + 1, D[i, j - 1] + 1, D[i - 1, j - 1] + cost[i - 1, j - 1])
    return D[la, lb]


def test_vectorised_dp_matches_plain_dp():
    rng = np.random.default_rng(0)
    P, L = 200, 7
    cost = rng.random((P, L, L)).astype(np.float32)
    la = rng.integers(0, L + 1, P)
    lb = rng.integers(0, L + 1, P)
    got = edit_distance_dp(cost, la, lb)
    want = np.array([_plain_dp(cost[p], la[p], lb[p]) for p in range(P)])
    assert np.allclose(got, want, atol=1e-5)


# unit vectors: θεός/κύριος are "synonyms" (cos 0.9); βίβλος is unrelated to both (cos 0)
VECS = {
    "δόξα": np.array([1.0, 0.0, 0.0, 0.0]),
    "θεῷ": np.array([0.0, 1.0, 0.0, 0.0]),
    "κυρίῳ": np.array([0.0, 0.9, np.sqrt(1 - 0.81), 0.0]),
    "βίβλῳ": np.array([0.0, 0.0, 0.0, 1.0]),
    "καί": np.array([0.5, 0.5, 0.5, 0.5]),
}


@pytest.fixture
def sed():
    return SemanticEditDistance(vectors=VECS)


def test_identical_verses_score_one(sed):
    a = ["δόξα θεῷ καί", "+ Δόξα θ(ε)ῷ·", "βίβλῳ"]
    assert np.allclose(sed.pair_scores(a, a), 1.0)
    assert np.allclose(np.diag(sed.similarity_matrix(a, a)), 1.0)


def test_synonym_substitution_costs_less_than_unrelated(sed):
    ref = ["δόξα θεῷ καί"]
    syn, unrelated = sed.pair_scores(ref * 2, ["δόξα κυρίῳ καί", "δόξα βίβλῳ καί"])
    assert syn == pytest.approx(1 - 0.1 / 3, abs=1e-5)       # cost 1 − 0.9 = 0.1 over 3 words
    assert unrelated == pytest.approx(1 - 1 / 3, abs=1e-5)   # cost 1 − 0 = 1
    assert syn > unrelated


def test_insertion_and_normalisation_modes():
    sym = SemanticEditDistance(vectors=VECS)
    ref = SemanticEditDistance(vectors=VECS, normalise="reference")
    a, b = ["δόξα θεῷ"], ["δόξα θεῷ καί"]
    assert sym.pair_scores(a, b)[0] == pytest.approx(1 - 1 / 3)
    assert ref.pair_scores(a, b)[0] == pytest.approx(0.5)        # 1 − 1/len(reference = 2)
    assert ref.pair_scores(b, a)[0] == pytest.approx(1 - 1 / 3)  # A→B ≠ B→A
    assert not ref.symmetric and sym.symmetric
    # unknown words: identical → 0 cost, different → cost 1; empty verses
    assert sym.pair_scores(["ἄγνωστον"], ["ἄγνωστον"])[0] == 1.0
    assert sym.pair_scores(["ἄγνωστον"], ["ἄλλο"])[0] == 0.0
    assert sym.pair_scores(["+"], ["·"])[0] == 1.0 and sym.pair_scores(["+"], ["δόξα"])[0] == 0.0


def test_matrix_equals_pairs_with_blocking():
    texts = ["δόξα θεῷ καί", "δόξα κυρίῳ", "βίβλῳ καί δόξα θεῷ καί κυρίῳ", "καί", "θεῷ δόξα", ""]
    small_blocks = SemanticEditDistance(vectors=VECS, max_block_cells=10)
    S = small_blocks.similarity_matrix(texts, texts[:4])
    ii, jj = np.meshgrid(range(len(texts)), range(4), indexing="ij")
    P = small_blocks.pair_scores([texts[i] for i in ii.ravel()], [texts[j] for j in jj.ravel()])
    assert S.dtype == np.float32 and S.shape == (6, 4)
    assert np.allclose(S.ravel(), P, atol=1e-6)
    assert np.allclose(S, SemanticEditDistance(vectors=VECS).similarity_matrix(texts, texts[:4]), atol=1e-6)


def test_trained_semantic_edit_through_registry(greek_verses):
    m = get_method("semantic_edit", epochs=2, vector_size=16).fit(greek_verses)
    S = m.similarity_matrix(greek_verses[:20], greek_verses[:20])
    assert np.allclose(np.diag(S), 1.0) and (S >= 0).all() and (S <= 1).all()
    assert np.allclose(S, S.T, atol=1e-6)
