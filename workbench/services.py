"""Writes of the workbench: documents (upload, copy of a stored corpus), detection runs (create, execute),
verdicts, and promoting confirmed parallels into a new version of a benchmark's gold."""
from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Callable

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from benchmarks.models import BenchmarkVersion, Corpus, GoldReference, Segment
from core import safejson
from core.errors import DomainError
from core.roles import LEAD, has_role
from core.run_limits import DETECTION_SHARDS, WORKBENCH_TOP_K, WORKBENCH_UNIT
from workbench.engine.uploads import UploadError, parse_upload
from workbench.models import Candidate, DetectionRun, Document, DocumentSegment, Verdict

STORE = "workbench.candidates"  # the detection job's result store that writes a run's Candidate rows
MAX_CANDIDATES = 2_000_000  # query segments × top-k of one run: rows the explorer pages through
_BULK = 2000


class WorkbenchError(DomainError, ValueError):
    """A request the workbench cannot honour; the message says why (shown to the user as it is; the API's one
    exception handler answers it with a 400, or with ``status`` when given: 409 for a refusal the object's state
    causes)."""

    status = 400


def max_segments() -> int:
    return settings.SIMILIA_IMPORT_MAX_ROWS


# ------------------------------------------------------------------------------------------ documents
@transaction.atomic
def document_upload(*, name: str, data: bytes, fmt: str | None = None, owner=None) -> Document:
    """A document from an uploaded file, read as ``detect --skip-bad-rows`` reads one (see
    `workbench.engine.uploads`: the rows skipped are in its provenance); nothing is stored when it is refused."""
    try:
        parsed = parse_upload(name, data, fmt or None, max_bytes=settings.SIMILIA_MAX_UPLOAD_BYTES,
                              max_segments=max_segments(), max_columns=settings.SIMILIA_IMPORT_MAX_COLUMNS)
    except UploadError as exc:
        raise WorkbenchError(str(exc)) from None
    doc = Document.objects.create(
        name=name[:200], format=parsed.format, owner=owner, n_segments=len(parsed.segments),
        provenance={"file": name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                    "format": parsed.format, **parsed.skipped_note()})
    DocumentSegment.objects.bulk_create(
        [DocumentSegment(document=doc, position=i, seg_id=s.seg_id[:300], author=s.author[:100], work=s.work[:200],
                         text=s.text) for i, s in enumerate(parsed.segments)], batch_size=_BULK)
    return doc


@transaction.atomic
def document_from_corpus(*, corpus: Corpus) -> Document:
    """The shared workbench copy of a stored benchmark corpus (made once; later calls return it)."""
    existing = Document.objects.filter(corpus=corpus).first()
    if existing is not None:
        return existing
    doc = Document.objects.create(name=str(corpus), format=Document.Format.CORPUS, corpus=corpus,
                                  provenance={"corpus": corpus.pk, "side": corpus.side})
    # one INSERT … SELECT (an 87,791-segment corpus in seconds, not row by row); the position is the stored
    # segment's id, which keeps the corpus order
    seg, dseg = Segment._meta, DocumentSegment._meta
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {dseg.db_table} (document_id, position, seg_id, author, work, text) "
            f"SELECT %s, id, seg_id, author, work, text FROM {seg.db_table} WHERE corpus_id = %s", [doc.pk, corpus.pk])
    doc.n_segments = DocumentSegment.objects.filter(document=doc).count()
    doc.save(update_fields=["n_segments"])
    return doc


