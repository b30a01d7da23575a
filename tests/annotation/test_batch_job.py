"""Large batches are created by a job (issue 10 §4, issue 16): 202 with the job, pairs written in bulk
with progress, the batch closed until every pair is there."""
import json

import pytest
from django.test import override_settings

from annotation.models import Batch, Pair
from annotation.services.projects import batch_create, verses_import
from jobs.models import Job
from jobs.runner import JobContext, run_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def verses(small_project):
    project, _ = small_project
    verses_import(project=project, data=json.dumps([{"verse_id": f"7 {k}", "text": f"v{k}"} for k in range(12)]).encode(),
                  filename="more.json")
    return project


def _pairs(batch):
    return list(Pair.objects.filter(batch=batch).order_by("verse_a_id", "verse_b_id").values_list(
        "verse_a_id", "verse_b_id", "rank", "planned", "taken"))


@override_settings(SIMILIA_BATCH_JOB_PAIRS=20)
def test_api_answers_202_and_the_job_writes_every_pair(verses, client, lead_user):
    client.force_login(lead_user)
    candidates = [f"7 {k}" for k in range(1, 12)]  # 11 candidates, 55 pairs > 20
    response = client.post(f"/api/v1/projects/{verses.pk}/batches/",
                           {"reference_id": "7 0", "candidate_ids": candidates, "name": "big"},
                           content_type="application/json")
    assert response.status_code == 202, response.content
    job = Job.objects.get(pk=response.json()["job"])
    assert job.kind == "annotation.batch_create" and job.owner == lead_user
    assert not Batch.objects.filter(project=verses, name="big").exists()
    assert run_job(job.pk) == "succeeded"
    job.refresh_from_db()
    batch = Batch.objects.get(project=verses, name="big")
    assert job.result == {"batch_id": batch.pk, "name": "big", "n_candidates": 11, "n_pairs": 55}
    assert job.progress == 1.0 and "55 pairs" in job.log
    assert batch.status == Batch.Status.OPEN and batch.n_pairs == 55 and batch.n_candidates == 11
    pairs = _pairs(batch)
    assert len(pairs) == 55 and all(a < b for a, b, *_ in pairs)
    assert sorted(rank for _, _, rank, _, _ in pairs) == list(range(55))
    assert {(planned, taken) for *_, planned, taken in pairs} == {(1, 0)}


@override_settings(SIMILIA_BATCH_JOB_PAIRS=20)
def test_job_and_request_write_the_same_pairs_for_a_seed(verses, lead_user):
    from annotation.services.projects import batch_create_or_job

    job = batch_create_or_job(project=verses, reference_id="7 0", candidate_ids=[f"7 {k}" for k in range(1, 12)],
                              name="by-job", seed=5, owner=lead_user)
    assert isinstance(job, Job) and run_job(job.pk) == "succeeded"
    with override_settings(SIMILIA_BATCH_JOB_PAIRS=1000):
        direct = batch_create(project=verses, reference_id="7 0", candidate_ids=[f"7 {k}" for k in range(1, 12)],
                              name="direct", seed=5)
    assert _pairs(Batch.objects.get(name="by-job")) == _pairs(direct)


@override_settings(SIMILIA_BATCH_JOB_PAIRS=20)
def test_a_refused_batch_gets_its_message_before_any_job(verses, client, lead_user):
    client.force_login(lead_user)
    before = Job.objects.count()
    response = client.post(f"/api/v1/projects/{verses.pk}/batches/",
                           {"reference_id": "7 0", "candidate_ids": [f"7 {k}" for k in range(1, 12)] + ["nope"]},
                           content_type="application/json")
    assert response.status_code == 400 and "'nope'" in response.json()["detail"]
    batch_create(project=verses, reference_id="7 0", candidate_ids=["7 1", "7 2"], name="taken")
    response = client.post(f"/api/v1/projects/{verses.pk}/batches/",
                           {"reference_id": "7 0", "candidate_ids": [f"7 {k}" for k in range(1, 12)], "name": "taken"},
                           content_type="application/json")
    assert response.status_code == 409 and "taken" in response.json()["detail"]
    assert Job.objects.count() == before


