"""JSON from users with a nesting limit (no Django imports: the verse importer uses it too).

Python's decoder recurses once per level and fails with RecursionError near 1,000 levels; code
that walks the result (serialisers, renderers, JSONField) recurses again. Anything deeper than
`max_depth` is refused with a message instead."""
from __future__ import annotations

import json

DEFAULT_MAX_DEPTH = 64


class JSONTooDeep(ValueError):
    def __init__(self, max_depth: int):
        super().__init__(f"JSON nested too deeply (more than {max_depth} levels).")
        self.max_depth = max_depth


def depth_exceeds(value, max_depth: int) -> bool:
    """True when lists/objects nest more than `max_depth` levels (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > max_depth:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def contains_nul(value) -> bool:
    """True when any string (key or value) holds U+0000, which PostgreSQL cannot store in text or jsonb."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def loads(text: str | bytes, *, max_depth: int = DEFAULT_MAX_DEPTH, **kwargs):
    """json.loads that raises JSONTooDeep beyond `max_depth` levels.

    Other problems raise ValueError as json.loads does (json.JSONDecodeError for bad syntax, a
    plain ValueError for an integer of more than 4,300 digits)."""
    try:
        value = json.loads(text, **kwargs)
    except RecursionError:
        raise JSONTooDeep(max_depth) from None
    if depth_exceeds(value, max_depth):
        raise JSONTooDeep(max_depth)
    return value
