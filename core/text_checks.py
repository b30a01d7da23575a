"""Characters no uploaded text may carry (pure: no Django).

PostgreSQL cannot store U+0000 in text (a NUL that reaches a save is a server error there, and SQLite stores it
as is); other control characters (BEL, ESC, …) and the bidirectional overrides and isolates (U+202A–U+202E,
U+2066–U+2069: an RTL override makes a verse display reversed, or hides what it says) are never part of a
philological text. `first_control_character` finds the first one with its line and column, so an upload is
refused with a message that names where it is and what it is; tab, line feed and carriage return are allowed.
"""
from __future__ import annotations

import re
import unicodedata

_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _name(char: str) -> str:
    names = {"\x00": "NUL", "\x07": "BEL", "\x08": "BACKSPACE", "\x1b": "ESC", "\x7f": "DEL"}
    return names.get(char) or unicodedata.name(char, "control character")


def first_control_character(text: str) -> tuple[int, int, str] | None:
    """(line, column, description) of the first forbidden character in `text` (1-based), or None."""
    found = _FORBIDDEN.search(text)
    if found is None:
        return None
    start = found.start()
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    char = found.group()
    return line, column, f"U+{ord(char):04X} {_name(char)}"


def control_character_message(text: str) -> str | None:
    """A sentence naming the first forbidden character and where it is, or None when there is none."""
    found = first_control_character(text)
    if found is None:
        return None
    line, column, what = found
    return (f"line {line}, column {column}: the control character {what} is not allowed in a text "
            f"(remove it and upload again; tabs and line breaks are fine)")
