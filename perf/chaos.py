"""Fault injection under load: do annotators lose or double a judgement when PostgreSQL, Redis, the web workers,
the Celery workers or a migration fail under them? Prints one table and (--json) writes the figures.

Usage: .venv/bin/python perf/chaos.py [--annotators 50] [--minutes 10] [--pause 3] [--web-workers 2]
       [--faults pg_restart,pg_refuse,...] [--json out.json]
       .venv/bin/python perf/chaos.py --short     (what tests/chaos/ runs: 6 annotators, one minute of load)

Everything runs on services of its own, started here and removed afterwards: a PostgreSQL cluster (initdb under
/tmp, a free port; as the `postgres` user when run as root) and a redis-server on a free port, gunicorn serving
this checkout (test settings with persistent connections as in production: perf/_perf_settings.py) and a Celery
worker on that Redis. Annotators are threads speaking HTTP with the annotator page's rules
(annotation/static/annotation/annotate.js): each choice is an operation with its own client_uuid in a queue
kept client-side, sent in order; a 2xx confirms it, a 5xx, a 429 or a connection error leaves it queued and
retried with back-off (the annotator keeps choosing meanwhile), another 4xx sets it aside with its reason; a new
set is fetched only once the queue is empty. A thread keeps `system.sleep` jobs running through the faults.

Faults, spread over the run (each named in --faults, once per round, rounds repeated while time remains):
  pg_restart      PostgreSQL restarted (fast shutdown: open connections are cut)
  pg_refuse       PostgreSQL stopped for REFUSE_SECONDS: connections refused, then started again
  redis_restart   redis-server shut down without saving and started again (queued messages and the cache lost)
  redis_flushall  FLUSHALL on the running Redis
  kill_web        SIGKILL of one gunicorn worker (mid-request: between COMMIT and response, at random)
  kill_worker     SIGKILL of the Celery worker and its pool (a job running), then a new worker
  migration       `manage.py migrate` applies a pending migration (benchmarks 0003, held back at set-up)
  disk_full       the volume that holds the database and the var directory (job outputs) filled for
                  FULL_SECONDS: a VOLUME_MB tmpfs made at set-up (root and mount needed: else a plain folder
                  and the fault skipped, with the reason); a probe write of 1 MB must be refused meanwhile

Afterwards, with every service back: each client flushes its queue; then the checks. Every judgement a client saw
confirmed is stored exactly once (by client_uuid); no choice is lost (each made choice is stored, set aside with
a reason, or still queued client-side); no job is stranded (after JOB_REDELIVER_AFTER=10 s and the reaper, every
job is finished, succeeded or failed with a reason; JOB_HEARTBEAT_TIMEOUT is 20 s here, 60 s in production, so a
database outage of a few seconds does not pass for a lost worker). Per fault: 5xx answers and connection errors seen while it
lasted, and recovery: seconds from the fault's end to the next confirmed judgement.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PERF = ROOT / "perf"
PG_BIN = Path("/usr/lib/postgresql")
FAULTS = ("pg_restart", "pg_refuse", "redis_restart", "redis_flushall", "kill_web", "kill_worker", "migration",
          "disk_full")
REFUSE_SECONDS = 6.0
FULL_SECONDS = 5.0
VOLUME_MB = 256
HELD_BACK = ("benchmarks", "0002_goldset_source_project")  # applied during the run: the `migration` fault


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pg_bindir() -> Path | None:
    versions = sorted((p for p in PG_BIN.glob("*/bin") if (p / "initdb").exists()), key=lambda p: int(p.parent.name))
    return versions[-1] if versions else None


def missing_services() -> str | None:
    """Why this machine cannot run the suite (None when it can)."""
    if pg_bindir() is None:
        return f"no PostgreSQL server binaries under {PG_BIN} (apt install postgresql)"
    if shutil.which("redis-server") is None:
        return "no redis-server (apt install redis-server)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser (PostgreSQL refuses to run as root)"
    return None


# ------------------------------------------------------------------------------------------- services
class Postgres:
    def __init__(self, root: Path):
        self.bindir, self.port = pg_bindir(), free_port()
        self.data, self.log = root / "pg", root / "pg.log"
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        root.mkdir(parents=True, exist_ok=True)
        if self.as_postgres:
            os.chmod(root.parent, 0o755)  # mkdtemp's 0700 would keep the postgres user out
            shutil.chown(root, "postgres")
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(f"\nport = {self.port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{root}'\n"
                       "fsync = on\nmax_connections = 200\nmax_wal_size = 64MB\nmin_wal_size = 32MB\n")
        self.start()
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "chaos")

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/chaos"

    def _run(self, tool: str, *args: str) -> None:
        proc = subprocess.run([*self.as_postgres, str(self.bindir / tool), *args], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{tool} failed: {(proc.stderr or proc.stdout).strip()[-800:]}")

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop")

    def running(self) -> bool:
        return subprocess.run([*self.as_postgres, str(self.bindir / "pg_ctl"), "-D", str(self.data), "status"],
                              capture_output=True).returncode == 0

    def restart(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-m", "fast", "-w", "-t", "60", "restart")


class Redis:
    def __init__(self, root: Path):
        self.port, self.dir = free_port(), root / "redis"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.proc = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.proc = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--dir",
                                      str(self.dir), "--save", "", "--appendonly", "no"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        for _ in range(100):
            if self.command("PING") == "+PONG":
                return
            time.sleep(0.1)
        raise RuntimeError("redis-server did not start")

    def command(self, *words: str) -> str | None:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
                s.sendall(("*%d\r\n" % len(words) + "".join(f"${len(w)}\r\n{w}\r\n" for w in words)).encode())
                return s.recv(256).decode().strip()
        except OSError:
            return None

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.command("SHUTDOWN", "NOSAVE")
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)


def _django_env(pg: Postgres, redis: Redis, var: Path) -> dict:
    return dict(os.environ, DATABASE_URL=pg.url, CELERY_BROKER_URL=f"{redis.url}/0", DJANGO_CACHE_URL=f"{redis.url}/1",
                DJANGO_SETTINGS_MODULE="_perf_settings", PYTHONPATH=f"{ROOT}{os.pathsep}{PERF}",
                SIMILIA_VAR_DIR=str(var), SIMILIA_PERF_CONN_MAX_AGE="60", CELERY_TASK_ALWAYS_EAGER="false",
                JOB_REDELIVER_AFTER="10", SIMILIA_WORKER_PRELOAD="0", OMP_NUM_THREADS="1",
                SIMILIA_PERF_HEARTBEAT_TIMEOUT="20")


class Session:
    """A child process in its own session, ended with its whole group."""

    def __init__(self, argv: list[str], env: dict, log: Path):
        self.argv, self.env, self.log = argv, env, log
        self.proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log.open("a"), stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def kill(self, sig=signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=20)


def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


# -------------------------------------------------------------------------------------------- clients
class Client:
    """One annotator with the annotator page's queue, retry and idempotency rules."""

    def __init__(self, run: Run, token: str, seed: int):
        self.run, self.token, self.rng = run, token, random.Random(seed)
        self.queue: list[dict] = []        # unsent operations, in order
        self.made: list[str] = []          # every choice's client_uuid
        self.confirmed: dict[str, int] = {}  # client_uuid → status of the 2xx that confirmed it
        self.set_aside: dict[str, str] = {}  # client_uuid → the 4xx reason
        self.conn = None

    def _request(self, path: str, body=None) -> tuple[int, object]:
        """(status, body); status 0 for a connection error or a timeout."""
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.run.port, timeout=15)
            self.conn.request("POST", path, body=json.dumps(body) if body is not None else None,
                              headers={"Authorization": f"Token {self.token}", "Content-Type": "application/json",
                                       "Accept": "application/json"})
            response = self.conn.getresponse()
            raw = response.read()
            status = response.status
        except (OSError, http.client.HTTPException):
            self.conn = None
            status, raw = 0, b""
        self.run.record(status, path)
        try:
            return status, json.loads(raw or b"null")
        except ValueError:
            return status, None

    def flush(self) -> bool:
        """Send the queue in order; True when it is empty, False at the first retryable failure."""
        while self.queue:
            op = self.queue[0]
            status, body = self._request("/api/v1/judgements/", op)
            if 200 <= status < 300:
                self.confirmed[op["client_uuid"]] = status
                self.run.confirmed_at(time.monotonic())
            elif status in (0, 408, 429) or status >= 500:
                return False
            else:
                self.set_aside[op["client_uuid"]] = f"{status}: {(body or {}).get('detail', body)!s:.200}"
            self.queue.pop(0)
        return True

    def work(self, batch_id: int, until: float, pause: float) -> None:
        backoff = 0.5
        while time.monotonic() < until:
            status, body = self._request(f"/api/v1/batches/{batch_id}/next-set/")
            if status != 200 or not isinstance(body, dict):
                time.sleep(min(backoff, 4.0))
                backoff *= 2
                continue
            backoff = 0.5
            if body.get("done") or not body.get("set"):
                return
            for item in body["set"]["items"]:
                if item["chosen"] is not None:
                    continue
                if time.monotonic() >= until:
                    return
                time.sleep(self.rng.uniform(0.5 * pause, 1.5 * pause))  # the annotator reads and chooses
                op = {"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
                      "client_uuid": str(uuid.uuid4()), "response_ms": 1500}
                self.queue.append(op)
                self.made.append(op["client_uuid"])
                self.flush()  # what fails stays queued; the annotator keeps choosing
            while self.queue and time.monotonic() < until:  # a new set only once the queue is sent
                if not self.flush():
                    time.sleep(min(backoff, 4.0))
                    backoff *= 2
            backoff = 0.5

    def drain(self, deadline: float) -> None:
        backoff = 0.5
        while self.queue and time.monotonic() < deadline:
            if not self.flush():
                time.sleep(min(backoff, 4.0))
                backoff *= 2


