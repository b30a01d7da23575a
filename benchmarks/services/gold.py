"""Imports of gold data: the Loci Similes 545-pair benchmark and graded similarity gold sets.

Every import is all-or-nothing: the files are checked first (a bad file raises one error naming the file,
the line and the problem) and the rows are written in one transaction.
"""
from __future__ import annotations

import csv
import dataclasses
from collections import Counter
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from benchmarks.greek_sts.gold_files import GoldFormatError, parse_score, read_sts_gold
from benchmarks.loci import data as loci_data
from benchmarks.loci import matching as loci_matching
from benchmarks.models import (
    Benchmark,
    BenchmarkVersion,
    Corpus,
    GoldReference,
    GoldSimilarityPair,
    GoldSimilaritySet,
    Segment,
)
from core.errors import DomainError


class BenchmarkImportError(ValueError):
    """A Loci Similes file that cannot be imported; the message names file, line and problem."""


class GoldImportError(ValueError):
    """A similarity gold file or row list that cannot be imported; the message names where and why."""


# ------------------------------------------------------------------------------------ Loci Similes 545
_WITH_TEXT_COLUMNS = ("pair_id", "position_query", "position_corpus", "text_query", "text_corpus")
_REF_TYPE_COLUMNS = ("pair_id", "ref_type")


def _read_checked(path: Path, required: tuple[str, ...]) -> list[tuple[int, dict]]:
    """(line number, row) pairs of a CSV with the `required` columns; raises BenchmarkImportError.

    Header names are stripped, cell values are kept as read (the checks strip them), so the same rows feed
    both the checks and :func:`benchmarks.loci.data.pairs_545_from_rows`: each file is parsed once."""
    name = Path(path).name
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            header = [(c or "").strip() for c in (reader.fieldnames or [])]
            missing = [c for c in required if c not in header]
            if missing:
                raise BenchmarkImportError(f"{name}:1: missing column(s) {', '.join(missing)}; found {header}")
            rows = []
            for row in reader:
                if None in row:
                    raise BenchmarkImportError(f"{name}:{reader.line_num}: more cells than header columns")
                rows.append((reader.line_num, {(k or "").strip(): v or "" for k, v in row.items()}))
    except FileNotFoundError:
        raise BenchmarkImportError(f"{path}: file not found") from None
    except UnicodeDecodeError as exc:
        raise BenchmarkImportError(f"{name}: not UTF-8 text ({exc})") from None
    except csv.Error as exc:
        raise BenchmarkImportError(f"{name}: malformed CSV ({exc})") from None
    if not rows:
        raise BenchmarkImportError(f"{name}: no rows after the header")
    return rows


def _check_fold(name: str, line: int, value: str) -> None:
    if value and not (value.isascii() and value.lstrip("-").isdigit()):
        raise BenchmarkImportError(f"{name}:{line}: fold_id {value!r} is not an integer")


def read_545_files(with_text_path: Path, ref_type_path: Path | None) -> tuple[list[dict], list[dict] | None, dict]:
    """Read and check both files, each parsed once, before anything is stored: the texts file first (so its
    problems are reported even when the types file is missing), then the types file.

    Returns (texts rows, types rows or None, counts for the provenance); raises BenchmarkImportError naming the
    file and the line."""
    wt_name = Path(with_text_path).name
    wt_rows = _read_checked(with_text_path, _WITH_TEXT_COLUMNS)
    seen: dict[str, int] = {}
    for line, row in wt_rows:
        pid = row["pair_id"].strip()
        if not pid:
            raise BenchmarkImportError(f"{wt_name}:{line}: empty pair_id")
        if pid in seen:
            raise BenchmarkImportError(f"{wt_name}:{line}: pair_id {pid!r} repeats line {seen[pid]}")
        seen[pid] = line
        for column in ("position_query", "position_corpus", "text_query", "text_corpus"):
            if not row[column].strip():
                raise BenchmarkImportError(f"{wt_name}:{line}: empty {column}")
        _check_fold(wt_name, line, row.get("fold_id", "").strip())
    counts = {"with_text_rows": len(seen)}
    if ref_type_path is None:
        return [row for _, row in wt_rows], None, counts
    rt_name = Path(ref_type_path).name
    rt_rows = _read_checked(ref_type_path, _REF_TYPE_COLUMNS)
    typed: dict[str, int] = {}
    for line, row in rt_rows:
        pid = row["pair_id"].strip()
        if pid not in seen:
            raise BenchmarkImportError(f"{rt_name}:{line}: pair_id {pid!r} is not in {wt_name}")
        if pid in typed:
            raise BenchmarkImportError(f"{rt_name}:{line}: pair_id {pid!r} repeats line {typed[pid]}")
        typed[pid] = line
        try:
            label = loci_data.normalise_label(row["ref_type"])
        except ValueError:
            label = None
        if label not in (loci_data.LABEL_CIT, loci_data.LABEL_CF, loci_data.LABEL_LINK):
            raise BenchmarkImportError(
                f"{rt_name}:{line}: ref_type {row['ref_type'].strip()!r} is not 'cit.' or 'cf.'")
        _check_fold(rt_name, line, row.get("fold_id", "").strip())
    counts["ref_type_rows"] = len(typed)
    counts["pairs_without_type"] = len(set(seen) - set(typed))
    return [row for _, row in wt_rows], [row for _, row in rt_rows], counts


