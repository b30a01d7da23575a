"""What the neural trainers share: seeding, device and mixed precision, out-of-memory back-off, per-epoch
checkpoints that a cancelled or crashed run resumes from, the model card (``similia.json``) and the versions
recorded with every model. Torch is imported inside the functions (workers only).
"""
from __future__ import annotations

import json
import os
import platform
import random
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path

CARD = "similia.json"
PRETRAINED_KIND = "pretrained-encoder"  # a masked-language model pretrained here (detection/methods/semantic/pretrain.py)
CHECKPOINT = "checkpoint-last"


class TrainingFailed(RuntimeError):
    """A training run that cannot go on (out of memory at batch size 1, a corrupt checkpoint, a bad model)."""


NEURAL_LIBS = ("torch", "transformers", "sentence_transformers", "tokenizers", "numpy")


@dataclass(frozen=True)
class TrainingOptions:
    """How a neural trainer trains, as one value (sentence-transformers' training arguments are the model): the
    trainers take their data, their output folder, callbacks and one of these; each trainer extends it with its own
    fields (``CrossEncoderOptions``, ``BiEncoderOptions``). ``resume``: continue from ``out_dir/checkpoint-last``
    when it is there; ``max_steps``: stop after this many optimizer steps (tests, smoke runs), None = all epochs."""

    epochs: int = 4
    lr: float = 2e-5
    batch_size: int = 32
    warmup: float = 0.1
    weight_decay: float = 0.01
    seed: int = 42
    device: str = "auto"
    mixed_precision: bool = True
    resume: bool = True
    max_steps: int | None = None

    def __post_init__(self):
        if self.epochs < 1 or self.batch_size < 1:
            raise ValueError("epochs and batch_size must be at least 1")
        if self.max_steps is not None and self.max_steps < 1:
            raise ValueError("max_steps must be at least 1 (or None: all epochs)")

    @classmethod
    def from_params(cls, params: Mapping) -> TrainingOptions:
        """The options among a training request's validated parameters (the page's, the API's and the command's
        map into this); keys that are not options (a negative sampler, a ratio) are left to the caller."""
        return cls(**{f.name: params[f.name] for f in fields(cls) if f.name in params})

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def versions(libs=NEURAL_LIBS) -> dict:
    """Library versions recorded with a model, so that a run can be repeated (imports ``libs``)."""
    out = {"python": platform.python_version()}
    for mod in libs:
        try:
            out[mod] = __import__(mod).__version__
        except (ImportError, AttributeError):  # a library that is not installed is simply not recorded
            out[mod] = None
    return out


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def pick_device(device: str = "auto", log: Callable[[str], None] | None = None) -> str:
    """``auto``: CUDA when present, else the CPU, saying so in the job log."""
    from detection.methods.infrastructure.device import resolve_device

    resolved = resolve_device(device)
    if resolved == "cpu" and log is not None:
        log("no CUDA device: training on the CPU (slow; mixed precision off)")
    return resolved


def autocast(device: str, enabled: bool = True):
    """bf16 autocast on a CUDA device that supports it, fp16 otherwise; nothing on the CPU."""
    import contextlib

    import torch

    if not enabled or not device.startswith("cuda"):
        return contextlib.nullcontext()
    dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.autocast("cuda", dtype=dtype)


def needs_grad_scaler(device: str, enabled: bool = True) -> bool:
    import torch

    return enabled and device.startswith("cuda") and not torch.cuda.is_bf16_supported()


def is_oom(exc: BaseException) -> bool:
    import torch

    return isinstance(exc, torch.cuda.OutOfMemoryError) or "out of memory" in str(exc).lower()


def free_cuda() -> None:
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def check_tokenizer_matches(tokenizer, model) -> None:
    """A tokenizer whose ids the model cannot embed is refused before training or scoring starts."""
    vocab = getattr(getattr(model, "config", None), "vocab_size", None)
    if vocab is not None and len(tokenizer) > vocab:
        raise TrainingFailed(f"tokenizer/model mismatch: the tokenizer has {len(tokenizer)} tokens but the model "
                             f"embeds only {vocab}")


