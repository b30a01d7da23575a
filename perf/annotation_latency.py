"""Next-set and submit latency over real HTTP, this checkout against the code before (measured in the same run).

Usage: DATABASE_URL=postgres://… .venv/bin/python perf/annotation_latency.py [--annotators 20] [--sets 6]
       [--workers 4] [--base REV | --no-base] [--rounds 1] [--conn-max-age 60]

On one throw-away test database (perf/_testdb.py) with N annotators, each tree, the base revision (default
6f87f91, the code before the issue-16 request work, checked out in a temporary git worktree) and this checkout,
is served by gunicorn (`--workers`; database connections kept `--conn-max-age` seconds as in production,
0 for a connection per request) in turn on a fresh batch of 99 candidates (4,851 pairs): one annotator
alone fetches `--sets` sets and submits every pair, then N client threads do the same at once. With
`--rounds` > 1 the trees take turns (base, this, base, this, …) so load from other work on a shared machine
falls on both. Prints median and p99 per request type and tree, the ratio base/this of each (the named
alternative), throughput, the SQL statements of one next-set and one submit in this checkout, and the load
average when each tree was measured.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _annotation_http import (  # noqa: E402
    BEFORE,
    Http,
    annotation_world,
    choices,
    database_url,
    load_average,
    percentile,
    serving,
    trees,
)
from _testdb import throwaway_database  # noqa: E402


def run_annotator(port: int, batch_id: int, token: str, sets: int, out: dict) -> None:
    client = Http(port, token)
    for _ in range(sets):
        t = time.perf_counter()
        status, body = client.post(f"/api/v1/batches/{batch_id}/next-set/")
        out["next"].append(time.perf_counter() - t)
        assert status == 200, body
        if body["done"]:
            return
        for payload in choices(body, response_ms=1):
            t = time.perf_counter()
            status, response = client.post("/api/v1/judgements/", payload)
            out["submit"].append(time.perf_counter() - t)
            assert status == 201, response


def measure_tree(port: int, batch_id: int, tokens: list[str], sets: int, result: dict) -> None:
    run_annotator(port, batch_id, tokens[0], sets, result["alone"])
    threads = [threading.Thread(target=run_annotator, args=(port, batch_id, token, sets, result["together"]))
               for token in tokens[1:]]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    result["wall"] += time.perf_counter() - t0
    result["load"].append(load_average())


def sql_per_request(batch_id: int, token: str) -> tuple[int, int]:
    """Statements of one next-set (a new set) and one submit in this checkout, in process."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from rest_framework.test import APIClient

    client = APIClient(SERVER_NAME="localhost")
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    with CaptureQueriesContext(connection) as next_set:
        body = client.post(f"/api/v1/batches/{batch_id}/next-set/").json()
    item = body["set"]["items"][0]
    with CaptureQueriesContext(connection) as submit:
        client.post("/api/v1/judgements/", {"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
                                            "client_uuid": str(uuid.uuid4())}, format="json")
    return len(next_set), len(submit)


def ms(values, q=None) -> float:
    return (statistics.median(values) if q is None else percentile(values, q)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--sets", type=int, default=6, help="sets per annotator")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn worker processes")
    parser.add_argument("--base", default=BEFORE, help=f"git revision measured as the alternative (default {BEFORE})")
    parser.add_argument("--no-base", action="store_true", help="measure this checkout only")
    parser.add_argument("--rounds", type=int, default=1, help="turns per tree, alternating")
    parser.add_argument("--conn-max-age", type=int, default=60,
                        help="the servers' CONN_MAX_AGE (production: 60; 0 = a new database connection per request)")
    args = parser.parse_args()

    with throwaway_database():
        from django.db import connection

        _, tokens, make_batch = annotation_world("perf", args.annotators + 1)
        n_next, n_submit = sql_per_request(make_batch("sql").pk, tokens[0])
        url = database_url(connection)
        with trees(None if args.no_base else args.base) as sources:
            results = {label: {"alone": {"next": [], "submit": []}, "together": {"next": [], "submit": []},
                               "wall": 0.0, "load": []} for label, _ in sources}
            for turn in range(args.rounds):
                for label, tree in sources:
                    batch = make_batch(f"{label}-{turn}")
                    connection.close()  # the servers' connections only while they run
                    with serving(tree, url, args.workers, tokens[0], args.conn_max_age) as port:
                        measure_tree(port, batch.pk, tokens, args.sets, results[label])

    print(f"database: {connection.vendor}; gunicorn {args.workers} workers, CONN_MAX_AGE {args.conn_max_age}; batches of "
          f"99 candidates (4,851 pairs); {args.rounds} round(s) per tree")
    print(f"SQL statements per request in this checkout: next set (a new set) {n_next}, submit {n_submit} "
          "(BEGIN/COMMIT included where the driver sends them)")
    for label, r in results.items():
        print(f"{label} ({'; '.join(r['load'])}):")
        for name in ("next", "submit"):
            a, b = r["alone"][name], r["together"][name]
            print(f"  {name:>6}: 1 annotator median {ms(a):6.1f} ms p99 {ms(a, .99):6.1f} ms | {args.annotators} concurrent "
                  f"median {ms(b):6.1f} ms p99 {ms(b, .99):6.1f} ms ({len(b)} requests)")
        total = len(r["together"]["submit"])
        print(f"  {args.annotators} annotators: {total} judgements in {r['wall']:.1f} s = {total / r['wall']:.0f} judgements/s")
    if len(results) == 2:
        (base_label, old), (_, new) = results.items()
        print(f"ratio {base_label} / this checkout (higher: this checkout faster):")
        for name in ("next", "submit"):
            parts = []
            for who in ("alone", "together"):
                o, n = old[who][name], new[who][name]
                parts.append(f"{who}: median {ms(o) / ms(n):.2f}x, p99 {ms(o, .99) / ms(n, .99):.2f}x")
            print(f"  {name:>6}: " + "; ".join(parts))
        print(f"  throughput ({args.annotators} concurrent): "
              f"{(len(new['together']['submit']) / new['wall']) / (len(old['together']['submit']) / old['wall']):.2f}x")


if __name__ == "__main__":
    main()
