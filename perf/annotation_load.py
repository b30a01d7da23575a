"""How many annotators, each choosing one pair every 3 s, two cores serve with p99 under 200 ms.

Usage: DATABASE_URL=postgres://… .venv/bin/python perf/annotation_load.py [--steps 25,50,100,200]
       [--seconds 20] [--workers 2] [--base REV] [--conn-max-age 60]

Starts gunicorn (`--workers`, default 2 = the two cores) on a throw-away test database with a batch of
99 candidates, then for each step runs N annotator threads over real HTTP: each fetches a set, sends
one choice every 3 s (uniform 2–4 s), fetches the next set when done; they arrive spread over
the first 30 s (a set's length), as people do, not in one burst. Prints per step the requests
served and the median / p99 latency of next-set and submit; the answer is the largest N whose p99 of
all requests stays under 200 ms. With --base REV the same steps run against that revision's code
(a temporary git worktree serving the same database), the old way measured in the same run. The
client threads share the machine with the server, so the figures are pessimistic.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _annotation_http import Http, annotation_world, choices, database_url, load_average, percentile, serving, trees  # noqa: E402
from _testdb import throwaway_database  # noqa: E402


def step(port: int, batch_id: int, tokens: list[str], seconds: float, pause: float) -> dict:
    out = {"next": [], "submit": [], "errors": 0}
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def annotator(token: str, seed: int):
        rng = random.Random(seed)
        http = Http(port, token)
        time.sleep(rng.uniform(0, min(pause * 10, seconds / 2)))  # people arrive over a set's length, not at once
        while time.monotonic() < stop:
            t = time.perf_counter()
            status, body = http.post(f"/api/v1/batches/{batch_id}/next-set/")
            with lock:
                out["next"].append(time.perf_counter() - t)
            if status != 200 or body["done"]:
                with lock:
                    out["errors"] += status != 200
                return
            for payload in choices(body, response_ms=3000):
                due = time.monotonic() + rng.uniform(pause - 1, pause + 1)
                if due > stop:
                    return
                time.sleep(max(0.0, due - time.monotonic()))
                t = time.perf_counter()
                status, _ = http.post("/api/v1/judgements/", payload)
                with lock:
                    out["submit"].append(time.perf_counter() - t)
                    out["errors"] += status != 201

    threads = [threading.Thread(target=annotator, args=(token, k)) for k, token in enumerate(tokens)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", default="25,50,100,200")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pause", type=float, default=3.0, help="seconds per pair")
    parser.add_argument("--base", default=None)
    parser.add_argument("--conn-max-age", type=int, default=60,
                        help="the server's CONN_MAX_AGE (production: 60; 0 = a new database connection per request)")
    args = parser.parse_args()
    steps = [int(x) for x in args.steps.split(",")]
    with throwaway_database():
        from django.db import connection

        _, tokens, make_batch = annotation_world("load", max(steps))
        url = database_url(connection)
        print(f"database: {connection.vendor}; gunicorn {args.workers} workers; one choice per {args.pause:g} s per "
              f"annotator; {args.seconds:g} s per step")
        with trees(args.base) as sources:
            for label, tree in sources:
                best = 0
                for n in steps:
                    batch = make_batch(f"{label}-{n}")
                    connection.close()
                    with serving(tree, url, args.workers, tokens[0], args.conn_max_age) as port:
                        r = step(port, batch.pk, tokens[:n], args.seconds, args.pause)
                    every = r["next"] + r["submit"]
                    p99 = percentile(every, 0.99) * 1000 if every else float("nan")
                    ok = p99 < 200 and not r["errors"]
                    best = n if ok else best
                    print(f"{label}: {n:4d} annotators: {len(r['submit']):5d} choices, {len(r['next']):4d} sets; "
                          f"next set median {statistics.median(r['next']) * 1000:6.1f} p99 {percentile(r['next'], .99) * 1000:6.1f} ms; "
                          f"submit median {statistics.median(r['submit']) * 1000:6.1f} p99 {percentile(r['submit'], .99) * 1000:6.1f} ms; "
                          f"all p99 {p99:6.1f} ms; errors {r['errors']}; {load_average()}{'' if ok else '  <- over 200 ms'}")
                    if not ok:
                        break
                print(f"{label}: largest step served with p99 < 200 ms: {best} annotators")


if __name__ == "__main__":
    main()
