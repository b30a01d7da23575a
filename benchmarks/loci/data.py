"""Loci Similes files: plain dataclasses and loaders (no Django).

Formats read here
-----------------
* the 545-pair files of the Loci Similes repository (``pairs_545_with_text.csv``, joined on ``pair_id``
  with ``pairs_545_ref_type.csv`` for the ``cit.``/``cf.`` labels);
* locisimiles-style corpora ``seg_id,text`` (optionally ``author,work``; ``id`` is accepted for ``seg_id``);
* gold files ``query_id,source_id[,label]`` where ``label`` is ``cit.``/``cf.``, ``1``/``0`` (1 = a link of
  unknown type, 0 = an explicit non-link, dropped) or missing; an optional ``fold``/``fold_id`` column;
* a directory in the layout of the full published release (a query corpus, a source corpus and a labels file,
  see :func:`load_release_dir`).
"""
from __future__ import annotations

import csv
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from core.paths import shared_data_dir
from detection.latin.readers import duplicate_id_error
from detection.latin.segment import Segment

LABEL_CIT = "cit."
LABEL_CF = "cf."
LABEL_LINK = "link"  # a positive reference of unknown type
CLASSES = ("none", LABEL_CIT, LABEL_CF)  # class ids 0, 1, 2

_LABEL_ALIASES = {
    "cit.": LABEL_CIT, "cit": LABEL_CIT, "verbatim": LABEL_CIT, "1": LABEL_LINK, "1.0": LABEL_LINK,
    "true": LABEL_LINK, "yes": LABEL_LINK, "cf.": LABEL_CF, "cf": LABEL_CF, "allusion": LABEL_CF,
    "2": LABEL_CF, "": LABEL_LINK, "link": LABEL_LINK,
}
# Author abbreviations of the benchmark's positions -> the names the corpus files use.
AUTHOR_NAMES = {"hier": "Jerome", "lact": "Lactantius", "val": "Valerius", "verg": "Virgil", "cic": "Cicero",
                "hor": "Horace", "ov": "Ovid", "lucr": "Lucretius", "prop": "Propertius", "lucan": "Lucan",
                "mart": "Martial", "stat": "Statius", "catull": "Catullus", "tib": "Tibullus"}
_NEGATIVE_LABELS = {"0", "0.0", "false", "no", "none", "no match"}


@dataclass(frozen=True)
class GoldLink:
    """One annotated reference: ``query_id`` (later text) refers to ``source_id`` (earlier text)."""

    query_id: str
    source_id: str
    label: str = LABEL_LINK  # "cit.", "cf." or "link" (type unknown)
    pair_id: str = ""
    fold: int | None = None  # the fold given in the file, if any
    provenance: str = ""


@dataclass
class Benchmark:
    """A benchmark version: query-side and source-side segments and the gold references between them.

    ``gold`` holds one link per distinct (query, source) pair (``cit.`` wins over ``cf.`` when a pair carries
    both, as in the paper, Appendix E.2); ``raw_links`` keeps every row as read.
    ``file_folds`` maps a split name to ``{query_id: fold}`` for the folds given in the files.
    """

    name: str
    queries: list[Segment]
    sources: list[Segment]
    gold: list[GoldLink]
    raw_links: list[GoldLink] = field(default_factory=list)
    file_folds: dict[str, dict[str, int]] = field(default_factory=dict)
    version: str = "1"
    meta: dict = field(default_factory=dict)


    def source_index(self) -> dict[str, int]:
        return {s.seg_id: i for i, s in enumerate(self.sources)}

    def citing_query_ids(self) -> list[str]:
        seen = dict.fromkeys(g.query_id for g in self.gold)
        return list(seen)

    def cited_source_ids(self) -> list[str]:
        return list(dict.fromkeys(g.source_id for g in self.gold))

    def label_counts(self) -> dict[str, int]:
        return dict(Counter(g.label for g in self.gold))

    def summary(self) -> dict:
        return {
            "name": self.name,
            "version": self.version,
            "n_query_segments": len(self.queries),
            "n_source_segments": len(self.sources),
            "n_gold_links": len(self.gold),
            "n_raw_links": len(self.raw_links),
            "n_citing_queries": len(self.citing_query_ids()),
            "n_cited_sources": len(self.cited_source_ids()),
            "label_counts": self.label_counts(),
            "file_folds": sorted(self.file_folds),
        }


