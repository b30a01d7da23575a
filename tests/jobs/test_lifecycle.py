"""Job lifecycle through the runner: success, failure, cancel, stale worker."""
import datetime as dt

import pytest
from django.db.models import F, Value
from django.db.models.functions import Concat
from django.utils import timezone

from jobs.models import Job
from jobs.registry import job_kind
from jobs.runner import JobContext, run_job
from jobs.services import JobError, job_cancel, job_create, job_reap_stale


@job_kind("test.cancel_self", queue="cpu")
def _cancel_self(job, *, steps: int = 5):
    for step in range(steps):
        if step == 2:
            Job.objects.filter(pk=job.id).update(status=Job.Status.CANCELLED)
        job.PROGRESS_EVERY = 0
        job.progress(step / steps, f"step {step}")
    return {"finished": True}


def _queued(kind="system.sleep", **params):
    return Job.objects.create(kind=kind, params=params)


@pytest.mark.django_db
def test_success_stores_result_progress_and_timings():
    job = _queued(seconds=0.05, steps=2)
    assert run_job(job.pk) == "succeeded"
    job.refresh_from_db()
    assert job.status == "succeeded"
    assert job.result["slept"] == 0.05
    assert job.progress == 1.0
    assert job.started <= job.finished
    assert "slept 0.05 s" in job.log
    assert job.error == ""


@pytest.mark.django_db
def test_a_job_sent_again_keeps_the_log_of_its_first_delivery():
    """The log is appended in the database: the lines a lost delivery left ("Worker lost … Sent again") stay when
    the next delivery logs, and a line another writer appends meanwhile is not overwritten."""
    job = _queued(seconds=0.05, steps=2)
    Job.objects.filter(pk=job.pk).update(
        log="[10:00:00] Worker lost: no heartbeat from worker w@h. Sent again (delivery 2).")
    assert run_job(job.pk) == "succeeded"
    job.refresh_from_db()
    lines = job.log.splitlines()
    assert lines[0].endswith("Sent again (delivery 2).") and "slept 0.05 s" in lines[-1] and len(lines) == 2

    fresh = _queued()
    context = JobContext(fresh)
    context.log("first")
    Job.objects.filter(pk=fresh.pk).update(log=Concat(F("log"), Value("\n[10:00:01] another writer")))
    context.log("second")
    fresh.refresh_from_db()
    assert [line.split("] ", 1)[1] for line in fresh.log.splitlines()] == ["first", "another writer", "second"]


@pytest.mark.django_db
def test_failure_records_error_for_the_user_and_traceback_for_staff():
    job = _queued(seconds=0.01, steps=1, fail=True)
    assert run_job(job.pk) == "failed"
    job.refresh_from_db()
    assert job.error == "RuntimeError: asked to fail"  # no traceback, no server path
    assert "Traceback" in job.error_detail and "jobs/kinds.py" in job.error_detail
    assert job.finished is not None


@pytest.mark.django_db
def test_unknown_kind_fails_the_job_with_a_clear_error():
    job = _queued(kind="no.such.kind")
    assert run_job(job.pk) == "failed"
    job.refresh_from_db()
    assert "Unknown job kind 'no.such.kind'" in job.error


@pytest.mark.django_db
def test_bad_params_fail_the_job():
    job = _queued(nonsense=1)
    assert run_job(job.pk) == "failed"
    job.refresh_from_db()
    assert "unexpected keyword argument 'nonsense'" in job.error


@pytest.mark.django_db
def test_cancel_while_running_stops_at_next_progress():
    job = _queued(kind="test.cancel_self")
    assert run_job(job.pk) == "cancelled"
    job.refresh_from_db()
    assert job.result is None


@pytest.mark.django_db
def test_cancelled_queued_job_never_runs():
    job = _queued(seconds=0.01)
    cancelled = job_cancel(job=job)
    assert cancelled.status == "cancelled" and cancelled.finished is not None
    assert cancelled.progress_message == "cancelled"
    assert run_job(job.pk) == "cancelled"
    job.refresh_from_db()
    assert job.started is None


@pytest.mark.django_db
def test_cancel_of_finished_job_is_refused():
    job = _queued(seconds=0.01, steps=1)
    run_job(job.pk)
    with pytest.raises(JobError, match="already succeeded"):
        job_cancel(job=Job.objects.get(pk=job.pk))


@pytest.mark.django_db
def test_job_runs_only_once():
    job = _queued(seconds=0.01, steps=1)
    assert run_job(job.pk) == "succeeded"
    assert run_job(job.pk) == "succeeded"
    assert Job.objects.get(pk=job.pk).log.count("slept") == 1


@pytest.mark.django_db
def test_reaper_fails_running_jobs_without_heartbeat_and_spares_live_ones():
    old = timezone.now() - dt.timedelta(seconds=600)
    dead = Job.objects.create(kind="system.sleep", status="running", started=old, heartbeat=old, worker="w1@x")
    alive = Job.objects.create(kind="system.sleep", status="running", started=old, heartbeat=timezone.now())
    assert job_reap_stale(timeout_seconds=60) == 1
    dead.refresh_from_db()
    alive.refresh_from_db()
    assert dead.status == "failed" and "Worker lost" in dead.error and "w1@x" in dead.error
    assert alive.status == "running"


@pytest.mark.django_db(transaction=True)
def test_job_create_enqueues_after_commit_and_eager_worker_runs_it():
    job = job_create(kind="system.sleep", params={"seconds": 0.01, "steps": 1})
    job.refresh_from_db()
    assert job.status == "succeeded"
    assert job.queue == "cpu"


@pytest.mark.django_db
def test_job_create_rejects_unknown_kind():
    with pytest.raises(JobError, match="Unknown job kind"):
        job_create(kind="nope")
