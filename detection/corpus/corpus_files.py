"""A corpus's works read from a folder or an archive of Tesserae ``.tess`` files (and plain ``.txt`` files).

Every segment keeps its citation: the work (``vergil.aeneid``: author ``vergil``, title ``aeneid``), the
citation prefix of its ``.tess`` lines (``verg. aen.``) and the reference inside the work. Verse works (short
lines) are searched line by line, the reference a line's (``1.1``); prose works (long sections) and plain text are
split into sentences (:func:`detection.latin.segment.segment_units`), the reference the section's with the
sentence's number (``1.1.2``: section 1.1, its second sentence). A malformed line is reported as ``file, line N``
in the :class:`ReadReport` and the reading goes on.
"""
from __future__ import annotations

import statistics
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from detection.latin.errors import InputError
from detection.latin.readers import ReadReport, read_plain, read_tess, tess_prefix
from detection.latin.segment import segment_units

VERSE_MAX_MEDIAN_CHARS = 90  # a work whose median line is longer than this is prose (Tesserae prose sections)
SUFFIXES = (".tess", ".txt")
ARCHIVES = (".tar.xz", ".tar.gz", ".tgz", ".tar", ".zip")


@dataclass
class Work:
    """One work of a corpus and its segments (refs and texts in reading order)."""

    key: str  # the file's stem, unique in a corpus: "vergil.aeneid"
    author: str
    title: str
    cite: str  # the citation prefix of its lines: "verg. aen."
    genre: str  # "verse" | "prose"
    refs: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)


def new_report() -> ReadReport:
    return ReadReport(max_messages=1000)


def _names(stem: str) -> tuple[str, str]:
    author, _, title = stem.partition(".")
    return author.replace("_", " "), (title or stem).replace("_", " ")


def read_work(path: Path, *, report: ReadReport, key: str | None = None) -> Work | None:
    """The work in one file (None when nothing in it could be read; the report says why)."""
    key = key or path.name.removesuffix(".txt").removesuffix(".tess")
    author, title = _names(key)
    try:
        if path.name.endswith(".tess"):
            units, cite = read_tess(path, report=report), tess_prefix(path)
        else:
            units, cite = read_plain(path, report=report), key
    except InputError as exc:  # an unreadable file (encoding): reported, the build goes on
        report.add("unreadable file", exc)
        return None
    if not units:
        return None
    verse = path.name.endswith(".tess") and statistics.median(len(u.text) for u in units) <= VERSE_MAX_MEDIAN_CHARS
    work = Work(key, author, title, cite, "verse" if verse else "prose")
    if verse:
        work.refs, work.texts = [u.ref for u in units], [u.text for u in units]
    else:
        for seg in segment_units(units, "", verse=False):
            work.refs.append(seg.seg_id)
            work.texts.append(seg.text)
    return work


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name.endswith(SUFFIXES)
                  and not p.name.startswith("."))


def read_corpus(path, *, report: ReadReport, only: Callable[[str], bool] | None = None) -> Iterator[Work]:
    """The works of a folder or an archive (``.tar.xz``, ``.tar.gz``, ``.tar``, ``.zip``) of ``.tess`` and
    ``.txt`` files, by file name; ``only(key)``: whether to read a work (None: all; the others are not parsed). An archive's members are read by
    their base names into a private temporary folder (no member path is followed)."""
    path = Path(path)
    if path.is_dir():
        yield from _works(_files(path), report, only)
        return
    if not path.is_file() or not path.name.endswith(ARCHIVES):
        raise InputError("not a folder or an archive (.tar.xz, .tar.gz, .tar, .zip) of .tess files", path=path)
    with tempfile.TemporaryDirectory(prefix="similia-corpus-") as tmp:
        _unpack(path, Path(tmp))
        yield from _works(_files(Path(tmp)), report, only)


def _works(files: list[Path], report: ReadReport, only: Callable[[str], bool] | None) -> Iterator[Work]:
    seen: set[str] = set()
    for f in files:
        key = f.name.removesuffix(".txt").removesuffix(".tess")
        if (only is not None and not only(key)) or key in seen:
            continue
        seen.add(key)
        work = read_work(f, report=report, key=key)
        if work is not None:
            yield work


def _unpack(archive: Path, dest: Path) -> None:
    def target(name: str) -> Path | None:
        base = Path(name).name
        if not base.endswith(SUFFIXES) or base.startswith("."):
            return None
        return dest / base

    try:
        if archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                for info in zf.infolist():
                    out = None if info.is_dir() else target(info.filename)
                    if out is not None:
                        out.write_bytes(zf.read(info))
            return
        with tarfile.open(archive) as tf:
            for member in tf:
                out = target(member.name) if member.isfile() else None
                if out is not None:
                    out.write_bytes(tf.extractfile(member).read())
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
        raise InputError(f"cannot read the archive: {exc}", path=archive) from None