def document_from_corpus_work(*, corpus: str, work: str, owner=None) -> Document:
    """The workbench copy of one work of a search corpus (``detection.corpus_reads``), made once per owner: its
    segments keep their citations as ids (a repeated citation, a mis-numbered line of the edition, gets ``#2``)."""
    from detection import corpus_reads

    row = corpus_reads.corpus_get(corpus)
    cw = corpus_reads.work_get(row, work)
    provenance = {"search_corpus": row.name, "work": cw.key, "digest": row.digest}
    existing = Document.objects.filter(owner=owner, provenance=provenance).first()
    if existing is not None:
        return existing
    segments = corpus_reads.work_segments(row, cw)
    doc = Document.objects.create(name=f"{cw.author}, {cw.title} ({row.name})", format=Document.Format.TESS,
                                  owner=owner, n_segments=len(segments), provenance=provenance)
    seen: dict[str, int] = {}
    rows = []
    for pos, (cite, text) in enumerate(segments):
        seen[cite] = seen.get(cite, 0) + 1
        sid = cite if seen[cite] == 1 else f"{cite}#{seen[cite]}"
        rows.append(DocumentSegment(document=doc, position=pos, seg_id=sid, author=cw.author, work=cw.key, text=text))
    DocumentSegment.objects.bulk_create(rows, batch_size=2000)
    return doc


# ------------------------------------------------------------------------------------- detection runs
def _thresholds(value) -> dict:
    value = value or {}
    if not isinstance(value, dict) or set(value) - {"cit.", "cf."}:
        raise WorkbenchError('thresholds must be a JSON object with the keys "cit." and/or "cf."')
    out = {"cit.": 0.5, "cf.": 0.5}
    for key, v in value.items():
        try:
            v = None if isinstance(v, str) else safejson.real_number(v)
        except ValueError:
            v = None
        if v is None or not 0.0 <= v <= 1.0:
            raise WorkbenchError(f"threshold {key!r} must be a number between 0 and 1")
        out[key] = v
    return out


@transaction.atomic
def detection_run_create(*, query_document: Document, source_document: Document, retriever: str,
                         retriever_params: dict | None = None, reranker: str = "", reranker_params: dict | None = None,
                         top_k: int = 10, min_score: float | None = None, thresholds: dict | None = None,
                         unit: str = "line",
                         name: str = "", shards: int | None = None, owner=None) -> DetectionRun:
    """Validate the methods and their parameters against the registry's declarations, create the run and
    queue the one detection job (``benchmarks.detect``) over its two documents: on the queue the methods
    declare ("gpu" when either needs one), in ``shards`` shards (default: ``JOB_SHARD_QUERIES`` queries each)
    that the workers share; the merge stores the candidates as rows of the run (`detection_run_store`)."""
    from benchmarks.services.runs import check_models_usable
    from detection.detection_jobs import segment_set
    from detection.methods import params_for_unit
    from detection.methods.infrastructure.installed import installed_config
    from detection.services.detection import detection_job_create, detection_method_config

    WORKBENCH_UNIT.check(unit, WorkbenchError)
    retriever_params = params_for_unit(retriever, retriever_params, unit)  # channels: verse lines, prose sentences
    # configured once here (a bad value: the registry's ParamError, as it is); the job carries these configurations
    r_config, notes = installed_config(detection_method_config(retriever, retriever_params, kind="retriever"),
                                       retriever_params)
    rr_config = None
    if reranker:
        rr_config, rr_notes = installed_config(
            detection_method_config(reranker, reranker_params, kind="reranker"), reranker_params)
        notes += rr_notes
    r_params, rr_params = dict(r_config.params), dict(rr_config.params) if rr_config else {}
    check_models_usable(owner, r_params, rr_params)  # a RunError: a DomainError, a 400 like the registry's own
    if reranker_params and not reranker:
        raise WorkbenchError("reranker_params given without a reranker")
    WORKBENCH_TOP_K.check(top_k, WorkbenchError)  # the run limits declared once (core/run_limits.py)
    DETECTION_SHARDS.check(shards, WorkbenchError)
    if min_score is not None and (isinstance(min_score, bool) or not isinstance(min_score, (int, float))):
        raise WorkbenchError("min_score must be a number")
    for doc in (query_document, source_document):
        if not doc.n_segments:
            raise WorkbenchError(f"document {doc.name!r} has no segments")
    if query_document.n_segments * top_k > MAX_CANDIDATES:
        raise WorkbenchError(f"{query_document.n_segments:,} query segments × top {top_k} would be "
                             f"{query_document.n_segments * top_k:,} candidates; the limit is {MAX_CANDIDATES:,} per "
                             f"run: lower top_k or split the query text")
    run = DetectionRun.objects.create(
        name=name[:200], owner=owner, query_document=query_document, source_document=source_document,
        retriever_config=r_config.to_json(), reranker_config=rr_config.to_json() if rr_config else None, top_k=top_k,
        min_score=min_score, thresholds=_thresholds(thresholds), unit=unit, notes=notes)
    run.job = detection_job_create(
        queries=segment_set("document", query_document.pk), sources=segment_set("document", source_document.pk),
        method=retriever, params=r_config, k=top_k, reranker=reranker, reranker_params=rr_config,
        thresholds=run.thresholds, min_score=min_score, store={"name": STORE, "run_id": run.pk}, shards=shards,
        unit=unit, owner=owner)
    run.save(update_fields=["job"])
    return run