def write_card(directory, card: dict) -> None:
    Path(directory, CARD).write_text(json.dumps(card, indent=1, sort_keys=True), encoding="utf-8")


def read_card(directory) -> dict:
    path = Path(directory, CARD)
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise TrainingFailed(f"corrupt model card {path.name} in {Path(directory).name}: {exc}") from None


def save_checkpoint(out_dir, epoch: int, save_model: Callable[[Path], None], optimizer, scheduler,
                    extra: dict | None = None) -> Path:
    """Write ``out_dir/checkpoint-last`` atomically (a temporary folder renamed over the old one)."""
    import torch

    out = Path(out_dir)
    tmp = out / (CHECKPOINT + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    save_model(tmp)
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}, tmp / "trainer.pt")
    (tmp / "state.json").write_text(json.dumps({"epoch": epoch, **(extra or {})}), encoding="utf-8")
    final = out / CHECKPOINT
    old = out / (CHECKPOINT + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        os.replace(final, old)
    os.replace(tmp, final)
    shutil.rmtree(old, ignore_errors=True)
    return final


def load_checkpoint_state(out_dir) -> tuple[Path, dict] | None:
    """(checkpoint folder, its state) when ``out_dir`` holds a finished epoch's checkpoint, else None;
    TrainingFailed when it is there but unreadable."""
    ck = Path(out_dir) / CHECKPOINT
    if not ck.is_dir():
        return None
    try:
        state = json.loads((ck / "state.json").read_text(encoding="utf-8"))
        int(state["epoch"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TrainingFailed(f"corrupt checkpoint in {Path(out_dir).name}/{CHECKPOINT}: {exc}; delete it to start "
                             f"over") from None
    return ck, state


def restore_trainer(ck: Path, optimizer, scheduler) -> None:
    import torch

    try:
        st = torch.load(ck / "trainer.pt", map_location="cpu", weights_only=True)
        optimizer.load_state_dict(st["optimizer"])
        scheduler.load_state_dict(st["scheduler"])
    except (OSError, RuntimeError, KeyError, ValueError, EOFError) as exc:  # never train on garbage
        raise TrainingFailed(f"corrupt checkpoint {ck.parent.name}/{ck.name}: {exc}; delete it to start over"
                             ) from None


def adamw(named_parameters, lr: float, weight_decay: float):
    """AdamW (0.9, 0.999, 1e-8) without weight decay on biases and layer norms (Appendix D.4)."""
    import torch

    params = list(named_parameters)
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
    return torch.optim.AdamW(
        [{"params": [p for n, p in params if not any(x in n for x in no_decay)], "weight_decay": weight_decay},
         {"params": [p for n, p in params if any(x in n for x in no_decay)], "weight_decay": 0.0}],
        lr=lr, betas=(0.9, 0.999), eps=1e-8)


def optimizer_step(model, opt, sched, scaler, max_grad_norm: float = 1.0) -> None:
    """Clip (after unscaling fp16 gradients), step the optimizer and the schedule, clear the gradients."""
    import torch

    if scaler:
        scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    if scaler:
        scaler.step(opt)
        scaler.update()
    else:
        opt.step()
    sched.step()
    opt.zero_grad(set_to_none=True)


def halve_on_oom(exc: BaseException, opt, batch_size: int) -> int:
    """The halved batch size after an out-of-memory error (gradients dropped, CUDA cache freed); re-raises any
    other error, TrainingFailed at batch size 1."""
    if not is_oom(exc):
        raise exc
    opt.zero_grad(set_to_none=True)
    free_cuda()
    if batch_size == 1:
        raise TrainingFailed("out of memory even at batch size 1: use a smaller model or max_length") from None
    return batch_size // 2


def step_message(epoch: int, epochs: int, step: int, total: int, loss: float, seen: int, t0: float) -> str:
    import time

    rate = seen / max(time.perf_counter() - t0, 1e-9)
    return f"epoch {epoch + 1}/{epochs} step {step}/{total} loss {loss:.4f} {rate:.1f} pairs/s"
