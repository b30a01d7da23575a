"""A Loci Similes evaluation run ranks its held-out queries in shards (`benchmarks.services.evaluation_shards`):
in process and over two real Celery workers, the stored report is the one a single shard gives."""
import shutil
from pathlib import Path

import pytest

from benchmarks.models import EvaluationRun
from benchmarks.services import evaluation_run_create, evaluation_shards
from jobs.models import Job
from jobs.runner import run_job
from tests.jobs.test_worker_integration import _wait_for, broker_delivery, start_worker  # noqa: F401

KS = [1, 10, 50]


@pytest.fixture(autouse=True)
def _fresh_worker_cache():
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
    # the one-shard run fitted the pool and stored it; this job's plan loaded it from the index cache
    assert Job.objects.get(pk=one.job_id).result["index_builds"] == 1
    assert job.result["shards"] == 3 and job.result["index_builds"] == 0 and job.result["index_cache_loads"] == 1
    assert [s.result["index"] for s in Job.objects.filter(parent=three.job_id)] == ["memory"] * 3
    assert job.result["merge_benchmark_reused"]  # one process: the benchmark read from the database once
    # the plan logs into the parent's log (a plan with a ``log`` keyword gets it): load, then the cached index
    assert "loaded the benchmark" in job.log and "loaded the cached bm25-lemma index" in job.log
    assert _comparable(three) == _comparable(one)
    assert one.summary["recall@10"] > 0.5


@pytest.mark.django_db
def test_a_second_job_loads_the_cached_index_and_stores_the_same_report(loci_version, settings):
    """Two one-shard runs over the same pool and parameters: the first fits and stores the index (named by its
    content's key under VAR_DIR/index-cache), the second loads it, says so in its log, and stores the same
    report, per-query rows and summary (compared as a sha256 of them)."""
    import hashlib
    import json

    first = _one_shard(loci_version, "tesserae")
    evaluation_shards._LOADED.clear()  # the second job as on a fresh worker process
    second = _one_shard(loci_version, "tesserae")
    one, two = Job.objects.get(pk=first.job_id), Job.objects.get(pk=second.job_id)
    assert one.result["index_builds"] == 1 and "fitted tesserae index" in one.log
    assert two.result["index_builds"] == 0 and two.result["index_cache_loads"] == 1
    assert "loaded the cached tesserae index" in two.log and "fitted tesserae index" not in two.log
    entries = [p for p in (Path(settings.VAR_DIR) / "index-cache").iterdir() if not p.name.startswith(".")]  # not .locks
    assert len(entries) == 1 and len(entries[0].name) == 64 and f"index {entries[0].name[:12]}" in two.log

    def digest(run):
        return hashlib.sha256(json.dumps(_comparable(run), sort_keys=True).encode()).hexdigest()

    assert digest(first) == digest(second)


@pytest.mark.django_db
def test_a_shard_on_another_worker_loads_the_cached_index(loci_version):
    """The plan makes the pool index ready (here: from the cache the one-shard run filled) and writes the
    held-out queries; a worker process that holds nothing loads both (no fit, no benchmark from the database)
    and the report is the one of a single shard."""
    one = _one_shard(loci_version, "tesserae")
    run = evaluation_run_create(version=loci_version, method="tesserae", ks=KS, shards=2, enqueue=False)
    assert run_job(run.job_id) == "running"
    folder = evaluation_shards._queries_file(run.job_id).parent
    for shard in Job.objects.filter(parent=run.job_id).order_by("shard_index"):
        evaluation_shards._LOADED.clear()  # each shard as if on a fresh worker
        assert run_job(shard.pk) == "succeeded", shard.error
        shard.refresh_from_db()
        assert shard.result["index"] == "cache" and len(shard.params["index_key"]) == 64
        assert "loaded the benchmark" not in shard.log
    job = Job.objects.get(pk=run.job_id)
    assert job.status == "succeeded", job.error
    assert job.result["index_builds"] == 0 and job.result["index_cache_loads"] == 3  # the plan and both shards
    assert not job.result["merge_benchmark_reused"]  # the merging process read it itself
    assert not folder.exists()  # the merge removed the job's folder
    assert _comparable(run) == _comparable(one)


@pytest.mark.django_db
def test_queries_written_for_another_run_are_not_used(loci_version):
    """A queries file that names another run (ids repeat across databases) is ignored: the shard reads the
    benchmark itself (and gets the index from the cache)."""
    run = evaluation_run_create(version=loci_version, method="bm25-lemma", ks=KS, shards=2, enqueue=False)
    assert run_job(run.job_id) == "running"
    path = evaluation_shards._queries_file(run.job_id)
    path.write_text(path.read_text().replace(f'[{run.pk}, ', f'[{run.pk + 1000}, ', 1))
    shard = Job.objects.filter(parent=run.job_id).first()
    evaluation_shards._LOADED.clear()
    assert run_job(shard.pk) == "succeeded", shard.error
    shard.refresh_from_db()
    assert shard.result["index"] == "cache" and "loaded the benchmark" in shard.log


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_two_workers_rank_the_shards_and_the_report_is_the_same(loci_version, start_worker, settings):  # noqa: F811
    one = _one_shard(loci_version, "tfidf-lemma")
    shutil.rmtree(Path(settings.VAR_DIR) / "index-cache")  # cold: the plan fits, the other worker loads the cache
    # each shard held 1.5 s (test-only pause, longer than the filesystem broker's 1 s poll): the worker that
    # planned cannot take all six before the other polls
    start_worker("w-a", SIMILIA_TEST_PAUSE_IN_SHARD="1.5")
    start_worker("w-b", SIMILIA_TEST_PAUSE_IN_SHARD="1.5")
    run = evaluation_run_create(version=loci_version, method="tfidf-lemma", ks=KS, shards=6)
    done = _wait_for(run.job_id, {"succeeded", "failed"}, timeout=240)
    assert done.status == "succeeded", done.error
    shards = list(Job.objects.filter(parent=done))
    assert len(shards) == 6 and {s.worker.split("@")[0] for s in shards} == {"w-a", "w-b"}
    assert len(done.result["shards_per_worker"]) == 2
    # fitted once (by the parent); the worker that did not plan loaded it from the index cache
    assert done.result["index_builds"] == 1 and done.result["index_cache_loads"] >= 1
    assert {s.result["index"] for s in shards} == {"memory", "cache"}
    assert _comparable(run) == _comparable(one)
