"""Job delivery: late acknowledgement, redelivery of unclaimed jobs, bounded publishing to a broker that
does not answer, and who may cancel a job."""
import datetime as dt
import os
import socket
import threading
import time

import pytest
from django.conf import settings
from django.utils import timezone

from config.celery import app as celery_app
from jobs.models import Job
from jobs.runner import run_job
from jobs.services import job_create, job_redeliver_unclaimed
from tests.celery_broker import broker_at


def test_messages_are_acknowledged_late_and_survive_the_time_limit():
    assert settings.CELERY_TASK_ACKS_LATE is True
    assert settings.CELERY_TASK_REJECT_ON_WORKER_LOST is True
    assert celery_app.conf.task_acks_late and celery_app.conf.task_reject_on_worker_lost
    # Redis hands an unacknowledged message out again after the visibility timeout: it must not do so
    # while the job can still legitimately be running.
    assert settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] > settings.CELERY_TASK_TIME_LIMIT
    assert 0 < settings.CELERY_BROKER_TRANSPORT_OPTIONS["socket_timeout"] <= 10
    assert settings.CELERY_TASK_PUBLISH_RETRY_POLICY["max_retries"] <= 3


@pytest.mark.django_db
@pytest.mark.parametrize("state", ["running", "succeeded", "failed", "cancelled"])
def test_a_redelivered_message_for_a_claimed_job_does_nothing(state):
    job = Job.objects.create(kind="system.sleep", params={"seconds": 0, "steps": 1}, status=state,
                             worker="first@host", result={"kept": True} if state == "succeeded" else None)
    before = Job.objects.filter(pk=job.pk).values().get()
    assert run_job(job.pk, worker="second@host") == state
    assert Job.objects.filter(pk=job.pk).values().get() == before


def _age(job, seconds):
    Job.objects.filter(pk=job.pk).update(enqueued=timezone.now() - dt.timedelta(seconds=seconds))


@pytest.mark.django_db(transaction=True)
def test_an_unclaimed_queued_job_is_sent_again_then_failed_after_the_last_delivery(settings):
    settings.JOB_REDELIVER_AFTER = 60
    settings.JOB_MAX_DELIVERIES = 2
    celery_app.conf.task_always_eager = False  # publish for real (embedded broker), nobody consumes
    try:
        job = job_create(kind="system.sleep", params={"seconds": 0, "steps": 1})
        job.refresh_from_db()
        assert job.status == "queued" and job.deliveries == 1 and job.enqueued is not None
        assert job_redeliver_unclaimed() == 0  # sent just now: not yet
        _age(job, 61)
        assert job_redeliver_unclaimed() == 1
        job.refresh_from_db()
        assert job.status == "queued" and job.deliveries == 2
        _age(job, 61)
        assert job_redeliver_unclaimed() == 0
        job.refresh_from_db()
        assert job.status == "failed" and "No worker claimed this job after 2 deliveries" in job.error
        assert "'cpu' queue" in job.error
    finally:
        celery_app.conf.task_always_eager = True


@pytest.mark.django_db
def test_running_and_finished_jobs_are_never_sent_again(settings):
    settings.JOB_REDELIVER_AFTER = 1
    old = timezone.now() - dt.timedelta(hours=1)
    for state in ("running", "succeeded", "failed", "cancelled"):
        Job.objects.create(kind="system.sleep", status=state, enqueued=old, deliveries=1)
    assert job_redeliver_unclaimed() == 0
    assert Job.objects.filter(deliveries=1).count() == 4


class SilentBroker:
    """A TCP server that accepts connections and never answers (a hung broker or a black-holed port)."""

    def __init__(self):
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        self.clients = []
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.clients.append(conn)  # keep it open, read nothing, answer nothing

    def close(self):
        self.stopped = True
        for conn in self.clients:
            conn.close()
        self.server.close()


@pytest.fixture
def silent_broker():
    broker = SilentBroker()
    with broker_at(f"redis://127.0.0.1:{broker.port}/0"):
        yield broker
    broker.close()


@pytest.fixture
def gold_set(db):
    from benchmarks.models import GoldSimilarityPair, GoldSimilaritySet

    gold = GoldSimilaritySet.objects.create(name="tiny")
    GoldSimilarityPair.objects.create(gold_set=gold, reference_id="r", reference_text="ἄνθρωπος",
                                      candidate_id="c", candidate_text="ἄνθρωπε", score=0.5)
    return gold


@pytest.mark.django_db(transaction=True)
def test_a_broker_that_never_answers_fails_the_job_and_the_request_within_seconds(
        silent_broker, client_for, gold_set):
    started = time.monotonic()
    response = client_for("researcher").post("/api/v1/sts/runs/", {"gold_set": gold_set.pk, "method": "levenshtein"},
                                             format="json")
    elapsed = time.monotonic() - started
    assert response.status_code == 503, response.content
    body = response.json()
    assert body["status"] == "failed" and "could not be queued" in body["detail"]
    assert "task broker" in body["detail"]
    job = Job.objects.get(pk=body["job"])
    assert job.status == "failed" and "Could not send the job to the task broker" in job.error
    assert job.finished is not None
    assert elapsed < 15, f"the request took {elapsed:.1f} s"
    print(f"silent broker: answered 503 after {elapsed:.1f} s")


@pytest.fixture
def project_job(make_user, users):
    from annotation.services.projects import membership_add, project_create

    owner = make_user("boss", "lead")
    project = project_create(owner=owner, name="p-jobs")
    membership_add(project=project, username=users["lead"].username, role="lead")
    job = Job.objects.create(kind="annotation.analytics", params={"project_id": project.pk}, owner=owner)
    return job


@pytest.mark.django_db
def test_leads_of_the_project_can_cancel_its_jobs(client_for, project_job):
    response = client_for("lead").post(f"/api/v1/jobs/{project_job.pk}/cancel/")
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "cancelled"


@pytest.mark.django_db
def test_other_leads_and_researchers_cannot_cancel_a_project_job(client_for, make_user, project_job):
    outsider = make_user("other-lead", "lead")
    assert client_for(outsider).post(f"/api/v1/jobs/{project_job.pk}/cancel/").status_code == 404
    # researchers may read a project's results (and so its jobs) but not cancel them
    response = client_for("researcher").post(f"/api/v1/jobs/{project_job.pk}/cancel/")
    assert response.status_code == 403
    assert Job.objects.get(pk=project_job.pk).status == "queued"


def test_a_requeue_takes_only_the_jobs_of_that_worker_process(db):
    """Two worker processes with one node name are two identities (`jobs.signals.worker_identity`)."""
    from django.utils import timezone

    from jobs.services import job_requeue_held_by
    from jobs.signals import worker_identity

    now = timezone.now()
    mine = Job.objects.create(kind="system.sleep", status="running", started=now, heartbeat=now,
                              worker="local@host pid 101")
    other = Job.objects.create(kind="system.sleep", status="running", started=now, heartbeat=now,
                               worker="local@host pid 202")
    assert job_requeue_held_by(worker="local@host pid 101") == 1
    assert Job.objects.get(pk=mine.pk).status == "queued" and Job.objects.get(pk=other.pk).status == "running"
    assert worker_identity("local@host") == f"local@host pid {os.getpid()}"
