"""A sharded evaluation's pool index is keyed on the run's stored configuration (its digest): runs configured alike
share one cache entry, a run configured otherwise fits its own."""
from pathlib import Path

import pytest

from benchmarks.models import EvaluationRun
from benchmarks.services import evaluation_run_create, evaluation_shards
from detection.methods import registry
from jobs.models import Job
from jobs.runner import run_job

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_worker_cache():
    evaluation_shards._LOADED.clear()


def _run(version, params) -> EvaluationRun:
    """A one-shard bm25-lemma run configured with ``params``."""
    run = evaluation_run_create(version=version, method="bm25-lemma", params=params, ks=[10], shards=1,
                                enqueue=False)
    run.refresh_from_db()
    assert run.method_config == registry.configure("bm25-lemma", params, kind="retriever")
    return run


def _ran(run) -> dict:
    evaluation_shards._LOADED.clear()  # each job as on a fresh worker process
    assert run_job(run.job_id) == "succeeded", Job.objects.get(pk=run.job_id).error
    run.refresh_from_db()
    return Job.objects.get(pk=run.job_id).result


def _entries(settings) -> set[str]:
    return {p.name for p in (Path(settings.VAR_DIR) / "index-cache").iterdir() if not p.name.startswith(".")}


def test_the_index_cache_follows_the_stored_configuration(loci_version, settings):
    default = _run(loci_version, {})
    assert _ran(default)["index_builds"] == 1
    first = _entries(settings)
    # configured k1=1.2, its column saying the defaults: not the defaults' index, a new one fitted
    tuned = _run(loci_version, {"k1": 1.2})
    assert _ran(tuned)["index_builds"] == 1
    assert len(_entries(settings) - first) == 1
    # configured with the defaults, its column saying k1=1.2: the defaults' index, loaded from the cache
    default_again = _run(loci_version, {})
    result = _ran(default_again)
    assert result["index_builds"] == 0 and result["index_cache_loads"] == 1
    assert len(_entries(settings)) == 2
    # the two runs configured alike scored alike whatever their columns say; the k1=1.2 one differs
    assert default_again.per_query == default.per_query and tuned.per_query != default.per_query
    # the worker's in-process key names the configuration's digest, the column left out
    key = evaluation_shards._run_key(default_again)
    assert default_again.method_config.digest in key and "1.2" not in key
