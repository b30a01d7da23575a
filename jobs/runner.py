"""The one runner every Celery task goes through.

It claims the Job row (queued → running), keeps a heartbeat while the work runs, and always leaves
the row in a finished state: succeeded with the result, failed with the error and traceback
(including soft time limits), or cancelled. A worker that dies without a word (SIGKILL, OOM, hard
time limit) stops the heartbeat; `jobs.services.job_reap_stale` then marks the row failed.

Sharded jobs (`jobs.sharding`): a parent whose function returns `FanOut` stays running while its shards
run; a shard's progress and heartbeat also move its parent, and a shard reaching a final state lets
`jobs.sharding.shard_settled` fail, advance or merge the parent.
"""
from __future__ import annotations

import logging
import socket
import threading
import time
import traceback

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import OperationalError, connection
from django.utils import timezone

from jobs.models import Job, log_appended
from jobs.registry import get_kind
from jobs.sharding import FanOut, shard_settled

logger = logging.getLogger(__name__)

Status = Job.Status


class JobCancelled(Exception):
    """Raised inside a job function when the job was cancelled; the runner leaves it cancelled."""


class JobContext:
    """Handed to a job function: progress reporting, logging and cancellation checks."""

    #: Minimum seconds between progress writes (the final 1.0 is always written).
    PROGRESS_EVERY = 0.5

    def __init__(self, job: Job, echo=None):
        self.job = job
        self.echo = echo  # a command running the job in-process also prints its progress and log lines
        self.id = job.pk
        self.owner_id = job.owner_id
        self.parent_id = job.parent_id
        self._last_write = 0.0

    def progress(self, fraction: float, message: str = "") -> None:
        """Record progress in [0, 1]; raises JobCancelled if the job was cancelled meanwhile."""
        now = time.monotonic()
        if fraction < 1.0 and now - self._last_write < self.PROGRESS_EVERY:
            return
        self._last_write = now
        fraction = min(max(float(fraction), 0.0), 1.0)
        if self.echo:
            self.echo(f"[{fraction:4.0%}] {message}")
        updated = Job.objects.filter(pk=self.id, status=Status.RUNNING).update(
            progress=fraction, progress_message=message[:500], heartbeat=timezone.now()
        )
        if not updated:
            self._raise_if_cancelled()
        if self.parent_id:
            from jobs.sharding import sum_progress

            sum_progress(self.parent_id, f"shard {self.job.shard_index}: {message}")

    def check_cancelled(self) -> None:
        self._raise_if_cancelled()

    def _raise_if_cancelled(self) -> None:
        status = Job.objects.filter(pk=self.id).values_list("status", flat=True).first()
        if status == Status.CANCELLED:
            raise JobCancelled(f"Job {self.id} was cancelled")

    def log(self, line: str) -> None:
        """Append a line to the job's log (stored immediately), in the database: what is already there stays,
        such as the lines of an earlier delivery ("Worker lost … Sent again") or the plan's, for a merge."""
        Job.objects.filter(pk=self.id).update(log=log_appended(line))
        if self.echo:
            self.echo(line)