def normalise_label(value) -> str | None:
    """Map a label cell to ``cit.``/``cf.``/``link``; ``None`` for an explicit negative (0/false/none)."""
    v = "" if value is None else str(value).strip().lower()
    if v in _NEGATIVE_LABELS:
        return None
    if v in _LABEL_ALIASES:
        return _LABEL_ALIASES[v]
    raise ValueError(f"unknown gold label {value!r}")


def merge_links(links: list[GoldLink]) -> list[GoldLink]:
    """One link per (query, source) pair; ``cit.`` takes precedence over ``cf.`` over ``link``."""
    rank = {LABEL_CIT: 0, LABEL_CF: 1, LABEL_LINK: 2}
    best: dict[tuple[str, str], GoldLink] = {}
    for g in links:
        key = (g.query_id, g.source_id)
        if key not in best or rank[g.label] < rank[best[key].label]:
            best[key] = g
    return list(best.values())


def _author(abbrev: str) -> str:
    a = (abbrev or "").strip()
    return AUTHOR_NAMES.get(a.lower().rstrip("."), a)


def _strip_position(pos: str) -> str:
    return str(pos).strip().strip("<>").strip()


def _split_position(pos: str, prefix: str) -> str:
    pos = _strip_position(pos)
    prefix = (prefix or "").strip()
    if prefix and pos.startswith(prefix):
        return pos[len(prefix):].strip()
    return pos.rsplit(" ", 1)[-1] if " " in pos else pos


def _read_csv_lines(path) -> list[tuple[int, dict]]:
    """(the line a row starts on, the row) for each row of a CSV (a ``.tsv`` with tabs: by tab)."""
    with open(path, newline="", encoding="utf-8-sig") as fh:
        sample = fh.read(4096)
        fh.seek(0)
        delim = "\t" if (str(path).endswith(".tsv") and "\t" in sample) else ","
        reader = csv.DictReader(fh, delimiter=delim)
        out, end = [], 1
        for row in reader:
            out.append((end + 1, {(k or "").strip(): (v if v is not None else "") for k, v in row.items()}))
            end = reader.line_num
        return out


def _read_csv(path) -> list[dict]:
    return [row for _, row in _read_csv_lines(path)]


def load_pairs_545(with_text_path, ref_type_path=None, *, use_cleaned_text: bool = True,
                   name: str = "loci-similes-545") -> Benchmark:
    """Load the 545 Jerome/Lactantius references with their texts (and ``cit.``/``cf.`` types).

    Reads each file once and hands the rows to :func:`pairs_545_from_rows` (see there for the result).

    Args:
        with_text_path: ``pairs_545_with_text.csv`` (positions, texts, author prefixes, ``fold_id``).
        ref_type_path: optional ``pairs_545_ref_type.csv``; joined on ``pair_id`` to give each link its type.
            Without it every link is labelled ``link`` (type unknown).
        use_cleaned_text: use ``text_*_cleaned`` (verse slashes removed) as the segment text.
    """
    files = [os.path.basename(str(with_text_path))] + ([os.path.basename(str(ref_type_path))] if ref_type_path else [])
    return pairs_545_from_rows(_read_csv(with_text_path),
                               _read_csv(ref_type_path) if ref_type_path is not None else None,
                               use_cleaned_text=use_cleaned_text, name=name, files=files)


