"""Sending job messages to the broker, in one place: one job (`send`, which marks the row failed with the reason
when the broker is down or silent) or a sharded job's shards as one Celery group (`send_group`).

The task is looked up by its name in the Celery app (`jobs.run_job`, defined in `jobs.tasks`, which
`jobs.apps` imports at start), so sending never imports the runner: tasks → runner → sharding → dispatch
is one direction (`.importlinter`).
"""
from __future__ import annotations

import logging

from django.db.models import F
from django.utils import timezone

from jobs.models import Job
from jobs.registry import time_limits

logger = logging.getLogger(__name__)

RUN_JOB_TASK = "jobs.run_job"


def _run_job_task():
    from config.celery import app

    return app.tasks[RUN_JOB_TASK]


def send(job: Job) -> bool:
    """Send the job's message to its queue, with its kind's time limits; on failure mark the job failed with the reason.

    The send is bounded (socket timeouts and a bounded publish retry, see the CELERY_BROKER_* settings),
    so a broker that is down or hangs costs seconds, never a hung request. Returns True when sent.
    """
    job_id = job.pk
    Job.objects.filter(pk=job_id).update(enqueued=timezone.now(), deliveries=F("deliveries") + 1)
    soft, hard = time_limits(job.kind, job.queue)
    try:
        async_result = _run_job_task().apply_async(args=[job_id], queue=job.queue, soft_time_limit=soft,
                                                   time_limit=hard)
    except Exception as exc:  # broker down or not answering: say so on the row instead of leaving it queued
        logger.exception("could not enqueue job %s", job_id)
        Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).update(
            status=Job.Status.FAILED, finished=timezone.now(),
            error=f"Could not send the job to the task broker ({type(exc).__name__}: {exc}). Try again later.",
        )
        return False
    if async_result is not None and async_result.id:
        Job.objects.filter(pk=job_id).update(celery_task_id=async_result.id)
    return True


def send_group(ids: list[int], queue: str, kind: str) -> None:
    """Send every shard's message as one Celery group (raises what the broker raised; the caller fails them)."""
    from celery import group

    task = _run_job_task()
    soft, hard = time_limits(kind, queue)
    Job.objects.filter(pk__in=ids).update(enqueued=timezone.now(), deliveries=F("deliveries") + 1)
    group(task.si(i).set(queue=queue, soft_time_limit=soft, time_limit=hard) for i in ids).apply_async()
