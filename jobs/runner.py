"""The one runner every Celery task goes through.

It claims the Job row (queued → running), keeps a heartbeat while the work runs, and always leaves
the row in a finished state: succeeded with the result, failed with the error (including soft time limits),
or cancelled. A failed job's `error` is what its owner reads: the exception's type and message with server
paths cut to their last part (`public_error`); the traceback goes to the server log and `error_detail`, which
only staff see. A worker that dies without a word (SIGKILL, OOM, hard
time limit) stops the heartbeat; `jobs.services.job_reap_stale` then marks the row failed.

Sharded jobs (`jobs.sharding`): a parent whose function returns `FanOut` stays running while its shards
run; a shard's progress and heartbeat also move its parent, and a shard reaching a final state lets
`jobs.sharding.shard_settled` fail, advance or merge the parent.
"""
from __future__ import annotations

import logging
import re
import socket
import time
import traceback

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from jobs.lifecycle import (  # noqa: F401  (JobContext, JobCancelled, finish: where job code imported them from)
    Heartbeat,
    JobCancelled,
    JobContext,
    claim,
    finish,
)
from jobs.models import Job
from jobs.registry import get_kind, time_limits
from jobs.sharding import FanOut, shard_settled

logger = logging.getLogger(__name__)

Status = Job.Status


_SERVER_PATH = re.compile(r"(?<![\w.~])(?:/[\w.@+-]+){2,}")


def public_error(exc: BaseException) -> str:
    """`Type: message` of an exception with every absolute path shortened to `…/last-part`: a user learns what
    went wrong, not where the server keeps its files."""
    message = _SERVER_PATH.sub(lambda m: "…/" + m.group(0).rsplit("/", 1)[-1], str(exc))
    return f"{type(exc).__name__}: {message}"[:4000]


def run_job(job_id: int, *, worker: str | None = None, echo=None) -> str:
    """Run the job `job_id` to a final state and return that state (``echo``: also called with every progress
    message and log line, for a command that runs the job in-process)."""
    if not claim(job_id, worker=worker or socket.gethostname()):
        state = Job.objects.filter(pk=job_id).values_list("status", flat=True).first()
        logger.info("job %s not claimed (status %s)", job_id, state)
        return state or "missing"
    job = Job.objects.get(pk=job_id)
    context = JobContext(job, echo=echo)
    heartbeat = Heartbeat(job_id, settings.JOB_HEARTBEAT_INTERVAL, job.parent_id)
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
        finish(job_id, status=Status.FAILED, error=f"Timed out: the job ran past the soft time limit of "
                                                   f"{time_limits(job.kind, job.queue)[0]} s for a {job.kind} job.")
    except Exception as exc:
        logger.exception("job %s (%s) failed", job_id, job.kind)
        finish(job_id, status=Status.FAILED, error=public_error(exc), error_detail=traceback.format_exc())
    finally:
        heartbeat.stop()
    if job.parent_id:
        shard_settled(job.parent_id)
    return Job.objects.filter(pk=job_id).values_list("status", flat=True).first()
