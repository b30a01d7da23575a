"""Writes for jobs: create (and enqueue after commit), cancel, and reap jobs whose worker died."""
from __future__ import annotations

import datetime as dt
import logging

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.errors import DomainError
from jobs.dispatch import send
from jobs.models import Job, log_appended
from jobs.registry import get_kind, lane_queue

logger = logging.getLogger(__name__)


class JobError(DomainError):
    """A job request that cannot be honoured (unknown kind, job already finished)."""

    status = 409


class JobQuotaError(DomainError):
    """A person who already has SIMILIA_MAX_ACTIVE_JOBS jobs queued or running asks for another."""

    status = 429


def _check_quota(owner) -> None:
    """Refuse a new job while `owner` has SIMILIA_MAX_ACTIVE_JOBS top-level jobs queued or running (staff and system
    jobs are not counted). The owner's row is locked first, so concurrent requests count one after another."""
    limit = settings.SIMILIA_MAX_ACTIVE_JOBS
    if owner is None or not limit or getattr(owner, "is_staff", False):
        return
    from django.contrib.auth import get_user_model

    list(get_user_model().objects.select_for_update().filter(pk=owner.pk).values_list("pk", flat=True))
    active = Job.objects.filter(owner_id=owner.pk, parent__isnull=True,
                                status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).count()
    if active >= limit:
        raise JobQuotaError(
            f"You already have {active} jobs queued or running; the limit is {limit} per person "
            "(SIMILIA_MAX_ACTIVE_JOBS). Wait for one to finish, or cancel one on the Jobs page, then try again.")


def job_create(*, kind: str, params: dict | None = None, owner=None, queue: str | None = None) -> Job:
    """Create a queued Job and enqueue it once the surrounding transaction commits.

    A person with SIMILIA_MAX_ACTIVE_JOBS jobs queued or running gets JobQuotaError (429) instead.

    Args:
        kind: a registered job kind (jobs.registry).
        params: JSON-serialisable keyword arguments for the job function.
        owner: the user who asked for it (None for system jobs).
        queue: override the kind's queue ("cpu" or "gpu"); an interactive kind's "cpu" is its lane's queue.
    """
    try:
        job_kind = get_kind(kind)
    except KeyError as exc:
        raise JobError(str(exc)) from None
    with transaction.atomic():
        _check_quota(owner)
        job = Job.objects.create(kind=kind, params=params or {}, owner=owner, queue=lane_queue(kind, queue or job_kind.queue))
    transaction.on_commit(lambda: send(job))
    return job


def job_enqueue_error(job: Job) -> str | None:
    """The reason a just-created job could not be sent to a worker, or None when it was sent (or ran)."""
    job.refresh_from_db(fields=["status", "error", "started"])
    if job.status == Job.Status.FAILED and job.started is None:
        return job.error
    return None


def job_redeliver_unclaimed(*, after_seconds: int | None = None, max_deliveries: int | None = None) -> int:
    """Send again the message of every queued job no worker claimed within `after_seconds` of its last send.

    A message can be lost between broker and row: the worker that took it was killed before it claimed
    the row, or the embedded broker's file went with it. Sending again is harmless because the runner
    claims a row only while it is queued. After `max_deliveries` sends the job is marked failed with the
    reason instead. Several workers may sweep at once: each send is claimed by a conditional update.
    Returns how many jobs were sent again.
    """
    after_seconds = after_seconds or settings.JOB_REDELIVER_AFTER
    max_deliveries = max_deliveries or settings.JOB_MAX_DELIVERIES
    cutoff = timezone.now() - dt.timedelta(seconds=after_seconds)
    unclaimed = Job.objects.filter(status=Job.Status.QUEUED).filter(
        Q(enqueued__lt=cutoff) | Q(enqueued__isnull=True, created__lt=cutoff))
    sent = 0
    for job in unclaimed.only("pk", "kind", "queue", "deliveries"):
        if job.deliveries >= max_deliveries:
            Job.objects.filter(pk=job.pk, status=Job.Status.QUEUED).update(
                status=Job.Status.FAILED, finished=timezone.now(),
                error=(f"No worker claimed this job after {job.deliveries} deliveries, {after_seconds} s apart: "
                       f"is a worker consuming the {job.queue!r} queue?"))
            continue
        mine = Job.objects.filter(pk=job.pk, status=Job.Status.QUEUED, deliveries=job.deliveries).filter(
            Q(enqueued__lt=cutoff) | Q(enqueued__isnull=True)).update(enqueued=timezone.now())
        if mine:
            logger.warning("job %s unclaimed for %s s: sending it again", job.pk, after_seconds)
            sent += send(job)
    return sent


