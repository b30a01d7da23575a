"""Readers for real input formats; every error is an :class:`InputError` naming the file and line.

* :func:`read_segments_csv` - a Loci Similes style CSV (``seg_id,text`` plus optional ``author,work,ref``);
* :func:`read_tess` - a Tesserae ``.tess`` file (``<ref>\\ttext``, one verse line or prose section a line);
* :func:`read_tei` - TEI/EpiDoc (the CSEL files): nested ``textpart`` divs or ``<l n=..>`` verse lines,
  with notes (apparatus, footnotes), headings, page/line breaks and ``sic`` readings removed;
* :func:`read_plain` - plain text, one unit per paragraph (blank-line separated).

Readers that take ``report`` skip bad rows and count them in it instead of raising; nothing is dropped
without being counted.
"""
from __future__ import annotations

import codecs
import collections
import csv
import io
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError
from .normalize import latin_share
from .segment import Segment, Unit

__all__ = ["Segment", "Unit", "ReadReport", "read_text_file", "repair_mojibake", "read_segments_csv", "read_tess", "read_tei",
           "read_plain", "MIN_LATIN_SHARE"]

MIN_LATIN_SHARE = 0.5


@dataclass
class ReadReport:
    """Rows skipped by a reader, by reason, with the first messages."""

    skipped: collections.Counter = field(default_factory=collections.Counter)
    errors: list[InputError] = field(default_factory=list)
    max_messages: int = 50

    def add(self, reason: str, err: InputError) -> None:
        self.skipped[reason] += 1
        if len(self.errors) < self.max_messages:
            self.errors.append(err)

    @property
    def messages(self) -> list[str]:
        """The first skipped rows, each naming its file and line."""
        return [str(err) for err in self.errors]

    @property
    def total_skipped(self) -> int:
        return sum(self.skipped.values())

    def summary(self, noun: str = "rows") -> str:
        """A sentence: ``"16 lines with an empty text skipped"``, ``"17 lines skipped: 16 with an empty text, 1 not
        of the form <ref> text"``."""
        total = self.total_skipped
        if not total:
            return f"no {noun} skipped"
        noun = noun.removesuffix("s") if total == 1 else noun
        if len(self.skipped) == 1:
            (reason,) = self.skipped
            return f"{total:,} {noun} {_REASONS.get(reason, reason)} skipped"
        reasons = ", ".join(f"{n:,} {_REASONS.get(r, r)}" for r, n in sorted(self.skipped.items()))
        return f"{total:,} {noun} skipped: {reasons}"


# how the readers' reasons for skipping read in a sentence (ReadReport.summary)
_REASONS = {"short row": "with too few fields", "empty id": "without an id", "duplicate id": "repeating an earlier id",
            "empty text": "with an empty text", "not Latin script": "not in Latin script",
            "bad tess line": "not of the form <ref> text", "no text": "without any text",
            "unreadable file": "in a file that could not be read"}


def _fail(report: ReadReport | None, reason: str, err: InputError) -> None:
    if report is None:
        raise err
    report.add(reason, err)


def duplicate_id_error(id_column: str, sid: str, first_line: int, *, path, line: int) -> InputError:
    """The one refusal of a repeated segment id, for every reader of segment files (``detect``,
    ``evaluate_retrieval``, gold imports): ids are how results and gold links name segments."""
    return InputError(f"duplicate {id_column} {sid!r} (first on line {first_line})", path=path, line=line)


# A UTF-8 sequence read as Latin-1 and saved again as UTF-8 (an em dash "—" as "â\x80\x94"): a lead byte
# (U+00C2–U+00F4) and its continuation bytes (U+0080–U+00BF), at least one of them a C1 control character.
_MOJIBAKE = re.compile("[\u00c2-\u00df][\u0080-\u00bf]|[\u00e0-\u00ef][\u0080-\u00bf]{2}"
                       "|[\u00f0-\u00f4][\u0080-\u00bf]{3}")


def _unmangle(match: re.Match) -> str:
    seq = match.group()
    if not any("\x80" <= c <= "\x9f" for c in seq):
        return seq  # "Ã©" could be meant; a C1 control character never is
    try:
        return seq.encode("latin-1").decode("utf-8")
    except UnicodeDecodeError:
        return seq


def repair_mojibake(text: str) -> str:
    """`text` with mis-decoded UTF-8 sequences that carry C1 control characters (``â\x80\x94``) decoded again
    (``—``); everything else as it was."""
    return _MOJIBAKE.sub(_unmangle, text)


def _decode(data: bytes, path) -> str:
    if data.startswith(codecs.BOM_UTF16_LE) or data.startswith(codecs.BOM_UTF16_BE):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise InputError(f"invalid UTF-16: {exc.reason}", path=path) from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"not UTF-8 (unknown encoding; byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "save the file as UTF-8",
            path=path,
            line=line,
        ) from None


