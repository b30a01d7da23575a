"""w2v-bigram after Burns et al. 2021: a query's bigrams matched to each source's best bigram."""
import numpy as np

from detection.methods import get_retriever
from detection.methods.semantic.w2v_bigram import W2VBigramRetriever

from .conftest import toy_vectors

VEC = {"gladius": [1, 0, 0], "ensis": [0.97, 0.2, 0], "mare": [0, 1, 0], "pelagus": [0, 0.98, 0.15],
       "rex": [0, 0, 1], "urbs": [0.6, 0, 0.8], "magnus": [0.3, 0.3, 0.3]}


def _r(match="bigram"):
    return W2VBigramRetriever(word_vectors=toy_vectors(VEC, manifest={"unit": "surface"}), match=match)


def test_one_matching_phrase_in_a_long_line_is_found():
    sources = ["rex urbs magnus rex urbs magnus ensis pelagus rex urbs", "gladius rex", "mare urbs"]
    top = _r().fit(["long", "g", "m"], sources).search(["gladius mare"], 3)
    assert top.ids(0)[0] == "long"
    expected = (max(VEC["ensis"][0] / np.linalg.norm(VEC["ensis"]) + 0.98 / np.linalg.norm(VEC["pelagus"]), 0) / 2)
    assert abs(top.scores[0, 0] - expected) < 1e-5


def test_bigram_similarity_ignores_word_order_and_identical_words_match_without_vectors():
    r = _r().fit(["a", "b"], ["pelagus ensis", "hapax rex"])
    assert r.search(["gladius mare"], 1).ids(0) == ["a"]
    assert r.search(["hapax rex"], 1).scores[0, 0 ] == 1.0


def test_lines_variant_kept_for_comparison():
    top = _r("lines").fit(["a", "b"], ["gladius mare", "rex urbs"]).search(["gladius mare"], 2)
    assert top.ids(0)[0] == "a" and abs(top.scores[0, 0] - 1.0) < 1e-5


def test_full_word2vec_file_loads_as_model(tmp_path):
    from gensim.models import Word2Vec

    docs = [["gladius", "rex", "urbs"], ["mare", "urbs", "rex"]] * 20
    Word2Vec(docs, vector_size=8, min_count=1, epochs=2, seed=1, workers=1).save(str(tmp_path / "w2v.model"))
    r = get_retriever("w2v-bigram", model_path=str(tmp_path / "w2v.model"))
    top = r.fit(["a", "b"], ["gladius rex urbs", "mare pelagus"]).search(["gladius rex"], 2)
    assert top.ids(0)[0] == "a"
