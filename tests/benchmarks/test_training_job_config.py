"""A training job carries its first stage and its feature method as ``MethodConfig.to_json()`` (validated once, when
it is queued), and its worker reads them back with their digests checked; a job row stored in the old shape (names
and user parameters) still runs, or fails with a sentence saying it is of the old shape."""
import pytest

from benchmarks.services.model_training import training_run_create
from detection.methods.registry import MethodConfig, configure
from detection.models import TrainedModel
from detection.services.training import TRAIN_KIND, TrainingRequest
from jobs.models import Job
from jobs.runner import run_job
from tests.conftest import run_data_migration

pytestmark = pytest.mark.django_db


def _old_row(version, **overrides) -> Job:
    """A training job exactly as ``training_job_create`` stored it before jobs carried configurations: the
    retriever's name with the parameters that differ from its defaults, the feature method's name with its
    validated parameters (less ``model``)."""
    params = {"version_id": version.pk, "kind": "feature-classifier", "name": "old-ltr", "method": "feature-logreg",
              "base_model": "", "params": dict(configure("feature-logreg", {}, kind="reranker").params),
              "retriever": "bm25-lemma", "retriever_params": {"k1": 1.5}, "k": 10, "final_model": False}
    params["params"].pop("model")
    params.update(overrides)
    job = Job.objects.create(kind=TRAIN_KIND, params=params)
    run_data_migration("detection", "0003_mcfg_job_configurations", "convert_old_jobs")
    job.refresh_from_db()
    return job


def test_the_job_carries_the_configurations_and_registers_what_they_say(loci_version, models_dir):
    job = training_run_create(version=loci_version, kind="feature-classifier", name="cfg-ltr",
                              method="feature-logreg", params={"C": 0.5}, retriever_params={"k1": 1.5}, k=10,
                              final_model=False)
    retriever, reranker = MethodConfig.from_json(job.params["retriever"]), MethodConfig.from_json(job.params["reranker"])
    assert retriever == configure("bm25-lemma", {"k1": 1.5}, kind="retriever")
    assert reranker == configure("feature-logreg", {"C": 0.5}, kind="reranker")
    assert job.params["options"] is None and "retriever_params" not in job.params and "method" not in job.params
    assert TrainingRequest.from_job(job.params).params == {k: v for k, v in reranker.params.items() if k != "model"}
    assert run_job(job.pk) == "succeeded", Job.objects.get(pk=job.pk).error
    rows = TrainedModel.objects.filter(name__startswith="cfg-ltr/")
    assert rows.count() == 5
    for row in rows:
        assert row.method == "feature-logreg" and row.params["C"] == 0.5 and "model" not in row.params
        assert row.method_config == reranker  # the configuration the job carried, validated when queued


def test_a_neural_job_carries_its_first_stage_and_its_trainer_options(loci_version, models_dir):
    (models_dir / "org" / "local").mkdir(parents=True)  # a hub id not here is refused when asked for (issue 40)
    job = training_run_create(version=loci_version, kind="cross-encoder", name="ce-cfg", base_model="org/local",
                              params={"max_steps": 1}, k=5)
    request = TrainingRequest.from_job(job.params)
    assert job.params["reranker"] is None and request.reranker is None and request.method == "cross-encoder"
    assert request.options["max_steps"] == 1 and request.options["epochs"] == 4  # the trainer's defaults filled in
    assert request.retriever == configure("bm25-lemma", {}, kind="retriever")


def test_an_old_shaped_job_row_converted_once_trains_and_registers_the_same_models(loci_version, models_dir, client,
                                                                                   users):
    old = _old_row(loci_version)
    assert old.params["retriever"] == configure("bm25-lemma", {"k1": 1.5}, kind="retriever").to_json()
    assert old.params["reranker"] == configure("feature-logreg", {}, kind="reranker").to_json()
    assert old.params["options"] is None and "retriever_params" not in old.params and "method" not in old.params
    assert run_job(old.pk) == "succeeded", Job.objects.get(pk=old.pk).error
    new = training_run_create(version=loci_version, kind="feature-classifier", name="new-ltr",
                              method="feature-logreg", retriever_params={"k1": 1.5}, k=10, final_model=False)
    assert run_job(new.pk) == "succeeded", Job.objects.get(pk=new.pk).error
    for f in range(5):
        was, now = TrainedModel.objects.get(name=f"old-ltr/fold-{f}"), TrainedModel.objects.get(name=f"new-ltr/fold-{f}")
        assert was.params == now.params and was.config == now.config and was.train_folds == now.train_folds
        # the same first stage, the same candidates, the same classifier: the same held-out figures
        assert was.metrics == now.metrics
    # the models page names each job's method from the configuration it carries
    client.force_login(users["researcher"])
    page = client.get("/benchmarks/models/").content.decode()
    assert "<code>old-ltr</code> (feature-logreg)" in page and "<code>new-ltr</code> (feature-logreg)" in page


def test_an_old_shaped_row_whose_values_no_longer_pass_fails_saying_so(loci_version, models_dir):
    old = _old_row(loci_version, retriever_params={"k1": 99})
    assert old.status == "failed"
    assert "queued before jobs carried their methods' configurations" in old.error and "'bm25-lemma'" in old.error
    assert "must be ≤ 10" in old.error and "queue it again" in old.error
    gone = _old_row(loci_version, method="feature-nope", name="old-nope")
    assert gone.status == "failed" and "queued before jobs carried" in gone.error
    assert "unknown method 'feature-nope'" in gone.error
    assert not TrainedModel.objects.exists() and not (models_dir / "old-ltr").exists()
    assert not any(models_dir.glob(".training/*"))  # refused before a work folder was made


def test_a_carried_configuration_edited_on_the_way_is_refused_before_any_work(loci_version, models_dir):
    job = training_run_create(version=loci_version, kind="feature-classifier", name="edited", method="feature-logreg",
                              k=10, final_model=False)
    edited = {**job.params["retriever"], "params": {**job.params["retriever"]["params"], "k1": 2.0}}
    Job.objects.filter(pk=job.pk).update(params={**job.params, "retriever": edited})
    assert run_job(job.pk) == "failed"
    assert "the configuration of 'bm25-lemma' does not match its digest" in Job.objects.get(pk=job.pk).error
    # a reranker's configuration where the first stage belongs is refused too, naming both
    swapped = training_run_create(version=loci_version, kind="feature-classifier", name="swapped",
                                  method="feature-logreg", k=10, final_model=False)
    Job.objects.filter(pk=swapped.pk).update(params={**swapped.params, "retriever": swapped.params["reranker"]})
    assert run_job(swapped.pk) == "failed"
    assert "configuration of a reranker ('feature-logreg') where a retriever belongs" in \
        Job.objects.get(pk=swapped.pk).error
    assert not TrainedModel.objects.exists() and not (models_dir / "edited").exists()
