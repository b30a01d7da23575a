"""The one CSV writer of every export (plain Python, no Django).

Two modes, because a CSV file has two kinds of reader:

- ``MACHINE`` (the API's ``?format=csv``, the per-run CSV endpoints, ``export_scores`` and the other
  commands): every value is written as it is stored, byte for byte, so that reading the file back with
  any CSV parser gives the data unchanged. DBBE verses often begin with ``+`` (a cross) or ``-``; those
  must round-trip untouched.
- ``SPREADSHEET`` (the download links on the pages, and the API with ``?csv=spreadsheet``): a text cell
  that a spreadsheet would run as a formula — one beginning with ``=``, ``+``, ``-``, ``@``, a tab or a
  carriage return — gets a leading apostrophe, so ``=HYPERLINK(…)`` shows as text instead of running.
  Numbers (``-0.25``, ``+3``) are left as they are. Spreadsheets hide the apostrophe; other readers see it.
"""
from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from typing import IO

MACHINE = "machine"
SPREADSHEET = "spreadsheet"
MODES = (MACHINE, SPREADSHEET)

#: First characters that make a spreadsheet treat a cell as a formula (OWASP "CSV injection").
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def neutralise(text: str) -> str:
    """`text` made inert for a spreadsheet: a leading apostrophe when it would start a formula."""
    if text[:1] in FORMULA_PREFIXES and not _is_number(text):
        return "'" + text
    return text


def csv_cell(value, *, mode: str = MACHINE, float_format: str | None = None):
    """One cell: None is empty; floats use `float_format` (e.g. "{:.6f}") when given; text per `mode`."""
    if value is None:
        return ""
    if float_format is not None and isinstance(value, float):
        return float_format.format(value)
    if mode == SPREADSHEET and isinstance(value, str):
        return neutralise(value)
    return value


_SPECIAL = (",", '"', "\n", "\r")


def _field(value) -> str:
    """RFC 4180 quoting. Unlike the csv module with a "\n" line end, a lone carriage return is quoted too,
    so that text holding one reads back unchanged."""
    text = value if isinstance(value, str) else str(value)
    if any(char in text for char in _SPECIAL):
        return '"' + text.replace('"', '""') + '"'
    return text


def _line(cells: list, lineterminator: str) -> str:
    if len(cells) == 1 and cells[0] == "":
        return '""' + lineterminator  # a lone empty field, not an empty line
    return ",".join(_field(cell) for cell in cells) + lineterminator


def write_csv(stream: IO[str], header: Sequence[str], rows: Iterable[Sequence | Mapping], *, mode: str = MACHINE,
              float_format: str | None = None, lineterminator: str = "\n") -> int:
    """Write `header` and `rows` (sequences in header order, or mappings read by header name) to `stream`.

    Returns the number of data rows written.
    """
    if mode not in MODES:
        raise ValueError(f"CSV mode must be one of {', '.join(MODES)}, not {mode!r}")
    stream.write(_line([csv_cell(h, mode=mode) for h in header], lineterminator))
    count = 0
    for row in rows:
        values = [row.get(h) for h in header] if isinstance(row, Mapping) else row
        stream.write(_line([csv_cell(v, mode=mode, float_format=float_format) for v in values], lineterminator))
        count += 1
    return count


def csv_text(header: Sequence[str], rows: Iterable[Sequence | Mapping], *, mode: str = MACHINE,
             float_format: str | None = None, lineterminator: str = "\n") -> str:
    """`write_csv` into a string."""
    out = io.StringIO()
    write_csv(out, header, rows, mode=mode, float_format=float_format, lineterminator=lineterminator)
    return out.getvalue()