def read_text_file(path) -> str:
    """The text of a file, the one way every reader here (so ``detect``, the corpus builds and the workbench
    upload) gets it: UTF-8 (a BOM for UTF-8/UTF-16 is honoured), mis-decoded dashes and quotes repaired
    (:func:`repair_mojibake`); any other encoding is an InputError naming the line."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read file: {exc.strerror or exc}", path=path) from None
    return repair_mojibake(_decode(data, path))


def _check_text(text: str, path, line: int, what: str = "text") -> None:
    if not text or not text.strip():
        raise InputError(f"empty {what}", path=path, line=line)
    share = latin_share(text)
    if share < MIN_LATIN_SHARE:
        raise InputError(
            f"{what} is not in Latin script ({share:.0%} Latin letters): {text[:40]!r}", path=path, line=line
        )


def read_segments_csv(path, *, report: ReadReport | None = None, id_column: str = "seg_id",
                      text_column: str = "text", max_columns: int | None = None,
                      max_segments: int | None = None) -> list[Segment]:
    """Read a ``seg_id,text[,author,work,ref]`` CSV (the ``locisimiles`` input format).

    `max_columns`: a header or row with more fields is refused; `max_segments`: reading stops with an error at the
    first segment past the limit (a million-row file is refused there, not parsed to the end first)."""
    content = read_text_file(path)
    reader = csv.reader(io.StringIO(content, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise InputError("empty file: expected a header with seg_id and text", path=path, line=1) from None
    except csv.Error as exc:
        raise InputError(f"bad CSV: {exc}", path=path, line=1) from None
    if max_columns is not None and len(header) > max_columns:
        raise InputError(f"the header has {len(header):,} columns; the limit is {max_columns}", path=path, line=1)
    cols = [h.strip().lstrip("\ufeff") for h in header]
    missing = [c for c in (id_column, text_column) if c not in cols]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}; found {', '.join(cols) or 'none'} "
            f"(expected a header like '{id_column},{text_column}')",
            path=path,
            line=1,
        )
    ix = {c: i for i, c in enumerate(cols)}
    seen: dict[str, int] = {}
    out: list[Segment] = []
    prev_end = reader.line_num
    while True:
        line = prev_end + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise InputError(f"bad CSV: {exc}", path=path, line=line) from None
        prev_end = reader.line_num
        if max_columns is not None and len(row) > max_columns:
            raise InputError(f"row has {len(row):,} fields; the limit is {max_columns}", path=path, line=line)
        if not row or all(not c.strip() for c in row):
            continue  # blank line, not a row
        if len(row) < len(cols):
            _fail(report, "short row", InputError(
                f"row has {len(row)} field(s), header has {len(cols)}", path=path, line=line))
            continue

        def get(name: str) -> str:
            i = ix.get(name)
            return row[i].strip() if i is not None and i < len(row) else ""

        sid, text = get(id_column), get(text_column)
        if not sid:
            _fail(report, "empty id", InputError(f"empty {id_column}", path=path, line=line))
            continue
        if sid in seen:
            _fail(report, "duplicate id", duplicate_id_error(id_column, sid, seen[sid], path=path, line=line))
            continue
        try:
            _check_text(text, path, line, f"text of {sid!r}")
        except InputError as err:
            _fail(report, "empty text" if not text.strip() else "not Latin script", err)
            continue
        seen[sid] = line
        if max_segments is not None and len(out) >= max_segments:
            raise InputError(f"more than {max_segments:,} segments; the limit is {max_segments:,} per document",
                             path=path, line=line)
        out.append(Segment(seg_id=sid, text=text, author=get("author"), work=get("work"), ref=get("ref")))
    return out


_TESS_LINE = re.compile(r"^<([^<>]+)>\s*(.*)$")


def read_tess(path, *, report: ReadReport | None = None) -> list[Unit]:
    """Units of a Tesserae ``.tess`` file; ``Unit.ref`` is the numeric part (``2.774`` of ``verg. aen. 2.774``)."""
    content = read_text_file(path)
    out: list[Unit] = []
    for lineno, raw in enumerate(content.splitlines(), 1):
        if not raw.strip():
            continue
        m = _TESS_LINE.match(raw.strip())
        if m is None:
            _fail(report, "bad tess line", InputError(
                f"expected '<ref>\\ttext', got {raw[:40]!r}", path=path, line=lineno))
            continue
        ref_full, text = m.group(1).strip(), m.group(2).strip()
        parts = ref_full.split()
        ref = parts[-1] if parts else ""
        if not ref:
            _fail(report, "bad tess line", InputError("empty reference", path=path, line=lineno))
            continue
        if not text:
            _fail(report, "empty text", InputError(f"empty text for <{ref_full}>", path=path, line=lineno))
            continue
        out.append(Unit(ref=ref, text=text, line=lineno))
    return out


def tess_prefix(path) -> str:
    """The citation prefix a .tess file uses (``verg. aen.``), from its first line."""
    for raw in read_text_file(path).splitlines():
        m = _TESS_LINE.match(raw.strip())
        if m:
            return " ".join(m.group(1).split()[:-1])
    return ""


_TEI = "{http://www.tei-c.org/ns/1.0}"
_SKIP = {"note", "head", "title", "ab", "sic", "orig", "fw", "bibl", "figure", "del", "teiHeader", "gap",
         "abbr", "milestone", "ref"}


def _local(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _tei_text(el, skip_self: bool = False) -> str:
    """Text of ``el`` without notes/headings/sic; line-break hyphens rejoined."""
    parts: list[str] = []

    def walk(node, top=False):
        tag = _local(node.tag)
        if not top and tag in _SKIP:
            if node.tail:
                parts.append(node.tail)
            return
        if not top and tag == "div" and node.get("type") == "textpart":
            return  # nested textparts are units of their own
        if tag == "lb":
            if parts and parts[-1].rstrip().endswith("-") and not parts[-1].rstrip().endswith(" -"):
                parts[-1] = parts[-1].rstrip()[:-1]
                parts.append(("\x00" + node.tail.lstrip()) if node.tail else "\x00")
                return
            parts.append(" ")
        elif node.text:
            parts.append(node.text)
        for child in node:
            walk(child)
        if not top and node.tail:
            parts.append(node.tail)

    walk(el, top=True)
    text = "".join(parts).replace("\x00", "")
    return " ".join(text.split())


def read_tei(path, *, report: ReadReport | None = None) -> list[Unit]:
    """Units of a TEI/EpiDoc file: innermost ``textpart`` divs (ref = the ``n`` path, e.g. ``21.2.5``), or
    verse lines ``<l n=..>`` when there are no textparts. Apparatus notes and headings are removed."""
    path = Path(path)
    try:
        root = ET.fromstring(read_text_file(path))  # the text as every reader gets it (encoding, repairs, checks)
    except ET.ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else None
        raise InputError(f"invalid XML: {exc}", path=path, line=line) from None
    _check_depth(root, path)
    body = root.find(f".//{_TEI}body")
    if body is None:
        body = root.find(".//body")
    if body is None:
        raise InputError("no TEI <body> element", path=path)
    out: list[Unit] = []

    def visit(node, refpath: tuple[str, ...]):
        for child in node:
            tag = _local(child.tag)
            if tag == "div" and child.get("type") == "textpart" and child.get("subtype") == "work":
                visit(child, refpath)
            elif tag == "div" and child.get("type") == "textpart":
                n = (child.get("n") or "").strip() or str(len(out) + 1)
                sub = refpath + (n,)
                if any(_local(c.tag) == "div" and c.get("type") == "textpart" for c in child.iter() if c is not child):
                    # the text directly inside this div (before nested parts) is kept as a unit too
                    own = _tei_text(child)
                    if own and _has_letters(own):
                        out.append(Unit(ref=".".join(sub), text=own))
                    visit(child, sub)
                else:
                    text = _tei_text(child)
                    if text and _has_letters(text):
                        out.append(Unit(ref=".".join(sub), text=text))
            elif tag in _SKIP:
                continue
            else:
                visit(child, refpath)

    visit(body, ())
    if not out:  # verse without textparts
        for i, l_el in enumerate(body.iter(f"{_TEI}l"), 1):
            text = _tei_text(l_el)
            if text:
                out.append(Unit(ref=(l_el.get("n") or str(i)).strip(), text=text))
    if not out:
        _fail(report, "no text", InputError("no textpart divisions or verse lines with text", path=path))
    return out


#: Elements nested deeper than this are refused: reading a TEI file walks its tree recursively, and real editions
#: nest a few dozen levels at most.
MAX_TEI_DEPTH = 200


def _check_depth(root, path) -> None:
    """InputError when the tree nests deeper than MAX_TEI_DEPTH (checked without recursion)."""
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_TEI_DEPTH:
            raise InputError(f"elements nested more than {MAX_TEI_DEPTH} deep (<{_local(node.tag)}>); "
                             "a TEI edition nests a few dozen levels at most", path=path)
        stack.extend((child, depth + 1) for child in node)


_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)


def _has_letters(text: str) -> bool:
    return _LETTER.search(text) is not None


def read_plain(path, *, report: ReadReport | None = None) -> list[Unit]:
    """Units of a plain-text file: one per paragraph (blank-line separated), ref = paragraph number."""
    content = read_text_file(path)
    out: list[Unit] = []
    buf: list[str] = []
    start = 0
    for lineno, raw in enumerate(content.splitlines() + [""], 1):
        if raw.strip():
            if not buf:
                start = lineno
            buf.append(raw.strip())
            continue
        if buf:
            text = " ".join(buf)
            buf = []
            if latin_share(text) < MIN_LATIN_SHARE:
                _fail(report, "not Latin script", InputError(
                    f"paragraph is not in Latin script: {text[:40]!r}", path=path, line=start))
                continue
            out.append(Unit(ref=str(len(out) + 1), text=text, line=start))
    if not out and report is None:
        raise InputError("no text", path=path)
    return out
