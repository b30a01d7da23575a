"""Runs in and out: TREC runs and qrels, BEIR folders; Tesserae, ``locisimiles`` and passim results in (no Django).

**Export.** :func:`trec_run_text` writes ``qid Q0 docid rank score tag``, one line per retrieved source, ranks
1, 2, 3… per query. **Tie-break (deterministic, documented):** a query's candidates are ordered by score, higher
first; equal scores keep the order the method gave them (its own rank), so a run written twice is the same bytes.
``trec_eval`` re-sorts by score and breaks ties by docid itself, so for tied scores read the ``rank`` column (or
write ``scores="rank"``, which writes ``n - rank + 1`` as the score and makes every tool see the same order).
Ids are written with spaces and ``%`` percent-encoded (``hier. ep. 1.1`` → ``hier.%20ep.%201.1``), because the
format splits on whitespace; :func:`read_trec_run` decodes them. :func:`qrels_text` writes ``qid 0 docid 1``
per gold pair (a gold pair of any type is relevant); :func:`write_beir` writes ``corpus.jsonl``,
``queries.jsonl`` and ``qrels/test.tsv`` (ids as they are), plus ``qrels/cit.tsv`` and ``qrels/cf.tsv`` where
the gold is typed.

**Import.** Every reader returns :class:`RawRow` rows (file line, query id, source id, score, rank or None) or
raises :class:`InterchangeError` naming the line; nothing is half-read. :func:`to_benchmark` maps the ids to a
benchmark's segments (exact, then case- and space-insensitive), counts and lists the ids it could not match, and
orders each query's sources by the file's rank when it has one, else by score (ties: file order). A file with
more than :data:`MAX_ROWS` rows is refused at the line past the limit.

Formats read: TREC run; Tesserae v3 (``read_table.pl`` CSV/TSV export: ``RESULT, TARGET_LOC, TARGET_TXT,
SOURCE_LOC, SOURCE_TXT, SHARED, SCORE``; v5 adds ``Raw_Score``; column names are matched without case, spaces
or underscores, so Tesserae v6's results CSV is read too: a byte-order mark, the header ``Rank, Source Locus,
Source Text, Target Locus, Target Text, Score, Matched Words, Channels`` and every cell quoted, matched words in
the texts marked ``**word**``; tested on an excerpt written in that layout), the Tesserae v3
XML schema (``<tessdata score>`` with ``<phrase text="source|target" work line>``; the id is ``work line``),
``locisimiles`` results CSV (``query_id, source_id, similarity[, probability]``; Similia's own export adds
``rank``) and passim-style JSON lines (one aligned pair per line: ``id1``/``id2`` or ``query_id``/``source_id``,
``score`` or ``matches``). Tesserae's *target* is the alluding text, our query; its *source* is our source.
"""
from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, unquote

from core import safejson

MAX_ROWS = 1_000_000
LISTED = 20  # unmatched ids listed by name (all are counted)


class InterchangeError(ValueError):
    """A file that cannot be read as the format it claims; the message names the file (when known) and the line."""

    def __init__(self, line: int | None, message: str, file: str = ""):
        self.line, self.message, self.file = line, message, file
        where = f"{file}:{line}" if file and line else file or (f"line {line}" if line else "")
        super().__init__(f"{where}: {message}" if where else message)


@dataclass(frozen=True)
class RawRow:
    line: int
    query: str
    source: str
    score: float
    rank: int | None = None


# ---------------------------------------------------------------------------------------------------- export
def ordered(ranked: Mapping[str, Sequence[tuple[str, float]]]) -> dict[str, list[tuple[str, float]]]:
    """Each query's (source, score) pairs by score, higher first; ties keep the given order (module doc)."""
    return {q: [p for _, p in sorted(enumerate(pairs), key=lambda t: (-float(t[1][1]), t[0]))]
            for q, pairs in ranked.items()}


def _enc(x: str) -> str:
    return quote(x, safe="!\"#$&'()*+,-./:;<=>?@[\\]^_`{|}~")