def _bulk_segments(corpus: Corpus, segments) -> dict[str, int]:
    Segment.objects.bulk_create(
        [Segment(corpus=corpus, seg_id=s.seg_id, author=s.author[:100], work=s.work[:200],
                 citation=s.ref[:100], text=s.text) for s in segments],
        batch_size=500,
    )
    return dict(Segment.objects.filter(corpus=corpus).values_list("seg_id", "id"))


@transaction.atomic
def benchmark_import_545(*, with_text_path: Path, ref_type_path: Path | None = None,
                         name: str = "loci-similes-545", version: str = "1",
                         description: str = "", corpus_dir: Path | None = None) -> tuple[BenchmarkVersion, bool]:
    """Import the Loci Similes 545-pair benchmark (segments + one gold reference per file row).

    Returns (version, created). An existing (name, version) is returned untouched (created False), so the
    import is idempotent. Each reference's fold is its query's fold in `pairs_545_ref_type.csv` when given
    (a query whose rows sit in several folds goes to its majority fold; the provenance counts them), else
    in the `fold_id` column of the texts file.
    """
    existing = BenchmarkVersion.objects.filter(benchmark__name=name, version=version).first()
    if existing is not None:
        return existing, False
    with_text_path = Path(with_text_path)
    ref_type_path = Path(ref_type_path) if ref_type_path else None
    wt_rows, rt_rows, counts = read_545_files(with_text_path, ref_type_path)
    try:
        bench = loci_data.pairs_545_from_rows(
            wt_rows, rt_rows, name=name,
            files=[with_text_path.name] + ([ref_type_path.name] if ref_type_path is not None else []))
    except (KeyError, ValueError) as exc:  # the check above should have caught it; say which file anyway
        raise BenchmarkImportError(f"{with_text_path.name}: {exc}") from None
    match_report = None
    if corpus_dir is not None:
        # the whole corpus (`build_corpus` output): gold segments are matched to corpus segments by id, then by
        # normalised text, so runs can rank against the real source corpus (pool "corpus")
        from benchmarks.loci.data import load_segments_csv
        from benchmarks.loci.matching import attach_corpus

        try:
            corpus = Path(corpus_dir)
            bench, match_report = attach_corpus(bench, load_segments_csv(corpus / "query.csv"),
                                                load_segments_csv(corpus / "source.csv"), name=name)
        except (OSError, KeyError, ValueError) as exc:
            raise BenchmarkImportError(f"{corpus_dir}: {exc}") from None
    fold_split = "ref_type" if "ref_type" in bench.file_folds else "with_text"
    provenance = {
        "files": bench.meta.get("files", []),
        "counts": counts,
        "fold_split": fold_split,
        "fold_conflicts": bench.meta.get("fold_conflicts", {}),
        "n_distinct_pairs": len(bench.gold),
        "note": "One gold reference per file row; texts are the cleaned columns (verse slashes removed).",
    }
    if match_report is not None:
        provenance["corpus"] = {"dir": Path(corpus_dir).name, "query_segments": len(bench.queries),
                                "source_segments": len(bench.sources),
                                "sources_matched": match_report["sources"].get("matched"),
                                "merged_links": match_report.get("merged_links")}
    return _benchmark_store(bench, name=name, version=version, provenance=provenance,
                            query_fold=bench.file_folds.get(fold_split, {}), description=description,
                            benchmark_description="Loci Similes: Latin intertextual references"), True


