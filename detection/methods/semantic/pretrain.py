"""Pretrain Similia's own encoders: a WordPiece tokenizer (``tokenizers``) and a BERT masked-language model
(``transformers``) trained from a stored corpus chosen by name, saved as a model in the models directory.

The result is a plain transformers folder (``BertForMaskedLM`` weights, its fast tokenizer, ``similia.json``),
so it loads by name everywhere a model name is taken: ``dense-encoder`` (mean pooling), ``token-maxsim``, and
``base_model`` of the bi-encoder and cross-encoder trainings.

- **Corpus**: a name in the corpora directory (:func:`word_vectors.resolve_corpus`, never a path); ``.txt``
  files are cleaned as Latin Library pages (:mod:`detection.latin.library_text`), ``.tess`` lines lose their
  references; ``stride`` keeps every n-th line (a sample of the whole corpus), ``max_lines`` the first lines only.
- **Sizes** (:data:`SIZES`): ``tiny`` (tests, seconds), ``small`` (CPU-affordable), ``base`` (BERT-base shape,
  a GPU's work).
- **Determinism**: the blocks' order, the masks and the dropout of step *s* are drawn from ``(seed, s)``, so a
  resumed run takes the same steps as an uninterrupted one.
- **Checkpoints** every ``checkpoint_every`` steps (atomically, :func:`neural.save_checkpoint`) in the working
  folder ``<models>/.pretrain-<name>``; a run started again with the same settings resumes there. The model is
  moved to ``<models>/<name>`` only when it is complete.
- **Mixed precision** on CUDA (bf16, or fp16 with a gradient scaler); an out-of-memory error halves the
  micro-batch (gradients accumulated, so the step stays the same) down to 1.

Torch, tokenizers and transformers are imported inside the functions (workers only).
"""
from __future__ import annotations

import json
import math
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..infrastructure import model_store
from ..rerank import neural
from . import word_vectors

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
KIND = neural.PRETRAINED_KIND
LANGUAGES = ("la", "grc")
CLEANING = ("auto", "latin-library", "none")
BLOCKS = "blocks.npy"
SETTINGS = "settings.json"

# Shapes: vocabulary, hidden width, layers, heads, feed-forward width, block length (tokens), batch (blocks).
SIZES: dict[str, dict] = {
    "tiny": {"vocab_size": 800, "hidden": 64, "layers": 2, "heads": 2, "intermediate": 128, "max_length": 64,
             "batch_size": 16, "lr": 1e-3, "steps": 40},
    "small": {"vocab_size": 16000, "hidden": 256, "layers": 4, "heads": 4, "intermediate": 1024, "max_length": 128,
              "batch_size": 32, "lr": 5e-4, "steps": 20000},
    "base": {"vocab_size": 32000, "hidden": 768, "layers": 12, "heads": 12, "intermediate": 3072, "max_length": 256,
             "batch_size": 128, "lr": 2e-4, "steps": 100000},
}


class PretrainError(ValueError):
    """A bad pretraining request (unknown size, language, corpus that is not a stored corpus, bad number)."""