@override_settings(SIMILIA_BATCH_JOB_PAIRS=20)
def test_page_form_sends_the_lead_to_the_job(verses, client, lead_user):
    client.force_login(lead_user)
    response = client.post(f"/projects/{verses.pk}/batches/new/", {"reference_id": "7 0", "all_others": "1",
                                                                  "name": "page"})
    job = Job.objects.get(kind="annotation.batch_create")
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    page = client.get(response["Location"]).content.decode()
    assert "is being created by this job" in page
    assert run_job(job.pk) == "succeeded"
    assert Batch.objects.get(name="page").n_pairs == Pair.objects.filter(batch__name="page").count()


@override_settings(SIMILIA_BATCH_JOB_PAIRS=20)
def test_a_failing_job_leaves_no_half_batch(verses, lead_user):
    """A batch whose name was taken between the request and the job: the job fails with the reason
    and leaves the other batch as it was."""
    from annotation.services.projects import batch_create_or_job

    job = batch_create_or_job(project=verses, reference_id="7 0", candidate_ids=[f"7 {k}" for k in range(1, 12)],
                              name="race", owner=lead_user)
    batch_create(project=verses, reference_id="7 0", candidate_ids=["7 1", "7 2"], name="race")
    assert run_job(job.pk) == "failed"
    job.refresh_from_db()
    assert "already has a batch named 'race'" in job.error
    assert Batch.objects.get(name="race").n_pairs == 1


def _expected_pairs(batch, seed):
    """The pairs as the Python reference writes them: sorted candidate pks, pair k in (a, b) order gets
    ranks[k] of range(n_pairs) shuffled by random.Random(seed)."""
    import random

    pks = sorted(batch.candidates.values_list("verse_id", flat=True))
    n = len(pks)
    ranks = list(range(n * (n - 1) // 2))
    random.Random(seed).shuffle(ranks)
    rank = iter(ranks)
    return [(pks[i], pks[j], next(rank), 1, 0) for i in range(n) for j in range(i + 1, n)]


@pytest.mark.parametrize("chunk", [7, 10, 54, 55, 50_000])
def test_pairs_in_chunks_are_the_reference_pairs_in_id_order(verses, monkeypatch, chunk):
    """Any chunk size (COPY on PostgreSQL, executemany on SQLite): the same pairs and ranks as the Python
    reference, their ids in (verse_a, verse_b) order, progress after each chunk."""
    from annotation.services import bulk

    monkeypatch.setattr(bulk, "CHUNK", chunk)
    seen = []
    batch = batch_create(project=verses, reference_id="7 0", candidate_ids=[f"7 {k}" for k in range(11, 0, -1)],
                         name=f"c{chunk}", seed=3, progress=lambda f, m: seen.append(f))
    assert _pairs(batch) == _expected_pairs(batch, 3) and batch.n_pairs == 55
    by_id = list(Pair.objects.filter(batch=batch).order_by("id").values_list("verse_a_id", "verse_b_id"))
    assert by_id == sorted(by_id)
    assert seen[-1] == 1.0 and seen == sorted(seen) and (len(seen) > 1) == (chunk < 55)


@override_settings(SIMILIA_BATCH_JOB_PAIRS=20)
def test_a_job_cancelled_between_chunks_leaves_nothing(verses, lead_user, monkeypatch):
    """The job commits its pairs chunk by chunk; cancelled after the first, it deletes what it wrote."""
    from annotation.services import bulk
    from annotation.services.projects import batch_create_or_job

    monkeypatch.setattr(bulk, "CHUNK", 20)
    job = batch_create_or_job(project=verses, reference_id="7 0", candidate_ids=[f"7 {k}" for k in range(1, 12)],
                              name="cancelled", owner=lead_user)
    before = Pair.objects.count()
    monkeypatch.setattr(JobContext, "PROGRESS_EVERY", 0.0)
    real_progress = JobContext.progress

    def progress(self, fraction, message=""):
        if fraction > 0.02:  # a chunk of pairs is in: cancel the job as a lead would
            assert Pair.objects.filter(batch__name="cancelled").exists()
            Job.objects.filter(pk=job.pk).update(status=Job.Status.CANCELLED)
        real_progress(self, fraction, message)

    monkeypatch.setattr(JobContext, "progress", progress)
    assert run_job(job.pk) == "cancelled"
    assert not Batch.objects.filter(name="cancelled").exists() and Pair.objects.count() == before
