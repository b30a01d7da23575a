"""Workbench speed: the explorer over 100,000 candidate rows, and detection on two uploaded 5,000-segment texts.

Usage: .venv/bin/python perf/workbench_bench.py [--texts DIR]   (default the shared data folder's latin_texts/tesserae;
DATABASE_URL picks the database; a throw-away test database, perf/_testdb.py)

1. Explorer: a run with 10,000 query segments × 10 candidates (rows written in bulk SQL). Times the explorer page
   and the candidate API for page 1, a deep page, a label filter and a text search: server time, SQL statements,
   payload. Named alternative, same run: building page 1 the naive way (one query per row for each segment and
   its verdicts, an N+1 pattern), which the selectors avoid.
2. Detection end to end through the API: upload a 5,000-segment query text (Jerome's letters, sentences) and a
   5,000-segment source text (the Aeneid, lines) as CSV, start a bm25-lemma top-10 run, run its job, fetch the
   first page of results. Named alternative, same run: `detection.commands.run_detect` (the `detect` command:
   the same retrieval from CSV files to a CSV file, no database).
"""
from __future__ import annotations

import argparse
import csv
import io
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # perf/_testdb.py
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")


def _csv(segments) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(["seg_id", "text"])
    writer.writerows([(s.seg_id, s.text) for s in segments])
    return buf.getvalue().encode()


def _timed(fn):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        t0 = time.perf_counter()
        out = fn()
        elapsed = time.perf_counter() - t0
    return out, elapsed, len(queries)


def explorer(owner, client, api) -> None:
    from django.db import connection

    from jobs.models import Job
    from workbench import selectors
    from workbench.models import Candidate, DetectionRun, Document, DocumentSegment

    nq, k = 10_000, 10
    qdoc = Document.objects.create(name="q", format="csv", owner=owner, n_segments=nq)
    sdoc = Document.objects.create(name="s", format="csv", owner=owner, n_segments=k)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO workbench_documentsegment (document_id, position, seg_id, author, work, text) "
            "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < %s) "
            "SELECT %s, i, 'hier. epist. ' || CAST(i AS TEXT) || '.1', 'Hieronymus', '',"
            " 'quid facit cum psalterio horatius cum euangeliis maro cum apostolo cicero ' || CAST(i AS TEXT) FROM n",
            [nq - 1, qdoc.pk])
    DocumentSegment.objects.bulk_create([DocumentSegment(document=sdoc, position=j, seg_id=f"verg. aen. 1.{j}",
                                                         author="Vergilius", text="arma uirumque cano " * 8)
                                         for j in range(k)])
    run = DetectionRun.objects.create(owner=owner, query_document=qdoc, source_document=sdoc, retriever="bm25-lemma",
                                      top_k=k, job=Job.objects.create(kind="benchmarks.detect", status="succeeded",
                                                                      owner=owner), reranker="lexical-rule")
    t0 = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO workbench_candidate (run_id, query_id, source_id, query_position, rank, score, p_none, p_cit,"
            " p_cf, label, shared_lemmas, bucket) SELECT %s, q.id, s.id, q.position, s.position + 1,"
            " 10.0 - s.position, 0.1, 0.5, 0.4, CASE WHEN s.position < 2 THEN 'cit.' ELSE '' END, 3, 'bigram' "
            "FROM workbench_documentsegment q CROSS JOIN workbench_documentsegment s "
            "WHERE q.document_id = %s AND s.document_id = %s", [run.pk, qdoc.pk, sdoc.pk])
    n = Candidate.objects.filter(run=run).count()
    print(f"explorer: {n:,} candidate rows written in {time.perf_counter() - t0:.2f} s")
    print(f"{'request':<44} {'server s':>9} {'SQL':>5} {'KiB':>8}")
    for label, url in [("page 1 (HTML)", f"/workbench/runs/{run.pk}/"),
                       ("page 1,500 of 2,000 (HTML)", f"/workbench/runs/{run.pk}/?page=1500"),
                       ("label cit., page 100 (HTML)", f"/workbench/runs/{run.pk}/?label=cit.&page=100"),
                       ("search 'epist. 4242' (HTML)", f"/workbench/runs/{run.pk}/?q=epist.+4242"),
                       ("API page 1, 100 rows", f"/api/v1/workbench/runs/{run.pk}/candidates/?page_size=100"),
                       ("API page 900, 100 rows", f"/api/v1/workbench/runs/{run.pk}/candidates/?page=900&page_size=100")]:
        c = api if url.startswith("/api/") else client
        c.get(url)  # warm
        response, elapsed, n_sql = _timed(lambda c=c, url=url: c.get(url))
        assert response.status_code == 200, (url, response.status_code)
        print(f"{label:<44} {elapsed:>9.3f} {n_sql:>5} {len(response.content) / 1024:>8.1f}")

    def optimised():
        page = selectors.candidate_page(selectors.candidates(run=run), page=1)
        return [(r.query.text, r.source.text, len(r.verdict_list)) for r in page["rows"]]

    def naive():
        rows = list(Candidate.objects.filter(run=run).order_by("query_position", "rank")[:50])
        return [(r.query.text, r.source.text, r.verdicts.count()) for r in rows]

    (_, t_opt, q_opt), (_, t_naive, q_naive) = _timed(optimised), _timed(naive)
    print(f"page 1 rows: selectors {t_opt * 1000:.1f} ms / {q_opt} SQL vs naive per-row {t_naive * 1000:.1f} ms / "
          f"{q_naive} SQL: {t_naive / t_opt:.1f}x")


