"""A batch of 600 candidates (179,700 pairs), measured in the same run:

- now: `pairs_insert` (rows sent by COPY on PostgreSQL, executemany elsewhere, 50,000 per chunk) on the pair
  table of migration 0006 (no single-column batch_id index, first_annotator/attention_answer indexed only
  where set);
- 7c7ae39: the same writer (its code is unchanged since that commit) on the table as it was then (annotation
  migrated back to 0005 for these runs);
- PostgreSQL only: the rows made by the server instead of sent (one INSERT … SELECT per chunk, sent the
  candidates and the chunk's ranks; the same rows in the same id order), on today's table, and where the
  time of now goes: the COPY and the foreign-key checks timed apart (one transaction, `SET CONSTRAINTS ALL
  IMMEDIATE` after the COPY, rolled back);
- the old way: Django's bulk_create of Pair objects, in one transaction.

The pair writes alternate three times (the machine is shared; medians printed), each as the job writes them:
one transaction per chunk, so each commit runs that chunk's deferred foreign-key checks. Where the
PostgreSQL server runs on this machine its backend's CPU seconds are printed too (/proc). Each batch is
deleted (and the table vacuumed) before the next, so every run starts from the same table.

Usage: .venv/bin/python perf/batch_create_bench.py [--candidates 600] [--rounds 3]   (DATABASE_URL picks the database)
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "perf"))
from _testdb import throwaway_database  # noqa: E402  (perf/ is on the path only now)

BEFORE, NOW = "0005_judgement_progress_index", "0006_pair_insert_indexes"


def _pairs_generated(*, batch_id: int, verse_pks: list[int], seed: int | None = None) -> int:
    """PostgreSQL: the pairs (i, j), 1 ≤ i < j ≤ n, of the sorted pks made by the server in (verse_a, verse_b)
    order, about bulk.CHUNK per statement, each sent only its slice of the ranks (pair k, counted from 0, is
    (i − 1)·n − (i − 1)·i/2 + (j − i) − 1); one transaction per chunk, as rows_insert."""
    from django.db import connection, transaction

    from annotation.services import bulk

    pks = sorted(verse_pks)
    n = len(pks)
    ranks = list(range(n * (n - 1) // 2))
    random.Random(seed).shuffle(ranks)
    sql = ("INSERT INTO annotation_pair (batch_id, verse_a_id, verse_b_id, rank, planned, taken) "
           "SELECT %(batch)s, p.v[i], p.v[j], r.v[(i - 1) * %(n)s - (i - 1) * i / 2 + (j - i) - %(k0)s], 1, 0 "
           "FROM (SELECT %(pks)s::bigint[] AS v) p, (SELECT %(ranks)s::integer[] AS v) r, "
           "generate_series(%(lo)s::integer, %(hi)s::integer) i, generate_series(i + 1, %(n)s) j ORDER BY i, j")
    written, lo = 0, 1
    while lo < n:
        hi, size = lo, n - lo
        while hi + 1 < n and size + (n - hi - 1) <= bulk.CHUNK:
            hi += 1
            size += n - hi
        with transaction.atomic(savepoint=False), connection.cursor() as cursor:
            cursor.execute(sql, {"batch": batch_id, "n": n, "k0": written, "pks": pks,
                                 "ranks": ranks[written:written + size], "lo": lo, "hi": hi})
            assert cursor.rowcount == size
        written, lo = written + size, hi + 1
    return written


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--candidates", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with throwaway_database():
        from django.conf import settings
        from django.db import connection, transaction
        from django.db.migrations.executor import MigrationExecutor
        from django.test import override_settings
        from rest_framework.test import APIClient

        from annotation.models import Batch, BatchCandidate, Pair
        from annotation.services.bulk import copy_in_use
        from annotation.services.projects import batch_create, batch_start, pairs_insert, project_create, verses_import
        from core.services import user_create_or_update
        from jobs.models import Job
        from jobs.runner import run_job

        postgres = connection.vendor == "postgresql"

        def migrate(target: str) -> None:
            executor = MigrationExecutor(connection)
            executor.migrate([("annotation", target)])

        def server_cpu() -> float | None:
            """CPU seconds of this connection's PostgreSQL backend, when it runs on this machine."""
            if not postgres:
                return None
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                pid = cursor.fetchone()[0]
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                return None
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

        def drop(batch_id: int) -> None:
            with connection.cursor() as cursor:
                cursor.execute(f"DELETE FROM {Pair._meta.db_table} WHERE batch_id = %s", [batch_id])
                cursor.execute(f"DELETE FROM {BatchCandidate._meta.db_table} WHERE batch_id = %s", [batch_id])
                cursor.execute(f"DELETE FROM {Batch._meta.db_table} WHERE id = %s", [batch_id])
                cursor.execute(f"VACUUM {Pair._meta.db_table}" if postgres else "VACUUM")

        lead, _ = user_create_or_update(username="batch-lead", password="x" * 12, roles=("lead",))
        project = project_create(owner=lead, name="big")
        n = args.candidates
        verses_import(project=project, data=json.dumps([{"verse_id": f"3 {k}", "text": f"στίχος {k}"}
                                                        for k in range(n + 1)]).encode(), filename="v.json")
        candidates = [f"3 {k}" for k in range(1, n + 1)]
        n_pairs = n * (n - 1) // 2

        # The whole path once: the request answers 202 with a job, the job writes the batch.
        client = APIClient()
        client.force_authenticate(lead)
        t0 = time.perf_counter()
        with override_settings(SIMILIA_BATCH_JOB_PAIRS=min(settings.SIMILIA_BATCH_JOB_PAIRS, n_pairs - 1)):
            response = client.post(f"/api/v1/projects/{project.pk}/batches/",
                                   {"reference_id": "3 0", "candidate_ids": candidates, "name": "new"}, format="json")
        request_s = time.perf_counter() - t0
        assert response.status_code == 202, response.content
        job_id = response.json()["job"]
        if Job.objects.get(pk=job_id).status == Job.Status.QUEUED:  # not run eagerly on commit: run it here
            t0 = time.perf_counter()
            assert run_job(job_id) == "succeeded"
            job_s = time.perf_counter() - t0
        else:
            job = Job.objects.get(pk=job_id)
            job_s = (job.finished - job.started).total_seconds()
        made = Batch.objects.get(name="new")
        assert made.status == "open" and Pair.objects.filter(batch=made).count() == n_pairs
        drop(made.pk)

        # The pair writes, alternated: (label, migration, writer).
        ways = [("now", NOW, pairs_insert), ("7c7ae39", BEFORE, pairs_insert)]
        if postgres:
            ways.append(("INSERT … SELECT", NOW, _pairs_generated))
        times: dict[str, list[tuple[float, float, float | None]]] = {label: [] for label, _, _ in ways}
        k, reference = 0, None
        for _ in range(args.rounds):
            for label, target, write in ways:
                migrate(target)
                k += 1
                batch, pks = batch_start(project=project, reference_id="3 0", candidate_ids=candidates,
                                         name=f"b{k}", status=Batch.Status.CLOSED)
                s0, t0, c0 = server_cpu(), time.perf_counter(), time.process_time()
                written = write(batch_id=batch.pk, verse_pks=pks, seed=1)
                wall, cpu, s1 = time.perf_counter() - t0, time.process_time() - c0, server_cpu()
                times[label].append((wall, cpu, None if s0 is None or s1 is None else s1 - s0))
                pairs = list(Pair.objects.filter(batch=batch).order_by("id").values_list(
                    "verse_a_id", "verse_b_id", "rank", "planned", "taken"))
                reference = reference or pairs
                assert written == n_pairs and pairs == reference  # every way: the same rows, in the same id order
                drop(batch.pk)
        migrate(NOW)

        # Where the time of now goes (PostgreSQL): the COPY, then the deferred foreign-key checks made immediate.
        phases = []
        for _ in range(args.rounds if postgres else 0):
            k += 1
            batch, pks = batch_start(project=project, reference_id="3 0", candidate_ids=candidates, name=f"b{k}",
                                     status=Batch.Status.CLOSED)
            connection.set_autocommit(False)
            try:
                s0, t0 = server_cpu(), time.perf_counter()
                pairs_insert(batch_id=batch.pk, verse_pks=pks, seed=1)
                s1, t1 = server_cpu(), time.perf_counter()
                with connection.cursor() as cursor:
                    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                s2, t2 = server_cpu(), time.perf_counter()
            finally:
                connection.rollback()
                connection.set_autocommit(True)
            phases.append((t1 - t0, t2 - t1, None if s0 is None else s1 - s0, None if s0 is None else s2 - s1))
            drop(batch.pk)

        # The old way: Pair objects through bulk_create (batch_size 2,500), in one transaction.
        t0 = time.perf_counter()
        with transaction.atomic():
            batch, pks = batch_start(project=project, reference_id="3 0", candidate_ids=candidates, name="old")
            pks = sorted(pks)
            ranks = list(range(n_pairs))
            random.Random(0).shuffle(ranks)
            objects, i_rank = [], iter(ranks)
            for i in range(n):
                for j in range(i + 1, n):
                    objects.append(Pair(batch=batch, verse_a_id=pks[i], verse_b_id=pks[j], rank=next(i_rank)))
            Pair.objects.bulk_create(objects, batch_size=2500)
        old_s = time.perf_counter() - t0
        del objects
        drop(batch.pk)

        tracemalloc.start()
        batch_create(project=project, reference_id="3 0", candidate_ids=candidates, name="mem")
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()

        print(f"database: {connection.vendor}; {n} candidates = {n_pairs:,} pairs; rows sent by "
              f"{'COPY' if copy_in_use() else 'executemany'}; "
              f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"request: 202 with the job in {request_s * 1000:.0f} ms; job writing the batch: {job_s:.2f} s; "
              f"batch_create peak traced memory {peak:.0f} MiB")
        med = {label: (statistics.median(w for w, _, _ in v), statistics.median(c for _, c, _ in v),
                       statistics.median(s for _, _, s in v) if all(s is not None for _, _, s in v) else None)
               for label, v in times.items()}
        print(f"pair writes, median of {args.rounds} alternated (wall / this process's CPU / server backend CPU):")
        for label, (wall, cpu, server) in med.items():
            extra = f" / {server:.2f} s" if server is not None else ""
            ratio = "" if label == "now" else f"   ({wall / med['now'][0]:.2f}x the time of now)"
            print(f"  {label:22s} {wall:.2f} s / {cpu:.2f} s{extra}{ratio}")
        if phases:
            med_p = [statistics.median(p[i] for p in phases) if phases[0][i] is not None else None for i in range(4)]
            server = (f" (server CPU {med_p[2]:.2f} s + {med_p[3]:.2f} s)" if med_p[2] is not None else "")
            print(f"  where now's time goes, one transaction, median of {len(phases)}: COPY {med_p[0]:.2f} s, "
                  f"then the three foreign keys' checks {med_p[1]:.2f} s{server}")
        print(f"old way (bulk_create of Pair objects, with batch_start): {old_s:.2f} s; "
              f"{old_s / med['now'][0]:.1f}x the pair write of now, {old_s / job_s:.1f}x the job")


if __name__ == "__main__":
    main()