def detection_run_store(*, run: DetectionRun, candidates, merged: dict, progress: Callable[[float, str], None],
                        log: Callable[[str], None]) -> dict:
    """Store a merged detection's candidates (``detection.candidates.Candidates``, query and source
    indices into the documents' segments in order) as the run's Candidate rows, replacing any, and its summary."""
    import time

    t0 = time.perf_counter()
    queries = list(DocumentSegment.objects.filter(document=run.query_document_id).order_by("position")
                   .values_list("id", "position"))
    sources = list(DocumentSegment.objects.filter(document=run.source_document_id).order_by("position")
                   .values_list("id", flat=True))
    progress(0.9, f"storing {len(candidates)} candidates")
    probs = candidates.probs
    explain = getattr(candidates, "explain", None)  # the engine's per-candidate explanations, when it gives them
    if explain is not None and len(explain) != len(candidates):
        raise ValueError(f"{len(explain)} explanations for {len(candidates)} candidates")
    explained = itertools.repeat("{}") if explain is None else (explain_json(e) for e in explain)
    with transaction.atomic():
        Candidate.objects.filter(run=run).delete()
        rows = ((run.pk, queries[q][0], sources[s], queries[q][1], int(rank), float(score),
                 None if probs is None else float(probs[n, 0]), None if probs is None else float(probs[n, 1]),
                 None if probs is None else float(probs[n, 2]), label, int(shared), bucket, why)
                for n, (q, s, rank, score, label, shared, bucket, why) in enumerate(zip(
                    candidates.query.tolist(), candidates.source.tolist(), candidates.rank.tolist(),
                    candidates.score.tolist(), candidates.label, candidates.shared.tolist(), candidates.bucket,
                    explained)))
        _insert_candidates(rows)
        started = run.job.started if run.job_id and run.job.started else None
        run.summary = {"n_queries": len(queries), "n_sources": len(sources), "n_candidates": len(candidates),
                       "n_cit": candidates.label.count("cit."), "n_cf": candidates.label.count("cf."),
                       "detect_s": round((timezone.now() - started).total_seconds(), 2) if started else None,
                       "store_s": round(time.perf_counter() - t0, 2), "shards": merged["shards"],
                       "workers": len(merged["shards_per_worker"])}
        run.save(update_fields=["summary"])
    log(f"stored {len(candidates)} candidates of run {run.pk} in {run.summary['store_s']} s")
    if _refresh_candidate_statistics(len(candidates)):
        log("refreshed PostgreSQL's statistics of the candidate table for the explorer's queries")
    return {"run_id": run.pk, **run.summary}


ANALYZE_AFTER_ROWS = 10_000


def _refresh_candidate_statistics(n_rows: int) -> bool:
    """ANALYZE the candidate table on PostgreSQL after a large store, so that the explorer's first filtered page
    of the new run is planned from statistics that know its rows rather than from autovacuum's last pass (which
    comes up to a minute later). A sampled pass: about 30,000 rows whatever the table's size."""
    if connection.vendor != "postgresql" or n_rows < ANALYZE_AFTER_ROWS:
        return False
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Candidate._meta.db_table}")
    return True


