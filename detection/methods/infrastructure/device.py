"""Which torch device a neural method runs on. Torch is imported only when this is called."""
from __future__ import annotations

import logging

log = logging.getLogger(__name__)


def resolve_device(device: str = "auto") -> str:
    """``auto`` → ``cuda`` when a CUDA device is present, else ``cpu`` (logged); ``cuda`` without one → error."""
    import torch

    if device in (None, "", "auto"):
        if torch.cuda.is_available():
            return "cuda"
        log.info("no CUDA device: running on the CPU")
        return "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {device!r} was asked for but no CUDA device is present")
    return device
