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
    assert job.result["shards"] == 3 and job.result["index_builds"] == 1  # fitted once, by the parent
    assert [s.result["index"] for s in Job.objects.filter(parent=three.job_id)] == ["memory"] * 3
    assert job.result["merge_benchmark_reused"]  # one process: the benchmark read from the database once
    # the plan logs into the parent's log (a plan with a ``log`` keyword gets it): load, fit, save
    assert "loaded the benchmark" in job.log and "fitted bm25-lemma on" in job.log and "saved the pool index" in job.log
    assert _comparable(three) == _comparable(one)
    assert one.summary["recall@10"] > 0.5


@pytest.mark.django_db
def test_a_shard_on_another_worker_loads_the_index_the_parent_saved(loci_version, settings):
    """The parent fits the pool once and saves it; a worker process that holds nothing loads it from the
    job's folder (no fit, no benchmark from the database) and the report is the one of a single shard."""
    from benchmarks.services import evaluation_shards

    one = _one_shard(loci_version, "tesserae")
    run = evaluation_run_create(version=loci_version, method="tesserae", ks=KS, shards=2, enqueue=False)
    assert run_job(run.job_id) == "running"
    folder = evaluation_shards.index_folder(run)
    assert folder.is_relative_to(settings.VAR_DIR) and (folder / "index.json").exists()
    for shard in Job.objects.filter(parent=run.job_id).order_by("shard_index"):
        evaluation_shards._LOADED.clear()  # each shard as if on a fresh worker
        assert run_job(shard.pk) == "succeeded", shard.error
        shard.refresh_from_db()
        assert shard.result["index"] == "file" and shard.params["pool_index"] is True
    job = Job.objects.get(pk=run.job_id)
    assert job.status == "succeeded", job.error
    assert job.result["index_builds"] == 1 and job.result["index_file_loads"] == 2
    assert not job.result["merge_benchmark_reused"]  # the merging process read it itself
    assert not folder.exists()  # the merge removed the job's folder
    assert _comparable(run) == _comparable(one)


@pytest.mark.django_db
def test_a_saved_index_of_another_run_is_not_used(loci_version):
    """A folder whose manifest names another run (ids repeat across databases) is ignored: the shard fits."""
    from benchmarks.services import evaluation_shards

    run = evaluation_run_create(version=loci_version, method="bm25-lemma", ks=KS, shards=2, enqueue=False)
    assert run_job(run.job_id) == "running"
    manifest = evaluation_shards.index_folder(run) / "index.json"
    manifest.write_text(manifest.read_text().replace(f'[{run.pk}, ', f'[{run.pk + 1000}, ', 1))
    shard = Job.objects.filter(parent=run.job_id).first()
    evaluation_shards._LOADED.clear()
    assert run_job(shard.pk) == "succeeded", shard.error
    shard.refresh_from_db()
    assert shard.result["index"] == "built"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_two_workers_rank_the_shards_and_the_report_is_the_same(loci_version, start_worker):  # noqa: F811
    one = _one_shard(loci_version, "tfidf-lemma")
    # each shard held 1 s (test-only pause): the worker that planned cannot take all six before the other polls
    start_worker("w-a", SIMILIA_TEST_PAUSE_IN_SHARD="1")
    start_worker("w-b", SIMILIA_TEST_PAUSE_IN_SHARD="1")
    run = evaluation_run_create(version=loci_version, method="tfidf-lemma", ks=KS, shards=6)
    done = _wait_for(run.job_id, {"succeeded", "failed"}, timeout=240)
    assert done.status == "succeeded", done.error
    shards = list(Job.objects.filter(parent=done))
    assert len(shards) == 6 and {s.worker.split("@")[0] for s in shards} == {"w-a", "w-b"}
    assert len(done.result["shards_per_worker"]) == 2
    # fitted once (by the parent); the worker that did not plan loaded the saved index
    assert done.result["index_builds"] == 1 and done.result["index_file_loads"] >= 1
    assert {s.result["index"] for s in shards} == {"memory", "file"}
    assert _comparable(run) == _comparable(one)
