"""Errors raised by the Latin text engine."""
from __future__ import annotations


class InputError(ValueError):
    """Bad user input (file format, encoding, ids, script). The message names the file and line."""

    def __init__(self, message: str, *, path: object | None = None, line: int | None = None):
        self.path = None if path is None else str(path)
        self.line = line
        self.reason = message
        where = ""
        if self.path is not None:
            where = self.path + (f", line {line}" if line is not None else "")
        super().__init__(f"{where}: {message}" if where else message)