@transaction.atomic
def benchmark_import_files(*, queries_path: Path, sources_path: Path, gold_path: Path, name: str, version: str = "1",
                           description: str = "", skip_bad_rows: bool = False) -> tuple[BenchmarkVersion, bool]:
    """Import any Latin benchmark in the plain-file shape, no code needed: a query corpus and a source corpus
    (``seg_id,text[,author,work]``) and a gold file (``query_id,source_id[,label][,fold]``; label ``cit.``,
    ``cf.``, or ``1``/empty for a parallel of unknown type). Every gold id must be a segment of its corpus.
    ``skip_bad_rows``: a repeated segment id (its later row), a gold row with an unknown label or naming a segment
    the corpora lack is left out and listed in the version's ``provenance["skipped_rows"]`` instead of stopping
    the import. Idempotent like the 545 import."""
    existing = BenchmarkVersion.objects.filter(benchmark__name=name, version=version).first()
    if existing is not None:
        return existing, False
    paths = [Path(queries_path), Path(sources_path), Path(gold_path)]
    skipped: list[str] | None = [] if skip_bad_rows else None
    try:
        bench = loci_data.benchmark_from_files(*paths, name=name, skipped=skipped)
    except (OSError, KeyError, ValueError) as exc:
        raise BenchmarkImportError(f"{', '.join(p.name for p in paths)}: {exc}") from None
    if skip_bad_rows:
        bench = _without_unknown_ids(bench, skipped, paths[2].name)
    check = loci_matching.check_gold_ids(bench)
    if not check["ok"]:
        raise BenchmarkImportError(
            f"{paths[2].name}: gold ids not in the corpora: {(check['missing_query_ids'] + check['missing_source_ids'])[:5]}")
    if not bench.gold:
        raise BenchmarkImportError(f"{paths[2].name}: no gold links")
    provenance = {"files": [p.name for p in paths], "fold_split": "file" if bench.file_folds else None,
                  "fold_conflicts": bench.meta.get("fold_conflicts", {}), "n_distinct_pairs": len(bench.gold),
                  **({"skipped_rows": skipped} if skip_bad_rows else {})}
    return _benchmark_store(bench, name=name, version=version, provenance=provenance,
                            query_fold=bench.file_folds.get("file", {}), description=description), True


def _without_unknown_ids(bench, skipped: list[str], gold_name: str):
    """``bench`` less the gold links naming a segment its corpora lack (each listed in ``skipped``)."""
    qs, ss = {x.seg_id for x in bench.queries}, {x.seg_id for x in bench.sources}
    for g in bench.raw_links:
        if g.query_id not in qs or g.source_id not in ss:
            skipped.append(f"{gold_name}: pair {g.pair_id}: {g.query_id if g.query_id not in qs else g.source_id} "
                           "is not a segment of the corpora")
    keep = [g for g in bench.raw_links if g.query_id in qs and g.source_id in ss]
    return dataclasses.replace(bench, gold=[g for g in bench.gold if g.query_id in qs and g.source_id in ss],
                               raw_links=keep)


def _benchmark_store(bench, *, name: str, version: str, provenance: dict, query_fold: dict, description: str,
                     benchmark_description: str = "") -> BenchmarkVersion:
    """Store a pure ``benchmarks.loci.data.Benchmark`` as a version: its two corpora and one gold reference per
    file row (each with its query's fold)."""
    benchmark, _ = Benchmark.objects.get_or_create(
        name=name, defaults={"description": description or benchmark_description})
    query_corpus = Corpus.objects.create(name=f"{name}@{version}", side=Corpus.Side.QUERY,
                                         description="Citing segments (later authors)")
    source_corpus = Corpus.objects.create(name=f"{name}@{version}", side=Corpus.Side.SOURCE,
                                          description="Cited segments (earlier authors)")
    q_ids = _bulk_segments(query_corpus, bench.queries)
    s_ids = _bulk_segments(source_corpus, bench.sources)
    bversion = BenchmarkVersion.objects.create(
        benchmark=benchmark, version=version, description=description, provenance=provenance,
        query_corpus=query_corpus, source_corpus=source_corpus)
    GoldReference.objects.bulk_create(
        [GoldReference(version=bversion, pair_id=link.pair_id[:50], query_id=q_ids[link.query_id],
                       source_id=s_ids[link.source_id], ref_type=link.label,
                       fold=query_fold.get(link.query_id, link.fold), provenance=link.provenance[:300])
         for link in bench.raw_links],
        batch_size=500,
    )
    return bversion


# ------------------------------------------------------------------------------- similarity gold sets
_ROW_KEYS = ("reference_id", "candidate_id", "reference_text", "candidate_text", "score")


def _check_rows(rows: list[dict]) -> list[dict]:
    if not rows:
        raise GoldImportError("no rows: a gold set needs at least one scored pair")
    clean, seen = [], {}
    for n, row in enumerate(rows, start=1):
        missing = [k for k in _ROW_KEYS if k not in row]
        if missing:
            raise GoldImportError(f"row {n}: missing {', '.join(missing)}")
        ref_id, cand_id = str(row["reference_id"]).strip(), str(row["candidate_id"]).strip()
        if not ref_id or not cand_id:
            raise GoldImportError(f"row {n}: empty reference_id or candidate_id")
        try:
            score = parse_score(row["score"])
        except ValueError as exc:
            raise GoldImportError(f"row {n}: {exc}") from None
        key = (ref_id, cand_id)
        if key in seen:
            raise GoldImportError(f"row {n}: pair {ref_id!r} → {cand_id!r} repeats row {seen[key]}")
        seen[key] = n
        clean.append({"reference_id": ref_id[:100], "candidate_id": cand_id[:100],
                      "reference_text": str(row["reference_text"]), "candidate_text": str(row["candidate_text"]),
                      "score": score})
    return clean