# ---------------------------------------------------------------------------------------------- run
class Run:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.events: list[tuple[float, int, str]] = []  # (time, status, path) of every request
        self.confirmations: list[float] = []
        self.faults: list[dict] = []
        self.port = 0

    def record(self, status: int, path: str) -> None:
        with self.lock:
            self.events.append((time.monotonic(), status, path))

    def confirmed_at(self, t: float) -> None:
        with self.lock:
            self.confirmations.append(t)


def inject(name: str, ctx: dict) -> str:
    """Apply one fault and end it; returns a note ("" or why it was skipped)."""
    pg, redis = ctx["pg"], ctx["redis"]
    if name == "pg_restart":
        pg.restart()
    elif name == "pg_refuse":
        pg.stop()
        time.sleep(REFUSE_SECONDS)
        pg.start()
    elif name == "redis_restart":
        redis.stop()
        time.sleep(1.0)
        redis.start()
    elif name == "redis_flushall":
        if redis.command("FLUSHALL") != "+OK":
            return "FLUSHALL was not answered"
    elif name == "kill_web":
        workers = _children(ctx["web"].proc.pid)
        if not workers:
            return "no gunicorn worker found"
        os.kill(random.Random(len(ctx["run"].faults)).choice(workers), signal.SIGKILL)  # the master starts another
    elif name == "kill_worker":
        ctx["worker"].kill(signal.SIGKILL)
        ctx["worker"] = start_worker(ctx)
    elif name == "migration":
        if ctx.get("migrated"):
            return "already applied in an earlier round"
        proc = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=ctx["env"],
                              capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(f"migrate failed: {proc.stderr[-1500:]}")
        ctx["migrated"] = True
    elif name == "disk_full":
        return disk_full(ctx)
    return ""


