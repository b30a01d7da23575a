"""Next-set and submit in process (Django test client, no HTTP): milliseconds and SQL queries.

Usage: .venv/bin/python perf/annotation_requests.py [--sets 40] [--base REV]   (DATABASE_URL picks the database)

A batch of 99 candidates (4,851 pairs) and one annotator who fetches --sets sets of 10 and submits
every pair. Prints the median and p90 of each request (wall, and the CPU time of this process: on a shared
machine the wall time is mostly waiting for a core, and on SQLite each commit waits for the disk) and its
SQL statements. With --base REV the
same measurement runs first on that revision (a temporary `git worktree`, same database engine)
in a subprocess, so the old way and this one are measured in the same run.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def measure(sets: int) -> dict:
    sys.path.insert(0, os.getcwd())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    import json

    import django

    django.setup()
    from django.db import connection
    from django.test.utils import CaptureQueriesContext, setup_databases, setup_test_environment, teardown_databases

    setup_test_environment()
    old = setup_databases(verbosity=0, interactive=False)
    try:
        from rest_framework.test import APIClient

        from annotation.services.projects import batch_create, membership_add, project_create, verses_import
        from core.services import user_create_or_update

        lead, _ = user_create_or_update(username="req-lead", password="x" * 12, roles=("lead",))
        project = project_create(owner=lead, name="req")
        verses_import(project=project, data=json.dumps([{"verse_id": f"1 {k}", "text": f"στίχος {k}"}
                                                        for k in range(100)]).encode())
        batch = batch_create(project=project, reference_id="1 0", candidate_ids=[f"1 {k}" for k in range(1, 100)])
        user, token = user_create_or_update(username="req-ann", password="x" * 12, roles=("annotator",))
        membership_add(project=project, username=user.username)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        times = {"next": [], "submit": []}
        cpu = {"next": [], "submit": []}
        queries = {"next": [], "submit": []}
        for _ in range(sets + 1):
            with CaptureQueriesContext(connection) as q:
                t, c = time.perf_counter(), time.process_time()
                body = client.post(f"/api/v1/batches/{batch.pk}/next-set/").json()
                times["next"].append(time.perf_counter() - t)
                cpu["next"].append(time.process_time() - c)
            queries["next"].append(len(q))
            for item in body["set"]["items"]:
                payload = {"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
                           "client_uuid": str(uuid.uuid4()), "response_ms": 900, "pair_id": item["pair_id"]}
                with CaptureQueriesContext(connection) as q:
                    t, c = time.perf_counter(), time.process_time()
                    response = client.post("/api/v1/judgements/", payload, format="json")
                    times["submit"].append(time.perf_counter() - t)
                    cpu["submit"].append(time.process_time() - c)
                assert response.status_code == 201, response.content
                queries["submit"].append(len(q))
        out = {"vendor": connection.vendor}
        for name in times:
            values = sorted(times[name][1:])  # the first request warms the URL conf and DRF
            out[name] = {"median_ms": statistics.median(values) * 1000,
                         "p90_ms": values[int(0.9 * (len(values) - 1))] * 1000, "n": len(values),
                         "cpu_ms": statistics.median(cpu[name][1:]) * 1000,
                         "queries": max(queries[name][1:])}
        return out
    finally:
        teardown_databases(old, verbosity=0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", type=int, default=40)
    parser.add_argument("--base", default=None, help="git revision to measure first (the old way)")
    parser.add_argument("--measure-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_only:
        import json

        print("RESULT " + json.dumps(measure(args.sets)))
        return
    results = {}
    runs = [("this checkout", ROOT)]
    tmp = None
    if args.base:
        tmp = Path(tempfile.mkdtemp(prefix="similia-base-")) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", str(tmp), args.base], cwd=ROOT, check=True,
                       capture_output=True)
        runs.insert(0, (f"base {args.base}", tmp))
    try:
        import json

        for label, tree in runs:
            done = subprocess.run([sys.executable, str(ROOT / "perf" / "annotation_requests.py"), "--measure-only",
                                   "--sets", str(args.sets)], cwd=tree, capture_output=True, text=True,
                                  env=dict(os.environ, PYTHONPATH=str(tree)))
            line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
            if not line:
                raise SystemExit(f"{label} failed:\n{done.stdout}\n{done.stderr}")
            results[label] = json.loads(line[0][7:])
    finally:
        if tmp is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(tmp)], cwd=ROOT, capture_output=True)
    for label, r in results.items():
        print(f"{label} ({r['vendor']}): next set median {r['next']['median_ms']:.1f} ms (CPU {r['next']['cpu_ms']:.1f} ms), "
              f"p90 {r['next']['p90_ms']:.1f} ms, {r['next']['queries']} SQL | submit median {r['submit']['median_ms']:.1f} ms "
              f"(CPU {r['submit']['cpu_ms']:.1f} ms), p90 {r['submit']['p90_ms']:.1f} ms, {r['submit']['queries']} SQL "
              "(counts include BEGIN/COMMIT where the driver sends them)")
    if len(results) == 2:
        (_, a), (_, b) = results.items()
        print(f"ratio old/new: next set {a['next']['median_ms'] / b['next']['median_ms']:.1f}x, "
              f"submit {a['submit']['median_ms'] / b['submit']['median_ms']:.1f}x")


if __name__ == "__main__":
    main()
