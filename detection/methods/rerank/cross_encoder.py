"""The 3-class cross-encoder (no match / ``cit.`` / ``cf.``; seed 000 §4.2, Appendix E.4).

Query and candidate are each cut to half of the token budget (``max_length``) before they are joined with the
model's own special tokens (so RoBERTa gets ``<s> A </s></s> B </s>``). Training: AdamW, lr 2e-5, 4 epochs,
linear schedule with 10 % warm-up, an effective batch of 64 by gradient accumulation, cross-entropy without class
weights; the examples of each epoch are drawn by a ``WeightedRandomSampler`` re-drawn every epoch so that the
classes are seen in the target proportions (default {0: 0.80, 1: 0.10, 2: 0.10}; a class absent from the
training folds gives its share to the others). Mixed precision on a GPU (bf16, or fp16 with a gradient scaler),
halving the batch on out-of-memory (accumulation doubles, the effective batch stays), a checkpoint after every
epoch that a restarted run resumes from, progress per step with the loss and pairs/s.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import neural

DEFAULT_CLASS_PROBS = (0.80, 0.10, 0.10)
KIND = "cross-encoder"


def parse_class_probs(text) -> tuple[float, float, float]:
    """``"0.8,0.1,0.1"`` (or a 3-sequence) → normalised target class probabilities; ``natural`` → None."""
    if text in (None, "", "natural"):
        return None
    parts = [float(x) for x in (text.split(",") if isinstance(text, str) else text)]
    if len(parts) != 3 or min(parts) < 0 or sum(parts) <= 0:
        raise ValueError("class probabilities must be three non-negative numbers, e.g. 0.8,0.1,0.1")
    total = sum(parts)
    return tuple(p / total for p in parts)


def sample_weights(labels: np.ndarray, class_probs) -> np.ndarray:
    """Per-example weights giving each present class its target share (absent classes' share redistributed)."""
    labels = np.asarray(labels)
    counts = np.bincount(labels, minlength=3).astype(np.float64)
    if class_probs is None:
        return np.ones(labels.size)
    target = np.asarray(class_probs, np.float64) * (counts > 0)
    target /= target.sum()
    per_class = np.divide(target, counts, out=np.zeros(3), where=counts > 0)
    return per_class[labels]


def truncate_half(tokenizer, texts: Sequence[str], budget: int) -> list[str]:
    """Each text cut at the end of its ``budget``-th token (offsets of a fast tokenizer)."""
    enc = tokenizer(list(texts), add_special_tokens=False, truncation=True, max_length=max(budget, 1),
                    return_offsets_mapping=True)
    out = []
    for text, offsets in zip(texts, enc["offset_mapping"]):
        end = max((e for _, e in offsets), default=0)
        out.append(text[:end])
    return out


def fit_length(model, max_length: int) -> int:
    """``max_length`` cut to the positions the model embeds (a model pretrained here on 128-token blocks has 128):
    a longer pair would not fit its position embeddings."""
    positions = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    return min(int(max_length), int(positions)) if positions else int(max_length)


def encode_pairs(tokenizer, queries: Sequence[str], candidates: Sequence[str], max_length: int):
    """Token ids of (query, candidate) pairs, each side at most half of the budget after special tokens."""
    half = (max_length - tokenizer.num_special_tokens_to_add(pair=True)) // 2
    q = truncate_half(tokenizer, queries, half)
    c = truncate_half(tokenizer, candidates, half)
    return tokenizer(q, c, truncation="longest_first", max_length=max_length, padding=True, return_tensors="pt")


def training_pairs(cands, y, rows, gold, train_queries, neg_ratio: int, seed: int):
    """Cross-encoder pairs of the training folds: every gold pair of a training query (retrieved or not) and up
    to ``neg_ratio`` retrieved non-gold candidates per positive, drawn at random (seeded)."""
    rng = np.random.default_rng(seed)
    q_index = {q: i for i, q in enumerate(cands.query_ids)}
    s_index = {s: j for j, s in enumerate(cands.source_ids)}
    Q, C, Y = [], [], []
    n_pos = 0
    for (q, s), c in gold.items():
        if q in train_queries and q in q_index and s in s_index:
            Q.append(cands.query_texts[q_index[q]])
            C.append(cands.source_texts[s_index[s]])
            Y.append(c)
            n_pos += 1
    neg = rows[y[rows] == 0]
    take = rng.choice(neg, size=min(neg.size, n_pos * neg_ratio), replace=False) if neg.size else neg
    for r in take:
        Q.append(cands.query_texts[cands.qi[r]])
        C.append(cands.source_texts[cands.si[r]])
        Y.append(0)
    return Q, C, np.asarray(Y, np.int64)


def load(model_dir, device: str = "cpu"):
    """(tokenizer, model, card) of a stored cross-encoder; TrainingFailed when the folder holds another kind."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    card = neural.read_card(model_dir)
    if card and card.get("kind") != KIND:
        raise neural.TrainingFailed(f"model {Path(model_dir).name} is a {card.get('kind')}, not a cross-encoder")
    tok = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModelForSequenceClassification.from_pretrained(str(model_dir))
    if model.config.num_labels != 3:
        raise neural.TrainingFailed(f"model {Path(model_dir).name} has {model.config.num_labels} output classes, "
                                    f"a 3-class cross-encoder is needed")
    neural.check_tokenizer_matches(tok, model)
    return tok, model.to(device).eval(), card


def predict_proba(tokenizer, model, queries: Sequence[str], candidates: Sequence[str], *, batch_size: int = 64,
                  max_length: int = 256, device: str = "cpu", progress: Callable | None = None) -> np.ndarray:
    """(n, 3) softmax probabilities; batches sorted by length (dynamic padding); batch halves on OOM.

    The next batch is tokenised in a second thread while the model scores the current one (the fast tokenizer
    releases the GIL), so a GPU does not wait for the CPU between batches; the probabilities are the same as
    with one thread."""
    from concurrent.futures import ThreadPoolExecutor

    import torch

    n = len(queries)
    out = np.zeros((n, 3), np.float32)
    max_length = fit_length(model, max_length)
    order = np.argsort([len(q) + len(c) for q, c in zip(queries, candidates)], kind="stable")

    def encode(rows):
        return encode_pairs(tokenizer, [queries[i] for i in rows], [candidates[i] for i in rows], max_length)

    start, bs = 0, int(batch_size)
    with ThreadPoolExecutor(max_workers=1) as pool:
        ahead = None  # (start, size, future) of the batch tokenised in advance
        while start < n:
            rows = order[start:start + bs]
            if ahead is not None and ahead[0] == start and ahead[1] == len(rows):
                enc = ahead[2].result()
            else:
                enc = encode(rows)
            after = start + len(rows)
            ahead = (after, len(order[after:after + bs]), pool.submit(encode, order[after:after + bs])) \
                if after < n else None
            try:
                with torch.no_grad(), neural.autocast(device):
                    logits = model(**{k: v.to(device) for k, v in enc.items()}).logits
                out[rows] = torch.softmax(logits.float(), dim=-1).cpu().numpy()
            except RuntimeError as exc:
                if not neural.is_oom(exc) or bs == 1:
                    raise
                neural.free_cuda()
                bs //= 2
                continue
            start = after
            if progress is not None:
                progress(start / n, f"scored {start}/{n} pairs")
    return out


@dataclass(frozen=True)
class CrossEncoderOptions(neural.TrainingOptions):
    """The cross-encoder's training options: the shared ones plus the effective batch (reached by gradient
    accumulation), the token budget of a pair and the class proportions each epoch is drawn in."""

    effective_batch: int = 64
    max_length: int = 256
    class_probs: object = DEFAULT_CLASS_PROBS  # a 3-sequence, "0.8,0.1,0.1" or "natural"

    def __post_init__(self):
        super().__post_init__()
        if self.effective_batch % self.batch_size:
            raise ValueError("effective_batch must be a multiple of batch_size")


def train(*, base_model: str, queries: Sequence[str], candidates: Sequence[str], labels: Sequence[int], out_dir,
          options: CrossEncoderOptions = CrossEncoderOptions(), progress: Callable[[float, str], None] | None = None,
          log: Callable[[str], None] | None = None, card: dict | None = None) -> dict:
    """Fine-tune ``base_model`` (a local folder) as a 3-class cross-encoder into ``out_dir``.

    Args:
        queries, candidates, labels: the training pairs (labels 0 none, 1 cit., 2 cf.), training folds only.
        options: how it trains (:class:`CrossEncoderOptions`).

    Returns:
        a summary: steps, epochs done, final loss, pairs/s, device, batch sizes, versions.
    """
    o = options
    epochs, lr, batch_size, effective_batch, max_length = o.epochs, o.lr, o.batch_size, o.effective_batch, o.max_length
    class_probs, seed, mixed_precision, max_steps = o.class_probs, o.seed, o.mixed_precision, o.max_steps
    import torch
    from torch.utils.data import WeightedRandomSampler
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        get_linear_schedule_with_warmup,
    )

    log = log or (lambda line: None)
    progress = progress or (lambda f, m="": None)
    labels = np.asarray(labels, np.int64)
    if not (len(queries) == len(candidates) == labels.size):
        raise ValueError("queries, candidates and labels differ in length")
    if not (labels > 0).any():
        raise ValueError("the training folds hold no positive pair (no cit. or cf. label)")
    if not np.isin(labels, (0, 1, 2)).all():
        raise ValueError("labels must be 0, 1 or 2")
    device = neural.pick_device(o.device, log)
    neural.seed_everything(seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    start_epoch, source = 0, base_model
    ck = neural.load_checkpoint_state(out) if o.resume else None
    if ck is not None:
        source, start_epoch = str(ck[0]), int(ck[1]["epoch"]) + 1
        log(f"resuming from the checkpoint of epoch {start_epoch}")
    try:
        tok = AutoTokenizer.from_pretrained(source)
        model = AutoModelForSequenceClassification.from_pretrained(source, num_labels=3)
    except (OSError, ValueError, RuntimeError) as exc:
        raise neural.TrainingFailed(f"cannot load {Path(source).name} as a sequence classifier: {exc}") from None
    neural.check_tokenizer_matches(tok, model)
    model.to(device).train()
    if fit_length(model, max_length) < max_length:
        log(f"max_length {max_length} cut to {fit_length(model, max_length)}: the positions the base model embeds")
        max_length = fit_length(model, max_length)
    accum = effective_batch // batch_size
    steps_per_epoch = math.ceil(labels.size / effective_batch)
    total_steps = steps_per_epoch * epochs if max_steps is None else min(max_steps, steps_per_epoch * epochs)
    opt = neural.adamw(model.named_parameters(), lr, o.weight_decay)
    sched = get_linear_schedule_with_warmup(opt, int(o.warmup * total_steps), max(total_steps, 1))
    if ck is not None:
        neural.restore_trainer(ck[0], opt, sched)
    scaler = torch.amp.GradScaler("cuda") if neural.needs_grad_scaler(device, mixed_precision) else None
    weights = sample_weights(labels, parse_class_probs(class_probs) if isinstance(class_probs, str) else class_probs)
    step, last_loss, seen, t0 = start_epoch * steps_per_epoch, float("nan"), 0, time.perf_counter()
    loss_fn = torch.nn.CrossEntropyLoss()
    done_epochs = start_epoch
    for epoch in range(start_epoch, epochs):
        if max_steps is not None and step >= max_steps:
            break
        gen = torch.Generator().manual_seed(seed * 1000 + epoch)  # re-drawn each epoch, repeatable
        order = list(WeightedRandomSampler(torch.as_tensor(weights, dtype=torch.double), labels.size,
                                           replacement=True, generator=gen))
        exposure = np.bincount(labels[order], minlength=3) / max(len(order), 1)
        log(f"epoch {epoch + 1}/{epochs}: class exposure {', '.join(f'{x:.2f}' for x in exposure)}, "
            f"batch {batch_size} × {accum} accumulation on {device}")
        pos = 0
        while pos < len(order) and (max_steps is None or step < max_steps):
            chunk = order[pos:pos + batch_size * accum]
            try:
                last_loss = _step(model, tok, opt, sched, scaler, loss_fn, chunk, queries, candidates, labels,
                                  batch_size, max_length, device, mixed_precision)
            except RuntimeError as exc:
                batch_size = neural.halve_on_oom(exc, opt, batch_size)
                accum *= 2
                log(f"out of memory: batch size now {batch_size}, accumulation {accum} (effective batch kept)")
                continue
            pos += len(chunk)
            seen += len(chunk)
            step += 1
            progress(min(step / max(total_steps, 1), 0.99),
                     neural.step_message(epoch, epochs, step, total_steps, last_loss, seen, t0))
        done_epochs = epoch + 1
        neural.save_checkpoint(out, epoch, lambda d: (model.save_pretrained(d), tok.save_pretrained(d)), opt, sched,
                               {"step": step})
    model.save_pretrained(out)
    tok.save_pretrained(out)
    summary = {"kind": KIND, "base_model": Path(base_model).name, "steps": step, "epochs": done_epochs,
               "final_loss": last_loss, "pairs_per_s": seen / max(time.perf_counter() - t0, 1e-9),
               "device": device, "batch_size": batch_size, "accumulation": accum, "effective_batch": effective_batch,
               "max_length": max_length, "lr": lr, "seed": seed, "class_probs": list(weights_target(class_probs)),
               "n_train": int(labels.size), "label_counts": np.bincount(labels, minlength=3).tolist(),
               "mixed_precision": bool(mixed_precision and device.startswith("cuda")), "versions": neural.versions()}
    neural.write_card(out, {**summary, **(card or {})})
    return summary


def weights_target(class_probs) -> tuple:
    p = parse_class_probs(class_probs) if isinstance(class_probs, str) or class_probs is None else class_probs
    return tuple(p) if p is not None else ("natural",)


def _step(model, tok, opt, sched, scaler, loss_fn, chunk, queries, candidates, labels, batch_size, max_length,
          device, mixed_precision) -> float:
    import torch

    total = 0.0
    n_micro = math.ceil(len(chunk) / batch_size)
    for m in range(n_micro):
        rows = chunk[m * batch_size:(m + 1) * batch_size]
        enc = encode_pairs(tok, [queries[i] for i in rows], [candidates[i] for i in rows], max_length)
        y = torch.as_tensor(labels[rows], device=device)
        with neural.autocast(device, mixed_precision):
            logits = model(**{k: v.to(device) for k, v in enc.items()}).logits
            loss = loss_fn(logits.float(), y) / n_micro
        (scaler.scale(loss) if scaler else loss).backward()
        total += float(loss.detach())
    neural.optimizer_step(model, opt, sched, scaler)
    return total
