"""A Loci Similes evaluation run ranks its held-out queries in shards (`benchmarks.services.evaluation_shards`):
in process and over two real Celery workers, the stored report is the one a single shard gives."""
import pytest

from benchmarks.models import EvaluationRun
from benchmarks.services import evaluation_run_create
from jobs.models import Job
from jobs.runner import run_job
from tests.jobs.test_worker_integration import _wait_for, broker_delivery, start_worker  # noqa: F401

KS = [1, 10, 50]


@pytest.fixture(autouse=True)
def _fresh_worker_cache():
    from benchmarks.services import evaluation_shards

    evaluation_shards._LOADED.clear()


def _comparable(run: EvaluationRun) -> dict:
    """What a run measured: the report without its timing, the per-query rows, the summary."""
    run.refresh_from_db()
    return {"report": {k: v for k, v in run.report.items() if k not in ("timing", "pairwise")},
            "pairwise": {k: v for k, v in run.report["pairwise"].items() if k != "timing"},
            "per_query": run.per_query, "summary": run.summary}


def _one_shard(version, method="bm25-lemma") -> EvaluationRun:
    run = evaluation_run_create(version=version, method=method, ks=KS, shards=1, enqueue=False)
    assert run_job(run.job_id) == "succeeded", Job.objects.get(pk=run.job_id).error
    assert not Job.objects.filter(parent=run.job_id).exists()  # one shard runs inside the job
    run.refresh_from_db()
    return run


@pytest.mark.django_db
def test_three_shards_in_process_give_the_report_of_one(loci_version):
    one = _one_shard(loci_version)
    three = evaluation_run_create(version=loci_version, method="bm25-lemma", ks=KS, shards=3, enqueue=False)
    assert run_job(three.job_id) == "running"
    shards = list(Job.objects.filter(parent=three.job_id).order_by("shard_index"))
    n = len(one.per_query)
    assert len(shards) == 3 and shards[0].params["start"] == 0 and shards[-1].params["stop"] == n
    for shard in (shards[1], shards[2], shards[0]):
        assert run_job(shard.pk) == "succeeded", shard.error
    job = Job.objects.get(pk=three.job_id)
    assert job.status == "succeeded", job.error
    assert job.result["shards"] == 3 and job.result["index_loads"] == 1  # one process: the pool fitted once
    assert _comparable(three) == _comparable(one)
    assert one.summary["recall@10"] > 0.5


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_two_workers_rank_the_shards_and_the_report_is_the_same(loci_version, start_worker):  # noqa: F811
    one = _one_shard(loci_version, "tfidf-lemma")
    start_worker("w-a")
    start_worker("w-b")
    run = evaluation_run_create(version=loci_version, method="tfidf-lemma", ks=KS, shards=6)
    done = _wait_for(run.job_id, {"succeeded", "failed"}, timeout=240)
    assert done.status == "succeeded", done.error
    shards = list(Job.objects.filter(parent=done))
    assert len(shards) == 6 and {s.worker.split("@")[0] for s in shards} == {"w-a", "w-b"}
    assert len(done.result["shards_per_worker"]) == 2 and done.result["index_loads"] == 2  # once per worker
    assert _comparable(run) == _comparable(one)