def _create_set(*, name: str, rows: list[dict], source: str, source_description: str, provenance: dict,
                owner) -> GoldSimilaritySet:
    if GoldSimilaritySet.objects.filter(name=name).exists():
        raise GoldImportError(f"a gold set named {name!r} already exists")
    gold_set = GoldSimilaritySet.objects.create(
        name=name, source=source, source_description=source_description, owner=owner,
        provenance={**provenance, "n_pairs": len(rows),
                    "n_references": len({r["reference_id"] for r in rows})})
    GoldSimilarityPair.objects.bulk_create(
        [GoldSimilarityPair(gold_set=gold_set, position=i, **row) for i, row in enumerate(rows)], batch_size=500)
    return gold_set


@transaction.atomic
def gold_set_create_from_rows(*, name: str, rows: list[dict], source_description: str = "",
                              owner=None, source_project=None) -> GoldSimilaritySet:
    """Turn scored pairs (e.g. an annotation batch's scores) into a gold set.

    Args:
        rows: dicts with reference_id, candidate_id, reference_text, candidate_text, score (in [0, 1]).
        source_project: the annotation project the rows come from; reads of the set follow its rules
            until one of its leads publishes the set (`gold_set_publish`).
    Raises:
        GoldImportError naming the row (1-based) and the problem; nothing is written then.
    """
    clean = _check_rows(list(rows))
    gold_set = _create_set(name=name, rows=clean, source=GoldSimilaritySet.Source.ANNOTATION,
                           source_description=source_description, provenance={"created_from": "rows"}, owner=owner)
    if source_project is not None:
        gold_set.source_project = source_project
        gold_set.save(update_fields=["source_project"])
    return gold_set


class GoldPublishError(DomainError, PermissionError):
    """Only a lead of the set's source project (or staff) may publish or withdraw it."""

    status = 403


@transaction.atomic
def gold_set_publish(*, gold_set: GoldSimilaritySet, user, published: bool = True) -> GoldSimilaritySet:
    """Publish (or withdraw) a gold set made from annotation: published sets are readable by every
    researcher and lead. Only the source project's leads and staff may do it."""
    from django.utils import timezone

    from annotation.selectors import user_can_manage

    project = gold_set.source_project
    if not (user.is_staff or (project is not None and user_can_manage(project=project, user=user))):
        raise GoldPublishError("Only a lead of the gold set's source project (or staff) can publish it.")
    GoldSimilaritySet.objects.filter(pk=gold_set.pk).update(
        published=published, published_at=timezone.now() if published else None)
    gold_set.refresh_from_db()
    return gold_set


@transaction.atomic
def version_approve(*, version: BenchmarkVersion, user) -> BenchmarkVersion:
    """A lead (or staff) approves a version promoted from a workbench run: every user then lists and uses it."""
    from core.roles import LEAD, has_role

    if not has_role(user, LEAD):
        raise GoldPublishError("Only a lead (or staff) can approve a new benchmark version for everyone.")
    if version.awaiting_approval:
        version.awaiting_approval = False
        version.provenance = {**version.provenance, "approved": {"by": user.username,
                                                                  "at": timezone.now().isoformat()}}
        version.save(update_fields=["awaiting_approval", "provenance"])
    return version


@transaction.atomic
def gold_set_import_file(*, path: Path, name: str | None = None, source_description: str = "",
                         owner=None, if_exists: str = "error") -> tuple[GoldSimilaritySet, bool]:
    """Import a gold TSV (the DBBE STS file or the `reference_id … score` shape). Returns (set, created).

    `if_exists="return"` gives back an existing set of that name untouched (idempotent demo load).
    """
    path = Path(path)
    name = name or path.stem
    existing = GoldSimilaritySet.objects.filter(name=name).first()
    if existing is not None and if_exists == "return":
        return existing, False
    try:
        pairs = read_sts_gold(path)
    except FileNotFoundError:
        raise GoldImportError(f"{path}: file not found") from None
    except GoldFormatError as exc:
        raise GoldImportError(str(exc)) from None
    rows = [p.as_dict() for p in pairs]
    per_ref = Counter(r["reference_id"] for r in rows)
    gold_set = _create_set(name=name, rows=_check_rows(rows), source=GoldSimilaritySet.Source.FILE,
                           source_description=source_description or path.name,
                           provenance={"file": path.name, "pairs_per_reference": dict(per_ref)}, owner=owner)
    return gold_set, True
