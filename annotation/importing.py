"""Parsing verse files (no Django): the DBBE STS pair file, the DBBE verse sample, and generic
CSV/TSV/JSON verse lists. Every problem is reported with its line number; nothing is returned
unless the whole file is valid, so the caller can import atomically.
"""
from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass, field

from core import safejson
from core.errors import DomainError
from core.text_checks import control_character_message


class VerseFileError(DomainError, ValueError):
    """A file that cannot be imported; the message names the file, the line and the problem."""


# Column widths of annotation.models.Verse (a test keeps them equal): longer values are refused,
# never cut or left to the database (SQLite would store them whole, PostgreSQL would raise).
FIELD_MAX_CHARS = {"verse_id": 64, "occurrence_id": 32, "type_id": 32, "group_id": 32}
TEXT_MAX_CHARS = 131_072  # Python's csv field limit, applied to the JSON format too
VERSE_NUMBER_MAX = 2**31 - 1  # PositiveIntegerField
_ASCII_NUMBER = re.compile(r"[0-9]+")
_ORDER = re.compile(r"[0-9]{1,9}")


@dataclass(frozen=True)
class ImportLimits:
    """Bounds on one file, so a huge or hostile file is refused with a message, not half-read."""

    max_rows: int = 100_000
    max_columns: int = 50
    max_json_depth: int = safejson.DEFAULT_MAX_DEPTH


@dataclass
class ParsedVerse:
    verse_id: str
    text: str
    translation: str = ""
    occurrence_id: str = ""
    verse_number: int | None = None
    type_id: str = ""
    group_id: str = ""
    metadata: dict = field(default_factory=dict)
    line: int = 0


@dataclass
class ParsedBatch:
    reference_id: str
    candidate_ids: list[str]
    gold_scores: dict[str, float] = field(default_factory=dict)


@dataclass
class ParsedFile:
    format: str
    verses: list[ParsedVerse]
    batches: list[ParsedBatch] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _decode(data: bytes, name: str) -> str:
    nul = data.find(b"\x00")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise VerseFileError(
            f"{name}, line {line}: the file is not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "save it as UTF-8 and import again."
        ) from None
    if not text.strip():
        raise VerseFileError(f"{name}: the file is empty.")
    if nul != -1:
        line = data[:nul].count(b"\n") + 1
        raise VerseFileError(f"{name}, line {line}: NUL character (byte 0x00) in the file; a text file never holds one.")
    problem = control_character_message(text)  # BEL, an RTL override …: never part of a verse
    if problem:
        raise VerseFileError(f"{name}, {problem}")
    return text


def _split_verse_id(verse_id: str, where: str) -> tuple[str, int | None]:
    """'16977 1' → ('16977', 1); ids of another shape give ('', None). `where` prefixes errors."""
    parts = verse_id.split()
    if len(parts) == 2 and _ASCII_NUMBER.fullmatch(parts[1]):
        if len(parts[1]) > 10 or int(parts[1]) > VERSE_NUMBER_MAX:
            raise VerseFileError(f"{where}: verse number {_shown(parts[1])} is too large (at most {VERSE_NUMBER_MAX}).")
        return parts[0], int(parts[1])
    return "", None


def _shown(value: str) -> str:
    return repr(value if len(value) <= 40 else value[:40] + "…")


