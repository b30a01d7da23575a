"""Next-set and submit in process (Django test client, no HTTP): milliseconds and SQL queries, this checkout
against the code before, measured in the same run.

Usage: .venv/bin/python perf/annotation_requests.py [--sets 40] [--base REV | --no-base] [--rounds 1]
       [--auth token|session]   (DATABASE_URL picks the database)

A batch of 99 candidates (4,851 pairs) and one annotator who fetches --sets sets of 10 and submits
every pair, on a throw-away test database (perf/_testdb.py). Prints the median and p90 of each request (wall,
and the CPU time of this process: on a shared machine the wall time is much waiting for a core, and each
commit waits for the disk) and its SQL statements, with the load average. The base revision (default
6f87f91, the code before the issue-16 request work; a temporary `git worktree`) runs the same measurement
in a subprocess first, so the old way and this one are measured in the same run, and the ratio base/this
is printed; with --rounds N they take turns N times and the ratio is the median over rounds. `--auth session`
authenticates by a logged-in session (what the annotator page sends) instead of the API token.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "perf"))

from _annotation_http import BEFORE, measured_in, trees  # noqa: E402


def measure(sets: int, auth: str = "token") -> dict:
    """Run in the tree being measured (cwd; PYTHONPATH points there too)."""
    sys.path.insert(0, os.getcwd())
    # _testdb puts this checkout's root on sys.path unless it is there already: list it last, so that the
    # measured tree's code (first on the path) is what Django imports.
    sys.path.append(str(ROOT))
    sys.path.insert(1, str(ROOT / "perf"))
    from _annotation_http import annotation_world, load_average
    from _testdb import throwaway_database

    with throwaway_database():
        from django.db import connection
        from django.test.utils import CaptureQueriesContext
        from rest_framework.test import APIClient

        _, tokens, make_batch = annotation_world("req", 1)
        batch = make_batch("req")
        client = APIClient()
        if auth == "session":
            from core.models import ApiToken

            client.force_login(ApiToken.objects.get(digest=ApiToken.digest_of(tokens[0])).user)
        else:
            client.credentials(HTTP_AUTHORIZATION=f"Token {tokens[0]}")
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
        out = {"vendor": connection.vendor + ("" if auth == "token" else ", session"), "load": load_average()}
        for name in times:
            values = sorted(times[name][1:])  # the first request warms the URL conf and DRF
            out[name] = {"median_ms": statistics.median(values) * 1000,
                         "p90_ms": values[int(0.9 * (len(values) - 1))] * 1000, "n": len(values),
                         "cpu_ms": statistics.median(cpu[name][1:]) * 1000,
                         "queries": max(queries[name][1:])}
        return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", type=int, default=40)
    parser.add_argument("--base", default=BEFORE, help=f"git revision measured first, the old way (default {BEFORE})")
    parser.add_argument("--no-base", action="store_true", help="measure this checkout only")
    parser.add_argument("--rounds", type=int, default=1, help="turns per tree, alternating (base, this, base, …)")
    parser.add_argument("--auth", choices=("token", "session"), default="token",
                        help="API token (default) or a logged-in session, as the annotator page")
    parser.add_argument("--measure-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_only:
        import json

        print("RESULT " + json.dumps(measure(args.sets, args.auth)))
        return
    import json

    results: dict[str, list[dict]] = {}
    with trees(None if args.no_base else args.base) as sources:
        for _ in range(args.rounds):
            for label, tree in sources:
                results.setdefault(label, []).append(measured_in(
                    tree, "annotation_requests.py", ["--sets", str(args.sets), "--auth", args.auth], label))
    for label, runs in results.items():
        for r in runs:
            print(f"{label} ({r['vendor']}, {r['load']}): next set median {r['next']['median_ms']:.1f} ms "
                  f"(CPU {r['next']['cpu_ms']:.1f} ms), p90 {r['next']['p90_ms']:.1f} ms, {r['next']['queries']} SQL | "
                  f"submit median {r['submit']['median_ms']:.1f} ms (CPU {r['submit']['cpu_ms']:.1f} ms), "
                  f"p90 {r['submit']['p90_ms']:.1f} ms, {r['submit']['queries']} SQL")
    print("(SQL counts include BEGIN/COMMIT where the driver sends them; CPU is this process's: the test client, "
          "Django, DRF and the driver)")
    if len(results) == 2:
        (base_label, old), (_, new) = results.items()

        def ratio(name: str, key: str) -> float:
            return statistics.median(o[name][key] / n[name][key] for o, n in zip(old, new))

        print(f"ratio {base_label} / this checkout (median over {len(new)} round(s); higher: this checkout faster): "
              f"next set {ratio('next', 'median_ms'):.2f}x wall, {ratio('next', 'cpu_ms'):.2f}x CPU; "
              f"submit {ratio('submit', 'median_ms'):.2f}x wall, {ratio('submit', 'cpu_ms'):.2f}x CPU")


if __name__ == "__main__":
    main()
