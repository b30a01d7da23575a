"""Worker-side hooks, on start-up and periodically: reap jobs left running by a dead worker, send again the
message of jobs left queued with no claim (their message was lost), and load what every job process needs
(``JOB_WORKER_PRELOAD``) before the first job."""
import atexit
import logging
import os
import signal
import threading
import time

from celery.signals import (
    task_failure,
    task_prerun,
    worker_init,
    worker_process_init,
    worker_ready,
    worker_shutdown,
    worker_shutting_down,
)
from django.conf import settings
from django.db import connection
from django.utils.module_loading import import_string

from jobs import lifecycle
from jobs.lifecycle import worker_identity  # noqa: F401  (tests and older callers import it from here)

logger = logging.getLogger(__name__)
_stop = threading.Event()
@worker_init.connect
def remember_main_pid(sender=None, **kwargs):
    lifecycle.remember_main_pid()


def _reap(reason: str) -> None:
    from jobs.services import job_reap_stale, job_redeliver_unclaimed

    try:
        job_reap_stale(reason=reason)
        job_redeliver_unclaimed()
    except Exception:
        logger.exception("reaping stale jobs failed")
    finally:
        connection.close()


@worker_process_init.connect
def preload_in_job_process(sender=None, **kwargs):
    """In the process that will run jobs (each prefork child, or the solo worker itself), before it takes one:
    call the functions ``JOB_WORKER_PRELOAD`` names (settings, never user input). A failure is logged and the
    worker goes on: the job that needs it loads it then."""
    for path in settings.JOB_WORKER_PRELOAD:
        t = time.perf_counter()
        try:
            import_string(path)()
        except Exception:
            logger.exception("preloading %s failed; the first job that needs it loads it", path)
            continue
        logger.info("preloaded %s in %.2f s (pid %s)", path, time.perf_counter() - t, os.getpid())


@worker_ready.connect
def reap_on_worker_start(sender=None, **kwargs):
    _reap("found by a worker at start-up")
    hostname = getattr(sender, "hostname", None)
    if hostname:
        # A cold shutdown (Ctrl-C twice, `make run` stopping, `docker stop`) does not send worker_shutdown;
        # the main process still exits normally, after its pool children were stopped.
        atexit.register(_requeue_held, worker_identity(hostname))

    def loop():
        while not _stop.wait(settings.JOB_HEARTBEAT_TIMEOUT):
            _reap("found by a worker's periodic check")

    threading.Thread(target=loop, name="job-reaper", daemon=True).start()


@worker_shutdown.connect
def stop_reaper(sender=None, **kwargs):
    _stop.set()


@worker_shutting_down.connect
def exit_at_once_when_idle(sender=None, how="", **kwargs):
    """A worker with no task running or reserved has nothing to finish or give back: it leaves at once instead of
    waiting out the broker's polling loop, its pool's stop and its interpreter's teardown (7.5 s for an idle
    `make run` worker; perf/run_local_stop.py). Called in the main process's signal handler, so no message is taken
    between the check and the exit. A warm shutdown only: a cold one has already stopped the running tasks, whose
    jobs the exit hook puts back in the queue; a worker with a job goes through Celery's shutdown as before."""
    from billiard.process import active_children
    from celery.worker import state

    if how != "Warm":
        return
    if state.active_requests or state.reserved_requests:
        logger.info("%s shutdown of %s: waiting for its %d running task(s)", how, sender, len(state.active_requests))
        return
    logger.info("%s shutdown of %s: no task running, stopped at once", how, sender)
    children = active_children()
    for child in children:
        os.kill(child.pid, signal.SIGKILL)
    for child in children:
        child.join(1)  # reaped here: none is left a zombie for init to collect
    logging.shutdown()
    os._exit(0)


def _requeue_held(identity: str) -> None:
    """At the worker's exit: jobs it still held were stopped by a cold shutdown; put them back in the queue."""
    from jobs.services import job_requeue_held_by

    try:
        job_requeue_held_by(worker=identity)
    except Exception:
        logger.exception("re-queueing the jobs of a stopped worker failed")
    finally:
        connection.close()


@task_failure.connect
def mark_failed_on_task_failure(sender=None, task_id=None, exception=None, args=None, **kwargs):
    """A task that failed outside the runner's own handling (e.g. hard time limit) fails its job."""
    if getattr(sender, "name", "") != "jobs.run_job" or not args:
        return
    from jobs.runner import public_error
    from jobs.services import job_fail

    logger.error("job %s: the worker reported a failure: %r", args[0], exception)
    job_fail(job_id=int(args[0]), error=f"The worker reported a failure: {public_error(exception)}")


#: Test-only: seconds a worker sleeps after taking a job's message and before claiming its row, so a
#: test can kill it in that window. Unset (the default) in every real deployment.
PAUSE_BEFORE_CLAIM_ENV = "SIMILIA_TEST_PAUSE_BEFORE_CLAIM"


@task_prerun.connect
def pause_before_claim(sender=None, **kwargs):
    seconds = os.environ.get(PAUSE_BEFORE_CLAIM_ENV)
    if seconds and getattr(sender, "name", "") == "jobs.run_job":
        logger.warning("%s=%s: pausing before the claim", PAUSE_BEFORE_CLAIM_ENV, seconds)
        time.sleep(float(seconds))