_CANDIDATE_COLUMNS = ("run", "query", "source", "query_position", "rank", "score", "p_none", "p_cit", "p_cf", "label",
                      "shared_lemmas", "bucket", "explain")


def explain_json(value) -> str:
    """One candidate's explanation as the JSON text the ``explain`` column stores: a dict as it is, a JSON text
    checked to be an object, nothing (None, "") as ``{}``. Anything else is the engine's bug and stops the store."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "{}"
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, dict):
        raise TypeError(f"a candidate's explanation must be a JSON object, not {type(value).__name__}")
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_plain)


def _plain(value):
    """numpy scalars and arrays in an explanation as plain JSON numbers and lists."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _insert_candidates(rows) -> None:
    """Insert candidate tuples (in `_CANDIDATE_COLUMNS` order) with plain SQL instead of model instances:
    PostgreSQL (psycopg 3) by COPY, anything else by `executemany` in chunks. Measured for 48,347 rows at load
    11–13 here: SQLite executemany 1.0–1.2 s against 6.1–8.9 s for `bulk_create`; PostgreSQL COPY 2.9 s against
    7.1 s for `bulk_create`, 8.3 s for executemany and 16.9 s for multi-row INSERTs of 1,000 rows."""
    table = Candidate._meta.db_table
    columns = ", ".join(Candidate._meta.get_field(name).column for name in _CANDIDATE_COLUMNS)
    with connection.cursor() as cursor:
        raw = getattr(cursor, "cursor", None)
        if connection.vendor == "postgresql" and hasattr(raw, "copy"):
            with raw.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            return
        sql = f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(_CANDIDATE_COLUMNS))})"
        chunk: list[tuple] = []
        for row in rows:
            chunk.append(row)
            if len(chunk) >= 5000:
                cursor.executemany(sql, chunk)
                chunk = []
        if chunk:
            cursor.executemany(sql, chunk)


# ------------------------------------------------------------------------------------------- verdicts
@transaction.atomic
def verdict_set(*, candidate: Candidate, user, decision: str, note: str = "") -> Verdict:
    """Record (or replace) `user`'s verdict on a candidate."""
    if decision not in Verdict.Decision.values:
        raise WorkbenchError(f"decision must be one of {', '.join(Verdict.Decision.values)}")
    if len(note) > 2000:
        raise WorkbenchError("a note is at most 2000 characters")
    verdict, _ = Verdict.objects.update_or_create(candidate=candidate, user=user,
                                                  defaults={"decision": decision, "note": note})
    return verdict


