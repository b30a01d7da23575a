"""Parsing verse files (no Django): the DBBE STS pair file, the DBBE verse sample, and generic
CSV/TSV/JSON verse lists. Every problem is reported with its line number; nothing is returned
unless the whole file is valid, so the caller can import atomically.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field


class VerseFileError(ValueError):
    """A file that cannot be imported; the message names the file, the line and the problem."""


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
    return text


def _split_verse_id(verse_id: str) -> tuple[str, int | None]:
    parts = verse_id.split()
    if len(parts) == 2 and parts[1].isdigit():
        return parts[0], int(parts[1])
    return "", None


def parse_verse_file(data: bytes, name: str = "file") -> ParsedFile:
    """Detect the format from the header and parse. Raises VerseFileError on any problem."""
    text = _decode(data, name)
    stripped = text.lstrip()
    if stripped.startswith("[") or stripped.startswith("{"):
        return _parse_json(text, name)
    first_line = text.splitlines()[0]
    delimiter = "\t" if first_line.count("\t") > first_line.count(",") else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header = [h.strip() for h in next(reader)]
    if {"verse1_id", "verse2_id", "verse1", "verse2"} <= set(header):
        return _parse_sts(reader, header, name)
    if {"idoriginal_poem", "order", "verse"} <= set(header):
        return _parse_dbbe_sample(reader, header, name)
    if {"verse_id", "text"} <= set(header):
        return _parse_generic(reader, header, name)
    raise VerseFileError(
        f"{name}, line 1: unrecognised columns {header!r}. Expected verse_id,text[,translation,occurrence,type,group] "
        "or the DBBE STS pair file (verse1_id, verse2_id, verse1, verse2, normalized_counts) "
        "or the DBBE verse sample (idoriginal_poem, order, verse, type_id, idgroup)."
    )


class _VerseCollector:
    """Collects verses; the same id twice is fine only with the same text."""

    def __init__(self, name: str):
        self.name = name
        self.by_id: dict[str, ParsedVerse] = {}

    def add(self, verse: ParsedVerse) -> None:
        if not verse.verse_id:
            raise VerseFileError(f"{self.name}, line {verse.line}: empty verse id.")
        if not verse.text.strip():
            raise VerseFileError(f"{self.name}, line {verse.line}: verse {verse.verse_id!r} has empty text.")
        known = self.by_id.get(verse.verse_id)
        if known is None:
            self.by_id[verse.verse_id] = verse
        elif known.text != verse.text:
            raise VerseFileError(
                f"{self.name}, line {verse.line}: duplicate verse id {verse.verse_id!r} with a different text "
                f"than on line {known.line}."
            )


def _parse_sts(reader, header: list[str], name: str) -> ParsedFile:
    col = {h: i for i, h in enumerate(header)}
    verses = _VerseCollector(name)
    batches: dict[str, ParsedBatch] = {}
    for line, row in enumerate(reader, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise VerseFileError(f"{name}, line {line}: expected {len(header)} columns, found {len(row)}.")
        ref_id, cand_id = row[col["verse1_id"]].strip(), row[col["verse2_id"]].strip()
        for verse_id, text in ((ref_id, row[col["verse1"]]), (cand_id, row[col["verse2"]])):
            occurrence, number = _split_verse_id(verse_id)
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
                batch.gold_scores[cand_id] = float(raw)
            except ValueError:
                raise VerseFileError(f"{name}, line {line}: normalized_counts {raw!r} is not a number.") from None
    if not verses.by_id:
        raise VerseFileError(f"{name}: no rows after the header.")
    return ParsedFile(format="dbbe-sts", verses=list(verses.by_id.values()), batches=list(batches.values()))


def _parse_dbbe_sample(reader, header: list[str], name: str) -> ParsedFile:
    """The DBBE verse sample. Verse ids are "<idoriginal_poem> <order + 1>" (order is 0-based).

    Some rows of the released sample have a verse containing an unquoted comma: the rest of the
    verse landed in `order` and every later column moved one place right (hence the file's
    `Unnamed: 7` column). Such rows are repaired and counted in the notes, never dropped.
    """
    col = {h: i for i, h in enumerate(header)}
    verses = _VerseCollector(name)
    repaired = 0
    spill = col.get("Unnamed: 7")
    for line, row in enumerate(reader, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise VerseFileError(f"{name}, line {line}: expected {len(header)} columns, found {len(row)}.")
        row = list(row)
        if not row[col["order"]].strip().isdigit() and spill is not None and row[spill].strip():
            order_index, after = col["order"], col["order"] + 1
            row[col["verse"]] = (row[col["verse"]] + "," + row[order_index]).rstrip()
            row[order_index:spill] = row[after: spill + 1]
            row[spill] = ""
            repaired += 1
        order = row[col["order"]].strip()
        if not order.isdigit():
            raise VerseFileError(f"{name}, line {line}: order {order!r} is not a whole number.")
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


def _parse_generic(reader, header: list[str], name: str) -> ParsedFile:
    col = {h: i for i, h in enumerate(header)}
    verses = _VerseCollector(name)
    for line, row in enumerate(reader, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise VerseFileError(f"{name}, line {line}: expected {len(header)} columns, found {len(row)}.")
        verses.add(_generic_verse({h: row[i] for h, i in col.items()}, line))
    if not verses.by_id:
        raise VerseFileError(f"{name}: no rows after the header.")
    return ParsedFile(format="verses", verses=list(verses.by_id.values()))


def _generic_verse(record: dict, line: int) -> ParsedVerse:
    verse_id = str(record.get("verse_id", "")).strip()
    occurrence, number = _split_verse_id(verse_id)
    verse = ParsedVerse(verse_id=verse_id, text=str(record.get("text", "")).strip(), occurrence_id=occurrence,
                        verse_number=number, line=line)
    for key, attr in _GENERIC_OPTIONAL.items():
        if record.get(key) not in (None, ""):
            setattr(verse, attr, str(record[key]).strip())
    return verse


def _parse_json(text: str, name: str) -> ParsedFile:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise VerseFileError(f"{name}, line {exc.lineno}: invalid JSON ({exc.msg}).") from None
    records = data.get("verses") if isinstance(data, dict) else data
    if not isinstance(records, list):
        raise VerseFileError(f'{name}: expected a list of verses or {{"verses": [...], "batches": [...]}}.')
    verses = _VerseCollector(name)
    for index, record in enumerate(records, start=1):
        if not isinstance(record, dict) or "verse_id" not in record or "text" not in record:
            raise VerseFileError(f"{name}, verse {index}: each verse needs 'verse_id' and 'text'.")
        verses.add(_generic_verse(record, index))
    batches = []
    for index, spec in enumerate(data.get("batches", []) if isinstance(data, dict) else [], start=1):
        if not isinstance(spec, dict) or "reference" not in spec or not isinstance(spec.get("candidates"), list):
            raise VerseFileError(f"{name}, batch {index}: each batch needs 'reference' and a list 'candidates'.")
        batches.append(ParsedBatch(reference_id=str(spec["reference"]), candidate_ids=[str(c) for c in spec["candidates"]]))
    known = set(verses.by_id)
    for index, batch in enumerate(batches, start=1):
        for verse_id in [batch.reference_id, *batch.candidate_ids]:
            if verse_id not in known:
                raise VerseFileError(f"{name}, batch {index}: verse {verse_id!r} is not among the verses of the file.")
    return ParsedFile(format="json", verses=list(verses.by_id.values()), batches=batches)