def mount_volume(path: Path) -> str:
    """A VOLUME_MB tmpfs on `path`, for the database and the var directory: "" or why not (then `path` is a plain
    folder and the disk_full fault is skipped)."""
    path.mkdir()
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={VOLUME_MB}m,mode=0755", "tmpfs", str(path)],
                           capture_output=True, text=True)
    return f"mount refused here ({mount.stderr.strip()[:120]})" if mount.returncode else ""


def probe_write() -> str:
    """Write 1 MB of incompressible text to the database: "" when it was stored, else the error."""
    from django.db import DatabaseError, close_old_connections, connection

    close_old_connections()
    try:
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO chaos_probe SELECT string_agg(md5(random()::text), '') "
                           "FROM generate_series(1, 32768)")
        return ""
    except DatabaseError as exc:
        return f"{type(exc.__cause__ or exc).__name__}: {str(exc).strip().splitlines()[0][:100]}"


def disk_full(ctx: dict) -> str:
    """Fill the volume, keep it full for FULL_SECONDS while the load carries on, free it. The note says what a
    probe write met meanwhile, and whether PostgreSQL had to be started again afterwards."""
    if ctx["volume_note"]:
        return f"skipped: {ctx['volume_note']}"
    filler = ctx["volume"] / "filler"
    try:
        with contextlib.suppress(OSError), open(filler, "wb", buffering=0) as fh:
            while True:
                fh.write(b"\xff" * (1 << 20))
        started = time.monotonic()
        refused = probe_write()
        time.sleep(max(0.0, FULL_SECONDS - (time.monotonic() - started)))
    finally:
        filler.unlink(missing_ok=True)
    note = f"probe write refused ({refused})" if refused else "probe write stored: the fault did not bite"
    if not ctx["pg"].running():
        ctx["pg"].start()
        note += "; PostgreSQL had stopped and was started again"
    return note


