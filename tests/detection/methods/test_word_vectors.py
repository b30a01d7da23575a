"""Word vectors: training on a corpus folder/archive, storage without pickle, loading by registered name only."""
import json
import tarfile

import numpy as np
import pytest

from detection.methods.infrastructure import model_store
from detection.methods.semantic.word_vectors import (
    TrainConfig,
    VectorsError,
    corpus_lines,
    list_vector_models,
    load_gensim_file,
    load_vectors,
    read_corpus,
    resolve_corpus,
    train_and_save,
    units_of,
)

SMALL = dict(dim=16, epochs=2, min_count=1, workers=1, min_tokens=3)


def test_corpus_reading_drops_refs_navigation_and_short_lines(latin_corpus):
    lines = list(corpus_lines(latin_corpus))
    assert not any(ln.startswith("<misc.") for ln in lines)  # Tesserae refs stripped
    docs, stats = read_corpus(latin_corpus, "la", "surface")
    assert stats["lines"] == 61 and stats["tokens"] == sum(map(len, docs))  # 60 lines + the 3-word title
    assert all("library" not in d for d in docs)  # navigation line gone
    assert ["arma", "uirum", "que", "cano"] == docs[0][:4]  # engine tokens: u/i spelling, enclitic split


def test_train_save_load_roundtrip_word2vec(latin_corpus, models_dir):
    progress = []
    manifest = train_and_save(latin_corpus, "la-test", TrainConfig(**SMALL, dtype="float32"),
                              progress=lambda f, m: progress.append((f, m)))
    assert manifest["kind"] == "word-vectors" and manifest["unit"] == "lemma" and manifest["dim"] == 16
    assert [m for _, m in progress if m.startswith("epoch")] == ["epoch 1/2", "epoch 2/2"]
    folder = models_dir / "la-test"
    assert sorted(p.name for p in folder.iterdir()) == ["counts.npy", "manifest.json", "vectors.npy", "vocab.txt"]
    wv = load_vectors("la-test", language="la")
    assert isinstance(wv.vectors, np.memmap) and not wv.vectors.flags.writeable
    assert wv.dim == 16 and "cano" in wv.index and wv.vector("cano").dtype == np.float32
    assert wv.counts[wv.index["et"]] >= wv.counts[wv.index["cano"]]  # most frequent first
    assert list_vector_models() == ["la-test"]
    with pytest.raises(VectorsError, match="holds 'la' vectors, not 'grc'"):
        load_vectors("la-test", language="grc")
    with pytest.raises(VectorsError, match="already exists"):
        train_and_save(latin_corpus, "la-test", TrainConfig(**SMALL))


def test_float16_storage_keeps_neighbours(latin_corpus, models_dir):
    cfg = dict(SMALL, seed=3)
    train_and_save(latin_corpus, "f32", TrainConfig(**cfg, dtype="float32"))
    train_and_save(latin_corpus, "f16", TrainConfig(**cfg, dtype="float16"))
    a, b = load_vectors("f32"), load_vectors("f16")
    assert b.vectors.dtype == np.float16 and a.keys == b.keys
    size = {n: (models_dir / n / "vectors.npy").stat().st_size for n in ("f16", "f32")}
    assert size["f16"] < 0.6 * size["f32"]
    cos = np.sum(a.unit_vectors() * b.unit_vectors(), axis=1)
    assert cos.min() > 0.999


def test_fasttext_gives_vectors_to_unseen_words_like_gensim(latin_corpus, models_dir):
    from gensim.models import FastText

    cfg = TrainConfig(**SMALL, method="fasttext", unit="surface", bucket=2000, dtype="float32")
    train_and_save(latin_corpus, "ft", cfg)
    wv = load_vectors("ft")
    assert wv.ngrams is not None and "uirumquex" not in wv.index and "uirumquex" in wv
    docs, _ = read_corpus(latin_corpus, "la", "surface")
    ref = FastText(vector_size=16, window=5, min_count=1, sg=0, seed=42, workers=1, epochs=2, min_n=3, max_n=5,
                   bucket=2000)
    ref.build_vocab(docs)
    ref.train(docs, total_examples=ref.corpus_count, epochs=2)
    # same formula as gensim (mean of the hashed n-gram rows), applied to our stored rows
    from gensim.models.fasttext import ft_ngram_hashes

    rows = ft_ngram_hashes("uirumquex", 3, 5, 2000)
    np.testing.assert_allclose(wv.vector("uirumquex"), np.asarray(wv.ngrams)[rows].mean(axis=0), rtol=1e-6)
    assert ref.wv["uirumquex"].shape == wv.vector("uirumquex").shape


