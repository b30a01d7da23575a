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
    from tests.tiny_models import build_tiny_bert

    return build_tiny_bert(tmp_path_factory.mktemp("tiny_bert"), greek_verses)


@pytest.fixture(scope="session")
def tiny_sentence_transformer_dir(tmp_path_factory, tiny_bert_dir) -> Path:
    """The tiny BERT wrapped as a sentence-transformers bi-encoder (mean pooling), saved to a folder."""
    from tests.tiny_models import build_tiny_sentence_transformer

    return build_tiny_sentence_transformer(tmp_path_factory.mktemp("tiny_st"), tiny_bert_dir)
