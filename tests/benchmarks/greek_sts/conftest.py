"""Shared fixtures for the Greek STS tests: real DBBE files and tiny offline transformer models."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DATA_DIR = Path(os.environ.get("SIMILIA_DBBE_DIR", Path(__file__).resolve().parents[4] / "shared" / "data" / "dbbe"))
STS_FILE = DATA_DIR / "STS_benchmark_medievalGreek.tsv"
VERSES_FILE = DATA_DIR / "dbbe_verses_sample.csv"
LEMMA_FILE = DATA_DIR / "lingAnn_GS_medievalGreek.tsv"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"data file {path} not available (set SIMILIA_DBBE_DIR)")
    return path


@pytest.fixture(scope="session")
def sts_file() -> Path:
    return _need(STS_FILE)


@pytest.fixture(scope="session")
def verses_file() -> Path:
    return _need(VERSES_FILE)


@pytest.fixture(scope="session")
def lemma_file() -> Path:
    return _need(LEMMA_FILE)


@pytest.fixture(scope="session")
def greek_verses(sts_file) -> list[str]:
    from benchmarks.greek_sts.gold import read_sts_gold

    pairs = read_sts_gold(sts_file)
    return list(dict.fromkeys([p.reference_text for p in pairs] + [p.candidate_text for p in pairs]))


@pytest.fixture(scope="session")
def torch_one_thread():
    import torch

    torch.set_num_threads(1)
    return torch


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory, greek_verses, torch_one_thread) -> Path:
    """A 2-layer BERT (hidden 64, random weights, seed 0) with a WordPiece vocabulary trained on the Greek verses."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    torch = torch_one_thread
    out = tmp_path_factory.mktemp("tiny_bert")
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(greek_verses, trainers.WordPieceTrainer(vocab_size=600, special_tokens=specials))
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)]
    )
    tok.decoder = decoders.WordPiece()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]", model_max_length=64)
    fast.save_pretrained(out)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tok.get_vocab_size(), hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=128, max_position_embeddings=64)
    BertModel(config).eval().save_pretrained(out)
    return out


@pytest.fixture(scope="session")
def tiny_sentence_transformer_dir(tmp_path_factory, tiny_bert_dir) -> Path:
    """The tiny BERT wrapped as a sentence-transformers bi-encoder (mean pooling), saved to a folder."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    out = tmp_path_factory.mktemp("tiny_st")
    word = Transformer(str(tiny_bert_dir), max_seq_length=64)
    pool = Pooling(word.get_embedding_dimension(), pooling_mode="mean")
    SentenceTransformer(modules=[word, pool], device="cpu").save(str(out))
    return out