def pairs_545_from_rows(rows: list[dict], type_rows: list[dict] | None = None, *, use_cleaned_text: bool = True,
                        name: str = "loci-similes-545", files: list[str] | None = None) -> Benchmark:
    """The 545-pair benchmark from rows already read (dicts keyed by the CSV header, as csv.DictReader gives).

    Args:
        rows: the rows of ``pairs_545_with_text.csv``.
        type_rows: the rows of ``pairs_545_ref_type.csv``, or ``None``.
        use_cleaned_text, name: as in :func:`load_pairs_545`.
        files: the file names recorded in ``meta["files"]``.

    Returns:
        A :class:`Benchmark` whose segments are the distinct query/source positions of the file (ids are the
        positions without angle brackets, e.g. ``hier. epist. 21.2.5.1``). ``file_folds`` holds the split
        ``"with_text"`` (the older file's ``fold_id``) and, with ``type_rows``, ``"ref_type"``; a query whose
        links sit in several folds is put in the fold holding most of its links (lowest fold on ties) and the
        number of such queries is recorded in ``meta["fold_conflicts"]``.
    """
    types: dict[str, dict] = {}
    for r in type_rows or ():
        types[str(r["pair_id"]).strip()] = r
    tq = "text_query_cleaned" if use_cleaned_text else "text_query"
    tc = "text_corpus_cleaned" if use_cleaned_text else "text_corpus"
    queries: dict[str, Segment] = {}
    sources: dict[str, Segment] = {}
    raw: list[GoldLink] = []
    folds_a: dict[str, list[int]] = defaultdict(list)
    folds_b: dict[str, list[int]] = defaultdict(list)
    for r in rows:
        qid = _strip_position(r["position_query"])
        sid = _strip_position(r["position_corpus"])
        if qid not in queries:
            queries[qid] = Segment(qid, re.sub(r"\s+", " ", r.get(tq) or r["text_query"]).strip(),
                                   _author(r.get("prefix_query_author", "")), r.get("prefix_query", ""),
                                   _split_position(r["position_query"], r.get("prefix_query", "")))
        if sid not in sources:
            sources[sid] = Segment(sid, re.sub(r"\s+", " ", r.get(tc) or r["text_corpus"]).strip(),
                                   _author(r.get("prefix_corpus_author", "")), r.get("prefix_corpus", ""),
                                   _split_position(r["position_corpus"], r.get("prefix_corpus", "")))
        pid = str(r["pair_id"]).strip()
        label = LABEL_LINK
        if pid in types:
            label = normalise_label(types[pid]["ref_type"]) or LABEL_LINK
            if str(types[pid].get("fold_id", "")).strip() != "":
                folds_b[qid].append(int(types[pid]["fold_id"]))
        fold = int(r["fold_id"]) if str(r.get("fold_id", "")).strip() != "" else None
        if fold is not None:
            folds_a[qid].append(fold)
        raw.append(GoldLink(qid, sid, label, pid, fold, r.get("filename", "")))
    file_folds = {}
    conflicts = {}
    for split_name, per_q in (("with_text", folds_a), ("ref_type", folds_b)):
        if per_q:
            file_folds[split_name], conflicts[split_name] = _majority_folds(per_q)
    meta = {"fold_conflicts": conflicts, "files": list(files or []),
            "n_pairs_without_type": sum(1 for g in raw if g.label == LABEL_LINK)}
    return Benchmark(name, list(queries.values()), list(sources.values()), merge_links(raw), raw,
                     file_folds, meta=meta)


def _majority_folds(per_query: dict[str, list[int]]) -> tuple[dict[str, int], dict]:
    out, n_conf, n_links_moved = {}, 0, 0
    for q, fs in per_query.items():
        c = Counter(fs)
        best = min(c, key=lambda f: (-c[f], f))
        out[q] = best
        if len(c) > 1:
            n_conf += 1
            n_links_moved += len(fs) - c[best]
    return out, {"queries_in_several_folds": n_conf, "links_reassigned": n_links_moved}


def load_segments_csv(path, *, author: str = "", work: str = "", skipped: list[str] | None = None) -> list[Segment]:
    """Read a corpus ``seg_id,text[,author,work]`` (``id`` accepted for ``seg_id``; ``.tsv`` by tab).

    Args:
        path: the CSV/TSV file.
        author, work: defaults for rows without those columns.
        skipped: when a list, a repeated ``seg_id`` keeps its first row and the later one is listed here
            (``file:line: why``) instead of stopping the read.

    Returns:
        Segments in file order.

    Raises:
        InputError: a repeated ``seg_id``, naming the file and both lines, as ``detect``'s reader does
            (``detection.latin.readers.duplicate_id_error``); it kept the first row silently before.
    """
    out: dict[str, Segment] = {}
    first_line: dict[str, int] = {}
    for line, r in _read_csv_lines(path):
        sid = (r.get("seg_id") or r.get("id") or "").strip()
        if not sid:
            continue
        if sid in out:
            error = duplicate_id_error("seg_id", sid, first_line[sid], path=path, line=line)
            if skipped is None:
                raise error
            skipped.append(str(error))
            continue
        first_line[sid] = line
        out[sid] = Segment(sid, (r.get("text") or "").strip(), (r.get("author") or author).strip(),
                           (r.get("work") or work).strip(), (r.get("ref") or r.get("citation") or "").strip())
    return list(out.values())


def read_corpus_dir(directory) -> tuple[list[Segment], list[Segment]]:
    """(query segments, source segments) from ``directory/query.csv`` and ``directory/source.csv``, the files
    written by ``detection.latin.loci_corpus.build_corpus``."""
    d = Path(directory)
    return load_segments_csv(d / "query.csv"), load_segments_csv(d / "source.csv")