class _Heartbeat(threading.Thread):
    """Beats the job's row, and its parent's for a shard (a parent is alive while a shard runs).

    The beat is one UPDATE on the thread's own connection, which waits at most `LOCK_WAIT_MS` for a lock
    (SQLite's busy timeout, PostgreSQL's lock_timeout, set on that connection only). A beat that cannot
    get the lock in time (the job's own connection, or a test's open transaction on SQLite, holds the
    write lock or the row) is skipped and the next one retries, so a live worker's beat lands as soon as
    the lock is free (a job holding SQLite's write lock past `JOB_HEARTBEAT_TIMEOUT` gets no beat in,
    however long a beat would wait); a dead worker's never does. `stop()` wakes the thread at once (it
    sleeps on the stop event) and waits at most `STOP_WAIT` for a beat in flight, so finishing a job never
    waits on a lock.
    """

    LOCK_WAIT_MS = 200
    STOP_WAIT = 0.5

    def __init__(self, job_id: int, interval: float, parent_id: int | None = None):
        super().__init__(name=f"job-{job_id}-heartbeat", daemon=True)
        self.job_id = job_id
        self.ids = [job_id] + ([parent_id] if parent_id else [])
        self.interval = interval
        self.stopped = threading.Event()
        self.beats = 0  # beats written
        self.skipped = 0  # beats skipped because a lock was held
        self._configured = None  # the raw connection the short lock wait was set on

    def run(self) -> None:
        try:
            while not self.stopped.wait(self.interval):
                self.beat()
        finally:
            connection.close()

    def beat(self) -> bool:
        """Write one beat; False when it was skipped (a lock held past LOCK_WAIT_MS, or another error)."""
        try:
            self._short_lock_wait()
            Job.objects.filter(pk__in=self.ids, status=Status.RUNNING).update(heartbeat=timezone.now())
        except Exception as exc:  # a missed beat is not fatal; the next one retries
            if _lock_not_available(exc):
                self.skipped += 1
                logger.debug("heartbeat for job %s skipped: a lock is held (%s)", self.job_id, exc)
            else:
                logger.warning("heartbeat for job %s failed", self.job_id, exc_info=True)
            connection.close_if_unusable_or_obsolete()
            return False
        self.beats += 1
        return True

    def _short_lock_wait(self) -> None:
        connection.ensure_connection()
        if connection.connection is self._configured:
            return
        with connection.cursor() as cursor:
            if connection.vendor == "sqlite":
                cursor.execute(f"PRAGMA busy_timeout = {int(self.LOCK_WAIT_MS)}")
            elif connection.vendor == "postgresql":
                cursor.execute(f"SET lock_timeout = '{int(self.LOCK_WAIT_MS)}ms'")
        self._configured = connection.connection

    def stop(self) -> None:
        self.stopped.set()
        self.join(timeout=self.STOP_WAIT)
        if self.is_alive():  # a beat in flight ends on its own (daemon thread); it only moves rows still running
            logger.info("heartbeat for job %s still writing after %.1f s; not waiting for it", self.job_id,
                        self.STOP_WAIT)


def _lock_not_available(exc: BaseException) -> bool:
    """SQLite's "database is locked" after its busy timeout, or PostgreSQL's lock_timeout (SQLSTATE 55P03)."""
    if not isinstance(exc, OperationalError):
        return False
    return "database is locked" in str(exc) or getattr(exc.__cause__, "sqlstate", None) == "55P03"


def finish(job_id: int, **fields) -> bool:
    """Write a final state unless the job already finished (e.g. cancelled meanwhile)."""
    fields.setdefault("finished", timezone.now())
    return bool(Job.objects.filter(pk=job_id, status=Status.RUNNING).update(**fields))


def run_job(job_id: int, *, worker: str | None = None, echo=None) -> str:
    """Run the job `job_id` to a final state and return that state (``echo``: also called with every progress
    message and log line, for a command that runs the job in-process)."""
    now = timezone.now()
    claimed = Job.objects.filter(pk=job_id, status=Status.QUEUED).update(
        status=Status.RUNNING, started=now, heartbeat=now, worker=worker or socket.gethostname()
    )
    if not claimed:
        state = Job.objects.filter(pk=job_id).values_list("status", flat=True).first()
        logger.info("job %s not claimed (status %s)", job_id, state)
        return state or "missing"
    job = Job.objects.get(pk=job_id)
    context = JobContext(job, echo=echo)
    heartbeat = _Heartbeat(job_id, settings.JOB_HEARTBEAT_INTERVAL, job.parent_id)
    heartbeat.start()
    started = time.monotonic()
    try:
        kind = get_kind(job.kind)
        result = kind.func(context, **(job.params or {}))
        elapsed = time.monotonic() - started
        if isinstance(result, FanOut):  # the shards carry on; the last one to finish merges
            return Status.RUNNING
        result = {} if result is None else result
        finish(job_id, status=Status.SUCCEEDED, result=result, progress=1.0,
               progress_message=f"done in {elapsed:.1f} s")
    except JobCancelled:
        logger.info("job %s cancelled", job_id)
    except SoftTimeLimitExceeded:
        finish(job_id, status=Status.FAILED,
               error=f"Timed out: the job ran past the soft time limit of {settings.CELERY_TASK_SOFT_TIME_LIMIT} s.")
    except Exception as exc:
        finish(job_id, status=Status.FAILED, error=f"{type(exc).__name__}: {exc}\n\n{traceback.format_exc()}")
    finally:
        heartbeat.stop()
    if job.parent_id:
        shard_settled(job.parent_id)
    return Job.objects.filter(pk=job_id).values_list("status", flat=True).first()
