"""Worker-side hooks: reap jobs left running by a dead worker, on start-up and periodically."""
import logging
import threading

from celery.signals import task_failure, worker_ready, worker_shutdown
from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)
_stop = threading.Event()


def _reap(reason: str) -> None:
    from jobs.services import job_reap_stale

    try:
        job_reap_stale(reason=reason)
    except Exception:
        logger.exception("reaping stale jobs failed")
    finally:
        connection.close()


@worker_ready.connect
def reap_on_worker_start(sender=None, **kwargs):
    _reap("found by a worker at start-up")

    def loop():
        while not _stop.wait(settings.JOB_HEARTBEAT_TIMEOUT):
            _reap("found by a worker's periodic check")

    threading.Thread(target=loop, name="job-reaper", daemon=True).start()


@worker_shutdown.connect
def stop_reaper(sender=None, **kwargs):
    _stop.set()


@task_failure.connect
def mark_failed_on_task_failure(sender=None, task_id=None, exception=None, args=None, **kwargs):
    """A task that failed outside the runner's own handling (e.g. hard time limit) fails its job."""
    if getattr(sender, "name", "") != "jobs.run_job" or not args:
        return
    from jobs.services import job_fail

    job_fail(job_id=int(args[0]), error=f"The worker reported a failure: {type(exception).__name__}: {exception}")
