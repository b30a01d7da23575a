"""A workbench detection runs as the one sharded detection job (`benchmarks.detect`): in 3 shards in one process,
and in 6 shards over two real Celery workers, it stores exactly the candidate rows a one-shard run stores (ranks,
scores, class probabilities, labels, overlap); a script may name the shard count."""
import io

import pytest

from jobs.models import Job
from jobs.runner import run_job
from tests.jobs.test_worker_integration import _wait_for, broker_delivery, start_worker  # noqa: F401
from workbench.models import Candidate

from .conftest import EXAMPLES

COLUMNS = ("query__seg_id", "source__seg_id", "query_position", "rank", "score", "p_none", "p_cit", "p_cf", "label",
           "shared_lemmas", "bucket")


@pytest.fixture(autouse=True)
def _fresh_worker_cache():
    from detection import detection_jobs

    detection_jobs._LOADED.clear()


def _run(owner, query, source, shards):
    from workbench.services import detection_run_create

    return detection_run_create(query_document=query, source_document=source, retriever="bm25-lemma", top_k=4,
                                reranker="lexical-rule", thresholds={"cit.": 0.2, "cf.": 0.2}, shards=shards,
                                owner=owner)


@pytest.mark.django_db
def test_three_shards_store_the_candidates_of_one(users):
    from workbench.services import document_upload

    owner = users["researcher"]
    query = document_upload(name="q.csv", data=(EXAMPLES / "hieronymus_samples.csv").read_bytes(), owner=owner)
    source = document_upload(name="s.csv", data=(EXAMPLES / "vergil_samples.csv").read_bytes(), owner=owner)

    one = _run(owner, query, source, 1)
    assert run_job(one.job_id) == "succeeded"  # a single shard runs inside the job
    assert not Job.objects.filter(parent=one.job_id).exists()

    three = _run(owner, query, source, 3)
    assert three.job.kind == "benchmarks.detect" and three.job.queue == "interactive"  # the job; its shards: bulk
    assert run_job(three.job_id) == "running"  # fanned out: 11 queries in shards of 4, 4 and 3
    shards = list(Job.objects.filter(parent=three.job_id).order_by("shard_index"))
    assert [(s.params["start"], s.params["stop"]) for s in shards] == [(0, 4), (4, 8), (8, 11)]
    assert {s.queue for s in shards} == {"cpu"}
    for shard in reversed(shards):  # any order: the merge puts them back in query order
        assert run_job(shard.pk) == "succeeded", shard.error
    three.refresh_from_db()
    assert three.job.status == "succeeded", three.job.error
    assert three.job.result["shards"] == 3 and three.summary["shards"] == 3

    one.refresh_from_db()
    rows = [list(Candidate.objects.filter(run=r).order_by("query_position", "rank").values_list(*COLUMNS))
            for r in (one, three)]
    assert rows[0] == rows[1] and len(rows[0]) == one.summary["n_candidates"] > 11
    assert {r[8] for r in rows[0]} >= {"cit."} and all(r[5] is not None for r in rows[0])
    assert {k: v for k, v in one.summary.items() if k not in ("detect_s", "store_s", "shards")} == \
        {k: v for k, v in three.summary.items() if k not in ("detect_s", "store_s", "shards")}


@pytest.mark.django_db
def test_a_large_store_refreshes_the_candidate_statistics_on_postgresql(users, monkeypatch):
    """On PostgreSQL (CI) the store ends with ANALYZE, so the explorer plans from statistics that know the new
    rows; SQLite (the embedded default) has no statistics to refresh and is left alone."""
    from django.db import connection

    from workbench import services
    from workbench.services import document_upload

    owner = users["researcher"]
    query = document_upload(name="q.csv", data=(EXAMPLES / "hieronymus_samples.csv").read_bytes(), owner=owner)
    source = document_upload(name="s.csv", data=(EXAMPLES / "vergil_samples.csv").read_bytes(), owner=owner)
    postgres = connection.vendor == "postgresql"
    if postgres:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE workbench_candidate")  # no rows yet: the statistics say none
            cursor.execute("SELECT reltuples FROM pg_class WHERE relname = 'workbench_candidate'")
            assert cursor.fetchone()[0] <= 0
    monkeypatch.setattr(services, "ANALYZE_AFTER_ROWS", 10)
    run = _run(owner, query, source, 1)
    assert run_job(run.job_id) == "succeeded"
    run.refresh_from_db()
    assert run.summary["n_candidates"] > 10
    assert ("refreshed PostgreSQL's statistics" in run.job.log) == postgres, run.job.log
    if postgres:
        with connection.cursor() as cursor:
            cursor.execute("SELECT reltuples FROM pg_class WHERE relname = 'workbench_candidate'")
            assert cursor.fetchone()[0] == run.summary["n_candidates"]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_two_real_workers_share_a_workbench_detection(users, start_worker):  # noqa: F811
    """The researcher's detection fans out over the workers of its queue and stores the rows of one shard."""
    from workbench.services import document_upload

    owner = users["researcher"]
    query = document_upload(name="q.csv", data=(EXAMPLES / "hieronymus_samples.csv").read_bytes(), owner=owner)
    source = document_upload(name="s.csv", data=(EXAMPLES / "vergil_samples.csv").read_bytes(), owner=owner)
    # each shard held 1.5 s (test-only pause), longer than the filesystem broker's 1 s poll: the worker holding
    # the index cannot take all six before the other polls (it did once, with workers preloaded)
    start_worker("w-a", SIMILIA_TEST_PAUSE_IN_SHARD="1.5")
    start_worker("w-b", SIMILIA_TEST_PAUSE_IN_SHARD="1.5")
    one = _run(owner, query, source, 1)
    assert _wait_for(one.job_id, {"succeeded", "failed"}, timeout=120).status == "succeeded"
    many = _run(owner, query, source, 6)
    done = _wait_for(many.job_id, {"succeeded", "failed"}, timeout=240)
    assert done.status == "succeeded", done.error
    shards = Job.objects.filter(parent=done)
    assert shards.count() == 6 and {s.worker.split("@")[0] for s in shards} == {"w-a", "w-b"}
    rows = [list(Candidate.objects.filter(run=r).order_by("query_position", "rank").values_list(*COLUMNS))
            for r in (one, many)]
    assert rows[0] == rows[1] and rows[0]


@pytest.mark.django_db
def test_a_script_may_name_the_shards(client_for):
    client = client_for("researcher")
    ids = []
    for name in ("hieronymus_samples.csv", "vergil_samples.csv"):
        f = io.BytesIO((EXAMPLES / name).read_bytes())
        f.name = name
        ids.append(client.post("/api/v1/workbench/documents/", {"file": f}, format="multipart").json()["id"])
    body = {"query_document": ids[0], "source_document": ids[1], "retriever": "bm25-lemma", "top_k": 2}
    assert client.post("/api/v1/workbench/runs/", {**body, "shards": 0}, format="json").status_code == 400
    created = client.post("/api/v1/workbench/runs/", {**body, "shards": 2}, format="json")
    assert created.status_code == 201, created.content
    job = Job.objects.get(pk=created.json()["job"])
    assert job.params["shards"] == 2 and run_job(job.pk) == "running"
    assert Job.objects.filter(parent=job).count() == 2
