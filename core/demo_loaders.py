"""Apps register demo-data loaders here (in their AppConfig.ready); `load_demo` runs them in order."""
from __future__ import annotations

from typing import Callable

from core.registries import Registry

_LOADERS: Registry[tuple[int, Callable[[], str]]] = Registry("demo loader")  # name -> (order, loader)


def register(name: str, loader: Callable[[], str], order: int = 50) -> None:
    _LOADERS.add(name, (order, loader))


def run_demo_loaders() -> list[tuple[str, str]]:
    return [(name, loader()) for name, (_, loader) in sorted(_LOADERS.items(), key=lambda item: (item[1][0], item[0]))]