def detection(texts: Path, owner, api) -> None:
    from detection.commands import run_detect
    from detection.latin.readers import read_tess
    from detection.latin.segment import Segment, segment_units
    from jobs.runner import run_job
    from workbench.models import DetectionRun

    logging.disable(logging.INFO)
    jerome = segment_units(read_tess(texts / "jerome.epistulae.tess"), "hier. epist.")[:5000]
    aeneid = [Segment(f"verg. aen. {u.ref}", u.text) for u in read_tess(texts / "vergil.aeneid.tess")][:5000]
    qbytes, sbytes = _csv(jerome), _csv(aeneid)
    print(f"\ndetection: {len(jerome):,} query segments ({len(qbytes) / 1024:.0f} KiB) × {len(aeneid):,} source "
          f"segments ({len(sbytes) / 1024:.0f} KiB), bm25-lemma top 10")
    t0 = time.perf_counter()
    docs = []
    for name, data in (("jerome.csv", qbytes), ("aeneid.csv", sbytes)):
        f = io.BytesIO(data)
        f.name = name
        response = api.post("/api/v1/workbench/documents/", {"file": f}, format="multipart")
        assert response.status_code == 201, response.content
        docs.append(response.json()["id"])
    t_upload = time.perf_counter() - t0
    t1 = time.perf_counter()
    response = api.post("/api/v1/workbench/runs/", {"query_document": docs[0], "source_document": docs[1],
                                                    "retriever": "bm25-lemma", "top_k": 10}, format="json")
    run = DetectionRun.objects.get(pk=response.json()["id"])
    if run.job.status == "queued":  # a real broker: run the job here
        assert run_job(run.job_id) == "succeeded"
    t_job = time.perf_counter() - t1  # with the test settings' eager Celery the job ran inside the POST
    t2 = time.perf_counter()
    first = api.get(f"/api/v1/workbench/runs/{run.pk}/candidates/").json()
    t_page = time.perf_counter() - t2
    run.refresh_from_db()
    total = time.perf_counter() - t0
    print(f"  upload both {t_upload:.2f} s · job {t_job:.2f} s (retrieve + overlap {run.summary['detect_s']} s, store "
          f"{run.summary['n_candidates']:,} rows {run.summary['store_s']} s) · first page {t_page:.2f} s "
          f"({first['count']:,} candidates) · end to end {total:.2f} s")
    t4 = time.perf_counter()
    response = api.post("/api/v1/workbench/runs/", {"query_document": docs[0], "source_document": docs[1],
                                                    "retriever": "bm25-lemma", "top_k": 10, "reranker": "lexical-rule"},
                        format="json")
    reranked = DetectionRun.objects.get(pk=response.json()["id"])
    if reranked.job.status == "queued":
        assert run_job(reranked.job_id) == "succeeded"
    reranked.refresh_from_db()
    print(f"  with the lexical-rule reranker: job {time.perf_counter() - t4:.2f} s (retrieve + rerank + overlap "
          f"{reranked.summary['detect_s']} s), {reranked.summary['n_cit']:,} cit. and {reranked.summary['n_cf']:,} cf. "
          f"labelled at 0.5")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "q.csv").write_bytes(qbytes)
        (Path(tmp) / "s.csv").write_bytes(sbytes)
        t3 = time.perf_counter()
        run_detect(query=str(Path(tmp) / "q.csv"), source=str(Path(tmp) / "s.csv"), output=str(Path(tmp) / "out.csv"),
                   top_k=10, stream=io.StringIO())  # bm25-lemma, the default
        t_cli = time.perf_counter() - t3
    print(f"  alternative: the detect command (files, no database) {t_cli:.2f} s; the workbench end to end is "
          f"{total / t_cli:.1f}x that (the difference: upload checks, lexical overlap per pair, rows in the database)")


def main() -> None:
    from _testdb import throwaway_database

    from core.paths import shared_data_dir

    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", default=str(shared_data_dir() / "latin_texts" / "tesserae"))
    args = parser.parse_args()
    with throwaway_database():
        from django.test import Client
        from rest_framework.test import APIClient

        from core.services import user_create_or_update

        owner, _ = user_create_or_update(username="bench-res", password="x" * 12, roles=("researcher",))
        client, api = Client(), APIClient()
        client.force_login(owner)
        api.force_authenticate(owner)
        explorer(owner, client, api)
        texts = Path(args.texts)
        if (texts / "jerome.epistulae.tess").exists():
            detection(texts, owner, api)
        else:
            print(f"\ndetection: {texts} not found; pass --texts to measure it")


if __name__ == "__main__":
    main()
