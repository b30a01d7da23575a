"""A job's state transitions, in one place: `claim` (queued → running, once), `finish` (a final state, once),
the `Heartbeat` that keeps a running row alive, the `JobContext` a job function reports progress, log lines and
cancellation through, and a shard's progress summed into its parent's (`sum_progress`).

The runner (`jobs.runner`), the sharded jobs' merge (`jobs.sharding`) and the worker hooks use these; none of
them imports another's private helpers. Sending messages is `jobs.dispatch`.
"""
from __future__ import annotations

import logging
import os
import threading
import time

from django.db import InterfaceError, OperationalError, connection
from django.db.models import Avg
from django.utils import timezone

from jobs.models import Job, log_appended

logger = logging.getLogger(__name__)

#: The pid of the worker's main process, set there before its pool starts (`jobs.signals`); a prefork pool's
#: children are forked from it and keep the value (a solo worker runs jobs in that process itself).
_main_pid = os.getpid()


def remember_main_pid() -> None:
    global _main_pid
    _main_pid = os.getpid()


def worker_identity(hostname: str) -> str:
    """What a job's `worker` records: the node name and the main process's pid. Two workers started with the same
    name (`local@%h` twice) are two identities, so a worker shutting down re-queues only the jobs it held."""
    return f"{hostname} pid {_main_pid}"



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
        try:
            updated = Job.objects.filter(pk=self.id, status=Status.RUNNING).update(
                progress=fraction, progress_message=message[:500], heartbeat=timezone.now()
            )
            if not updated:
                self._raise_if_cancelled()
            if self.parent_id:
                sum_progress(self.parent_id, f"shard {self.job.shard_index}: {message}")
        except (OperationalError, InterfaceError) as exc:
            # The database restarts or refuses connections: a progress report is skipped, not the job (found by
            # perf/chaos.py: jobs failed "OperationalError" through a PostgreSQL restart); the next one is written.
            logger.warning("job %s: progress not recorded (%s: %s)", self.id, type(exc).__name__, exc)
            connection.close_if_unusable_or_obsolete()

    def check_cancelled(self) -> None:
        self._raise_if_cancelled()

    def _raise_if_cancelled(self) -> None:
        status = Job.objects.filter(pk=self.id).values_list("status", flat=True).first()
        if status == Status.CANCELLED:
            raise JobCancelled(f"Job {self.id} was cancelled")

    def log(self, line: str) -> None:
        """Append a line to the job's log (stored immediately), in the database: what is already there stays,
        such as the lines of an earlier delivery ("Worker lost … Sent again") or the plan's, for a merge."""
        _retrying_writes(f"job {self.id}: log line", lambda: Job.objects.filter(pk=self.id).update(log=log_appended(line)))
        if self.echo:
            self.echo(line)


class Heartbeat(threading.Thread):
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
            if lock_not_available(exc):
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


def lock_not_available(exc: BaseException) -> bool:
    """SQLite's "database is locked" after its busy timeout, or PostgreSQL's lock_timeout (SQLSTATE 55P03)."""
    if not isinstance(exc, OperationalError):
        return False
    return "database is locked" in str(exc) or getattr(exc.__cause__, "sqlstate", None) == "55P03"


#: Seconds between the tries of a final write while the database does not answer (about a minute in all).
FINISH_RETRY_DELAYS = (0.5, 1, 2, 4, 8, 15, 30)


def finish(job_id: int, **fields) -> bool:
    """Write a final state unless the job already finished (e.g. cancelled meanwhile).

    A database that does not answer at that moment (a restart, a refused connection: found by perf/chaos.py, where
    a job that had done its work was left `running` and later failed as "Worker lost") is tried again on a fresh
    connection for about a minute before the error is raised; `JobContext.log` does the same."""
    fields.setdefault("finished", timezone.now())
    return bool(_retrying_writes(f"job {job_id}: final state",
                                 lambda: Job.objects.filter(pk=job_id, status=Status.RUNNING).update(**fields)))


def _retrying_writes(what: str, write):
    """`write()`, tried again on a fresh connection (FINISH_RETRY_DELAYS) while the database does not answer."""
    for delay in (*FINISH_RETRY_DELAYS, None):
        try:
            return write()
        except (OperationalError, InterfaceError):
            if delay is None:
                raise
            logger.warning("%s: the database did not answer; again in %s s", what, delay)
            connection.close()
            time.sleep(delay)
    return None


def claim(job_id: int, *, worker: str) -> bool:
    """queued → running, once: a message delivered twice (or a job cancelled meanwhile) claims nothing."""
    now = timezone.now()
    return bool(Job.objects.filter(pk=job_id, status=Status.QUEUED).update(
        status=Status.RUNNING, started=now, heartbeat=now, worker=worker))


def sum_progress(parent_id: int, message: str = "") -> None:
    """The parent's progress := the mean of its shards' progress (and a heartbeat for the parent)."""
    mean = Job.objects.filter(parent_id=parent_id).aggregate(m=Avg("progress"))["m"] or 0.0
    Job.objects.filter(pk=parent_id, status=Status.RUNNING).update(
        progress=min(float(mean), 0.999), heartbeat=timezone.now(), progress_message=message[:500])