@transaction.atomic
def gold_promote(*, run: DetectionRun, base: BenchmarkVersion, version: str, user) -> BenchmarkVersion:
    """A new version of `base`'s benchmark: its gold plus every parallel confirmed (cit./cf.) in `run`.

    The run must compare the base version's own corpora (picked as stored corpora), so every confirmed pair
    names segments of the benchmark. Pairs already in the gold are not added twice; the new version records
    which run, verdicts and person it came from. Others use the benchmark: a version promoted by someone who is
    not a lead waits for a lead's approval (`benchmarks.services.version_approve`) and is visible only to its
    proposer until then."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,49}", version or ""):
        raise WorkbenchError("the new version's label must be 1–50 letters, digits, '.', '_' or '-'")
    qdoc, sdoc = run.query_document, run.source_document
    if qdoc.corpus_id != base.query_corpus_id or sdoc.corpus_id != base.source_corpus_id:
        raise WorkbenchError("this run does not compare the benchmark version's own query and source corpora; "
                             "only such runs can grow its gold")
    if BenchmarkVersion.objects.filter(benchmark=base.benchmark, version=version).exists():
        raise WorkbenchError(f"{base.benchmark.name} already has a version {version!r}")
    confirmed = list(Verdict.objects.filter(candidate__run=run, decision__in=["cit.", "cf."])
                     .select_related("candidate__query", "candidate__source", "user").order_by("updated"))
    if not confirmed:
        raise WorkbenchError("no confirmed parallel in this run yet")
    new = BenchmarkVersion.objects.create(
        benchmark=base.benchmark, version=version, query_corpus_id=base.query_corpus_id,
        source_corpus_id=base.source_corpus_id,
        description=f"{base.version} plus parallels confirmed in detection run {run.pk}",
        provenance={**base.provenance, "base_version": base.version, "promoted": {
            "detection_run": run.pk, "by": user.username, "at": timezone.now().isoformat()}},
        awaiting_approval=not has_role(user, LEAD), proposed_by=user)
    old = list(base.gold.all())
    GoldReference.objects.bulk_create([
        GoldReference(version=new, pair_id=g.pair_id, query_id=g.query_id, source_id=g.source_id,
                      ref_type=g.ref_type, fold=g.fold, provenance=g.provenance) for g in old])
    q_ids = dict(Segment.objects.filter(corpus_id=base.query_corpus_id).values_list("seg_id", "id"))
    s_ids = dict(Segment.objects.filter(corpus_id=base.source_corpus_id).values_list("seg_id", "id"))
    present = {(g.query_id, g.source_id) for g in old}
    fold_of = {g.query_id: g.fold for g in old if g.fold is not None}  # a known query keeps its fold
    added = {}
    for v in confirmed:  # the latest verdict per pair wins (ordered by time)
        key = (q_ids[v.candidate.query.seg_id], s_ids[v.candidate.source.seg_id])
        if key not in present:
            added[key] = v
    GoldReference.objects.bulk_create([
        GoldReference(version=new, pair_id=f"wb{run.pk}-{v.candidate_id}", query_id=q, source_id=s,
                      ref_type=v.decision, fold=fold_of.get(q),
                      provenance=f"verdict by {v.user.username} at {v.updated:%Y-%m-%d %H:%M} (detection run {run.pk})"[:300])
        for (q, s), v in added.items()])
    new.provenance["promoted"]["added"] = len(added)
    new.save(update_fields=["provenance"])
    return new


def _check_owner(run: DetectionRun, user) -> None:
    if not (user.is_staff or (run.owner_id is not None and run.owner_id == user.pk)):
        raise WorkbenchError("only the run's owner can change it")


@transaction.atomic
def run_rename(*, run: DetectionRun, user, name: str) -> DetectionRun:
    """A new name for a run (empty: "Detection <id>"). Its candidates, verdicts and exports follow it."""
    _check_owner(run, user)
    name = name.strip()
    if len(name) > 200:
        raise WorkbenchError("name: at most 200 characters")
    run.name = name
    run.save(update_fields=["name"])
    return run


def run_delete_plan(run: DetectionRun) -> dict:
    """What deleting a run removes and keeps (the confirmation page shows it; `run_delete` follows it)."""
    n_candidates = Candidate.objects.filter(run=run).count()
    n_verdicts = Verdict.objects.filter(candidate__run=run).count()
    plan = {"goes": [f"The run {run}: its {n_candidates:,} candidate(s) and the {n_verdicts:,} verdict(s) given on "
                     "them (by anyone); its result and verdict exports are no longer possible — download them first."],
            "stays": ["Its two documents (other runs may use them; a new run can compare them again).",
                      "Benchmark versions promoted from it (they hold their own copy of the confirmed pairs).",
                      "The job record of its detection (on /jobs/)."]}
    if run.job_id and not run.job.is_finished:
        plan["refused"] = "its detection job is still queued or running; wait until it finishes."
    return plan


@transaction.atomic
def run_delete(*, run: DetectionRun, user) -> str:
    _check_owner(run, user)
    run = DetectionRun.objects.select_for_update(of=("self",)).select_related("job").get(pk=run.pk)
    refused = run_delete_plan(run).get("refused")
    if refused:
        raise WorkbenchError(f"not deleted: {refused}", status=409)
    label = str(run)
    run.delete()
    return f"{label} deleted with its candidates and verdicts."