@dataclass
class PretrainConfig:
    """One pretraining run. ``steps``/``batch_size``/``lr`` of 0 take the size's defaults."""

    corpus: str
    size: str = "small"
    language: str = "la"
    steps: int = 0
    batch_size: int = 0
    lr: float = 0.0
    warmup: float = 0.06
    mask_prob: float = 0.15
    checkpoint_every: int = 500
    seed: int = 42
    max_lines: int = 0
    stride: int = 1
    clean: str = "auto"
    mixed_precision: bool = True

    def __post_init__(self):
        if self.size not in SIZES:
            raise PretrainError(f"size must be one of {', '.join(SIZES)}, not {self.size!r}")
        if self.language not in LANGUAGES:
            raise PretrainError(f"language must be one of {', '.join(LANGUAGES)}, not {self.language!r}")
        if self.clean not in CLEANING:
            raise PretrainError(f"clean must be one of {', '.join(CLEANING)}, not {self.clean!r}")
        for what, lo, hi in (("steps", 0, 10**7), ("batch_size", 0, 8192), ("checkpoint_every", 1, 10**7),
                             ("seed", 0, 2**31 - 1), ("max_lines", 0, 10**9), ("stride", 1, 10**6)):
            value = getattr(self, what)
            if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
                raise PretrainError(f"{what} must be an integer in [{lo}, {hi}], not {value!r}")
        if not isinstance(self.mixed_precision, bool):
            raise PretrainError(f"mixed_precision must be true or false, not {self.mixed_precision!r}")
        for what, lo, hi in (("lr", 0.0, 1.0), ("warmup", 0.0, 0.5), ("mask_prob", 0.01, 0.9)):
            value = getattr(self, what)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not lo <= value <= hi:
                raise PretrainError(f"{what} must be a number in [{lo}, {hi}], not {value!r}")
        word_vectors_name_check(self.corpus)

    @property
    def shape(self) -> dict:
        out = dict(SIZES[self.size])
        for key in ("steps", "batch_size", "lr"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out


def word_vectors_name_check(corpus: str) -> None:
    """A corpus is a stored corpus's name: PretrainError for a path or a malformed name."""
    if not isinstance(corpus, str) or "/" in corpus or "\\" in corpus:
        raise PretrainError(f"corpus must be the name of a stored corpus, not a path: {corpus!r:.80}")
    try:
        model_store.check_model_name(corpus)
    except ValueError:
        raise PretrainError(f"corpus must be the name of a stored corpus (letters, digits, '.', '_', '-'), "
                            f"not {corpus!r:.80}") from None


def corpus_path(corpus: str) -> Path:
    """The stored corpus ``corpus`` (PretrainError naming the stored ones when there is none of that name)."""
    word_vectors_name_check(corpus)
    try:
        return word_vectors.resolve_corpus(corpus)
    except word_vectors.VectorsError as exc:
        raise PretrainError(str(exc)) from None


def training_lines(path, *, clean: str = "auto", max_lines: int = 0, stride: int = 1) -> Iterator[str]:
    """The cleaned lines of a stored corpus: ``.txt`` files as Latin Library pages (``clean='auto'`` or
    ``'latin-library'``), ``.tess`` lines without their references; every ``stride``-th line only (a sample spread
    over the whole corpus, for a run that sees a fraction of it), at most ``max_lines`` when it is > 0."""
    from detection.latin.library_text import clean_page

    n = seen = 0
    for name, text in word_vectors.corpus_documents(path):
        if clean != "none" and not name.endswith(".tess"):
            lines = clean_page(text)
        else:
            lines = (" ".join(ln.split()) for ln in word_vectors.file_lines(name, text))
        for line in lines:
            if not line:
                continue
            seen += 1
            if (seen - 1) % stride:
                continue
            yield line
            n += 1
            if max_lines and n >= max_lines:
                return


def build_tokenizer(texts, *, vocab_size: int, language: str, max_length: int):
    """A WordPiece tokenizer trained on ``texts`` (NFC, lower case; Latin also folds j→i and v→u), wrapped as a
    ``PreTrainedTokenizerFast`` (``BertTokenizerFast`` would put its own normaliser in place of this one, which
    strips accents and folds nothing: Greek words and Latin words with j/v would then fall outside the
    vocabulary)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    steps = [normalizers.NFC(), normalizers.Lowercase()]
    if language == "la":
        steps += [normalizers.Replace("j", "i"), normalizers.Replace("v", "u")]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence(steps)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=SPECIALS))
    # the trainer numbers tokens of equal count in no fixed order (run to run): number them in sorted order,
    # so the same corpus and seed give the same ids, blocks and model (the tokenisation is the same either way)
    learned = sorted(t for t in tok.get_vocab() if t not in SPECIALS)
    tok.model = models.WordPiece({t: i for i, t in enumerate(SPECIALS + learned)}, unk_token="[UNK]")
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)])
    tok.decoder = decoders.WordPiece()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                             sep_token="[SEP]", mask_token="[MASK]", model_max_length=max_length)


def pack_blocks(tokenizer, lines, max_length: int) -> np.ndarray:
    """The lines' token ids run together and cut into blocks of ``max_length`` (``[CLS] … [SEP]``), int32."""
    body = max_length - 2
    ids: list[int] = []
    chunk = 2000
    for i in range(0, len(lines), chunk):
        for row in tokenizer(lines[i:i + chunk], add_special_tokens=False, verbose=False)["input_ids"]:
            ids.extend(row)
    n = len(ids) // body
    if n == 0:
        raise PretrainError(f"the corpus gives {len(ids)} tokens, fewer than one block of {body}")
    arr = np.asarray(ids[:n * body], dtype=np.int32).reshape(n, body)
    cls = np.full((n, 1), tokenizer.cls_token_id, np.int32)
    sep = np.full((n, 1), tokenizer.sep_token_id, np.int32)
    return np.hstack([cls, arr, sep])


def mask_tokens(block_ids, *, vocab_size: int, mask_id: int, special_ids, prob: float, generator):
    """BERT's masking: ``prob`` of the non-special tokens are predicted; of those 80 % become [MASK], 10 % a
    random token, 10 % stay. Returns (inputs, labels with -100 where nothing is predicted)."""
    import torch

    inputs = block_ids.clone()
    labels = block_ids.clone()
    special = torch.zeros_like(inputs, dtype=torch.bool)
    for sid in special_ids:
        special |= inputs == sid
    chosen = (torch.rand(inputs.shape, generator=generator) < prob) & ~special
    labels[~chosen] = -100
    draw = torch.rand(inputs.shape, generator=generator)
    inputs[chosen & (draw < 0.8)] = mask_id
    rand = chosen & (draw >= 0.8) & (draw < 0.9)
    inputs[rand] = torch.randint(len(SPECIALS), vocab_size, inputs.shape, generator=generator)[rand]
    return inputs, labels


def _batch_indices(n_blocks: int, batch_size: int, step: int, seed: int) -> np.ndarray:
    """The blocks of step ``step``: epoch after epoch, each a permutation drawn from (seed, epoch)."""
    per_epoch = max(n_blocks // batch_size, 1)
    epoch, k = divmod(step, per_epoch)
    perm = np.random.default_rng([seed, epoch]).permutation(n_blocks)
    return perm[k * batch_size:(k + 1) * batch_size]


def work_dir(name: str, models_dir=None) -> Path:
    """Where a run keeps its blocks and checkpoint until the model is complete (hidden from model listings)."""
    model_store.check_model_name(name)
    root = Path(models_dir) if models_dir is not None else model_store.models_dir()
    return root / f".pretrain-{name.replace('/', '--')}"


def _settings(config: PretrainConfig, name: str) -> dict:
    return {"name": name, **asdict(config), "shape": config.shape}


def pretrain(config: PretrainConfig, name: str, *, models_dir=None, device: str = "auto",
             progress: Callable[[float, str], None] | None = None, log: Callable[[str], None] | None = None,
             stop_after: int | None = None) -> dict:
    """Train ``config`` into ``<models>/<name>`` and return its model card. A run with the same name and
    settings left in the working folder resumes from its last checkpoint; other settings are refused.
    ``stop_after``: end (after checkpointing) once this step is reached, leaving the run to resume (tests)."""
    import torch
    from transformers import BertConfig, BertForMaskedLM, PreTrainedTokenizerFast, get_linear_schedule_with_warmup

    log = log or (lambda line: None)
    progress = progress or (lambda f, m="": None)
    model_store.check_model_name(name)
    root = Path(models_dir) if models_dir is not None else model_store.models_dir()
    final = root / name
    if final.exists():
        raise PretrainError(f"a model named {name!r} is already in the models directory: choose another name")
    path = corpus_path(config.corpus)
    shape = config.shape
    work = work_dir(name, root)
    settings = _settings(config, name)
    if (work / SETTINGS).is_file():
        before = json.loads((work / SETTINGS).read_text(encoding="utf-8"))
        if before != settings:
            changed = sorted(k for k in set(before) | set(settings) if before.get(k) != settings.get(k))
            raise PretrainError(f"an unfinished run named {name!r} has other settings ({', '.join(changed)}): "
                                f"delete {work.name} in the models directory or choose another name")
    work.mkdir(parents=True, exist_ok=True)
    (work / SETTINGS).write_text(json.dumps(settings, sort_keys=True), encoding="utf-8")

    t_data = time.perf_counter()
    tok_dir = work / "tokenizer"
    if (work / BLOCKS).is_file() and (tok_dir / "tokenizer.json").is_file():
        tokenizer = PreTrainedTokenizerFast.from_pretrained(str(tok_dir))
        blocks = np.load(work / BLOCKS)
        corpus_stats = json.loads((work / "corpus.json").read_text(encoding="utf-8"))
        log(f"reusing the tokenizer and {len(blocks)} blocks of the unfinished run")
    else:
        progress(0.0, f"reading corpus {config.corpus!r}")
        lines = list(training_lines(path, clean=config.clean, max_lines=config.max_lines, stride=config.stride))
        if not lines:
            raise PretrainError(f"corpus {config.corpus!r} has no text line")
        progress(0.01, f"training a {shape['vocab_size']}-token WordPiece vocabulary on {len(lines)} lines")
        tokenizer = build_tokenizer(lines, vocab_size=shape["vocab_size"], language=config.language,
                                    max_length=shape["max_length"])
        blocks = pack_blocks(tokenizer, lines, shape["max_length"])
        corpus_stats = {"name": config.corpus, "lines": len(lines), "words": sum(len(ln.split()) for ln in lines),
                        "tokens": int(blocks.size), "blocks": int(len(blocks)), "cleaning": config.clean,
                        "max_lines": config.max_lines, "stride": config.stride}
        tokenizer.save_pretrained(str(tok_dir))
        (work / "corpus.json").write_text(json.dumps(corpus_stats), encoding="utf-8")
        with open(work / (BLOCKS + ".tmp"), "wb") as fh:  # last and atomic: its presence means all is there
            np.save(fh, blocks)
        os.replace(work / (BLOCKS + ".tmp"), work / BLOCKS)
        log(f"corpus {config.corpus!r}: {len(lines)} lines, {corpus_stats['words']} words, {blocks.size} tokens in "
            f"{len(blocks)} blocks of {shape['max_length']} ({time.perf_counter() - t_data:.1f} s)")
    data_seconds = time.perf_counter() - t_data

    device = neural.pick_device(device, log)
    amp = bool(config.mixed_precision and device.startswith("cuda"))
    torch.manual_seed(config.seed)
    bert = BertConfig(vocab_size=len(tokenizer), hidden_size=shape["hidden"], num_hidden_layers=shape["layers"],
                      num_attention_heads=shape["heads"], intermediate_size=shape["intermediate"],
                      max_position_embeddings=shape["max_length"], pad_token_id=tokenizer.pad_token_id)
    ck = neural.load_checkpoint_state(work)
    if ck:
        model = BertForMaskedLM.from_pretrained(str(ck[0]))
    else:
        model = BertForMaskedLM(bert)
    model.to(device).train()
    total, batch_size = int(shape["steps"]), int(shape["batch_size"])
    opt = neural.adamw(model.named_parameters(), float(shape["lr"]), 0.01)
    sched = get_linear_schedule_with_warmup(opt, int(config.warmup * total), max(total, 1))
    step, curve = 0, []
    if ck:
        neural.restore_trainer(ck[0], opt, sched)
        step, curve = int(ck[1]["step"]), list(ck[1].get("curve", []))
        log(f"resuming from the checkpoint of step {step}/{total}")
    scaler = torch.amp.GradScaler("cuda") if neural.needs_grad_scaler(device, amp) else None
    special_ids = [tokenizer.convert_tokens_to_ids(t) for t in SPECIALS]
    blocks_t = torch.from_numpy(blocks.astype(np.int64))
    micro, window, t0, start_step = batch_size, [], time.perf_counter(), step
    log_every = max(1, min(50, total // 20 or 1))
    while step < total:
        idx = torch.from_numpy(_batch_indices(len(blocks), batch_size, step, config.seed))
        gen = torch.Generator().manual_seed(config.seed * 1_000_003 + step)
        inputs, labels = mask_tokens(blocks_t[idx], vocab_size=len(tokenizer), mask_id=tokenizer.mask_token_id,
                                     special_ids=special_ids, prob=config.mask_prob, generator=gen)
        torch.manual_seed(config.seed + step)  # dropout of this step, the same after a resume
        try:
            loss = _step(model, inputs, labels, micro, device, amp, scaler)
        except RuntimeError as exc:
            micro = neural.halve_on_oom(exc, opt, micro)
            log(f"out of memory at step {step}: micro-batch now {micro} (gradients accumulated to {batch_size})")
            continue
        neural.optimizer_step(model, opt, sched, scaler)
        step += 1
        window.append(loss)
        if step % log_every == 0 or step == total:
            mean = float(np.mean(window))
            curve.append([step, round(mean, 4)])
            window = []
            rate = (step - start_step) / max(time.perf_counter() - t0, 1e-9)
            progress(min(step / total, 0.99), f"step {step}/{total} loss {mean:.3f} {rate:.2f} steps/s")
        if step % config.checkpoint_every == 0 or step == total:
            neural.save_checkpoint(work, step // max(len(blocks) // batch_size, 1), model.save_pretrained, opt,
                                   sched, {"step": step, "curve": curve})
            if stop_after is not None and step >= stop_after and step < total:
                log(f"stopped after step {step} (checkpointed)")
                return {"stopped_at": step}
    seconds = time.perf_counter() - t0
    staging = work / "model"
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(str(staging))
    tokenizer.save_pretrained(str(staging))
    card = {"kind": KIND, "name": name, "architecture": "bert-mlm", "language": config.language,
            "size": config.size, "shape": shape, "corpus": corpus_stats, "steps": step, "seed": config.seed,
            "mask_prob": config.mask_prob, "warmup": config.warmup, "device": device, "mixed_precision": amp,
            "micro_batch": micro, "loss_curve": curve, "final_loss": curve[-1][1] if curve else None,
            "parameters": int(sum(p.numel() for p in model.parameters())),
            "train_seconds_this_session": round(seconds, 1), "steps_this_session": step - start_step,
            "seconds_per_step": round(seconds / max(step - start_step, 1), 4),
            "data_seconds": round(data_seconds, 1), "versions": neural.versions()}
    neural.write_card(staging, card)
    root.mkdir(parents=True, exist_ok=True)
    os.replace(staging, final)
    shutil.rmtree(work, ignore_errors=True)
    progress(1.0, f"model {name!r} saved: {step} steps, final loss {card['final_loss']}")
    return card


def _step(model, inputs, labels, micro: int, device: str, amp: bool, scaler) -> float:
    """Forward and backward over the batch in micro-batches of ``micro`` (gradients summed, loss averaged over
    the predicted tokens); returns the batch's loss. The output layer runs on the predicted positions only (15 %
    of them), not on every position as ``BertForMaskedLM.forward`` does: the same loss, several times cheaper
    with a large vocabulary."""
    import torch

    n_pred = int((labels != -100).sum())
    total = 0.0
    for i in range(0, len(inputs), micro):
        x = inputs[i:i + micro].to(device)
        y = labels[i:i + micro].to(device)
        chosen = y != -100
        k = int(chosen.sum())
        if k == 0:
            continue
        with neural.autocast(device, amp):
            hidden = model.bert(input_ids=x, attention_mask=torch.ones_like(x)).last_hidden_state
            logits = model.cls(hidden[chosen])
            loss = torch.nn.functional.cross_entropy(logits.float(), y[chosen]) * (k / max(n_pred, 1))
        (scaler.scale(loss) if scaler else loss).backward()
        total += float(loss.detach())
    if not math.isfinite(total):
        raise neural.TrainingFailed(f"the loss is not finite ({total}): lower lr")
    return total
