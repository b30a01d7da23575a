"""Transformer encoders as retrievers, on a tiny 2-layer BERT the tests build (WordPiece trained on Latin lines)."""
import shutil

import numpy as np
import pytest

from detection.methods import registry
from detection.methods.infrastructure import model_store
from detection.methods.semantic.encoders import BiEncoderRetriever, EncoderError, TokenMaxSimRetriever, run_batches
from detection.methods.semantic.word_vectors import TrainConfig, train_and_save
from tests.tiny_models import build_tiny_bert, build_tiny_sentence_transformer

from .conftest import LATIN_LINES

SOURCES = LATIN_LINES[:10]
IDS = [f"s{i}" for i in range(10)]


@pytest.fixture(scope="module")
def tiny_dirs(tmp_path_factory):
    import torch

    torch.set_num_threads(1)
    bert = build_tiny_bert(tmp_path_factory.mktemp("la_bert"), LATIN_LINES[:10], vocab_size=300)
    st = build_tiny_sentence_transformer(tmp_path_factory.mktemp("la_st"), bert)
    return bert, st


@pytest.fixture
def encoders_dir(models_dir, tiny_dirs):
    shutil.copytree(tiny_dirs[0], models_dir / "tiny-la-bert")
    shutil.copytree(tiny_dirs[1], models_dir / "tiny-la-st")
    return models_dir


def test_bi_encoder_by_name_finds_the_identical_segment_and_caches_sources(encoders_dir, tmp_path):
    r = registry.build("dense-encoder", {"model": "tiny-la-st", "device": "cpu", "query_prefix": "query: ",
                                         "passage_prefix": "passage: "}, cache_dir=tmp_path / "cache")
    assert isinstance(r, BiEncoderRetriever) and registry.get_spec("dense-encoder").queue == "gpu"
    r.fit(IDS, SOURCES)
    cached = list((tmp_path / "cache" / "embeddings").glob("*.npy"))
    assert len(cached) == 1
    np.testing.assert_allclose(np.load(cached[0]), r.S)
    top = r.search([SOURCES[3]], 3)
    assert top.ids(0)[0] == "s3" and r.describe()["device"] == "cpu" and r.describe()["versions"]["torch"]
    again = registry.build("dense-encoder", {"model": "tiny-la-st", "device": "cpu", "passage_prefix": "passage: "},
                           cache_dir=tmp_path / "cache")
    again.fit(IDS, SOURCES)
    assert again._model is None  # sources came from the cache: the model was never loaded


@pytest.mark.parametrize("aggregate", ["maxsim", "mean"])
def test_token_level_and_late_interaction(encoders_dir, aggregate):
    r = registry.build("token-maxsim", {"model": "tiny-la-bert", "device": "cpu", "aggregate": aggregate,
                                        "depth": 5, "batch_size": 3})
    r.fit(IDS, SOURCES)
    assert r.offsets[-1] == len(r.flat) and r.flat.dtype == np.float16
    top = r.search([SOURCES[6], SOURCES[2]], 4)
    assert top.ids(0)[0] == "s6" and top.ids(1)[0] == "s2"
    if aggregate == "maxsim":
        assert top.scores[0, 0] == pytest.approx(1.0, abs=2e-3)  # every query token finds itself


def test_missing_model_fails_at_once_naming_it(models_dir):
    r = TokenMaxSimRetriever(model="nonexistent-latin-bert", device="cpu")
    with pytest.raises(model_store.ModelUnavailable, match="'nonexistent-latin-bert' is not in the models directory"):
        r.fit(IDS, SOURCES)


def test_word_vectors_are_not_an_encoder(models_dir, latin_corpus):
    train_and_save(latin_corpus, "la-wv", TrainConfig(dim=8, epochs=1, min_count=1, workers=1))
    with pytest.raises(EncoderError, match="holds word vectors, not a transformer encoder"):
        BiEncoderRetriever(model="la-wv", device="cpu").fit(IDS, SOURCES)


def test_tokenizer_that_does_not_fit_the_model_is_refused(encoders_dir, tiny_dirs, tmp_path):
    from transformers import AutoTokenizer

    mixed = encoders_dir / "mixed"
    shutil.copytree(tiny_dirs[0], mixed)
    tok = AutoTokenizer.from_pretrained(str(mixed))
    tok.add_tokens([f"extra{i}" for i in range(50)])
    tok.save_pretrained(str(mixed))
    with pytest.raises(EncoderError, match="do not belong together"):
        TokenMaxSimRetriever(model="mixed", device="cpu").fit(IDS, SOURCES)


def test_out_of_memory_halves_the_batch_and_retries():
    calls = []

    def fn(batch):
        calls.append(len(batch))
        if len(batch) > 2:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return [x * 2 for x in batch]

    assert run_batches(fn, list(range(7)), 8) == [x * 2 for x in range(7)]
    assert calls == [7, 4, 2, 2, 2, 1]

    def always(batch):
        raise RuntimeError("CUDA out of memory")

    with pytest.raises(MemoryError, match="batch of one segment"):
        run_batches(always, [1, 2], 2)
    with pytest.raises(RuntimeError, match="other"):
        run_batches(lambda b: (_ for _ in ()).throw(RuntimeError("other")), [1], 1)


def test_segments_longer_than_the_model_are_truncated_to_its_positions(encoders_dir):
    long_text = " ".join(SOURCES) * 3  # far more than the tiny model's 64 positions
    r = TokenMaxSimRetriever(model="tiny-la-bert", device="cpu", max_length=512)
    r.fit(["a", "b"], [long_text, SOURCES[0]])
    assert r.max_tokens == 64 and r.offsets[1] <= 62