def parse_verse_file(data: bytes, name: str = "file", *, limits: ImportLimits = ImportLimits()) -> ParsedFile:
    """Detect the format from the header and parse. Raises VerseFileError on any problem."""
    text = _decode(data, name)
    stripped = text.lstrip()
    if stripped.startswith("[") or stripped.startswith("{"):
        return _parse_json(text, name, limits)
    first_line = text.splitlines()[0]
    delimiter = "\t" if first_line.count("\t") > first_line.count(",") else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        header = [h.strip() for h in next(reader)]
    except csv.Error as exc:
        raise VerseFileError(_csv_problem(name, 1, exc)) from None
    if len(header) > limits.max_columns:
        raise VerseFileError(f"{name}, line 1: {len(header):,} columns; the limit is {limits.max_columns}.")
    rows = _rows(reader, header, name, limits)
    if {"verse1_id", "verse2_id", "verse1", "verse2"} <= set(header):
        return _parse_sts(rows, header, name)
    if {"idoriginal_poem", "order", "verse"} <= set(header):
        return _parse_dbbe_sample(rows, header, name)
    if {"verse_id", "text"} <= set(header):
        return _parse_generic(rows, header, name)
    raise VerseFileError(
        f"{name}, line 1: unrecognised columns {header!r}. Expected verse_id,text[,translation,occurrence,type,group] "
        "or the DBBE STS pair file (verse1_id, verse2_id, verse1, verse2, normalized_counts) "
        "or the DBBE verse sample (idoriginal_poem, order, verse, type_id, idgroup)."
    )


def _csv_problem(name: str, line: int, exc: csv.Error) -> str:
    if "field larger than field limit" in str(exc):
        return f"{name}, line {line}: a field is longer than {csv.field_size_limit():,} characters."
    return f"{name}, line {line}: malformed CSV ({exc})."


def _rows(reader, header: list[str], name: str, limits: ImportLimits):
    """(line, row) of the non-blank rows after the header, where `line` is the row's first line.

    Checks the column count and the row limit; CSV errors name their line."""
    count = 0
    while True:
        line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise VerseFileError(_csv_problem(name, line, exc)) from None
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise VerseFileError(f"{name}, line {line}: expected {len(header)} columns, found {len(row)}.")
        count += 1
        if count > limits.max_rows:
            raise VerseFileError(
                f"{name}, line {line}: more than {limits.max_rows:,} rows; the limit is {limits.max_rows:,} rows per file."
            )
        yield line, row


class _VerseCollector:
    """Collects verses; the same id twice is fine only with the same text. `unit` is how a
    position is named in messages ("line" for CSV, "verse" for JSON)."""

    def __init__(self, name: str, unit: str = "line"):
        self.name = name
        self.unit = unit
        self.by_id: dict[str, ParsedVerse] = {}

    def where(self, position: int) -> str:
        return f"{self.name}, {self.unit} {position}"

    def add(self, verse: ParsedVerse) -> None:
        where = self.where(verse.line)
        if not verse.verse_id:
            raise VerseFileError(f"{where}: empty verse id.")
        if not verse.text.strip():
            raise VerseFileError(f"{where}: verse {verse.verse_id!r} has empty text.")
        for attr, limit in (*FIELD_MAX_CHARS.items(), ("text", TEXT_MAX_CHARS), ("translation", TEXT_MAX_CHARS)):
            value = getattr(verse, attr)
            if len(value) > limit:
                raise VerseFileError(f"{where}: {attr} is {len(value):,} characters (at most {limit:,}).")
            if "\x00" in value:
                raise VerseFileError(f"{where}: {attr} contains a NUL character (U+0000).")
        known = self.by_id.get(verse.verse_id)
        if known is None:
            self.by_id[verse.verse_id] = verse
        elif known.text != verse.text:
            raise VerseFileError(
                f"{where}: duplicate verse id {verse.verse_id!r} with a different text than on {self.unit} {known.line}."
            )


