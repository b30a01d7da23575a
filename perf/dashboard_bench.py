"""Dashboard and export timings on a database full of judgements.

Usage: .venv/bin/python perf/dashboard_bench.py [--batches 10] [--per-pair 2]   (DATABASE_URL picks the database)

Fills a throw-away test database with B batches × 4,851 pairs × R judgements (rows written in bulk,
not through the API), then times: loading the judgements into arrays, the full analytics job, the
dashboard page render from the stored result, and the CSV export of one batch (scores with a
200-resample bootstrap). The named alternative is the pure-statistics time on the same arrays
(`perf/analytics_bench.py` measures that part alone at 1M judgements), so the ratio shows what the
database and report assembly add.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
import tracemalloc
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--per-pair", type=int, default=2)
    parser.add_argument("--annotators", type=int, default=11)
    args = parser.parse_args()
    import django

    django.setup()
    from django.db import transaction
    from django.test import Client
    from django.test.utils import setup_databases, setup_test_environment, teardown_databases
    from django.utils import timezone

    setup_test_environment()
    old = setup_databases(verbosity=0, interactive=False)
    try:
        import json

        from annotation import analytics
        from annotation.models import AnnotationSet, Assignment, Judgement, Pair
        from annotation.services.projects import batch_create, membership_add, project_create, verses_import
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
        rng = random.Random(0)
        strength = {k: rng.gauss(0, 1.5) for k in range(100)}
        t0 = time.perf_counter()
        total = 0
        for b in range(args.batches):
            ref = b % 100
            cands = [f"1 {k}" for k in range(100) if k != ref]
            batch = batch_create(project=project, reference_id=f"1 {ref}", candidate_ids=cands, name=f"b{b}")
            pairs = list(Pair.objects.filter(batch=batch).select_related("verse_a", "verse_b"))
            with transaction.atomic():
                sets = {u.pk: AnnotationSet.objects.create(batch=batch, annotator=u, status="completed",
                                                           expires_at=timezone.now()) for u in people}
                assignments, chosen = [], []
                for pair in pairs:
                    for judge in rng.sample(people, args.per_pair):
                        assignments.append(Assignment(set=sets[judge.pk], pair=pair, annotator=judge, position=0,
                                                      left_id=pair.verse_a_id, right_id=pair.verse_b_id, status="done"))
                        sa = strength[int(pair.verse_a.verse_id.split()[1])]
                        sb = strength[int(pair.verse_b.verse_id.split()[1])]
                        chosen.append(pair.verse_a_id if rng.random() < 1 / (1 + pow(2.718281828, sb - sa)) else pair.verse_b_id)
                Assignment.objects.bulk_create(assignments, batch_size=5000)
                Judgement.objects.bulk_create([
                    Judgement(assignment=a, annotator=a.annotator, pair=a.pair, batch=batch, set=a.set, chosen_id=c,
                              left_id=a.left_id, chose_left=c == a.left_id, response_ms=1000, client_uuid=uuid.uuid4())
                    for a, c in zip(assignments, chosen)], batch_size=5000)
                total += len(assignments)
        fill = time.perf_counter() - t0
        print(f"filled {total:,} judgements in {args.batches} batches in {fill:.1f} s")

        t0 = time.perf_counter()
        data = analytics.load_project_data(project)
        load = time.perf_counter() - t0
        from annotation import stats

        t0 = time.perf_counter()
        table = stats.label_table(data.judgements)
        stats.cohen_kappa_matrix(table)
        stats.fleiss_kappa_judgements(table)
        stats.krippendorff_alpha_judgements(table)
        stats.batch_scores(data.judgements)
        stats.bradley_terry_batches(data.judgements)
        pure = time.perf_counter() - t0

        job = Job.objects.create(kind="annotation.analytics", params={"project_id": project.pk})
        t0 = time.perf_counter()
        assert run_job(job.pk) == "succeeded"
        job_time = time.perf_counter() - t0
        # Peak memory in a second run under tracemalloc (which slows numpy code, so not timed).
        tracemalloc.start()
        job = Job.objects.create(kind="annotation.analytics", params={"project_id": project.pk})
        assert run_job(job.pk) == "succeeded"
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()

        client = Client()
        client.force_login(lead)
        t0 = time.perf_counter()
        response = client.get(f"/projects/{project.pk}/dashboard/")
        render = time.perf_counter() - t0
        assert response.status_code == 200
        page_kib = len(response.content) // 1024
        first = project.batches.order_by("id").first()
        t0 = time.perf_counter()
        response = client.get(f"/api/v1/batches/{first.pk}/scores/?format=csv")
        export = time.perf_counter() - t0
        assert response.status_code == 200
        print(f"load judgements into arrays: {load:.2f} s")
        print(f"agreement + scores + BT on the arrays (no bootstrap): {pure:.2f} s")
        print(f"full analytics job (load, 200-resample bootstrap per batch, triads, timeline): {job_time:.2f} s, "
              f"peak traced memory {peak:.0f} MiB; {job_time / max(pure, 1e-9):.1f}x the pure statistics")
        print(f"dashboard render from the stored result: {render * 1000:.0f} ms ({page_kib} KiB of HTML with inline SVG)")
        print(f"CSV export of one batch (99 rows, bootstrap 200): {export * 1000:.0f} ms")
    finally:
        teardown_databases(old, verbosity=0)


if __name__ == "__main__":
    main()