def trec_run_text(ranked: Mapping[str, Sequence[tuple[str, float]]], tag: str = "similia", *,
                  scores: str = "method") -> str:
    """A TREC run (``scores``: ``method`` writes the method's scores, ``rank`` writes ``n - rank + 1``)."""
    if scores not in ("method", "rank"):
        raise ValueError("scores must be 'method' or 'rank'")
    if not tag or re.search(r"\s", tag):
        raise ValueError("the run tag must be one word")
    lines = []
    for q in sorted(ranked):
        pairs = ordered({q: ranked[q]})[q]
        n = len(pairs)
        for r, (s, sc) in enumerate(pairs, 1):
            value = repr(float(sc)) if scores == "method" else str(n - r + 1)
            lines.append(f"{_enc(q)} Q0 {_enc(s)} {r} {value} {tag}")
    return "\n".join(lines) + ("\n" if lines else "")


def qrels_text(gold: Mapping[str, Mapping[str, int]], view: str = "all") -> str:
    """TREC qrels ``qid 0 docid 1`` for every gold pair of the view (``all``, ``cit.``, ``cf.``)."""
    want = {"all": None, "cit.": 1, "cf.": 2}[view]
    rows = [f"{_enc(q)} 0 {_enc(s)} 1" for q in sorted(gold) for s, c in sorted(gold[q].items())
            if c > 0 and (want is None or c == want)]
    return "\n".join(rows) + ("\n" if rows else "")


def write_beir(directory, *, query_ids: Sequence[str], query_texts: Sequence[str], source_ids: Sequence[str],
               source_texts: Sequence[str], gold: Mapping[str, Mapping[str, int]]) -> list[str]:
    """A BEIR folder for these queries (a fold's, or all) over these sources; returns the files written."""
    d = Path(directory)
    (d / "qrels").mkdir(parents=True, exist_ok=True)
    with open(d / "corpus.jsonl", "w", encoding="utf-8") as fh:
        for s, t in zip(source_ids, source_texts):
            fh.write(json.dumps({"_id": s, "title": "", "text": t}, ensure_ascii=False) + "\n")
    with open(d / "queries.jsonl", "w", encoding="utf-8") as fh:
        for q, t in zip(query_ids, query_texts):
            fh.write(json.dumps({"_id": q, "text": t}, ensure_ascii=False) + "\n")
    files = ["corpus.jsonl", "queries.jsonl"]
    keep = set(query_ids)
    classes = {c for q in keep for c in gold.get(q, {}).values()}
    for name, want in (("test", None), ("cit", 1), ("cf", 2)):
        if want is not None and want not in classes:
            continue
        with open(d / "qrels" / f"{name}.tsv", "w", encoding="utf-8", newline="") as fh:
            fh.write("query-id\tcorpus-id\tscore\n")
            for q in query_ids:
                for s, c in sorted(gold.get(q, {}).items()):
                    if c > 0 and (want is None or c == want):
                        fh.write(f"{q}\t{s}\t1\n")
        files.append(f"qrels/{name}.tsv")
    return files


# ---------------------------------------------------------------------------------------------------- import
def _lines(text: str) -> Iterable[tuple[int, str]]:
    for n, line in enumerate(text.splitlines(), 1):
        if n > MAX_ROWS + 50:  # a header and comments are allowed beyond the rows
            raise InterchangeError(n, f"more than {MAX_ROWS:,} rows: split the file")
        yield n, line


def _shown(value: str) -> str:
    return repr(value[:30]) + ("…" if len(value) > 30 else "")


def _whole(value: str, line: int, what: str) -> int:
    """A rank: ASCII digits within ±(2**63 - 1), read by the one guarded reader of numbers (core.safejson)."""
    try:
        return safejson.whole_number(value if value.isascii() else "x")
    except ValueError:
        raise InterchangeError(line, f"{what} {_shown(value)} is not an integer within ±{safejson.INT_MAX}") from None


def _float(value: str, line: int, what: str) -> float:
    """A score, read by the one guarded reader of numbers (finite, at most 40 characters)."""
    try:
        return safejson.real_number(value)
    except ValueError as exc:
        raise InterchangeError(line, f"{what} {_shown(value)} is not a {'finite ' * ('finite' in str(exc))}number"
                               ) from None


def _check_count(rows: list, line: int) -> None:
    if len(rows) > MAX_ROWS:
        raise InterchangeError(line, f"more than {MAX_ROWS:,} rows: split the file")