def _parse_sts(rows, header: list[str], name: str) -> ParsedFile:
    col = {h: i for i, h in enumerate(header)}
    verses = _VerseCollector(name)
    batches: dict[str, ParsedBatch] = {}
    for line, row in rows:
        ref_id, cand_id = row[col["verse1_id"]].strip(), row[col["verse2_id"]].strip()
        for verse_id, text in ((ref_id, row[col["verse1"]]), (cand_id, row[col["verse2"]])):
            occurrence, number = _split_verse_id(verse_id, verses.where(line))
            verses.add(ParsedVerse(verse_id=verse_id, text=text.strip(), occurrence_id=occurrence,
                                   verse_number=number, line=line))
        batch = batches.setdefault(ref_id, ParsedBatch(reference_id=ref_id, candidate_ids=[]))
        if cand_id == ref_id:
            raise VerseFileError(f"{name}, line {line}: verse {ref_id!r} is compared with itself.")
        if cand_id in batch.gold_scores:
            raise VerseFileError(f"{name}, line {line}: pair {ref_id!r} → {cand_id!r} appears twice.")
        batch.candidate_ids.append(cand_id)
        if "normalized_counts" in col:
            raw = row[col["normalized_counts"]].strip()
            try:
                score = float(raw)
            except ValueError:
                score = math.nan
            if not math.isfinite(score):
                raise VerseFileError(f"{name}, line {line}: normalized_counts {_shown(raw)} is not a number.")
            batch.gold_scores[cand_id] = score
    if not verses.by_id:
        raise VerseFileError(f"{name}: no rows after the header.")
    return ParsedFile(format="dbbe-sts", verses=list(verses.by_id.values()), batches=list(batches.values()))


def _parse_dbbe_sample(rows, header: list[str], name: str) -> ParsedFile:
    """The DBBE verse sample. Verse ids are "<idoriginal_poem> <order + 1>" (order is 0-based).

    Some rows of the released sample have a verse containing an unquoted comma: the rest of the
    verse landed in `order` and every later column moved one place right (hence the file's
    `Unnamed: 7` column). Such rows are repaired and counted in the notes, never dropped.
    """
    col = {h: i for i, h in enumerate(header)}
    verses = _VerseCollector(name)
    repaired = 0
    spill = col.get("Unnamed: 7")
    for line, row in rows:
        row = list(row)
        if not _ORDER.fullmatch(row[col["order"]].strip()) and spill is not None and row[spill].strip():
            order_index, after = col["order"], col["order"] + 1
            row[col["verse"]] = (row[col["verse"]] + "," + row[order_index]).rstrip()
            row[order_index:spill] = row[after: spill + 1]
            row[spill] = ""
            repaired += 1
        order = row[col["order"]].strip()
        if not _ORDER.fullmatch(order):
            raise VerseFileError(f"{name}, line {line}: order {_shown(order)} is not a whole number "
                                 "(digits 0-9, at most 999999999).")
        occurrence = row[col["idoriginal_poem"]].strip()
        if not occurrence:
            raise VerseFileError(f"{name}, line {line}: empty idoriginal_poem.")
        number = int(order) + 1
        group = row[col["idgroup"]].strip() if "idgroup" in col else ""
        if group.endswith(".0"):
            group = group[:-2]
        verses.add(ParsedVerse(
            verse_id=f"{occurrence} {number}", text=row[col["verse"]].strip(), occurrence_id=occurrence,
            verse_number=number, type_id=row[col["type_id"]].strip() if "type_id" in col else "", group_id=group,
            metadata={"dbbe_verse_id": row[col["id"]].strip()} if "id" in col else {}, line=line,
        ))
    notes = [f"{repaired} row(s) repaired: the verse contained an unquoted comma and the columns had shifted."] if repaired else []
    return ParsedFile(format="dbbe-verse-sample", verses=list(verses.by_id.values()), notes=notes)


_GENERIC_OPTIONAL = {"translation": "translation", "occurrence": "occurrence_id", "occurrence_id": "occurrence_id",
                     "type": "type_id", "type_id": "type_id", "group": "group_id", "group_id": "group_id"}


def _parse_generic(rows, header: list[str], name: str) -> ParsedFile:
    col = {h: i for i, h in enumerate(header)}
    verses = _VerseCollector(name)
    for line, row in rows:
        verses.add(_generic_verse({h: row[i] for h, i in col.items()}, line, verses.where(line)))
    if not verses.by_id:
        raise VerseFileError(f"{name}: no rows after the header.")
    return ParsedFile(format="verses", verses=list(verses.by_id.values()))