def load_gold_csv(path, skipped: list[str] | None = None) -> list[GoldLink]:
    """Read gold links ``query_id,source_id[,label][,fold]`` (rows labelled 0/false/none are dropped; ``1``,
    ``true`` or an empty label is a parallel of unknown type, ``link``). With ``skipped`` a list, a row with an
    unknown label or fold is listed there instead of stopping the read.

    Returns:
        The raw links in file order (use :func:`merge_links` for one per pair).
    """
    out = []
    for i, r in enumerate(_read_csv(path)):
        q = (r.get("query_id") or r.get("query") or "").strip()
        s = (r.get("source_id") or r.get("source") or r.get("corpus_id") or "").strip()
        if not q or not s:
            continue
        f = (r.get("fold") or r.get("fold_id") or "").strip()
        try:
            lab = normalise_label(r.get("label", r.get("ref_type", r.get("type", ""))))
            fold = int(f) if f else None
        except ValueError as exc:
            if skipped is None:
                raise
            skipped.append(f"{Path(path).name}: row {i + 2}: {exc}")
            continue
        if lab is None:
            continue
        out.append(GoldLink(q, s, lab, (r.get("pair_id") or str(i)).strip(), fold,
                            (r.get("provenance") or r.get("publication") or "").strip()))
    return out


def benchmark_from_files(queries_csv, sources_csv, gold_csv, *, name: str = "files",
                         skipped: list[str] | None = None) -> Benchmark:
    """Build a :class:`Benchmark` from a query corpus, a source corpus and a gold file (locisimiles style);
    with ``skipped`` a list, bad rows are listed there and left out (:func:`load_segments_csv`,
    :func:`load_gold_csv`).

    Gold ids that are not in the corpora are kept in ``gold`` and listed by :func:`benchmarks.loci.matching.
    check_gold_ids`; run :func:`benchmarks.loci.matching.match_gold_to_corpus` to resolve them by text.
    """
    raw = load_gold_csv(gold_csv, skipped)
    folds: dict[str, list[int]] = defaultdict(list)
    for g in raw:
        if g.fold is not None:
            folds[g.query_id].append(g.fold)
    file_folds, meta = {}, {}
    if folds:
        file_folds["file"], meta["fold_conflicts"] = _majority_folds(folds)
    return Benchmark(name, load_segments_csv(queries_csv, skipped=skipped),
                     load_segments_csv(sources_csv, skipped=skipped), merge_links(raw), raw, file_folds, meta=meta)


_RELEASE_PATTERNS = {
    "queries": ("query", "queries", "citing"),
    "sources": ("source", "corpus", "cited"),
    "gold": ("label", "gold", "ground_truth", "links", "references"),
}


def find_release_files(directory) -> dict[str, Path]:
    """Locate the query corpus, source corpus and labels CSVs in a release directory (searched recursively).

    Names are matched by keywords: labels ``*label*|*gold*|*ground_truth*``, queries ``*quer*``, sources
    ``*source*|*corpus*`` (the labels file is picked first, so ``query_labels.csv`` is not taken as a corpus).
    """
    files = sorted(p for p in Path(directory).rglob("*") if p.suffix.lower() in (".csv", ".tsv"))
    found: dict[str, Path] = {}
    for role in ("gold", "queries", "sources"):
        for p in files:
            stem = p.stem.lower()
            if p in found.values():
                continue
            if any(k in stem for k in _RELEASE_PATTERNS[role]):
                found[role] = p
                break
    missing = {"queries", "sources", "gold"} - set(found)
    if missing:
        raise FileNotFoundError(f"release directory {directory}: no file for {sorted(missing)}")
    return found


def load_release_dir(directory, *, name: str = "loci-similes-release") -> Benchmark:
    """Load a local copy of the full release: query corpus, source corpus, labels (any column set of
    :func:`load_segments_csv` / :func:`load_gold_csv`)."""
    f = find_release_files(directory)
    b = benchmark_from_files(f["queries"], f["sources"], f["gold"], name=name)
    b.meta["files"] = {k: str(v) for k, v in f.items()}
    return b


def default_data_dir() -> Path:
    """``locisimiles/`` in the shared data folder (:func:`core.paths.shared_data_dir`: ``$SIMILIA_SHARED_DATA_DIR``
    or the ``shared/data`` folder beside the repository); functions that read files also take a directory."""
    return shared_data_dir() / "locisimiles"


def load_default_545(data_dir=None) -> Benchmark:
    """The 545-pair benchmark from the shared data folder (texts + ``cit.``/``cf.`` types)."""
    d = Path(data_dir) if data_dir else default_data_dir()
    rt = d / "pairs_545_ref_type.csv"
    return load_pairs_545(d / "pairs_545_with_text.csv", rt if rt.exists() else None)
