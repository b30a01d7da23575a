"""The one guarded reader of JSON and numbers from users (no Django imports: the importers and the method registry
use it too).

Python's decoder recurses once per level and fails with RecursionError near 1,000 levels; code that walks the result
(serialisers, renderers, JSONField) recurses again. Anything deeper than `max_depth` is refused with a message
instead. A number is read once, here, within what a 64-bit column and a float hold: a whole number beyond
±(2**63 - 1) (10**309 made `float()` raise OverflowError deep in a service, and a seed overflowed its column) and a
number that is not finite as a float (1e400) are refused with a sentence, as is a 5,000-digit one (which `int()`
refuses with a traceback). So is a string (key or value) holding U+0000 or a lone UTF-16 surrogate (`"\\ud800"`:
valid JSON, but no encoding writes it, so the first response or save echoing it was a 500). Every refusal is a
ValueError (`JSONRefused`) whose text is for the user."""
from __future__ import annotations

import json
import math
import re

DEFAULT_MAX_DEPTH = 64
INT_MAX = 2**63 - 1  # BigAutoField and every 64-bit column, on SQLite and PostgreSQL
_DIGITS = re.compile(r"[+-]?[0-9]{1,30}")
_SHOWN = 24


class JSONRefused(ValueError):
    """Input this reader refuses; the text says why, for the user; `path` where in the value (when known)."""

    path = ""


class JSONTooDeep(JSONRefused):
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


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable_character(text: str) -> str | None:
    """What is wrong with `text` when it holds U+0000 (PostgreSQL cannot store it in text or jsonb) or a lone UTF-16
    surrogate (a JSON "\\ud800": no encoding writes it, so a response or a save echoing it was a 500), else None."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return "a NUL character (U+0000); no field accepts one"
    return f"a lone UTF-16 surrogate (U+{ord(found.group()):04X}), not a character; no field accepts one"


def _key(key) -> str:
    return str(key).encode("utf-8", "backslashreplace").decode("utf-8")


def _shown(text: str, unit: str = "characters") -> str:
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}… ({len(text)} {unit})"


def _out_of_range(value) -> JSONRefused:
    return JSONRefused(f"{_shown(str(value), 'digits')} is out of range: whole numbers are within ±{INT_MAX}")


def whole_number(value) -> int:
    """An int within ±INT_MAX from an int, an integral float or ASCII digits (a sign allowed); JSONRefused else."""
    if isinstance(value, bool):
        raise JSONRefused("must be an integer, not a boolean")
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    elif isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        value = int(value.strip())
    elif not isinstance(value, int):
        raise JSONRefused(f"must be an integer, not {_shown(repr(value))}")
    if abs(value) > INT_MAX:
        raise _out_of_range(value)
    return value


def real_number(value) -> float:
    """A finite float from an int within ±INT_MAX, a float or a short ASCII decimal; JSONRefused else."""
    if isinstance(value, bool):
        raise JSONRefused("must be a number, not a boolean")
    if isinstance(value, int):
        return float(whole_number(value))
    if isinstance(value, str) and len(value.strip()) <= 40 and value.strip().isascii():
        try:
            value = float(value.strip())
        except ValueError:
            raise JSONRefused(f"must be a number, not {_shown(repr(value))}") from None
    if not isinstance(value, float):
        raise JSONRefused(f"must be a number, not {_shown(repr(value))}")
    if not math.isfinite(value):
        raise JSONRefused(f"must be a finite number, not {value}")
    return value


class _LongNumber(str):
    """A JSON number of more digits than `int()` reads, kept as text for `check` to refuse with its place."""


class _Key(str):
    """An object's key, on `check`'s stack beside its value."""


def _json_int(text: str):
    return _LongNumber(text) if len(text) > 30 else int(text)


def _json_constant(name: str):
    raise JSONRefused(f"{name} is not a JSON number")


def loads(text: str | bytes, *, max_depth: int = DEFAULT_MAX_DEPTH):
    """json.loads held to `check`'s rules (NaN and Infinity refused): JSONRefused (JSONTooDeep for the nesting)
    with a sentence, or json.JSONDecodeError (a ValueError) for bad syntax."""
    try:
        value = json.loads(text, parse_int=_json_int, parse_constant=_json_constant)
    except RecursionError:
        raise JSONTooDeep(max_depth) from None
    return check(value, max_depth=max_depth)


def check(value, *, max_depth: int = DEFAULT_MAX_DEPTH):
    """`value` (parsed JSON) if it nests at most `max_depth` levels, each number is a whole number within
    ±INT_MAX or a finite float and no string (key or value) holds a NUL or a lone surrogate; else JSONRefused, its
    `path` the place of the value (e.g. ``params.k1``)."""
    if depth_exceeds(value, max_depth):
        raise JSONTooDeep(max_depth)
    stack = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            for k, v in item.items():
                key_path = f"{path}.{_key(k)}" if path else _key(k)
                stack.extend([(v, key_path), (_Key(k), key_path)])
        elif isinstance(item, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(item))
        elif isinstance(item, str) and not isinstance(item, _LongNumber):
            problem = unstorable_character(item)
            if problem:
                exc = JSONRefused(f"{'the name' if isinstance(item, _Key) else 'the value'} holds {problem}.")
                exc.path = path
                raise exc
        elif isinstance(item, (_LongNumber, float)) or (isinstance(item, int) and not isinstance(item, bool)):
            try:
                if isinstance(item, _LongNumber):
                    raise _out_of_range(item)
                whole_number(item) if isinstance(item, int) else real_number(item)
            except JSONRefused as exc:
                exc.path = path
                raise
    return value
