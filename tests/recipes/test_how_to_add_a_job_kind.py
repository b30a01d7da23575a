"""docs/ARCHITECTURE.md, "How to add a job kind", followed with a throwaway kind: registered by the decorator,
created by a service call, run by the one runner, visible with progress, log and result over the API."""
import pytest

from jobs import registry
from jobs.models import Job
from jobs.registry import job_kind
from jobs.services import job_create

KIND = "recipes.toy_sum"


@pytest.fixture
def toy_kind():
    # Step 1: a function fn(job, **params) -> dict, registered with its queue.
    @job_kind(KIND, queue="cpu", description="Toy: sum of numbers (recipe test)")
    def toy_sum(job, *, numbers: list[int]) -> dict:
        total = 0
        for i, n in enumerate(numbers):
            total += n
            job.progress((i + 1) / len(numbers), f"added {n}")
        job.log(f"sum of {len(numbers)} numbers")
        return {"total": total}

    yield registry.get_kind(KIND)
    registry._KINDS.pop(KIND, None)  # the registry has no public removal: kinds live as long as the process


@pytest.mark.django_db(transaction=True)
def test_a_new_job_kind_runs_through_the_runner_and_shows_on_the_api(toy_kind, users, client_for):
    assert toy_kind.queue == "cpu"
    # Step 2: a service creates the job (ids and JSON values only); it is enqueued once the transaction commits.
    job = job_create(kind=KIND, params={"numbers": [1, 2, 39]}, owner=users["researcher"])  # autocommit: runs now
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED and job.result == {"total": 42} and job.progress == 1.0
    assert "sum of 3 numbers" in job.log
    # Step 3: it is on the jobs API (and the /jobs/ pages) for its owner.
    body = client_for("researcher").get(f"/api/v1/jobs/{job.pk}/").json()
    assert body["kind"] == KIND and body["status"] == "succeeded" and body["result"] == {"total": 42}
    assert client_for("annotator").get(f"/api/v1/jobs/{job.pk}/").status_code in (403, 404)
