"""`make run` (scripts/run_local.sh): binds 127.0.0.1, keeps a worker slot for the interactive lane, and Ctrl-C stops
the web server and the workers within seconds even while a job runs, putting that job back in the queue instead of
leaving it `running`."""
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings

from jobs.models import Job
from jobs.selectors import job_ahead
from jobs.services import job_create

from .test_worker_integration import ROOT, _database_url, _wait_for, broker_delivery  # noqa: F401

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _end_sessions(script: subprocess.Popen, out: Path) -> None:
    """Whatever happened, end the script and the sessions of the worker and the web server it started (each runs
    in its own session): a worker left alive would take the next tests' jobs."""
    if script.poll() is None:
        os.killpg(script.pid, signal.SIGKILL)
        script.wait(timeout=30)
    text = out.read_text() if out.exists() else ""
    for pid in [*_worker_pids(text), *re.findall(r"Web server started \(pid (\d+)", text)]:
        try:
            os.killpg(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass


def _worker_pids(text: str) -> list[int]:
    found = re.search(r"Workers started \(bulk lane and interactive lane: pids (\d+) (\d+)", text)
    return [int(pid) for pid in found.groups()] if found else []


def _start_make_run(tmp_path, var_dir: Path, **extra_env: str) -> tuple[subprocess.Popen, Path, int]:
    """scripts/run_local.sh on the test database and the broker under `var_dir`, waited for until its worker says
    ready and its web server answers."""
    port = _free_port()
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="config.settings.test", DATABASE_URL=_database_url(),
               CELERY_BROKER_URL=settings.CELERY_BROKER_URL, SIMILIA_VAR_DIR=str(var_dir),
               CELERY_TASK_ALWAYS_EAGER="false", PORT=str(port))
    env.update({"SIMILIA_WORKER_PRELOAD": "0", **extra_env})  # workers start bare (test_worker_integration: preload)
    env["HOST"] = extra_env.get("HOST", "127.0.0.1")
    out = tmp_path / "run_local.out"
    # SIGINT as a terminal's shell leaves it (default): a disposition this process inherited or set (ignored) would
    # pass to the script, and bash cannot trap a signal that was ignored when it started
    script = subprocess.Popen([str(ROOT / "scripts" / "run_local.sh")], cwd=ROOT, env=env, stdout=out.open("w"),
                              stderr=subprocess.STDOUT, start_new_session=True,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    worker_logs = [var_dir / "worker.log", var_dir / "worker-interactive.log"]
    deadline = time.monotonic() + 90
    try:
        while True:
            assert time.monotonic() < deadline, out.read_text()
            assert script.poll() is None, out.read_text()
            ready = all(log.exists() and "ready." in log.read_text() for log in worker_logs)
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
            except OSError:
                ready = False
            if ready:
                break
            time.sleep(0.3)
    except BaseException:
        _end_sessions(script, out)
        raise
    assert f"Starting development server at http://{env['HOST']}:{port}/" in out.read_text()
    return script, out, port


def test_ctrl_c_stops_make_run_cleanly_while_a_job_runs(tmp_path, broker_delivery, settings):  # noqa: F811
    """The bulk lane's one slot busy: an interactive job runs at once on the slot kept for it, one past its lane's
    time limit is stopped, and a bulk job queued behind two others says so."""
    settings.JOB_INTERACTIVE_TIME_LIMIT = 2  # sent with the message; the worker's own settings word the error
    script, out, port = _start_make_run(tmp_path, Path(settings.VAR_DIR), WORKER_CONCURRENCY="1", STOP_GRACE="2",
                                        JOB_INTERACTIVE_TIME_LIMIT="2")
    try:
        worker_pid = _worker_pids(out.read_text())[0]
        job = job_create(kind="system.sleep", params={"seconds": 120, "steps": 240})
        _wait_for(job.pk, {"running"})
        behind = [job_create(kind="system.sleep", params={"seconds": 1}) for _ in range(3)]
        quick = job_create(kind="system.sleep", queue="interactive", params={"seconds": 0.2, "steps": 1})
        assert _wait_for(quick.pk, {"succeeded", "failed"}).status == "succeeded"
        slow = job_create(kind="system.sleep", queue="interactive", params={"seconds": 60, "steps": 60})
        assert _wait_for(slow.pk, {"succeeded", "failed"}).error == ("Timed out: the job ran past the soft time "
                                                                     "limit of 2 s for a system.sleep job.")
        assert Job.objects.get(pk=job.pk).status == "running" and quick.lane == "interactive"
        assert [job_ahead(j) for j in behind] == [0, 1, 2] and behind[0].lane == "bulk"
        started = time.monotonic()
        os.killpg(script.pid, signal.SIGINT)  # what a terminal sends on Ctrl-C
        script.wait(timeout=60)
        elapsed = time.monotonic() - started
        assert not _alive(worker_pid), "the worker outlived the script"
    finally:
        _end_sessions(script, out)
    print(f"make run stopped {elapsed:.1f} s after Ctrl-C with a job running")
    assert elapsed < 30
    assert "Worker still running a job after 2 s: cold shutdown (the job goes back to the queue)." in out.read_text()
    with socket.socket() as probe:
        assert probe.connect_ex(("127.0.0.1", port)) != 0, "the web server still listens"
    # The stopped job is back in the queue (its message went back to the broker), not left `running`.
    stopped = Job.objects.get(pk=job.pk)
    assert stopped.status == "queued", (stopped.status, stopped.error)
    assert "was shut down" in stopped.progress_message and stopped.started is None


def test_ctrl_c_of_an_idle_make_run_stops_the_worker_at_once_and_says_nothing_false(tmp_path, broker_delivery):  # noqa: F811
    """An idle worker leaves at once on Ctrl-C (no grace waited, no cold shutdown announced); a clean start logs no
    warning (the root-only `--uid` advice aside) and serves a favicon. The time it takes: perf/run_local_stop.py."""
    # a broker of its own (the filesystem broker lives in the var folder; a Redis broker gets a database of its own):
    # a message an earlier test left in the shared one would make this worker busy
    own = re.sub(r"/\d*$", "/13", settings.CELERY_BROKER_URL) if settings.CELERY_BROKER_URL.startswith("redis") else None
    script, out, port = _start_make_run(tmp_path, tmp_path / "var", WORKER_CONCURRENCY="1", STOP_GRACE="60",
                                        **({"CELERY_BROKER_URL": own} if own else {}))
    try:
        icon = urllib.request.urlopen(f"http://127.0.0.1:{port}/favicon.ico", timeout=10)
        assert icon.status == 200 and icon.headers["Content-Type"].startswith("image/svg+xml")
        worker_pids = _worker_pids(out.read_text())
        os.killpg(script.pid, signal.SIGINT)
        script.wait(timeout=50)  # under the 60 s grace: the worker did not wait it out
        assert not any(map(_alive, worker_pids)), "a worker outlived the script"
    finally:
        _end_sessions(script, out)
    text = out.read_text()
    assert text.rstrip().endswith("Stopped.") and "cold shutdown" not in text and "killed" not in text, text
    log = (tmp_path / "var" / "worker.log").read_text()
    assert "no task running, stopped at once" in log, log
    warnings = [line for line in (text + log).splitlines() if "WARNING" in line and "superuser privileges" not in line]
    assert not warnings, warnings


def test_make_run_refuses_a_host_others_reach_while_the_demo_users_exist_unless_asked_twice(tmp_path):
    from django.core.management import call_command

    call_command("load_demo_users", stdout=open(os.devnull, "w"))
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="config.settings.test", DATABASE_URL=_database_url(),
               SIMILIA_VAR_DIR=str(tmp_path / "var"), HOST="0.0.0.0", PORT=str(_free_port()))
    refused = subprocess.run([str(ROOT / "scripts" / "run_local.sh")], cwd=ROOT, env=env, capture_output=True,
                             text=True, timeout=120)
    assert refused.returncode == 2 and "Refused: HOST=0.0.0.0 serves the demo users' known passwords" in refused.stderr
    assert "started" not in refused.stdout and not (tmp_path / "var" / "worker.log").exists()
    script, out, port = _start_make_run(tmp_path, tmp_path / "var", HOST="0.0.0.0", SIMILIA_EXPOSE_DEMO="yes")
    _end_sessions(script, out)
    assert f"Starting development server at http://0.0.0.0:{port}/" in out.read_text()
