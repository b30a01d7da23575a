"""Uploaded documents → segments, with limits. Every refusal is an :class:`UploadError` naming the file and,
where there is one, the line.

Formats (the Latin engine's readers, :mod:`detection.latin.readers`): ``csv`` (``seg_id,text[,author,work]``,
the ``locisimiles`` input format), ``tess`` (Tesserae ``<ref>\\ttext``), ``tei`` (TEI/EpiDoc) and ``plain``
(paragraphs). The last three are split into sentences with stable ids (``<prefix> <ref>.<n>``).

A file is read as ``manage.py detect --skip-bad-rows`` reads it, through the same readers: mis-decoded dashes
repaired, a row that cannot be a segment (a repeated id, an empty or non-Latin text) skipped and counted in the
document's :class:`~detection.latin.readers.ReadReport`, the rest refused naming the line. Refused here and not by
``detect`` (which stores nothing): a control character that remains (NUL, BEL, an RTL override …).
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from core.text_checks import control_character_message
from detection.latin.errors import InputError
from detection.latin.readers import (
    ReadReport,
    duplicate_id_error,
    read_plain,
    read_segments_csv,
    read_tei,
    read_tess,
    read_text_file,
    tess_prefix,
)
from detection.latin.segment import Segment, segment_units

FORMATS = {"csv": "CSV seg_id,text", "tess": "Tesserae .tess", "tei": "TEI / EpiDoc XML",
           "plain": "plain text (paragraphs)"}
MAX_ID_LENGTH = 300  # workbench.DocumentSegment.seg_id
_SUFFIXES = {".csv": "csv", ".tess": "tess", ".xml": "tei", ".tei": "tei", ".txt": "plain"}


class UploadError(ValueError):
    """An upload that cannot be read; the message names the file (and line)."""


@dataclass(frozen=True)
class ParsedDocument:
    name: str
    format: str
    segments: list[Segment]
    skipped: ReadReport

    def skipped_note(self) -> dict:
        """What reading skipped, for the document's provenance (nothing when nothing was)."""
        if not self.skipped.total_skipped:
            return {}
        return {"skipped": self.skipped.summary(_noun(self.format)),
                "skipped_rows": [_where(self.name, err) for err in self.skipped.errors[:10]]}


def guess_format(name: str) -> str:
    """The format of a file by its suffix; UploadError when the suffix says nothing."""
    fmt = _SUFFIXES.get(Path(name).suffix.lower())
    if fmt is None:
        raise UploadError(f"{name}: cannot tell the format from the name; choose one of {', '.join(FORMATS)} "
                          f"(suffixes {', '.join(_SUFFIXES)})")
    return fmt


def parse_upload(name: str, data: bytes, fmt: str | None = None, *, max_bytes: int, max_segments: int,
                 prefix: str | None = None, max_columns: int = 50) -> ParsedDocument:
    """Segments of an uploaded file.

    Args:
        name: the file name the user gave (used in messages and as the default id prefix, never as a path).
        data: the file's bytes.
        fmt: one of FORMATS, or None to guess from the name.
        max_bytes / max_segments / max_columns: limits; beyond them an UploadError says which and by how much
            (a CSV is refused at the first segment past `max_segments`, while it is read).
        prefix: id prefix for tess/tei/plain sentences (default: the .tess file's own prefix, else the name's stem).
    """
    fmt = fmt or guess_format(name)
    if fmt not in FORMATS:
        raise UploadError(f"{name}: unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if len(data) > max_bytes:
        raise UploadError(f"{name}: the file is {len(data):,} bytes; the limit is {max_bytes:,}")
    if not data.strip():
        raise UploadError(f"{name}: the file is empty")
    report = ReadReport()
    suffix = {"csv": ".csv", "tess": ".tess", "tei": ".xml", "plain": ".txt"}[fmt]
    fd, tmp = tempfile.mkstemp(suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        # NUL (a server error on PostgreSQL), BEL, an RTL override … left once the text is read as detect reads
        # it (mis-decoded dashes repaired): refused, naming line and column.
        problem = control_character_message(read_text_file(tmp))
        if problem:
            raise UploadError(f"{name}, {problem}")
        segments = _read(tmp, fmt, prefix if prefix is not None else None, Path(name).stem, report,
                         max_columns=max_columns, max_segments=max_segments)
    except InputError as err:
        raise UploadError(_where(name, err)) from None
    finally:
        os.unlink(tmp)
    if not segments:
        first = f" ({report.summary(_noun(fmt))}; the first: {_where(name, report.errors[0])})" if report.errors else ""
        raise UploadError(f"{name}: no text segments found{first}")
    if len(segments) > max_segments:
        raise UploadError(f"{name}: {len(segments):,} segments; the limit is {max_segments:,} per document")
    for seg in segments:
        if len(seg.seg_id) > MAX_ID_LENGTH:
            raise UploadError(f"{name}: segment id {seg.seg_id[:40]!r}… is longer than {MAX_ID_LENGTH} characters")
    return ParsedDocument(name=name, format=fmt, segments=segments, skipped=report)


def _noun(fmt: str) -> str:
    return "rows" if fmt == "csv" else "lines"


def _where(name: str, err: InputError) -> str:
    """An InputError's message with the user's file name, not the temporary file's."""
    return f"{name}, line {err.line}: {err.reason}" if err.line is not None else f"{name}: {err.reason}"


def _read(path: str, fmt: str, prefix: str | None, stem: str, report: ReadReport, *, max_columns: int,
          max_segments: int) -> list[Segment]:
    if fmt == "csv":
        return read_segments_csv(path, report=report, max_columns=max_columns, max_segments=max_segments)
    if fmt == "tess":
        units = read_tess(path, report=report)
        verse = bool(units) and sum(len(u.text) for u in units) / len(units) < 80  # short lines: verse
        pre = prefix if prefix is not None else (tess_prefix(path) or stem)
        if verse:  # a poem is searched line by line (a run may join them into windows: its ``unit``)
            return _first_of_each_id([(Segment(seg_id=f"{pre} {u.ref}", text=u.text, ref=u.ref), u.line)
                                      for u in units if u.text.strip()], report, path)
        return _first_of_each_id([(s, None) for s in segment_units(units, pre, verse=False)], report, path)
    units = read_tei(path, report=report) if fmt == "tei" else read_plain(path, report=report)
    return _first_of_each_id([(s, None) for s in segment_units(units, prefix if prefix is not None else stem)],
                             report, path)


def _first_of_each_id(rows: list[tuple[Segment, int | None]], report: ReadReport, path) -> list[Segment]:
    """The segments with each id's first one kept and the later ones counted in `report` (a .tess file that
    repeats a mis-numbered reference), as the CSV reader does."""
    first: dict[str, int | None] = {}
    out = []
    for seg, line in rows:
        if seg.seg_id in first:
            kept = first[seg.seg_id]
            report.add("duplicate id", InputError(f"duplicate id {seg.seg_id!r} (the first kept)", path=path)
                       if kept is None or line is None else duplicate_id_error("id", seg.seg_id, kept, path=path,
                                                                                line=line))
            continue
        first[seg.seg_id] = line
        out.append(seg)
    return out
