"""A tiny BERT built from scratch (WordPiece tokenizer trained with ``tokenizers`` + a 2-layer ``BertConfig``):
what the tests and the CPU smoke run of ``perf/gpu_check_rerank.py`` train, since no model can be fetched from a
hub here. It is a real transformers model folder, loaded by name like any other."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def build_tiny_bert(directory, texts: Sequence[str], *, vocab_size: int = 400, hidden: int = 32, layers: int = 2,
                    heads: int = 2, max_position: int = 256, seed: int = 0) -> Path:
    """Train a WordPiece tokenizer on ``texts`` and save it with a randomly initialised BERT in ``directory``."""
    import torch
    from tokenizers import (
        Tokenizer,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import BertConfig, BertModel, BertTokenizerFast

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(list(texts), trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=SPECIALS))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                       special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    fast = BertTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                             sep_token="[SEP]", mask_token="[MASK]", model_max_length=max_position)
    fast.save_pretrained(out)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tok.get_vocab_size(), hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=heads, intermediate_size=hidden * 2, max_position_embeddings=max_position)
    BertModel(config).save_pretrained(out)
    return out
