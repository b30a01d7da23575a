"""A real Celery worker subprocess on the configured broker (Redis in CI, the filesystem broker
locally) runs jobs end to end; a worker killed with SIGKILL leaves its job failed, not running; a worker
killed after taking a job's message but before claiming its row leaves it to another worker."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from config.celery import app as celery_app
from jobs.models import Job
from jobs.services import job_cancel, job_create

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _database_url() -> str:
    cfg = connection.settings_dict
    if cfg["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{cfg['NAME']}"
    auth = cfg["USER"] + (f":{cfg['PASSWORD']}" if cfg.get("PASSWORD") else "")
    host = cfg.get("HOST") or "localhost"
    port = f":{cfg['PORT']}" if cfg.get("PORT") else ""
    return f"postgres://{auth}@{host}{port}/{cfg['NAME']}"


@pytest.fixture
def broker_delivery():
    """Send tasks to the real broker instead of running them eagerly."""
    celery_app.conf.task_always_eager = False
    yield
    celery_app.conf.task_always_eager = True


class Worker:
    def __init__(self, name: str, log_dir: Path, **extra_env: str):
        env = dict(os.environ)
        env.update(
            DJANGO_SETTINGS_MODULE="config.settings.test",
            DATABASE_URL=_database_url(),
            CELERY_BROKER_URL=settings.CELERY_BROKER_URL,
            SIMILIA_VAR_DIR=str(settings.VAR_DIR),
            CELERY_TASK_ALWAYS_EAGER="false",  # a job the worker sends (again) goes through the broker
        )
        # the tests' workers start bare unless a test asks (the default detector's warm-up is ~6 s)
        env.update({"SIMILIA_WORKER_PRELOAD": "0", **extra_env})
        self.log = log_dir / f"{name}.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", "interactive,cpu,gpu", "--pool", "solo",
             "-n", f"{name}@%h", "-l", "info", "--without-gossip", "--without-mingle"],
            cwd=ROOT, env=env, stdout=self.log.open("w"), stderr=subprocess.STDOUT, start_new_session=True,
        )

    def wait_ready(self, timeout: float = 90):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if "ready." in self.log.read_text():
                return
            assert self.proc.poll() is None, self.log.read_text()
            time.sleep(0.2)
        raise AssertionError(f"worker not ready:\n{self.log.read_text()}")

    def kill(self, sig=signal.SIGKILL, grace: float = 20):
        """Send `sig` to the worker's whole session (its pool children too); one that has not left after `grace`
        seconds (a worker ignoring SIGTERM under load) is SIGKILLed with its group, so no worker of a test
        outlives it and takes the next test's jobs."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # pool children left behind, if any
        except ProcessLookupError:
            pass
        if self.proc.poll() is None:
            self.proc.wait(timeout=30)


@pytest.fixture
def start_worker(tmp_path, broker_delivery):
    started = []

    def start(name: str, **extra_env: str) -> Worker:
        worker = Worker(name, tmp_path, **extra_env)
        started.append(worker)
        worker.wait_ready()
        return worker

    try:
        yield start
    finally:
        for worker in started:
            worker.kill(signal.SIGTERM)


def _wait_for(job_id: int, statuses: set[str], timeout: float = 60) -> Job:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = Job.objects.get(pk=job_id)
        if job.status in statuses:
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} stayed {job.status}: {job.error or job.progress_message}")


def test_real_worker_runs_a_job_end_to_end(start_worker):
    start_worker("w-ok")
    job = job_create(kind="system.sleep", params={"seconds": 0.5, "steps": 5})
    done = _wait_for(job.pk, {"succeeded", "failed"})
    assert done.status == "succeeded", done.error
    assert done.result["pid"] != os.getpid()
    assert done.worker.startswith("w-ok@")
    assert done.progress == 1.0 and done.started and done.finished
    failing = job_create(kind="system.sleep", params={"seconds": 0.1, "steps": 1, "fail": True})
    failed = _wait_for(failing.pk, {"succeeded", "failed"})
    assert failed.status == "failed" and "asked to fail" in failed.error


def test_a_worker_loads_the_latin_dictionary_before_its_first_job_and_may_be_told_not_to(start_worker):
    """`JOB_WORKER_PRELOAD` runs in the job process before the worker says it is ready, so the first Latin job
    on a fresh worker does not pay simplemma's 1.2 s load nor the default detector's start (imports, vectors,
    compiled kernels); SIMILIA_WORKER_PRELOAD=0 turns it off."""
    warm = start_worker("w-warm", SIMILIA_WORKER_PRELOAD="1").log.read_text()
    for line in ("preloaded detection.latin.lemmatize.preload in", "preloaded detection.methods.warm_default in"):
        assert line in warm and warm.index(line) < warm.index("ready."), warm
    assert "preloaded" not in start_worker("w-cold", SIMILIA_WORKER_PRELOAD="0").log.read_text()