def read_trec_run(text: str) -> list[RawRow]:
    """``qid Q0 docid rank score tag`` lines; duplicate ranks or docids inside a query are errors."""
    rows: list[RawRow] = []
    ranks: dict[tuple[str, int], int] = {}
    docs: dict[tuple[str, str], int] = {}
    for n, line in _lines(text):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 6:
            raise InterchangeError(n, f"a TREC run line has 6 fields (qid Q0 docid rank score tag), this one "
                                      f"has {len(parts)}")
        q, _, s, r, sc, _ = parts
        q, s = unquote(q), unquote(s)
        rank = _whole(r, n, "rank")
        if rank < 0:
            raise InterchangeError(n, f"rank {rank} is negative")
        if (q, rank) in ranks:
            raise InterchangeError(n, f"query {q!r} has rank {rank} twice (lines {ranks[(q, rank)]} and {n})")
        if (q, s) in docs:
            raise InterchangeError(n, f"query {q!r} lists {s!r} twice (lines {docs[(q, s)]} and {n})")
        ranks[(q, rank)] = docs[(q, s)] = n
        rows.append(RawRow(n, q, s, _float(sc, n, "score"), rank))
        _check_count(rows, n)
    return rows


def _norm_header(name: str) -> str:
    return re.sub(r"[\s_\-\"']", "", name or "").lower()


def _strip(value: str | None) -> str:
    v = (value or "").strip()
    while len(v) >= 2 and v[0] == v[-1] == '"':
        v = v[1:-1].strip()
    return v


