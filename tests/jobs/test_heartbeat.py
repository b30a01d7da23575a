"""The runner's heartbeat thread: beats land when no lock is held, a held lock makes it skip a beat rather than
wait, and stopping it never waits on a lock (SQLite's write lock, PostgreSQL's row lock)."""
import datetime as dt
import time

import pytest
from django.db import transaction
from django.utils import timezone

from jobs.lifecycle import Heartbeat
from jobs.models import Job
from jobs.runner import run_job


def _until(condition, timeout: float = 60.0) -> bool:
    """Poll until `condition` holds (True at once when it does; False only after `timeout`, a hung thread)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _beat_of(job: Job):
    return Job.objects.filter(pk=job.pk).values_list("heartbeat", flat=True).get()


@pytest.mark.django_db(transaction=True)  # committed rows: the heartbeat thread reads through its own connection
def test_beats_land_a_held_lock_skips_them_and_stop_returns_at_once():
    old = timezone.now() - dt.timedelta(hours=1)
    job = Job.objects.create(kind="system.sleep", status="running", started=old, heartbeat=old, worker="w@h")
    beat = Heartbeat(job.pk, interval=0.05)
    beat.start()
    try:
        assert _until(lambda: _beat_of(job) > old), "no heartbeat landed while no lock was held"

        with transaction.atomic():  # this connection holds the write lock (SQLite) and the job's row (PostgreSQL)
            Job.objects.filter(pk=job.pk).update(heartbeat=old)
            skipped = beat.skipped
            assert _until(lambda: beat.skipped > skipped), "the heartbeat neither wrote nor skipped under the lock"
        landed = beat.beats
        assert _until(lambda: beat.beats > landed and _beat_of(job) > old), "no beat landed after the lock went"

        with transaction.atomic():
            Job.objects.filter(pk=job.pk).update(progress=0.5)
            skipped = beat.skipped
            assert _until(lambda: beat.skipped > skipped)
            # the thread is between skipped beats or inside one, waiting on the lock this test holds: stop() and the
            # thread's end come while the lock is still held (no timing assumed: a wait on the lock would hang here)
            beat.stop()
            beat.join(timeout=60)
            assert not beat.is_alive(), "the heartbeat thread still waits on the lock"
    finally:
        beat.stopped.set()
        beat.join(timeout=2)


@pytest.mark.django_db
def test_a_job_run_inside_an_open_transaction_finishes_without_waiting_for_its_heartbeat(settings):
    """The test's transaction holds SQLite's write lock for the whole job; the heartbeat (1 s here) cannot
    write, and the runner used to wait for it (up to interval + 5 s) after the job was done."""
    assert settings.JOB_HEARTBEAT_INTERVAL == 1
    job = Job.objects.create(kind="system.sleep", params={"seconds": 1.6, "steps": 4})
    t0 = time.monotonic()
    assert run_job(job.pk) == "succeeded"
    elapsed = time.monotonic() - t0
    assert elapsed < 1.6 + 2.5, f"run_job took {elapsed:.1f} s for a 1.6 s job"
