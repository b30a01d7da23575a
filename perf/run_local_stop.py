"""Ctrl-C of an idle `make run` (scripts/run_local.sh): seconds until every process it started has ended.

    .venv/bin/python -m perf run run_local_stop [--runs 3] [--check] [--expected FILE]

Each run: a fresh throwaway folder (SQLite migrated, the filesystem broker), the script started in a session of its
own, waited for until its worker's pool processes have loaded what jobs need (idle) and the web server answers, then
SIGINT to the script's session (what a terminal's Ctrl-C sends) and the clock runs until no process of the script's,
the worker's or the web server's session is left. Also checks what a person reads: no warning on start, no false
reason on stop. ``--check``: exit 1 when a run takes longer than the stored bound (perf/expected/runner/run_local_stop.yaml).
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = Path(__file__).parent / "expected" / "runner" / "run_local_stop.yaml"
PERF_CHECK = ["--check"]


def _sessions() -> list[tuple[int, int]]:
    """(pid, session id) of every live process (a zombie has ended: it is not counted)."""
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                fields = (p / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                out.append((int(p.name), int(fields[3])))
    return out


def one_run(var: Path) -> dict:
    env = dict(os.environ, SIMILIA_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="config.settings.local")
    env.pop("DATABASE_URL", None)
    env.pop("CELERY_BROKER_URL", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        env["PORT"] = str(probe.getsockname()[1])
    out_path = var / "run.out"
    with out_path.open("w") as out:
        script = subprocess.Popen(["scripts/run_local.sh"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True)
        started, log_path = time.monotonic(), var / "worker.log"
        concurrency = int(env.get("WORKER_CONCURRENCY", "2"))
        while True:
            log = log_path.read_text() if log_path.exists() else ""
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{env['PORT']}/healthz", timeout=2)
                web = True
            except OSError:
                web = False
            if web and "ready." in log and log.count("preloaded ") >= concurrency:
                break
            if script.poll() is not None or time.monotonic() - started > 300:
                raise SystemExit(f"make run did not get ready:\n{out_path.read_text()}")
            time.sleep(0.2)
        ready = time.monotonic() - started
        text = out_path.read_text()
        mine = {script.pid, *(int(m) for m in re.findall(r"started \(pid (\d+)", text))}
        t = time.monotonic()
        os.killpg(script.pid, signal.SIGINT)
        while script.poll() is None or any(pid in mine or sid in mine for pid, sid in _sessions()):
            time.sleep(0.01)
        stop = time.monotonic() - t
    text, log = out_path.read_text(), log_path.read_text()
    warnings = [line for line in (text + log).splitlines()
                if "WARNING" in line and "superuser privileges" not in line]  # the --uid advice shows as root only
    return {"ready_s": round(ready, 1), "stop_s": round(stop, 2), "warnings": warnings,
            "stop_message": [line for line in text.splitlines() if "Worker" in line or "Stop" in line][-3:]}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--check", action="store_true", help="exit 1 when a run is slower than the stored bound")
    parser.add_argument("--expected", type=Path, help=f"write the figures here ({EXPECTED.relative_to(ROOT)})")
    args = parser.parse_args(argv)
    runs = []
    for i in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="run-local-stop-") as var:
            runs.append(one_run(Path(var)))
        print(f"run {i + 1}: ready {runs[-1]['ready_s']} s, every process ended {runs[-1]['stop_s']} s after Ctrl-C; "
              f"{runs[-1]['stop_message']}; warnings {runs[-1]['warnings'] or 'none'}", flush=True)
    load = os.getloadavg()[0]
    stops = [r["stop_s"] for r in runs]
    print(f"stop after Ctrl-C: max {max(stops)} s, runs {stops} (load average {load:.1f})")
    bad = [r["warnings"] for r in runs if r["warnings"]]
    if args.expected:
        args.expected.parent.mkdir(parents=True, exist_ok=True)
        args.expected.write_text(yaml.safe_dump({
            "name": "run_local_stop",
            "description": "Ctrl-C of an idle `make run`: seconds until every process it started has ended.",
            "command": f"perf/run_local_stop.py --runs {args.runs} --expected {args.expected}",
            "measured": {"date": time.strftime("%Y-%m-%d"), "python": sys.version.split()[0],
                         "load_average": round(load, 1)},
            "bound_s": 2.0, "figures": {"stop_s": stops, "max_stop_s": max(stops)},
        }, sort_keys=False, allow_unicode=True), encoding="utf-8")
        print(f"wrote {args.expected}")
    if args.check:
        bound = yaml.safe_load(EXPECTED.read_text(encoding="utf-8"))["bound_s"]
        if max(stops) > bound or bad:
            print(f"FAIL: over the stored bound of {bound} s, or warnings on start: {bad}")
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
