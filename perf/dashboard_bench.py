"""Analytics job, dashboard page and scores export on a database full of judgements.

Usage: .venv/bin/python perf/dashboard_bench.py [--batches 100] [--per-pair 2] [--annotators 11]
       (DATABASE_URL picks the database)

Fills a throw-away test database with B batches × 4,851 pairs × R judgements (plain rows written in
bulk), then measures, each beside the old way or a named alternative in the same run:
- the bootstrap refits of 10 batches: batched Newton (this code) vs choix one resample at a time;
- the full `annotation.analytics` job (stores its result per batch) and its peak traced memory;
- the size of the stored summary (the job's result, read by the page on every view) beside the same summary
  with the pooled-majority triads listed as before (20 cycles per batch as verse texts; nothing shows them);
- the dashboard page from the per-batch result, its progress counts fetched apart as a fragment and its
  numbers formatted by `fixed`, against the page as it was before (the same stored result, progress counted
  inline by `selectors.project_progress`, Django's `floatformat`: the dashboard template as of commit 6f87f91,
  read with `git show`) and against the same report stored whole (the older layout: one JSON document
  decoded on every view); each page timed as the median of 5 requests;
- a page of the scores export from the stored result vs recomputing it (the old export recomputed
  every batch with its bootstrap for every page; timed on 10 batches and scaled).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import tracemalloc
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "perf"))
from _testdb import throwaway_database  # noqa: E402  (perf/ is on the path only now)


def fill(project, people, batches: int, per_pair: int, seed: int = 0) -> int:
    """Batches of 99 candidates with `per_pair` judgements per pair by distinct annotators (BT choices)."""
    import numpy as np
    from django.db import connection
    from django.utils import timezone

    from annotation.models import AnnotationSet, Assignment, Batch, Judgement, Pair
    from annotation.services.bulk import rows_insert
    from annotation.services.projects import batch_create

    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1.5, 100)
    now = timezone.now()
    uuid_prep = Judgement._meta.get_field("client_uuid").get_db_prep_value
    time_prep = Judgement._meta.get_field("created").get_db_prep_value
    total = 0
    next_assignment = (Assignment.objects.order_by("-id").values_list("id", flat=True).first() or 0) + 1
    for b in range(batches):
        ref = b % 100
        batch = batch_create(project=project, reference_id=f"1 {ref}", candidate_ids=[f"1 {k}" for k in range(100) if k != ref],
                             name=f"b{b}")
        sets = AnnotationSet.objects.bulk_create([AnnotationSet(batch=batch, annotator=u, status="completed", expires_at=now)
                                                  for u in people])
        pairs = np.array(list(Pair.objects.filter(batch=batch).values_list("id", "verse_a__verse_id", "verse_b__verse_id",
                                                                          "verse_a_id", "verse_b_id")), dtype=object)
        va = np.array([int(v.split()[1]) for v in pairs[:, 1]])
        vb = np.array([int(v.split()[1]) for v in pairs[:, 2]])
        judges = np.argsort(rng.random((len(pairs), len(people))), axis=1)[:, :per_pair]
        p_a = 1 / (1 + np.exp(strength[vb] - strength[va]))
        assignments, judgements = [], []
        for r in range(per_pair):
            win_a = rng.random(len(pairs)) < p_a
            for i in range(len(pairs)):
                k = int(judges[i, r])
                aid = next_assignment
                next_assignment += 1
                chosen = pairs[i, 3] if win_a[i] else pairs[i, 4]
                assignments.append((aid, sets[k].pk, pairs[i, 0], people[k].pk, 0, pairs[i, 3], pairs[i, 4], False, False,
                                    "done"))
                judgements.append((aid, people[k].pk, pairs[i, 0], batch.pk, sets[k].pk, chosen, pairs[i, 3],
                                   chosen == pairs[i, 3], 1000, uuid_prep(uuid.uuid4(), connection), time_prep(now, connection)))
        rows_insert(Assignment._meta.db_table, ["id", "set_id", "pair_id", "annotator_id", "position", "left_id", "right_id",
                                                "is_overlap", "is_repeat", "status"], assignments)
        rows_insert(Judgement._meta.db_table, ["assignment_id", "annotator_id", "pair_id", "batch_id", "set_id", "chosen_id",
                                               "left_id", "chose_left", "response_ms", "client_uuid", "created"], judgements)
        total += len(judgements)
    Batch.objects.filter(project=project).count()
    return total


def median_request(client, url: str, n: int = 5):
    client.get(url)
    times, response = [], None
    for _ in range(n):
        t0 = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - t0)
        assert response.status_code == 200, url
    return sorted(times)[n // 2], response


TEMPLATE_BEFORE = "6f87f91:annotation/templates/annotation/dashboard.html"


def _template_before() -> str:
    """The dashboard template before issue 16's last change, from git (this needs a git checkout)."""
    found = subprocess.run(["git", "-C", str(ROOT), "show", TEMPLATE_BEFORE], capture_output=True, text=True)
    if found.returncode:
        raise SystemExit(f"dashboard_bench: cannot read {TEMPLATE_BEFORE} from git: {found.stderr.strip()}")
    return found.stdout