def _csv_rows(text: str, required: dict[str, tuple[str, ...]], optional: dict[str, tuple[str, ...]],
              fmt: str) -> Iterable[tuple[int, dict[str, str]]]:
    """Rows of a CSV/TSV file after ``#`` comments and blank lines, as {role: value}, with their file line."""
    lines = [(n, line) for n, line in _lines(text) if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise InterchangeError(None, f"no {fmt} header row found (the file is empty or all comments)")
    head_line, head = lines[0]
    delim = "\t" if head.count("\t") > head.count(",") else ","
    header = next(csv.reader([head], delimiter=delim))
    index = {_norm_header(h): i for i, h in enumerate(header)}
    cols: dict[str, int] = {}
    for role, names in {**required, **optional}.items():
        for name in names:
            if name in index:
                cols[role] = index[name]
                break
    missing = [role for role in required if role not in cols]
    if missing:
        raise InterchangeError(head_line, f"not a {fmt} header: no column for {', '.join(missing)} (expected "
                               + "; ".join(f"{r}: one of {', '.join(n)}" for r, n in required.items())
                               + f"; found {', '.join(header)})")
    body = "\n".join(line for _, line in lines[1:])
    reader = csv.reader(io.StringIO(body), delimiter=delim)
    for n, _ in lines[1:]:
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # e.g. a field over the csv module's limit
            raise InterchangeError(n, f"not {fmt}: {exc}") from None
        if len(values) < len(header):
            raise InterchangeError(n, f"{len(values)} fields where the header has {len(header)}")
        yield n, {role: values[i] for role, i in cols.items()}


TESSERAE_COLUMNS = {"query": ("targetloc", "targetlocus", "targetlocation", "targetref"),
                    "source": ("sourceloc", "sourcelocus", "sourcelocation", "sourceref"),
                    "score": ("score", "overallscore", "rawscore")}


def read_tesserae_csv(text: str) -> list[RawRow]:
    """Tesserae v3/v5 CSV or TSV export (comment header lines ``#`` allowed), or a v6 CSV with locus columns."""
    rows = []
    for n, r in _csv_rows(text, TESSERAE_COLUMNS, {}, "Tesserae results"):
        q, s = _strip(r["query"]), _strip(r["source"])
        if not q or not s:
            raise InterchangeError(n, "empty target or source locus")
        rows.append(RawRow(n, q, s, _float(_strip(r["score"]), n, "score")))
        _check_count(rows, n)
    return rows


def read_locisimiles_csv(text: str) -> list[RawRow]:
    """The ``locisimiles`` results CSV (``query_id, source_id, similarity[, probability][, rank]``): the score
    is ``probability`` when the file has it (a judged pipeline), else ``similarity``."""
    rows = []
    for n, r in _csv_rows(text, {"query": ("queryid",), "source": ("sourceid",), "similarity": ("similarity",)},
                          {"probability": ("probability",), "rank": ("rank",)}, "locisimiles results"):
        q, s = r["query"].strip(), r["source"].strip()
        if not q or not s:
            raise InterchangeError(n, "empty query_id or source_id")
        prob = (r.get("probability") or "").strip()
        score = _float(prob, n, "probability") if prob else _float(r["similarity"].strip(), n, "similarity")
        rank = None
        if (r.get("rank") or "").strip():
            rank = _whole(r["rank"].strip(), n, "rank")
            if rank < 0:
                raise InterchangeError(n, f"rank {rank} is negative")
        rows.append(RawRow(n, q, s, score, rank))
        _check_count(rows, n)
    _check_ranks(rows)
    return rows


def _check_ranks(rows: list[RawRow]) -> None:
    seen: dict[tuple[str, int], int] = {}
    for r in rows:
        if r.rank is None:
            continue
        if (r.query, r.rank) in seen:
            raise InterchangeError(r.line, f"query {r.query!r} has rank {r.rank} twice (lines "
                                           f"{seen[(r.query, r.rank)]} and {r.line})")
        seen[(r.query, r.rank)] = r.line


def read_passim_jsonl(text: str) -> list[RawRow]:
    """Passim-style aligned pairs, one JSON object a line (``id1``/``id2`` or ``query_id``/``source_id``;
    ``score``, else ``matches``). Which side is the query is decided by :func:`to_benchmark`."""
    rows = []
    for n, line in _lines(text):
        if not line.strip():
            continue
        try:
            obj = safejson.loads(line)  # deep nesting and 5,000-digit numbers refused with a sentence
        except safejson.JSONRefused as exc:
            raise InterchangeError(n, f"{exc.path}: {exc}" if exc.path else str(exc)) from None
        except json.JSONDecodeError as exc:
            raise InterchangeError(n, f"not JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise InterchangeError(n, "each line must be a JSON object")
        if "cluster" in obj and "id1" not in obj:
            raise InterchangeError(n, "a passim cluster record, not an aligned pair: run passim with --pairwise")
        a = obj.get("query_id", obj.get("id1"))
        b = obj.get("source_id", obj.get("id2"))
        if not isinstance(a, str) or not isinstance(b, str) or not a or not b:
            raise InterchangeError(n, "needs the pair's two ids as strings: id1 and id2 (or query_id and source_id)")
        sc = obj.get("score", obj.get("matches"))
        if isinstance(sc, bool) or not isinstance(sc, int | float):
            raise InterchangeError(n, "needs a numeric score (or matches)")
        rows.append(RawRow(n, a, b, _float(str(sc), n, "score")))
        _check_count(rows, n)
    return rows


def read_tesserae_xml(text: str) -> list[RawRow]:
    """The Tesserae v3 XML schema: one ``<tessdata score>`` per parallel with two ``<phrase>`` children."""
    import xml.parsers.expat

    if re.search(r"<!(DOCTYPE|ENTITY)", text):
        raise InterchangeError(None, "XML with a DOCTYPE or entity declarations is refused")
    rows: list[RawRow] = []
    cur: dict = {}
    p = xml.parsers.expat.ParserCreate()

    def start(name, attrs):
        n = p.CurrentLineNumber
        if name == "tessdata":
            if "score" not in attrs:
                raise InterchangeError(n, "<tessdata> without a score attribute")
            cur.clear()
            cur.update(line=n, score=_float(attrs["score"], n, "score"))
        elif name == "phrase" and cur:
            side = attrs.get("text")
            if side not in ("source", "target") or "line" not in attrs:
                raise InterchangeError(n, "<phrase> needs text=\"source|target\" and a line attribute")
            cur[side] = f"{attrs.get('work', '').strip()} {attrs['line'].strip()}".strip()

    def end(name):
        if name == "tessdata":
            if "source" not in cur or "target" not in cur:
                raise InterchangeError(cur.get("line"), "<tessdata> without both a source and a target phrase")
            rows.append(RawRow(cur["line"], cur["target"], cur["source"], cur["score"]))
            _check_count(rows, cur["line"])
            cur.clear()

    p.StartElementHandler, p.EndElementHandler = start, end
    try:
        p.Parse(text, True)
    except xml.parsers.expat.ExpatError as exc:
        raise InterchangeError(exc.lineno, f"not well-formed XML: {xml.parsers.expat.ErrorString(exc.code)}") from None
    if not rows:
        raise InterchangeError(None, "no <tessdata> record: not a Tesserae XML result file")
    return rows


READERS = {"trec": read_trec_run, "tesserae-csv": read_tesserae_csv, "tesserae-xml": read_tesserae_xml,
           "locisimiles": read_locisimiles_csv, "passim": read_passim_jsonl}


def read_run(fmt: str, text: str) -> list[RawRow]:
    if fmt not in READERS:
        raise InterchangeError(None, f"unknown format {fmt!r}: one of {', '.join(READERS)}")
    if "\x00" in text:
        raise InterchangeError(text[: text.index("\x00")].count("\n") + 1, "NUL byte: not a text file")
    return READERS[fmt](text.removeprefix("\ufeff"))  # a UTF-8 byte-order mark (Tesserae v6 writes one)


# ------------------------------------------------------------------------------------------------ id mapping
def _key(x: str) -> str:
    return re.sub(r"\s+", " ", x.strip().lower())


@dataclass
class ImportedRun:
    """A run mapped onto a benchmark: ``ranked`` {query: [(source, score)]} best first, and what did not map."""

    ranked: dict[str, list[tuple[str, float]]]
    n_rows: int
    n_matched: int
    unmatched_queries: Counter = field(default_factory=Counter)
    unmatched_sources: Counter = field(default_factory=Counter)

    def report(self) -> dict:
        return {"rows": self.n_rows, "matched_rows": self.n_matched, "queries": len(self.ranked),
                "unmatched_queries": {"count": sum(self.unmatched_queries.values()),
                                      "distinct": len(self.unmatched_queries),
                                      "listed": sorted(self.unmatched_queries)[:LISTED]},
                "unmatched_sources": {"count": sum(self.unmatched_sources.values()),
                                      "distinct": len(self.unmatched_sources),
                                      "listed": sorted(self.unmatched_sources)[:LISTED]}}


class IdMap:
    """Exact ids first, then case- and whitespace-insensitive ones; an ambiguous loose key maps to nothing."""

    def __init__(self, ids: Iterable[str]):
        self.exact = set(ids)
        loose: dict[str, str | None] = {}
        for i in self.exact:
            k = _key(i)
            loose[k] = None if k in loose and loose[k] != i else i
        self.loose = loose

    def get(self, x: str) -> str | None:
        return x if x in self.exact else self.loose.get(_key(x))


def to_benchmark(rows: Sequence[RawRow], query_ids: Iterable[str], source_ids: Iterable[str], *,
                 strict: bool = False) -> ImportedRun:
    """Map rows onto a benchmark's ids. A pair whose ids are the other way round (passim's unordered pairs) is
    turned. ``strict``: the first unknown id is an error naming its line. No row matching is always an error."""
    qm, sm = IdMap(query_ids), IdMap(source_ids)
    per_q: dict[str, list[RawRow]] = {}
    bad_q, bad_s = Counter(), Counter()
    seen: dict[tuple[str, str], int] = {}
    for r in rows:
        q, s = qm.get(r.query), sm.get(r.source)
        if q is None and s is None and qm.get(r.source) and sm.get(r.query):
            q, s = qm.get(r.source), sm.get(r.query)
        if q is None or s is None:
            if strict:
                what = f"query {r.query!r}" if q is None else f"source {r.source!r}"
                raise InterchangeError(r.line, f"unknown {what}: not a segment of the benchmark")
            if q is None:
                bad_q[r.query] += 1
            else:
                bad_s[r.source] += 1
            continue
        if (q, s) in seen:
            raise InterchangeError(r.line, f"the pair ({q!r}, {s!r}) is listed twice (lines {seen[(q, s)]} and "
                                           f"{r.line})")
        seen[(q, s)] = r.line
        per_q.setdefault(q, []).append(r)
    if rows and not per_q:
        first = rows[0]
        raise InterchangeError(first.line, f"no row names a query and a source of the benchmark (first row: "
                                           f"{first.query!r} → {first.source!r}); wrong benchmark or id scheme?")
    ranked = {}
    for q, rs in per_q.items():
        if all(r.rank is not None for r in rs):
            rs = sorted(rs, key=lambda r: (r.rank, r.line))
        else:
            rs = sorted(rs, key=lambda r: (-r.score, r.line))
        # a turned pair's source is its file's query column
        ranked[q] = [(sm.get(r.source) or sm.get(r.query), r.score) for r in rs]
    return ImportedRun(ranked, len(rows), len(seen), bad_q, bad_s)
