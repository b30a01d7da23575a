"""Fine-tuning a bi-encoder (sentence-transformers) on the training folds (seed 000 Appendix D).

Losses: ``online-contrastive`` (OnlineContrastiveLoss on (query, candidate, 1/0) pairs: the paper's choice) and
``mnrl`` (MultipleNegativesRankingLoss on (query, positive, negative) triplets plus in-batch negatives).
Negatives (Appendix D.3), ``neg_ratio`` of them per positive (1 … 10):

- ``random``: two random segments (random, random);
- ``query-random``: the positive's query with a random source segment;
- ``hard-bm25``: the query's best BM25 candidates that are not gold;
- ``hard-base``: the base model's nearest sources (cosine) that are not gold;
- ``mixed``: half query-random, half hard (base model).

Appendix D.4 defaults: 4 epochs, batch 32, lr 2e-5, AdamW (0.9, 0.999, 1e-8), weight decay 0.01, max grad
norm 1, linear schedule with 10 % warm-up, seed 42, ``"Query: "`` / ``"Candidate: "`` prefixes. The loop is our
own (no ``datasets``/``accelerate``): mixed precision on a GPU, a checkpoint per epoch to resume from, batch
halving on out-of-memory, progress per step with loss and pairs/s.
"""
from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import neural

KIND = "bi-encoder"
LOSSES = ("online-contrastive", "mnrl")
NEGATIVES = ("random", "query-random", "hard-bm25", "hard-base", "mixed")
QUERY_PREFIX, CANDIDATE_PREFIX = "Query: ", "Candidate: "


def load(model_dir, device: str = "cpu"):
    """A SentenceTransformer from a local folder (any transformers encoder gets mean pooling)."""
    from sentence_transformers import SentenceTransformer

    card = neural.read_card(model_dir)
    if card and card.get("kind") not in (None, KIND, neural.PRETRAINED_KIND):
        raise neural.TrainingFailed(f"model {Path(model_dir).name} is a {card.get('kind')}, not a bi-encoder")
    return SentenceTransformer(str(model_dir), device=device)


def encode(model, texts: Sequence[str], *, prefix: str = "", batch_size: int = 64) -> np.ndarray:
    """L2-normalised float32 embeddings."""
    emb = model.encode([prefix + t for t in texts], batch_size=batch_size, convert_to_numpy=True,
                       normalize_embeddings=True, show_progress_bar=False)
    return np.asarray(emb, np.float32)


def _hard_candidates(strategy, queries, source_texts, gold_of, base_dir, device, per_query, seed):
    """For each distinct query text: source indices ranked by BM25 or by the base model, gold removed."""
    if strategy == "hard-bm25":
        from detection.methods import registry

        r = registry.build("bm25-surface", {"stopwords": True}, context=registry.BuildContext.default())
        r.fit([str(i) for i in range(len(source_texts))], list(source_texts))
        res = r.search(list(queries), per_query + 20)
        ranked = [list(row[row >= 0]) for row in res.indices]
    else:
        model = load(base_dir, device)
        qe = encode(model, queries, prefix=QUERY_PREFIX)
        se = encode(model, source_texts, prefix=CANDIDATE_PREFIX)
        sims = qe @ se.T
        ranked = [list(np.argsort(-row, kind="stable")[:per_query + 20]) for row in sims]
    return {q: [int(j) for j in rk if int(j) not in gold_of.get(q, set())][:per_query]
            for q, rk in zip(queries, ranked)}


def build_examples(positives: Sequence[tuple[str, int]], source_texts: Sequence[str], *, negatives: str,
                   neg_ratio: int, loss: str, seed: int = 42, base_dir=None, device: str = "cpu") -> list[tuple]:
    """Training examples from ``positives`` (query text, gold source index).

    ``online-contrastive``: (query, candidate, 1.0 or 0.0); ``mnrl``: (query, positive, negative).
    """
    if negatives not in NEGATIVES:
        raise ValueError(f"negatives must be one of {', '.join(NEGATIVES)}")
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {', '.join(LOSSES)}")
    if not 1 <= int(neg_ratio) <= 10:
        raise ValueError("neg_ratio must be between 1 and 10")
    if not positives:
        raise ValueError("the training folds hold no positive pair")
    rng = random.Random(seed)
    gold_of: dict[str, set] = {}
    for q, j in positives:
        gold_of.setdefault(q, set()).add(j)
    n_src = len(source_texts)
    hard = {}
    if negatives in ("hard-bm25", "hard-base", "mixed"):
        hard = _hard_candidates("hard-bm25" if negatives == "hard-bm25" else "hard-base", list(gold_of),
                                source_texts, gold_of, base_dir, device, neg_ratio, seed)
    query_texts = list(gold_of)

    def random_source(q):
        for _ in range(100):
            j = rng.randrange(n_src)
            if j not in gold_of.get(q, ()):
                return j
        return rng.randrange(n_src)

    out = []
    for q, j in positives:
        negs = []
        for r in range(int(neg_ratio)):
            use_hard = negatives.startswith("hard") or (negatives == "mixed" and r % 2 == 1)
            if use_hard and hard.get(q):
                negs.append((q, hard[q][r % len(hard[q])]))
            elif negatives == "random":
                negs.append((rng.choice(query_texts), random_source(None)))
            else:
                negs.append((q, random_source(q)))
        if loss == "online-contrastive":
            out.append((q, source_texts[j], 1.0))
            out += [(nq, source_texts[nj], 0.0) for nq, nj in negs]
        else:
            out += [(q, source_texts[j], source_texts[nj]) for nq, nj in negs]
    rng.shuffle(out)
    return out


