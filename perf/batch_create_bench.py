"""A batch of 600 candidates (179,700 pairs): created by a job with plain-row bulk writes (COPY on
PostgreSQL) vs Django's bulk_create of Pair objects (the old way, measured in the same run), and the
pair insert alone as it is now (50,000-row chunks, 64 MiB SQLite page cache) against the settings before
(20,000-row chunks, SQLite's default 2 MiB cache), alternated three times each (wall and CPU seconds).

Usage: .venv/bin/python perf/batch_create_bench.py [--candidates 600]   (DATABASE_URL picks the database)
"""
from __future__ import annotations

import argparse
import json
import random
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "perf"))
from _testdb import throwaway_database  # noqa: E402  (perf/ is on the path only now)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--candidates", type=int, default=600)
    args = parser.parse_args()
    with throwaway_database():
        from django.db import connection, transaction
        from rest_framework.test import APIClient

        from annotation.models import Batch, Pair
        from annotation.services import bulk
        from annotation.services.bulk import copy_in_use
        from annotation.services.projects import batch_start, pairs_insert, project_create, verses_import
        from core.services import user_create_or_update
        from jobs.models import Job
        from jobs.runner import run_job

        lead, _ = user_create_or_update(username="batch-lead", password="x" * 12, roles=("lead",))
        project = project_create(owner=lead, name="big")
        n = args.candidates
        verses_import(project=project, data=json.dumps([{"verse_id": f"3 {k}", "text": f"στίχος {k}"}
                                                        for k in range(n + 1)]).encode(), filename="v.json")
        candidates = [f"3 {k}" for k in range(1, n + 1)]
        n_pairs = n * (n - 1) // 2
        client = APIClient()
        client.force_authenticate(lead)
        t0 = time.perf_counter()
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
        assert Pair.objects.filter(batch__name="new").count() == n_pairs
        assert Batch.objects.get(name="new").status == "open"

        # The pair insert alone, now and with the settings before, alternated (the machine is shared).
        now_settings = (bulk.CHUNK, bulk.SQLITE_CACHE_KIB)
        times: dict[str, list[tuple[float, float]]] = {"now": [], "before": []}
        for k in range(3):
            for label, (chunk, cache) in (("now", now_settings), ("before", (20_000, 2_000))):
                bulk.CHUNK, bulk.SQLITE_CACHE_KIB = chunk, cache
                batch, pks = batch_start(project=project, reference_id="3 0", candidate_ids=candidates,
                                         name=f"{label}{k}", status=Batch.Status.CLOSED)
                t0, c0 = time.perf_counter(), time.process_time()
                pairs_insert(batch_id=batch.pk, verse_pks=pks, progress=lambda f, m: None)
                times[label].append((time.perf_counter() - t0, time.process_time() - c0))
        bulk.CHUNK, bulk.SQLITE_CACHE_KIB = now_settings

        # The old way: Pair objects through bulk_create (batch_size 2,500), in one transaction.
        t0 = time.perf_counter()
        with transaction.atomic():
            batch, pks = batch_start(project=project, reference_id="3 0", candidate_ids=candidates, name="old")
            pks = sorted(pks)
            ranks = list(range(n_pairs))
            random.Random(0).shuffle(ranks)
            pairs, k = [], 0
            for i in range(n):
                for j in range(i + 1, n):
                    pairs.append(Pair(batch=batch, verse_a_id=pks[i], verse_b_id=pks[j], rank=ranks[k]))
                    k += 1
            Pair.objects.bulk_create(pairs, batch_size=2500)
        old_s = time.perf_counter() - t0
        del pairs
        tracemalloc.start()
        from annotation.services.projects import batch_create

        with connection.cursor():
            pass
        batch_create(project=project, reference_id="3 0", candidate_ids=candidates, name="mem")
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        print(f"database: {connection.vendor} (COPY: {'yes' if copy_in_use() else 'no, executemany'}); "
              f"{n} candidates = {n_pairs:,} pairs")
        print(f"request: 202 with the job in {request_s * 1000:.0f} ms; job writing the batch: {job_s:.2f} s; "
              f"peak traced memory {peak:.0f} MiB")
        print(f"old way (bulk_create of Pair objects): {old_s:.2f} s; ratio {old_s / job_s:.1f}x")
        med = {label: (sorted(w for w, _ in v)[1], sorted(c for _, c in v)[1]) for label, v in times.items()}
        print(f"pair insert alone, median of 3: {med['now'][0]:.2f} s wall / {med['now'][1]:.2f} s CPU now "
              f"(chunks of {now_settings[0]:,}, {now_settings[1] // 1024} MiB SQLite cache) against "
              f"{med['before'][0]:.2f} s / {med['before'][1]:.2f} s with 20,000-row chunks and the default cache "
              f"({med['before'][0] / med['now'][0]:.2f}x wall, {med['before'][1] / med['now'][1]:.2f}x CPU)")


if __name__ == "__main__":
    main()