def test_archive_corpus_and_greek_lemma_units(tmp_path, models_dir):
    src = tmp_path / "grc"
    src.mkdir()
    verses = ["μῆνιν ἄειδε θεὰ Πηληϊάδεω Ἀχιλῆος", "οὐλομένην ἣ μυρί᾽ Ἀχαιοῖς ἄλγε᾽ ἔθηκε",
              "ἄνδρα μοι ἔννεπε μοῦσα πολύτροπον ὃς μάλα πολλὰ"] * 5
    (src / "hom.tess").write_text("\n".join(f"<hom. {i}>\t{v}" for i, v in enumerate(verses)), encoding="utf-8")
    archive = tmp_path / "grc.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        tar.add(src / "hom.tess", arcname="grc/hom.tess")
    manifest = train_and_save(archive, "grc-test", TrainConfig(**SMALL, language="grc", unit="lemma"))
    assert manifest["language"] == "grc" and manifest["corpus"]["lines"] == 15
    wv = load_vectors("grc-test", language="grc")
    assert units_of(["μῆνιν ἄειδε"], "grc", "lemma")[0][0] in wv.index


def test_loading_refuses_paths_unknown_names_and_other_kinds(models_dir):
    with pytest.raises(ValueError, match="not a path"):
        load_vectors("../etc/passwd")
    with pytest.raises(model_store.ModelUnavailable, match="'nope' is not in the models directory"):
        load_vectors("nope")
    (models_dir / "bert").mkdir()
    (models_dir / "bert" / "config.json").write_text("{}")
    with pytest.raises(VectorsError, match="no manifest.json: it is not a word-vector model"):
        load_vectors("bert")
    (models_dir / "other").mkdir()
    (models_dir / "other" / "manifest.json").write_text(json.dumps({"kind": "reranker"}))
    with pytest.raises(VectorsError, match="is a 'reranker' model"):
        load_vectors("other")


def test_gensim_files_load_whether_keyedvectors_or_full_word2vec(tmp_path):
    from gensim.models import Word2Vec

    docs = [["arma", "uirum", "cano"], ["arma", "bellum", "cano"]] * 10
    model = Word2Vec(docs, vector_size=8, min_count=1, epochs=1, seed=1, workers=1)
    model.save(str(tmp_path / "full.model"))
    model.wv.save(str(tmp_path / "kv.kv"))
    for f in ("full.model", "kv.kv"):
        wv = load_gensim_file(tmp_path / f)
        np.testing.assert_array_equal(wv.vector("arma"), model.wv["arma"])


def test_registered_corpus_names_only(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMILIA_CORPORA_DIR", str(tmp_path / "corpora"))
    (tmp_path / "corpora" / "mine").mkdir(parents=True)
    assert resolve_corpus("mine") == tmp_path / "corpora" / "mine"
    for bad in ("/etc", "../x", "a/b"):
        with pytest.raises(VectorsError, match="registered corpus name"):
            resolve_corpus(bad)
    with pytest.raises(VectorsError, match="no corpus named 'other'.*registered: mine"):
        resolve_corpus("other")


@pytest.mark.parametrize("kw, message", [({"unit": "stem"}, "unit must be one of"), ({"dim": 0}, "dim must be"),
                                         ({"method": "glove"}, "method must be"), ({"min_n": 6}, "min_n")])
def test_bad_training_options_are_refused(kw, message):
    with pytest.raises(VectorsError, match=message):
        TrainConfig(**kw)