def _generic_verse(record: dict, line: int, where: str) -> ParsedVerse:
    """A verse from a CSV row or a JSON object whose values are strings (or None for absent)."""
    verse_id = (record.get("verse_id") or "").strip()
    occurrence, number = _split_verse_id(verse_id, where)
    verse = ParsedVerse(verse_id=verse_id, text=(record.get("text") or "").strip(), occurrence_id=occurrence,
                        verse_number=number, line=line)
    for key, attr in _GENERIC_OPTIONAL.items():
        if record.get(key) not in (None, ""):
            setattr(verse, attr, record[key].strip())
    return verse


def _json_id(value, what: str, where: str) -> str:
    """A verse id in JSON: a string, or a whole number written as one."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise VerseFileError(f"{where}: {what} must be a string (found {_json_type(value)}).")


def _json_type(value) -> str:
    return {type(None): "null", bool: "true/false", int: "a number", float: "a number", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


def _json_record(record: dict, where: str) -> dict:
    """The verse fields of a JSON object as strings: ids may be whole numbers, `text` must be a string,
    optional fields strings, whole numbers or null. Anything else is refused, never stringified."""
    if not isinstance(record, dict) or "verse_id" not in record or "text" not in record:
        raise VerseFileError(f"{where}: each verse needs 'verse_id' and 'text'.")
    clean = {"verse_id": _json_id(record["verse_id"], "verse_id", where)}
    if not isinstance(record["text"], str):
        raise VerseFileError(f"{where}: text must be a string (found {_json_type(record['text'])}).")
    clean["text"] = record["text"]
    for key in _GENERIC_OPTIONAL:
        value = record.get(key)
        if value is None:
            continue
        if key != "translation":
            clean[key] = _json_id(value, key, where)
        elif isinstance(value, str):
            clean[key] = value
        else:
            raise VerseFileError(f"{where}: translation must be a string (found {_json_type(value)}).")
    return clean


def _parse_json(text: str, name: str, limits: ImportLimits) -> ParsedFile:
    try:
        data = safejson.loads(text, max_depth=limits.max_json_depth)
    except safejson.JSONRefused as exc:  # too deep, or a number beyond ±(2**63 - 1) or not finite: its place named
        raise VerseFileError(f"{name}: {exc.path + ': ' if exc.path else ''}{exc}") from None
    except json.JSONDecodeError as exc:
        raise VerseFileError(f"{name}, line {exc.lineno}: invalid JSON ({exc.msg}).") from None
    records = data.get("verses") if isinstance(data, dict) else data
    if not isinstance(records, list):
        raise VerseFileError(f'{name}: expected a list of verses or {{"verses": [...], "batches": [...]}}.')
    if len(records) > limits.max_rows:
        raise VerseFileError(f"{name}: more than {limits.max_rows:,} verses; the limit is {limits.max_rows:,} "
                             "verses per file.")
    verses = _VerseCollector(name, unit="verse")
    for index, record in enumerate(records, start=1):
        where = verses.where(index)
        verses.add(_generic_verse(_json_record(record, where), index, where))
    specs = data.get("batches") if isinstance(data, dict) else []
    if isinstance(data, dict) and "batches" in data and not isinstance(specs, list):
        raise VerseFileError(f"{name}: 'batches' must be a list of {{\"reference\": id, \"candidates\": [ids]}} "
                             f"(found {_json_type(specs)}).")
    batches = []
    for index, spec in enumerate(specs or [], start=1):
        where = f"{name}, batch {index}"
        if not isinstance(spec, dict) or "reference" not in spec or not isinstance(spec.get("candidates"), list):
            raise VerseFileError(f"{where}: each batch needs 'reference' and a list 'candidates'.")
        batches.append(ParsedBatch(reference_id=_json_id(spec["reference"], "reference", where),
                                   candidate_ids=[_json_id(c, "each candidate", where) for c in spec["candidates"]]))
    known = set(verses.by_id)
    for index, batch in enumerate(batches, start=1):
        for verse_id in [batch.reference_id, *batch.candidate_ids]:
            if verse_id not in known:
                raise VerseFileError(f"{name}, batch {index}: verse {verse_id!r} is not among the verses of the file.")
    return ParsedFile(format="json", verses=list(verses.by_id.values()), batches=batches)
