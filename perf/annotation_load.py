"""How many annotators, each choosing one pair every 3 s, two cores serve with p99 under 200 ms.

Usage: DATABASE_URL=postgres://… .venv/bin/python perf/annotation_load.py [--steps 25,50,100,200]
       [--seconds 20] [--workers 2] [--base REV]

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
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "perf"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

from annotation_latency import Http, database_url, free_port, percentile  # noqa: E402


def serve(tree: Path, url: str, workers: int):
    port = free_port()
    env = dict(os.environ, DATABASE_URL=url, DJANGO_SETTINGS_MODULE="config.settings.test", PYTHONPATH=str(tree))
    server = subprocess.Popen([str(Path(sys.executable).parent / "gunicorn"), "config.wsgi:application", "--bind",
                               f"127.0.0.1:{port}", "--workers", str(workers), "--log-level", "warning"], cwd=tree, env=env)
    for _ in range(150):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.2)
    return server, port


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
            for item in body["set"]["items"]:
                if item["chosen"] is not None:
                    continue
                due = time.monotonic() + rng.uniform(pause - 1, pause + 1)
                if due > stop:
                    return
                time.sleep(max(0.0, due - time.monotonic()))
                payload = {"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
                           "client_uuid": str(uuid.uuid4()), "response_ms": 3000, "pair_id": item["pair_id"]}
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
    args = parser.parse_args()
    steps = [int(x) for x in args.steps.split(",")]
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import setup_databases, setup_test_environment, teardown_databases

    setup_test_environment()
    old = setup_databases(verbosity=0, interactive=False)
    tmp = None
    try:
        import json

        from annotation.services.projects import batch_create, membership_add, project_create, verses_import
        from core.services import user_create_or_update

        lead, _ = user_create_or_update(username="load-lead", password="x" * 12, roles=("lead",))
        project = project_create(owner=lead, name="load")
        verses_import(project=project, data=json.dumps([{"verse_id": f"1 {k}", "text": f"στίχος {k}"}
                                                        for k in range(100)]).encode())
        tokens = []
        for k in range(max(steps)):
            user, key = user_create_or_update(username=f"load-{k}", password="x" * 12, roles=("annotator",))
            membership_add(project=project, username=user.username)
            tokens.append(key)
        trees = [("this checkout", ROOT)]
        if args.base:
            tmp = Path(tempfile.mkdtemp(prefix="similia-base-")) / "tree"
            subprocess.run(["git", "worktree", "add", "--detach", str(tmp), args.base], cwd=ROOT, check=True,
                           capture_output=True)
            trees.insert(0, (f"base {args.base}", tmp))
        url = database_url(connection)
        print(f"database: {connection.vendor}; gunicorn {args.workers} workers; one choice per {args.pause:g} s per "
              f"annotator; {args.seconds:g} s per step")
        for label, tree in trees:
            best = 0
            for n in steps:
                batch = batch_create(project=project, reference_id="1 0", candidate_ids=[f"1 {k}" for k in range(1, 100)],
                                     name=f"{label}-{n}")
                connection.close()
                server, port = serve(tree, url, args.workers)
                try:
                    warm = Http(port, tokens[0])
                    for _ in range(4 * args.workers):
                        warm.conn.request("GET", "/api/v1/me/", headers=warm.headers)
                        warm.conn.getresponse().read()
                        warm.conn.close()
                    r = step(port, batch.pk, tokens[:n], args.seconds, args.pause)
                finally:
                    server.terminate()
                    server.wait(timeout=30)
                every = r["next"] + r["submit"]
                p99 = percentile(every, 0.99) * 1000 if every else float("nan")
                ok = p99 < 200 and not r["errors"]
                best = n if ok else best
                print(f"{label}: {n:4d} annotators: {len(r['submit']):5d} choices, {len(r['next']):4d} sets; "
                      f"next set median {statistics.median(r['next']) * 1000:6.1f} p99 {percentile(r['next'], .99) * 1000:6.1f} ms; "
                      f"submit median {statistics.median(r['submit']) * 1000:6.1f} p99 {percentile(r['submit'], .99) * 1000:6.1f} ms; "
                      f"all p99 {p99:6.1f} ms; errors {r['errors']}{'' if ok else '  <- over 200 ms'}")
                if not ok:
                    break
            print(f"{label}: largest step served with p99 < 200 ms: {best} annotators")
    finally:
        if tmp is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(tmp)], cwd=ROOT, capture_output=True)
        teardown_databases(old, verbosity=0)


if __name__ == "__main__":
    main()