def job_cancel(*, job: Job) -> Job:
    """Cancel a queued or running job. A running job stops at its next progress report."""
    updated = Job.objects.filter(pk=job.pk, status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).update(
        status=Job.Status.CANCELLED, finished=timezone.now(), progress_message="cancelled"
    )
    job.refresh_from_db()
    if not updated:
        raise JobError(f"Job {job.pk} is already {job.status}; only queued or running jobs can be cancelled.")
    Job.objects.filter(parent=job, status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).update(
        status=Job.Status.CANCELLED, finished=timezone.now(), progress_message="cancelled with its parent job")
    if job.celery_task_id:
        try:
            from config.celery import app

            app.control.revoke(job.celery_task_id)
        except Exception:  # not every broker supports broadcast; the runner checks the row anyway
            logger.info("revoke not delivered for job %s", job.pk)
    return job


def job_reap_stale(*, timeout_seconds: int | None = None, reason: str = "") -> int:
    """Mark running jobs with no heartbeat for `timeout_seconds` as failed. Returns how many.

    A worker that was killed (SIGKILL, out of memory, hard time limit) cannot mark its own job;
    its heartbeat stops instead, and this turns the silent row into a failure with a reason.
    """
    timeout_seconds = timeout_seconds or settings.JOB_HEARTBEAT_TIMEOUT
    cutoff = timezone.now() - dt.timedelta(seconds=timeout_seconds)
    # A sharded job's parent is alive while a shard is queued or running (jobs.sharding).
    stale = Job.objects.filter(status=Job.Status.RUNNING, heartbeat__lt=cutoff).exclude(
        shards__status__in=[Job.Status.QUEUED, Job.Status.RUNNING])
    count = 0
    for job in stale.only("pk", "kind", "worker", "heartbeat", "parent_id", "deliveries", "queue").distinct():
        last = job.heartbeat.isoformat(timespec="seconds") if job.heartbeat else "never"
        message = (
            f"Worker lost: no heartbeat from worker {job.worker or '?'} since {last} "
            f"(timeout {timeout_seconds} s){'; ' + reason if reason else ''}. The worker was killed or crashed."
        )
        if job.parent_id:  # a lost shard is sent again; the other shards keep what they did
            from jobs.sharding import shard_retry_lost, shard_settled

            if shard_retry_lost(job, message):
                count += 1
                continue
        count += Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING).update(
            status=Job.Status.FAILED, finished=timezone.now(), error=message
        )
        if job.parent_id:
            shard_settled(job.parent_id)
    if count:
        logger.warning("marked %d stale job(s) failed", count)
    return count


def job_fail(*, job_id: int, error: str) -> bool:
    """Mark a running or queued job failed (used by worker-side failure signals)."""
    return bool(
        Job.objects.filter(pk=job_id, status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).update(
            status=Job.Status.FAILED, finished=timezone.now(), error=error
        )
    )


def job_requeue_held_by(*, worker: str) -> int:
    """Put the running jobs of `worker` back to queued: it was shut down and stopped them. Returns how many.

    Their messages went back to the broker with the shutdown (late acknowledgement), so the next worker
    runs them from the start; were a message lost, `job_redeliver_unclaimed` sends it again.
    """
    return Job.objects.filter(status=Job.Status.RUNNING, worker=worker).update(
        status=Job.Status.QUEUED, started=None, heartbeat=None, progress=0.0, enqueued=timezone.now(),
        progress_message=f"re-queued: worker {worker} was shut down while the job ran",
        log=log_appended(f"worker {worker} was shut down; the job was put back in the queue"),
    )


def heartbeat_cutoff_passed(job: Job, *, now: dt.datetime | None = None) -> bool:
    if job.status != Job.Status.RUNNING or job.heartbeat is None:
        return False
    now = now or timezone.now()
    return (now - job.heartbeat).total_seconds() > settings.JOB_HEARTBEAT_TIMEOUT