def before_page(user, project, n: int = 5) -> tuple[float, int]:
    """The dashboard as it was before issue 16's last change: the same context, progress counted inline
    with the judgement-pair join, the template with `floatformat` (median of n renders)."""
    from django.template import engines
    from django.test import RequestFactory

    from annotation import selectors
    from annotation.views.dashboard import dashboard_context

    template = engines["django"].from_string(_template_before())
    times, size = [], 0
    for _ in range(n + 1):
        request = RequestFactory().get(f"/projects/{project.pk}/dashboard/")
        request.user = user
        t0 = time.perf_counter()
        context = dashboard_context(request, project)
        context["progress"] = selectors.project_progress(project=project, per_annotator=False)
        size = len(template.render(context, request).encode()) // 1024
        times.append(time.perf_counter() - t0)
    times = sorted(times[1:])
    return times[n // 2], size


def stored_size(job_id: int) -> str:
    """The job's stored result as the database holds it: bytes of its JSON text (SQLite stores the text that
    Django's JSONField writes, non-ASCII escaped; PostgreSQL's jsonb as text), and on PostgreSQL the bytes on
    disk after TOAST compression."""
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT octet_length(result::text), pg_column_size(result) FROM jobs_job WHERE id = %s",
                           [job_id])
            text, disk = cursor.fetchone()
            return f"{text / 1024:.0f} KiB ({disk / 1024:.0f} KiB on disk, compressed)"
        cursor.execute("SELECT length(CAST(result AS BLOB)) FROM jobs_job WHERE id = %s", [job_id])
        return f"{cursor.fetchone()[0] / 1024:.0f} KiB"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--per-pair", type=int, default=2)
    parser.add_argument("--annotators", type=int, default=11)
    args = parser.parse_args()
    with throwaway_database():
        import json

        import choix
        import numpy as np
        from django.conf import settings
        from django.db import connection
        from django.test import Client
        from django.utils import timezone
        from rest_framework.test import APIClient
        from threadpoolctl import threadpool_limits

        from annotation import analytics, stats
        from annotation.models import AnalyticsBatchResult
        from annotation.services.projects import membership_add, project_create, verses_import
        from core.services import user_create_or_update
        from jobs.models import Job
        from jobs.runner import run_job

        lead, _ = user_create_or_update(username="bench-lead", password="x" * 12, roles=("lead",), is_staff=True)
        project = project_create(owner=lead, name="bench")
        verses_import(project=project, data=json.dumps([{"verse_id": f"1 {k}", "text": f"στίχος {k}"} for k in range(100)]).encode())
        people = []
        for k in range(args.annotators):
            user, _ = user_create_or_update(username=f"bench-{k}", password="x" * 12, roles=("annotator",))
            membership_add(project=project, username=user.username)
            people.append(user)
        t0 = time.perf_counter()
        total = fill(project, people, args.batches, args.per_pair)
        print(f"database: {connection.vendor}; filled {total:,} judgements in {args.batches} batches in "
              f"{time.perf_counter() - t0:.1f} s")

        t0 = time.perf_counter()
        data = analytics.load_project_data(project)
        load_s = time.perf_counter() - t0
        print(f"load {len(data.judgements):,} judgements into arrays: {load_s:.2f} s")

        # Bootstrap refits of 10 batches: batched Newton vs choix one resample at a time (1 BLAS thread each).
        sample = min(10, len(data.batches))
        counts = [data.judgements.count_matrix(batch=bi)[:99, :99] for bi in range(sample)]
        with threadpool_limits(1):
            t0 = time.perf_counter()
            for c in counts:
                stats.bootstrap_bradley_terry(c, n_boot=200)
            new_boot = time.perf_counter() - t0
            t0 = time.perf_counter()
            for c in counts:
                point = stats.bradley_terry(c)
                total_c = int(c.sum())
                draws = np.random.default_rng(0).multinomial(total_c, c.ravel() / total_c, size=200).reshape(200, 99, 99)
                for d in draws:
                    choix.ilsr_pairwise_dense(d.astype(float), alpha=point.alpha, initial_params=point.strengths, max_iter=500)
            old_boot = time.perf_counter() - t0
        print(f"200 bootstrap refits × {sample} batches: batched Newton {new_boot:.2f} s, choix per resample "
              f"{old_boot:.2f} s ({old_boot / new_boot:.1f}x)")

        # The dashboard as it was: the whole report stored in the job row, decoded on every view.
        summary, pieces = analytics.project_report_parts(project, n_boot=0)
        whole = dict(summary, scores=[r for p in pieces for r in p["scores"]],
                     triads={"per_annotator": [r for p in pieces for r in p["triads"]], "majority": summary["majority_triads"]},
                     directionality=[d for p in pieces for d in p["details"]["directionality"]])
        whole.pop("stored")
        legacy = Job.objects.create(kind="annotation.analytics", params={"project_id": project.pk}, status="succeeded",
                                    finished=timezone.now(), result=whole)
        client = Client()
        client.force_login(lead)
        client.get(f"/projects/{project.pk}/dashboard/")
        t0 = time.perf_counter()
        response = client.get(f"/projects/{project.pk}/dashboard/")
        old_page = time.perf_counter() - t0
        old_kib = len(response.content) // 1024
        assert response.status_code == 200
        legacy.delete()

        job = Job.objects.create(kind="annotation.analytics", params={"project_id": project.pk})
        t0, c0 = time.perf_counter(), time.process_time()
        assert run_job(job.pk) == "succeeded"
        job_s, job_cpu = time.perf_counter() - t0, time.process_time() - c0
        job.refresh_from_db()
        checks = [r["posterior"] for r in AnalyticsBatchResult.objects.filter(job=job).values_list("scores", flat=True)
                  .first() or [] if r.get("comparisons")][:1]
        print(f"analytics job (load, scores with exact posterior intervals per batch in {settings.ANALYTICS_WORKERS} "
              f"threads, triads, timeline, stored per batch): {job_s:.1f} s wall, {job_cpu:.1f} s CPU, load average "
              f"{os.getloadavg()[0]:.1f}; first batch's posterior: {checks[0] if checks else None}")
        # The summary as it was stored before: the pooled-majority triads listed (20 cycles per batch, as verse
        # texts) although no page, API or export shows them.
        # The same job row (its batch pieces too), its result swapped for the listed summary and back.
        Job.objects.filter(pk=job.pk).update(result=dict(
            job.result, majority_triads=analytics.triads_report(data, majority_list_cap=20)["majority"]))
        listed_page, _ = median_request(client, f"/projects/{project.pk}/dashboard/")
        listed_size = stored_size(job.pk)
        Job.objects.filter(pk=job.pk).update(result=job.result)
        summary_page, _ = median_request(client, f"/projects/{project.pk}/dashboard/")
        print(f"stored summary (the job's result; the page decodes it on every view): {stored_size(job.pk)}, page "
              f"{summary_page * 1000:.0f} ms; with the majority triads listed as before: {listed_size}, page "
              f"{listed_page * 1000:.0f} ms (medians of 5)")
        new_page, response = median_request(client, f"/projects/{project.pk}/dashboard/")
        progress_s, fragment = median_request(client, f"/projects/{project.pk}/dashboard/progress/")
        before_s, before_kib = before_page(lead, project)
        print(f"dashboard page: {new_page * 1000:.0f} ms ({len(response.content) // 1024} KiB) from the per-batch result, "
              f"its progress fragment {progress_s * 1000:.0f} ms ({len(fragment.content) // 1024} KiB, fetched by the page "
              f"once loaded; both {(new_page + progress_s) * 1000:.0f} ms); the page as it was before this change "
              f"{before_s * 1000:.0f} ms ({before_kib} KiB, {before_s / new_page:.1f}x); from the same report stored "
              f"whole {old_page * 1000:.0f} ms ({old_kib} KiB, {old_page / new_page:.1f}x)")

        api = APIClient()
        api.force_authenticate(lead)
        page = max(1, (len(data.batches) * 99 // 100) // 2)
        api.get(f"/api/v1/projects/{project.pk}/scores/?page=1")
        t0 = time.perf_counter()
        response = api.get(f"/api/v1/projects/{project.pk}/scores/?page={page}")
        stored_ms = (time.perf_counter() - t0) * 1000
        assert response.status_code == 200 and response.json()["source"] == "stored", response.content[:300]
        t0 = time.perf_counter()
        response = api.get(f"/api/v1/projects/{project.pk}/scores/?format=csv")
        csv_ms = (time.perf_counter() - t0) * 1000
        sub = data.batches[: min(10, len(data.batches))]
        t0 = time.perf_counter()
        with threadpool_limits(1):
            analytics.score_rows(analytics.load_project_data(project, batch_ids=[b.pk for b in sub]), n_boot=200)
        recompute = (time.perf_counter() - t0) * len(data.batches) / len(sub)
        print(f"scores export, page {page} of 100 rows from the stored result: {stored_ms:.0f} ms; whole table as CSV "
              f"({len(data.batches) * 99:,} rows): {csv_ms:.0f} ms; recomputing every batch per page as the old "
              f"export did: ~{recompute:.0f} s (timed on {len(sub)} batches) = {recompute * 1000 / stored_ms:.0f}x")

        tracemalloc.start()
        job = Job.objects.create(kind="annotation.analytics", params={"project_id": project.pk})
        assert run_job(job.pk) == "succeeded"
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        print(f"analytics job peak traced memory: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