def start_worker(ctx: dict) -> Session:
    name = f"chaos{len(ctx['workers'])}"
    worker = Session([sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "cpu,gpu", "--pool", "prefork",
                      "--concurrency", "1", "-n", f"{name}@%h", "-l", "warning", "--without-gossip",
                      "--without-mingle"], ctx["env"], ctx["root"] / "worker.log")
    ctx["workers"].append(worker)
    return worker


def feed_jobs(ctx: dict, until: float, job_ids: list[int]) -> None:
    """A `system.sleep` job every few seconds, so one is queued or running through each fault."""
    from django.db import close_old_connections

    from jobs.services import job_create

    while time.monotonic() < until:
        try:
            close_old_connections()
            job_ids.append(job_create(kind="system.sleep", params={"seconds": 4, "steps": 8}).pk)
        except Exception:  # the database is down: the next one
            pass
        time.sleep(6.0)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--annotators", type=int, default=50)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--pause", type=float, default=3.0, help="seconds an annotator takes per pair")
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--short", action="store_true", help="6 annotators, 60 s, every fault once")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    if args.short:
        args.annotators, args.minutes, args.pause = 6, 1.0, 1.0
    reason = missing_services()
    if reason:  # `make perf` runs every script: say why, and let the others run
        print(f"chaos: skipped: cannot start its own services here: {reason}")
        return {}
    faults = [f for f in args.faults.split(",") if f]
    unknown = set(faults) - set(FAULTS)
    if unknown:
        raise SystemExit(f"chaos: unknown fault(s) {', '.join(sorted(unknown))}; known: {', '.join(FAULTS)}")

    root = Path(tempfile.mkdtemp(prefix="similia-chaos-"))
    root.chmod(0o755)  # the postgres user reaches its data folder through it
    run = Run(args)
    volume = root / "volume"  # the database and the var directory: what the disk_full fault fills
    ctx: dict = {"root": root, "run": run, "workers": [], "volume": volume, "volume_note": mount_volume(volume)}
    pg = redis = web = None
    try:
        t0 = time.monotonic()
        pg, redis = Postgres(volume / "db"), Redis(root)
        var = volume / "var"
        var.mkdir()
        env = _django_env(pg, redis, var)
        ctx.update(pg=pg, redis=redis, env=env)
        os.environ.update({k: env[k] for k in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_CACHE_URL",
                                               "DJANGO_SETTINGS_MODULE", "SIMILIA_VAR_DIR", "JOB_REDELIVER_AFTER",
                                               "CELERY_TASK_ALWAYS_EAGER")})
        sys.path[:0] = [str(ROOT), str(PERF)]
        subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, check=True,
                       capture_output=True)
        subprocess.run([sys.executable, "manage.py", "migrate", *HELD_BACK, "--noinput"], cwd=ROOT, env=env,
                       check=True, capture_output=True)
        import django

        django.setup()
        from _annotation_http import annotation_world
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("CREATE TABLE chaos_probe (b text)")
        # enough pairs that no annotator runs out before the end (≈ annotators · seconds / pause choices at most)
        candidates = max(99, int((2 * args.annotators * args.minutes * 60 / args.pause) ** 0.5) + 1)
        project, tokens, make_batch = annotation_world("chaos", args.annotators, candidates=candidates)
        batch = make_batch("chaos")
        run.port = free_port()
        web = Session([str(Path(sys.executable).parent / "gunicorn"), "config.wsgi:application", "--bind",
                       f"127.0.0.1:{run.port}", "--workers", str(args.web_workers), "--timeout", "60",
                       "--log-level", "warning"], env, root / "web.log")
        ctx["web"] = web
        ctx["worker"] = start_worker(ctx)
        for _ in range(300):
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", run.port), timeout=0.5).close()
                break
            time.sleep(0.2)
        setup_s = time.monotonic() - t0

        seconds = args.minutes * 60
        start = time.monotonic()
        until = start + seconds
        clients = [Client(run, token, k) for k, token in enumerate(tokens)]
        threads = [threading.Thread(target=c.work, args=(batch.pk, until, args.pause), daemon=True) for c in clients]
        job_ids: list[int] = []
        feeder = threading.Thread(target=feed_jobs, args=(ctx, until - 10, job_ids), daemon=True)
        for t in threads:
            t.start()
        feeder.start()
        # faults: evenly spaced, first after 10 s of calm, last ending well before the end
        schedule = faults * max(1, int((seconds - 20) // (max(1, len(faults)) * 12)))
        gap = (seconds - 20) / max(1, len(schedule))
        for k, name in enumerate(schedule):
            due = start + 10 + k * gap
            time.sleep(max(0.0, due - time.monotonic()))
            began = time.monotonic()
            note = inject(name, ctx)
            ended = time.monotonic()
            run.faults.append({"fault": name, "start": began, "end": ended, "note": note})
        for t in threads:
            t.join(timeout=max(1.0, until - time.monotonic() + 30))
        drain_deadline = time.monotonic() + 60
        for c in clients:
            c.drain(drain_deadline)
        feeder.join(timeout=30)
        # jobs: wait for every one to reach a final state (redelivery after 10 s, the reaper every 4 s)
        from django.db import close_old_connections

        from jobs.models import Job

        settle_deadline = time.monotonic() + 90
        while time.monotonic() < settle_deadline:
            close_old_connections()
            if not Job.objects.filter(pk__in=job_ids, finished__isnull=True).exists():
                break
            time.sleep(1.0)
        return report(run, clients, job_ids, setup_s, seconds)
    finally:
        for worker in ctx.get("workers", []):
            worker.kill()
        if web is not None:
            web.kill(signal.SIGTERM)
        if redis is not None:
            redis.stop()
        if pg is not None:
            with contextlib.suppress(Exception):
                pg.stop()
        subprocess.run(["umount", "-l", str(volume)], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def report(run: Run, clients: list[Client], job_ids: list[int], setup_s: float, seconds: float) -> dict:
    from django.db import close_old_connections
    from django.db.models import Count

    from annotation.models import Judgement
    from jobs.models import Job

    close_old_connections()
    made = [u for c in clients for u in c.made]
    confirmed = {u for c in clients for u in c.confirmed}
    set_aside = {u for c in clients for u in c.set_aside}
    queued = {op["client_uuid"] for c in clients for op in c.queue}
    stored = collections.Counter(str(u) for u in Judgement.objects.filter(client_uuid__in=made)
                                 .values_list("client_uuid", flat=True))
    twice = Judgement.objects.values("client_uuid").annotate(n=Count("id")).filter(n__gt=1).count()
    lost_confirmed = sorted(u for u in confirmed if stored[u] == 0)
    lost_choices = sorted(u for u in made if stored[u] == 0 and u not in set_aside and u not in queued)
    jobs = collections.Counter(Job.objects.filter(pk__in=job_ids, parent__isnull=True).values_list("status", flat=True))
    stranded = Job.objects.filter(pk__in=job_ids, finished__isnull=True).count()
    faults = []
    for f in run.faults:
        window = [(t, s) for t, s, _ in run.events if f["start"] <= t <= f["end"] + 1.0]
        after = [t for t in run.confirmations if t > f["end"]]
        faults.append({"fault": f["fault"], "seconds": round(f["end"] - f["start"], 1),
                       "5xx": sum(1 for _, s in window if s >= 500), "refused": sum(1 for _, s in window if s == 0),
                       "recovery_s": round(after[0] - f["end"], 1) if after else None, "note": f["note"]})
    statuses = collections.Counter(s for _, s, _ in run.events)
    result = {
        "annotators": len(clients), "minutes": round(seconds / 60, 2), "setup_s": round(setup_s, 1),
        "load": "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()),
        "choices_made": len(made), "confirmed": len(confirmed),
        "stored": sum(1 for u in made if stored[u] > 0), "duplicated": sum(1 for u in made if stored[u] > 1) + twice,
        "lost_confirmed": len(lost_confirmed), "lost_choices": len(lost_choices), "set_aside": len(set_aside),
        "still_queued": len(queued), "set_aside_reasons": sorted({r for c in clients for r in c.set_aside.values()})[:5],
        "requests": sum(statuses.values()), "status_counts": {str(k): v for k, v in sorted(statuses.items())},
        "jobs": dict(jobs), "jobs_stranded": stranded,
        "jobs_worker_lost": Job.objects.filter(pk__in=job_ids, status="failed", error__startswith="Worker lost").count(),
        "job_errors": sorted(set(Job.objects.filter(pk__in=job_ids, status="failed")
                                 .values_list("error", flat=True)))[:6],
        "faults": faults,
    }
    print(f"chaos: {result['annotators']} annotators x {result['minutes']} min ({result['load']}; set-up "
          f"{result['setup_s']} s), {result['requests']} requests")
    print(f"judgements: {result['choices_made']} made, {result['confirmed']} confirmed, {result['stored']} stored, "
          f"{result['duplicated']} duplicated, {result['lost_confirmed']} confirmed but lost, "
          f"{result['lost_choices']} choices lost, {result['set_aside']} set aside, {result['still_queued']} still queued")
    print(f"jobs: {dict(jobs)}, stranded {stranded}, failed as 'Worker lost' {result['jobs_worker_lost']}")
    print(f"{'fault':<16}{'s':>6}{'5xx':>6}{'refused':>9}{'recovery s':>12}  note")
    for f in faults:
        rec = "-" if f["recovery_s"] is None else f"{f['recovery_s']:.1f}"
        print(f"{f['fault']:<16}{f['seconds']:>6.1f}{f['5xx']:>6}{f['refused']:>9}{rec:>12}  {f['note']}")
    if run.args.json:
        Path(run.args.json).write_text(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