def test_sigkilled_worker_leaves_the_job_failed_with_a_reason(start_worker):
    first = start_worker("w-doomed")
    job = job_create(kind="system.sleep", params={"seconds": 60, "steps": 120})
    running = _wait_for(job.pk, {"running"})
    assert running.worker.startswith("w-doomed@")
    first.kill(signal.SIGKILL)
    assert Job.objects.get(pk=job.pk).status == "running"  # nobody could mark it yet
    start_worker("w-rescuer")
    failed = _wait_for(job.pk, {"failed"}, timeout=settings.JOB_HEARTBEAT_TIMEOUT * 4 + 30)
    assert "Worker lost" in failed.error and "w-doomed@" in failed.error
    assert failed.finished is not None


def test_a_worker_killed_before_claiming_leaves_the_job_to_another_worker(start_worker):
    # The first worker takes the message, then pauses before the claim (a test-only hook) and is killed
    # there: the row is still queued and the message is gone with the worker.
    doomed = start_worker("w-taker", SIMILIA_TEST_PAUSE_BEFORE_CLAIM="120", JOB_REDELIVER_AFTER="600")
    job = job_create(kind="system.sleep", params={"seconds": 0.2, "steps": 2})
    deadline = time.monotonic() + 60
    while "pausing before the claim" not in doomed.log.read_text():
        assert time.monotonic() < deadline, doomed.log.read_text()
        time.sleep(0.2)
    doomed.kill(signal.SIGKILL)
    assert Job.objects.get(pk=job.pk).status == "queued"
    started = time.monotonic()
    # A healthy worker sends unclaimed jobs again after JOB_REDELIVER_AFTER seconds (here 2).
    start_worker("w-sweeper", JOB_REDELIVER_AFTER="2")
    done = _wait_for(job.pk, {"succeeded", "failed"}, timeout=90)
    assert done.status == "succeeded", done.error
    assert done.worker.startswith("w-sweeper@")
    assert done.deliveries == 2
    print(f"job stranded by a worker killed before its claim: run by another worker "
          f"{time.monotonic() - started:.1f} s after the kill")


def test_a_worker_of_the_same_name_shutting_down_leaves_the_others_job_alone(start_worker):
    """Regression: two workers named alike (`local@%h` twice); the idle one's shutdown used to re-queue the job the
    other was running (`job_requeue_held_by` matched the name), which then ran twice. A job records its worker's
    name and main pid, and a shutdown re-queues only its own.

    No timing assumption: the job runs until the test cancels it, so it is still running however long the idle
    worker takes to leave; its holder then shows it kept running it (progress moves on) and stops it at the cancel."""
    first, second = start_worker("w-same"), start_worker("w-same")
    job = job_create(kind="system.sleep", params={"seconds": 3600, "steps": 36000})
    running = _wait_for(job.pk, {"running"})
    holder, idle = (first, second) if running.worker.endswith(f" pid {first.proc.pid}") else (second, first)
    assert running.worker.startswith("w-same@") and running.worker.endswith(f" pid {holder.proc.pid}")
    idle.kill(signal.SIGTERM, grace=120)
    assert idle.proc.returncode == 0 and holder.proc.poll() is None  # it left by itself, not by the SIGKILL
    after = Job.objects.get(pk=job.pk)
    assert after.status == "running" and after.worker == running.worker, (after.status, after.progress_message)
    assert "was shut down" not in after.log and after.deliveries == 1
    moved = _wait_for_progress_past(job.pk, after.progress)  # the holder still runs it, from where it was
    assert moved.worker == running.worker and moved.deliveries == 1
    job_cancel(job=moved)
    stopped = _wait_for(job.pk, {"succeeded", "failed", "queued", "cancelled"})
    assert stopped.status == "cancelled" and "was shut down" not in stopped.log and stopped.deliveries == 1
    assert holder.proc.poll() is None  # the holder stopped the job, not itself


def _wait_for_progress_past(job_id: int, progress: float, timeout: float = 60) -> Job:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = Job.objects.get(pk=job_id)
        if job.status != "running" or job.progress > progress:
            assert job.status == "running", (job.status, job.progress_message)
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} made no progress past {progress} in {timeout} s")
