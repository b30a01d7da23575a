"""Apps register demo-data loaders here (in their AppConfig.ready); `load_demo` runs them in order."""
from __future__ import annotations

from typing import Callable

_LOADERS: list[tuple[int, str, Callable[[], str]]] = []


def register(name: str, loader: Callable[[], str], order: int = 50) -> None:
    if all(existing != name for _, existing, _ in _LOADERS):
        _LOADERS.append((order, name, loader))


def run_demo_loaders() -> list[tuple[str, str]]:
    return [(name, loader()) for _, name, loader in sorted(_LOADERS, key=lambda item: (item[0], item[1]))]
