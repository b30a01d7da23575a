"""Greek preprocessing, the lemmatiser, and the registry's cheap methods."""
import numpy as np
import pytest

from detection.greek.lemmatize import GreekLemmatizer, measure_lemmatizer
from detection.greek.preprocess import GreekPreprocessor
from detection.methods.greek.greek_registry import available, get_method, method_specs


def test_paper_preprocessing_keeps_diacritics():
    p = GreekPreprocessor.paper()
    assert p.tokenize("+ Αἶνος θ(ε)ῶ χάρις τε καὶ δόξα πρέπει·") == ["αἶνος", "θεῶ", "χάρις", "τε", "καὶ", "δόξα", "πρέπει"]


def test_editorial_marks_and_options():
    s = "ὸ πρῶ|τον (...) [.]φαρξ στρ<α>τευ [ἰδεῖν] τέλος:- θ(ε)ῶ"
    assert GreekPreprocessor().tokenize(s) == ["ὸ", "πρῶτον", "φαρξ", "στρατευ", "ἰδεῖν", "τέλος", "θεῶ"]
    assert GreekPreprocessor(editorial="drop").tokenize("θ(ε)ῶ") == ["θῶ"]
    assert GreekPreprocessor(normalise_grave=True).tokenize("καὶ τὸ") == ["καί", "τό"]
    assert GreekPreprocessor(strip_diacritics=True).tokenize("Ἰωάννης ῥῆμα ᾠδῇ") == ["ιωαννης", "ρημα", "ωδη"]
    assert GreekPreprocessor(final_sigma=True).tokenize("λογοσ ςοφος") == ["λογος", "σοφος"]
    assert GreekPreprocessor(lowercase=False).tokenize("ΘΕΟΣ") == ["ΘΕΟΣ"]
    with pytest.raises(ValueError):
        GreekPreprocessor(editorial="x")


def test_lemmatiser_rules():
    lem = GreekLemmatizer("rules")
    assert lem("δ᾽") == "δέ" and lem("παρ’") == "παρά"
    assert lem("τῶι") == lem("τῷ")
    assert GreekLemmatizer("simplemma")("λιμένα") == "λιμήν"


def test_lemmatiser_measured_on_gold(lemma_file):
    base = measure_lemmatizer(lemma_file, "simplemma")
    rules = measure_lemmatizer(lemma_file, "rules")
    assert base["n_tokens"] > 8000
    assert 0.6 < base["accuracy"] < rules["accuracy"] < 1.0


def test_registry_lists_and_rejects():
    names = available()
    for n in ["levenshtein", "char_ngram", "word2vec_sg", "word2vec_cbow", "word2vec_sg_lemma", "fasttext",
              "semantic_edit", "contextual", "sentence_transformer"]:
        assert n in names
    assert {s["name"] for s in method_specs()} == set(names)
    with pytest.raises(KeyError, match="unknown method"):
        get_method("nope")


@pytest.mark.parametrize("name", ["levenshtein", "char_ngram", "word2vec_sg", "word2vec_cbow_lemma", "fasttext"])
def test_cheap_methods_contract(name, greek_verses):
    params = {} if name in ("levenshtein", "char_ngram") else {"epochs": 2, "vector_size": 16}
    m = get_method(name, **params).fit(greek_verses)
    a, b = greek_verses[:7], greek_verses[3:12]
    S = m.similarity_matrix(a, b)
    assert S.dtype == np.float32 and S.shape == (7, 9)
    P = m.pair_scores(a, b[:7])
    assert np.allclose(P, S[np.arange(7), np.arange(7)], atol=1e-5)
    assert S[3, 0] == pytest.approx(1.0, abs=1e-5)  # a[3] is b[0]


def test_levenshtein_hand_case():
    m = get_method("levenshtein")
    assert m.pair_scores(["καλός"], ["καλῶς"])[0] == pytest.approx(0.8)  # one substitution in 5 characters


def test_word2vec_is_deterministic(greek_verses):
    a = get_method("word2vec_sg", epochs=2, vector_size=16).fit(greek_verses)
    b = get_method("word2vec_sg", epochs=2, vector_size=16).fit(greek_verses)
    assert np.array_equal(a.embed(greek_verses[:5]), b.embed(greek_verses[:5]))
