"""Next-set and submit latency with concurrent annotators over real HTTP, and SQL queries per request.

Usage: DATABASE_URL=postgres://… .venv/bin/python perf/annotation_latency.py [--annotators 20] [--sets 6]

Creates a throw-away test database, a batch of 99 candidates (4,851 pairs) and N annotators, starts
gunicorn (`--workers`, default 4) on that database, and runs N client threads that fetch sets over
the REST API and submit every pair. Prints median and p99 per request type for 1 annotator alone
and for N at once (the named alternative: the same requests uncontended), throughput, and the SQL
queries of one next-set and one submit (counted with a database execute wrapper).
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")


def percentile(values, q):
    values = sorted(values)
    return values[min(int(round(q * (len(values) - 1))), len(values) - 1)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Http:
    def __init__(self, port: int, token: str):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Authorization": f"Token {token}", "Content-Type": "application/json", "Accept": "application/json"}

    def post(self, path: str, body=None):
        self.conn.request("POST", path, body=json.dumps(body) if body is not None else None, headers=self.headers)
        response = self.conn.getresponse()
        return response.status, json.loads(response.read() or b"null")


def database_url(connection) -> str:
    cfg = connection.settings_dict
    if cfg["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{cfg['NAME']}"
    auth = cfg["USER"] + (f":{cfg['PASSWORD']}" if cfg.get("PASSWORD") else "")
    return f"postgres://{auth}@{cfg.get('HOST') or 'localhost'}:{cfg.get('PORT') or 5432}/{cfg['NAME']}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--annotators", type=int, default=20)
    parser.add_argument("--sets", type=int, default=6, help="sets per annotator")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn worker processes")
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import connection
    from django.test.utils import setup_databases, setup_test_environment, teardown_databases

    setup_test_environment()
    old = setup_databases(verbosity=0, interactive=False)
    server = None
    try:
        from annotation.services.projects import batch_create, membership_add, project_create, verses_import
        from core.services import user_create_or_update

        lead, _ = user_create_or_update(username="perf-lead", password="x" * 12, roles=("lead",))
        project = project_create(owner=lead, name="perf")
        verses_import(project=project, data=json.dumps([{"verse_id": f"1 {k}", "text": f"στίχος {k}"} for k in range(100)]).encode())
        t0 = time.perf_counter()
        batch = batch_create(project=project, reference_id="1 0", candidate_ids=[f"1 {k}" for k in range(1, 100)])
        create_ms = (time.perf_counter() - t0) * 1000
        tokens = []
        for k in range(args.annotators + 1):
            user, key = user_create_or_update(username=f"perf-{k}", password="x" * 12, roles=("annotator",))
            membership_add(project=project, username=user.username)
            tokens.append(key)

        # SQL queries of one next-set and one submit, in process.
        from rest_framework.test import APIClient

        counted: list[str] = []

        def count(execute, sql, params, many, context):
            counted.append(sql)
            return execute(sql, params, many, context)

        client = APIClient(SERVER_NAME="localhost")
        client.credentials(HTTP_AUTHORIZATION=f"Token {tokens[0]}")
        with connection.execute_wrapper(count):
            body = client.post(f"/api/v1/batches/{batch.pk}/next-set/").json()
        n_next = len(counted)
        counted.clear()
        item = body["set"]["items"][0]
        with connection.execute_wrapper(count):
            client.post("/api/v1/judgements/", {"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
                                                "client_uuid": str(uuid.uuid4())}, format="json")
        n_submit = len(counted)
        url = database_url(connection)
        connection.close()

        port = free_port()
        env = dict(os.environ, DATABASE_URL=url, DJANGO_SETTINGS_MODULE="config.settings.test")
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
             "--workers", str(args.workers), "--log-level", "warning"],
            cwd=ROOT, env=env)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)

        def run(token, sets, out):
            http_client = Http(port, token)
            for _ in range(sets):
                t = time.perf_counter()
                status, body = http_client.post(f"/api/v1/batches/{batch.pk}/next-set/")
                out["next"].append(time.perf_counter() - t)
                assert status == 200, body
                if body["done"]:
                    return
                for item in body["set"]["items"]:
                    if item["chosen"] is not None:
                        continue
                    payload = {"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
                               "client_uuid": str(uuid.uuid4()), "response_ms": 1}
                    t = time.perf_counter()
                    status, response = http_client.post("/api/v1/judgements/", payload)
                    out["submit"].append(time.perf_counter() - t)
                    assert status == 201, response

        warm = Http(port, tokens[0])  # let every gunicorn worker load the URL conf, DRF and the app once
        for _ in range(4 * args.workers):
            warm.conn.request("GET", "/api/v1/me/", headers=warm.headers)
            warm.conn.getresponse().read()
            warm.conn.close()
        alone = {"next": [], "submit": []}
        run(tokens[0], args.sets, alone)
        together = {"next": [], "submit": []}
        threads = [threading.Thread(target=run, args=(token, args.sets, together)) for token in tokens[1:]]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0

        print(f"database: {connection.vendor}; gunicorn {args.workers} workers; batch of 99 candidates "
              f"(4,851 pairs) created in {create_ms:.0f} ms")
        print(f"SQL queries per request: next-set {n_next}, submit {n_submit}")
        for name in ("next", "submit"):
            a, b = alone[name], together[name]
            print(f"{name:>6}: 1 annotator median {statistics.median(a) * 1000:6.1f} ms p99 {percentile(a, .99) * 1000:6.1f} ms"
                  f" | {args.annotators} concurrent median {statistics.median(b) * 1000:6.1f} ms p99 {percentile(b, .99) * 1000:6.1f} ms"
                  f" | ratio of medians {statistics.median(b) / statistics.median(a):.1f}x ({len(b)} requests)")
        total = len(together["submit"])
        print(f"{args.annotators} annotators: {total} judgements in {wall:.1f} s = {total / wall:.0f} judgements/s")
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        teardown_databases(old, verbosity=0)


if __name__ == "__main__":
    main()
