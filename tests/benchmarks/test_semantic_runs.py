"""A Loci Similes evaluation run of the hybrid retriever through the service and the job runner: the fusion
weight is tuned once per fold on the other folds, and the report says which weight each fold used."""
import pytest

from benchmarks.models import EvaluationRun
from benchmarks.services import evaluation_run_create
from detection.methods.infrastructure import model_store
from jobs.runner import run_job


@pytest.mark.django_db
def test_hybrid_run_tunes_per_fold_and_records_it(loci_version, users, tmp_path, settings):
    from detection.demo import load_demo_vectors

    settings.MODELS_DIR = tmp_path / "models"
    with model_store.using(settings.MODELS_DIR):
        load_demo_vectors()
        run = evaluation_run_create(version=loci_version, method="hybrid", ks=[1, 10],
                                    params={"model": "la-lemma-demo", "depth": 20}, owner=users["researcher"])
        assert run.job.queue == "cpu"
        assert run_job(run.job.pk) == "succeeded"
    run = EvaluationRun.objects.get(pk=run.pk)
    method = run.report["method"]
    assert method["retriever"]["model"] == "la-lemma-demo"
    assert len(method["tuning_per_fold"]) == run.n_folds
    assert all(0.0 <= t["weight"] <= 1.0 and t["tuned"] for t in method["tuning_per_fold"])
    assert 0.0 < run.report["recall@10"] <= 1.0
