"""Uploaded documents → segments, with limits. Every refusal is an :class:`UploadError` naming the file and,
where there is one, the line.

Formats (the Latin engine's readers, :mod:`detection.latin.readers`): ``csv`` (``seg_id,text[,author,work]``,
the ``locisimiles`` input format), ``tess`` (Tesserae ``<ref>\\ttext``), ``tei`` (TEI/EpiDoc) and ``plain``
(paragraphs). The last three are split into sentences with stable ids (``<prefix> <ref>.<n>``).
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from detection.latin.errors import InputError
from detection.latin.readers import (
    read_plain,
    read_segments_csv,
    read_tei,
    read_tess,
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


def guess_format(name: str) -> str:
    """The format of a file by its suffix; UploadError when the suffix says nothing."""
    fmt = _SUFFIXES.get(Path(name).suffix.lower())
    if fmt is None:
        raise UploadError(f"{name}: cannot tell the format from the name; choose one of {', '.join(FORMATS)} "
                          f"(suffixes {', '.join(_SUFFIXES)})")
    return fmt


def parse_upload(name: str, data: bytes, fmt: str | None = None, *, max_bytes: int, max_segments: int,
                 prefix: str | None = None) -> ParsedDocument:
    """Segments of an uploaded file.

    Args:
        name: the file name the user gave (used in messages and as the default id prefix, never as a path).
        data: the file's bytes.
        fmt: one of FORMATS, or None to guess from the name.
        max_bytes / max_segments: limits; beyond them an UploadError says which and by how much.
        prefix: id prefix for tess/tei/plain sentences (default: the .tess file's own prefix, else the name's stem).
    """
    fmt = fmt or guess_format(name)
    if fmt not in FORMATS:
        raise UploadError(f"{name}: unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if len(data) > max_bytes:
        raise UploadError(f"{name}: the file is {len(data):,} bytes; the limit is {max_bytes:,}")
    if not data.strip():
        raise UploadError(f"{name}: the file is empty")
    suffix = {"csv": ".csv", "tess": ".tess", "tei": ".xml", "plain": ".txt"}[fmt]
    fd, tmp = tempfile.mkstemp(suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        segments = _read(tmp, fmt, prefix if prefix is not None else None, Path(name).stem)
    except InputError as err:
        where = f"{name}, line {err.line}" if err.line is not None else name
        raise UploadError(f"{where}: {err.reason}") from None
    finally:
        os.unlink(tmp)
    if not segments:
        raise UploadError(f"{name}: no text segments found")
    if len(segments) > max_segments:
        raise UploadError(f"{name}: {len(segments):,} segments; the limit is {max_segments:,} per document")
    seen: set[str] = set()
    for seg in segments:
        if len(seg.seg_id) > MAX_ID_LENGTH:
            raise UploadError(f"{name}: segment id {seg.seg_id[:40]!r}… is longer than {MAX_ID_LENGTH} characters")
        if seg.seg_id in seen:  # e.g. a .tess file that repeats a reference
            raise UploadError(f"{name}: segment id {seg.seg_id!r} occurs twice")
        seen.add(seg.seg_id)
    return ParsedDocument(name=name, format=fmt, segments=segments)


def _read(path: str, fmt: str, prefix: str | None, stem: str) -> list[Segment]:
    if fmt == "csv":
        return read_segments_csv(path)
    if fmt == "tess":
        units = read_tess(path)
        verse = bool(units) and sum(len(u.text) for u in units) / len(units) < 80  # short lines: verse
        pre = prefix if prefix is not None else (tess_prefix(path) or stem)
        if verse:  # a poem is searched line by line (a run may join them into windows: its ``unit``)
            return [Segment(seg_id=f"{pre} {u.ref}", text=u.text, ref=u.ref) for u in units if u.text.strip()]
        return segment_units(units, pre, verse=False)
    units = read_tei(path) if fmt == "tei" else read_plain(path)
    return segment_units(units, prefix if prefix is not None else stem)
