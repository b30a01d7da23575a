"""Job errors shown to users carry no traceback or server path (staff still read the traceback); a person with
SIMILIA_MAX_ACTIVE_JOBS jobs queued or running gets a clear 429 for the next one (issue 29)."""
import pytest

from jobs.models import Job
from jobs.runner import public_error
from jobs.services import JobQuotaError, job_create
from tests.workbench.conftest import finished_detection  # noqa: F401

pytestmark = pytest.mark.django_db


def test_public_error_cuts_server_paths_to_their_last_part():
    exc = FileNotFoundError(2, "No such file or directory", "/srv/similia/var/models/latin-bert/config.json")
    text = public_error(exc)
    assert "/srv" not in text and "similia/var" not in text and "…/config.json" in text
    assert public_error(ValueError("k must be 1..100, got 0")) == "ValueError: k must be 1..100, got 0"


def test_the_job_page_shows_the_traceback_to_staff_only(client, users):
    from jobs.runner import run_job

    job = Job.objects.create(kind="system.sleep", params={"seconds": 0.01, "steps": 1, "fail": True},
                             owner=users["researcher"])
    assert run_job(job.pk) == "failed"
    client.force_login(users["researcher"])
    own = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "Asked to fail." in own and "Traceback" not in own and "kinds.py" not in own
    api = client.get(f"/api/v1/jobs/{job.pk}/").json()
    assert "Traceback" not in str(api) and "error_detail" not in api
    client.force_login(users["staff"])
    assert "Traceback (most recent call last)" in client.get(f"/jobs/{job.pk}/").content.decode()


def test_the_eleventh_active_job_of_a_person_is_refused(users, settings):
    assert settings.SIMILIA_MAX_ACTIVE_JOBS == 10
    owner = users["researcher"]
    for _ in range(10):
        job_create(kind="system.sleep", params={"seconds": 0.01}, owner=owner)
    with pytest.raises(JobQuotaError, match="already have 10 jobs queued or running; the limit is 10"):
        job_create(kind="system.sleep", params={"seconds": 0.01}, owner=owner)
    assert Job.objects.filter(owner=owner).count() == 10
    job_create(kind="system.sleep", params={"seconds": 0.01}, owner=users["lead"])  # others are not affected
    job_create(kind="system.sleep", params={"seconds": 0.01}, owner=users["staff"])
    Job.objects.filter(owner=owner).update(status="succeeded")  # finished jobs do not count
    job_create(kind="system.sleep", params={"seconds": 0.01}, owner=owner)


def test_the_api_answers_429_with_the_reason(client_for, users, settings, finished_detection):  # noqa: F811
    settings.SIMILIA_MAX_ACTIVE_JOBS = 1
    Job.objects.create(kind="system.sleep", owner=users["researcher"], status="running")
    response = client_for("researcher").post("/api/v1/workbench/runs/", {
        "query_document": finished_detection.query_document_id,
        "source_document": finished_detection.source_document_id, "retriever": "bm25-lemma"}, format="json")
    assert response.status_code == 429 and "the limit is 1 per person" in response.json()["detail"]
    assert int(response["Retry-After"]) > 0  # every 429 says when to come back (issue 40)
