"""The one registry mechanism (pure): every plug-in point of the platform (job kinds, sharded job kinds, detection
methods, annotation modes, agreement statistics, demo loaders, home-page sections, the detection job's segment
sets and result stores) keeps its entries in a
:class:`Registry`, with one duplicate policy: a name registered twice is refused, naming it, whatever the entry
(two plug-ins silently shadowing each other was possible before, in the registries that overwrote or ignored).
"""
from __future__ import annotations

from typing import Generic, Hashable, TypeVar

T = TypeVar("T")


class Registry(dict, Generic[T]):
    """Name → entry, in registration order (a dict: lookups, iteration and ``pop`` for tests that clean up)."""

    def __init__(self, what: str):
        super().__init__()
        self.what = what

    def add(self, name: Hashable, entry: T) -> T:
        """Register ``entry`` under ``name``; ValueError when the name is taken."""
        if name in self:
            raise ValueError(f"{self.what} {name!r} is already registered")
        self[name] = entry
        return entry
