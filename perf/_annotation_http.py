"""Shared by the annotation request benchmarks: an HTTP client, gunicorn serving a source tree, a worktree
of an older revision (the named alternative a script measures beside this checkout), the test world."""
from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The code before the issue-16 request work (main at 6f87f91): the default alternative the scripts measure.
BEFORE = "6f87f91"


def percentile(values, q):
    values = sorted(values)
    return values[min(int(round(q * (len(values) - 1))), len(values) - 1)]


def load_average() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


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


def choices(body: dict, response_ms: int):
    """The submit payloads for a served set's unjudged pairs (always the left candidate)."""
    for item in body["set"]["items"]:
        if item["chosen"] is None:
            yield {"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
                   "client_uuid": str(uuid.uuid4()), "response_ms": response_ms, "pair_id": item["pair_id"]}


def database_url(connection) -> str:
    cfg = connection.settings_dict
    if cfg["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{cfg['NAME']}"
    auth = cfg["USER"] + (f":{cfg['PASSWORD']}" if cfg.get("PASSWORD") else "")
    return f"postgres://{auth}@{cfg.get('HOST') or 'localhost'}:{cfg.get('PORT') or 5432}/{cfg['NAME']}"


@contextlib.contextmanager
def serving(tree: Path, url: str, workers: int, token: str, conn_max_age: int = 60):
    """gunicorn running `tree`'s code on the database at `url`; yields the port once every worker has loaded
    the URL conf, DRF and the app (a few warm-up requests). Settings: the tree's test settings with
    CONN_MAX_AGE `conn_max_age` (perf/_perf_settings.py; production keeps connections 60 s)."""
    port = free_port()
    env = dict(os.environ, DATABASE_URL=url, DJANGO_SETTINGS_MODULE="_perf_settings",
               PYTHONPATH=f"{tree}{os.pathsep}{ROOT / 'perf'}", SIMILIA_PERF_CONN_MAX_AGE=str(conn_max_age))
    server = subprocess.Popen([str(Path(sys.executable).parent / "gunicorn"), "config.wsgi:application", "--bind",
                               f"127.0.0.1:{port}", "--workers", str(workers), "--log-level", "warning"], cwd=tree, env=env)
    try:
        for _ in range(150):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.2)
        warm = Http(port, token)
        for _ in range(4 * workers):
            warm.conn.request("GET", "/api/v1/me/", headers=warm.headers)
            warm.conn.getresponse().read()
            warm.conn.close()
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)


@contextlib.contextmanager
def trees(base: str | None):
    """[(label, path)]: the base revision in a temporary git worktree (when given), then this checkout."""
    if not base:
        yield [("this checkout", ROOT)]
        return
    tmp = Path(tempfile.mkdtemp(prefix="similia-base-")) / "tree"
    subprocess.run(["git", "worktree", "add", "--detach", str(tmp), base], cwd=ROOT, check=True, capture_output=True)
    try:
        yield [(f"base {base}", tmp), ("this checkout", ROOT)]
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tmp)], cwd=ROOT, capture_output=True)


def measured_in(tree: Path, script: str, args: list[str], label: str, env: dict | None = None) -> dict:
    """Run ``perf/<script> --measure-only *args`` on `tree`'s code (cwd and PYTHONPATH) and return the JSON of its
    ``RESULT`` line; a run without one stops the benchmark with its output."""
    done = subprocess.run([sys.executable, str(ROOT / "perf" / script), "--measure-only", *args], cwd=tree,
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(tree), **(env or {})))
    line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    if not line:
        raise SystemExit(f"{label} failed:\n{done.stdout}\n{done.stderr}")
    return json.loads(line[0][7:])


def annotation_world(name: str, annotators: int, candidates: int = 99):
    """A project with `candidates` + 1 verses and `annotators` annotator accounts; returns (project, tokens, make_batch)
    where make_batch(label) creates a fresh batch of all candidates (candidates·(candidates−1)/2 pairs)."""
    from annotation.services.projects import batch_create, membership_add, project_create, verses_import
    from core.services import user_create_or_update

    lead, _ = user_create_or_update(username=f"{name}-lead", password="x" * 12, roles=("lead",))
    project = project_create(owner=lead, name=name)
    verses_import(project=project, data=json.dumps([{"verse_id": f"1 {k}", "text": f"στίχος {k}"}
                                                    for k in range(candidates + 1)]).encode())
    tokens = []
    for k in range(annotators):
        user, key = user_create_or_update(username=f"{name}-{k}", password="x" * 12, roles=("annotator",))
        membership_add(project=project, username=user.username)
        tokens.append(key)

    def make_batch(label: str):
        return batch_create(project=project, reference_id="1 0", candidate_ids=[f"1 {k}" for k in range(1, candidates + 1)],
                            name=label)

    return project, tokens, make_batch