@dataclass(frozen=True)
class BiEncoderOptions(neural.TrainingOptions):
    """The bi-encoder's training options: the shared ones plus its loss (``online-contrastive`` or ``mnrl``)."""

    loss: str = "online-contrastive"

    def __post_init__(self):
        super().__post_init__()
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}")


def train(*, base_model: str, examples: Sequence[tuple], out_dir, options: BiEncoderOptions = BiEncoderOptions(),
          progress: Callable[[float, str], None] | None = None, log: Callable[[str], None] | None = None,
          card: dict | None = None) -> dict:
    """Fine-tune ``base_model`` (a local folder) on ``examples`` (see :func:`build_examples`) into ``out_dir``, as
    ``options`` (:class:`BiEncoderOptions`) say."""
    import torch
    from sentence_transformers.sentence_transformer import losses
    from transformers import get_linear_schedule_with_warmup

    o = options
    loss, epochs, lr, batch_size, warmup, seed = o.loss, o.epochs, o.lr, o.batch_size, o.warmup, o.seed
    mixed_precision, max_steps = o.mixed_precision, o.max_steps
    log = log or (lambda line: None)
    progress = progress or (lambda f, m="": None)
    if not examples:
        raise ValueError("no training examples")
    device = neural.pick_device(o.device, log)
    neural.seed_everything(seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ck = neural.load_checkpoint_state(out) if o.resume else None
    source, start_epoch = (str(ck[0]), int(ck[1]["epoch"]) + 1) if ck else (base_model, 0)
    if ck:
        log(f"resuming from the checkpoint of epoch {start_epoch}")
    try:
        model = load(source, device)
    except (OSError, ValueError, RuntimeError) as exc:
        raise neural.TrainingFailed(f"cannot load {Path(source).name} as a sentence encoder: {exc}") from None
    neural.check_tokenizer_matches(model.tokenizer, model[0].auto_model)
    model.train()
    loss_fn = losses.OnlineContrastiveLoss(model) if loss == "online-contrastive" else \
        losses.MultipleNegativesRankingLoss(model)
    steps_per_epoch = math.ceil(len(examples) / batch_size)
    total_steps = steps_per_epoch * epochs if max_steps is None else min(max_steps, steps_per_epoch * epochs)
    opt = neural.adamw(loss_fn.named_parameters(), lr, o.weight_decay)
    sched = get_linear_schedule_with_warmup(opt, int(warmup * total_steps), max(total_steps, 1))
    if ck:
        neural.restore_trainer(ck[0], opt, sched)
    scaler = torch.amp.GradScaler("cuda") if neural.needs_grad_scaler(device, mixed_precision) else None
    step, seen, last, t0, done = start_epoch * steps_per_epoch, 0, float("nan"), time.perf_counter(), start_epoch
    for epoch in range(start_epoch, epochs):
        if max_steps is not None and step >= max_steps:
            break
        order = list(range(len(examples)))
        random.Random(seed * 1000 + epoch).shuffle(order)
        pos, bs = 0, batch_size
        while pos < len(order) and (max_steps is None or step < max_steps):
            batch = [examples[i] for i in order[pos:pos + bs]]
            try:
                last = _step(model, loss_fn, opt, sched, scaler, batch, loss, device, mixed_precision)
            except RuntimeError as exc:
                bs = neural.halve_on_oom(exc, opt, bs)
                log(f"out of memory: batch size now {bs}")
                continue
            pos += len(batch)
            seen += len(batch)
            step += 1
            progress(min(step / max(total_steps, 1), 0.99),
                     neural.step_message(epoch, epochs, step, total_steps, last, seen, t0))
        done = epoch + 1
        neural.save_checkpoint(out, epoch, lambda d: model.save(str(d)), opt, sched, {"step": step})
    model.save(str(out))
    summary = {"kind": KIND, "base_model": Path(base_model).name, "loss": loss, "steps": step, "epochs": done,
               "final_loss": last, "pairs_per_s": seen / max(time.perf_counter() - t0, 1e-9), "device": device,
               "batch_size": batch_size, "lr": lr, "warmup": warmup, "seed": seed, "n_examples": len(examples),
               "mixed_precision": bool(mixed_precision and device.startswith("cuda")), "versions": neural.versions(),
               "prefixes": [QUERY_PREFIX, CANDIDATE_PREFIX]}
    neural.write_card(out, {**summary, **(card or {})})
    return summary


def _step(model, loss_fn, opt, sched, scaler, batch, loss, device, mixed_precision) -> float:
    import torch

    def feats(texts):
        return {k: (v.to(device) if hasattr(v, "to") else v) for k, v in model.preprocess(list(texts)).items()}

    anchors = feats([QUERY_PREFIX + b[0] for b in batch])
    others = feats([CANDIDATE_PREFIX + b[1] for b in batch])
    with neural.autocast(device, mixed_precision):
        if loss == "online-contrastive":
            labels = torch.as_tensor([b[2] for b in batch], dtype=torch.float32, device=device)
            value = loss_fn([anchors, others], labels)
        else:
            negs = feats([CANDIDATE_PREFIX + b[2] for b in batch])
            value = loss_fn([anchors, others, negs], None)
    (scaler.scale(value) if scaler else value).backward()
    neural.optimizer_step(model, opt, sched, scaler)
    return float(value.detach())
