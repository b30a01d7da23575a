"""Training jobs per fold, the trained-model registry, and retrieve-and-rerank evaluation runs (database)."""
import json

import pytest

from benchmarks.services import RunError, evaluation_run_create
from benchmarks.services.model_training import training_run_create
from detection.methods import ParamError
from detection.methods.registry import MethodConfig, configure
from detection.models import TrainedModel
from detection.services.training import TrainingError
from jobs.models import Job
from jobs.runner import run_job


@pytest.fixture
def one_torch_thread():
    """One intra-op thread for the tiny neural models: on cores shared with other work torch's default pool made
    them 2–5× slower here; the results do not depend on it."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)




@pytest.mark.django_db
def test_feature_classifier_job_registers_one_model_per_fold_that_never_saw_its_fold(loci_version, models_dir,
                                                                                      users):
    job = training_run_create(version=loci_version, kind="feature-classifier", name="logreg-545",
                              method="feature-logreg", k=10, owner=users["researcher"])
    assert job.queue == "cpu" and job.kind == "benchmarks.train_model"
    assert run_job(job.pk) == "succeeded", Job.objects.get(pk=job.pk).error
    rows = {m.name: m for m in TrainedModel.objects.all()}
    assert set(rows) == {f"logreg-545/fold-{f}" for f in range(5)} | {"logreg-545/all"}
    for f in range(5):
        m = rows[f"logreg-545/fold-{f}"]
        assert m.held_out_fold == f and f not in m.train_folds and m.kind == "feature-classifier"
        assert {"classifier.json", "featurizer.json", "reranker.json"} <= set(m.files)
        assert m.method_config == configure("feature-logreg", m.params, kind="reranker")  # stored with its digest
        assert m.metrics["rerank_mrr@10"] is not None and m.training_job_id == job.pk and m.owner == users["researcher"]
        seen = set(json.loads((models_dir / m.name / "reranker.json").read_text())["training_queries"])
        held_out = set(loci_version.gold.filter(fold=f).values_list("query__seg_id", flat=True))
        assert seen and not (seen & held_out)
    assert not (models_dir / ".training").exists() or not any((models_dir / ".training").iterdir())
    with pytest.raises(TrainingError, match="already exists"):
        training_run_create(version=loci_version, kind="feature-classifier", name="logreg-545", method="feature-logreg")

    # the registered models rerank an evaluation run fold by fold; so does training inside the run
    run = evaluation_run_create(version=loci_version, method="bm25-lemma", reranker="feature-logreg",
                                reranker_params={"model": "logreg-545"}, ks=[1, 10], enqueue=False)
    assert run_job(run.job_id) == "succeeded", run.job.error
    run.refresh_from_db()
    rerank = run.report["rerank"]
    assert [f["leaked_queries"] for f in rerank["folds"]] == [0] * 5
    assert run.summary["rerank_mrr@10"] > run.summary["mrr@10"]


@pytest.mark.django_db
def test_a_run_with_a_reranker_reports_it_beside_the_first_stage_on_pages_and_exports(loci_version, users, client):
    run = evaluation_run_create(version=loci_version, method="bm25-lemma", reranker="feature-logreg", ks=[1, 10],
                                enqueue=False)
    assert run_job(run.job_id) == "succeeded", run.job.error
    run.refresh_from_db()
    assert run.summary["rerank_mrr@10"] > run.summary["mrr@10"]
    assert {"rerank_cit_f1", "rerank_recall@10"} <= set(run.summary)
    client.force_login(users["researcher"])
    page = client.get(f"/benchmarks/runs/{run.pk}/").content.decode()
    assert "Retrieve and rerank" in page and "passages to inspect" in page
    sweep = client.get(f"/benchmarks/runs/{run.pk}/rerank_sweep.csv").content.decode().splitlines()
    assert sweep[0].startswith("view,k,ret_inspect") and len(sweep) > 3
    board = client.get(f"/benchmarks/versions/{loci_version.pk}/?sort=rerank_mrr@10").content.decode()
    assert "rerank_mrr@10" in board


@pytest.mark.django_db
def test_bad_training_requests_are_refused_before_any_job(loci_version, models_dir):
    cases = [
        ({"kind": "svm", "name": "x"}, "kind must be"),
        ({"kind": "feature-classifier", "name": "../etc", "method": "feature-logreg"}, "not a path"),
        ({"kind": "feature-classifier", "name": "a/b", "method": "feature-logreg"}, "no '/'"),
        ({"kind": "feature-classifier", "name": "x", "method": "cross-encoder"}, "feature classifier's method"),
        ({"kind": "feature-classifier", "name": "x", "method": "feature-hgb"}, "no longer trained"),  # retired
        ({"kind": "feature-classifier", "name": "x", "method": "feature-logreg", "params": {"vectors": "la-none"}},
         "no word-vector model 'la-none'", ParamError),  # the registry's own error, not wrapped (issue 27)
        ({"kind": "cross-encoder", "name": "x"}, "needs base_model"),
        ({"kind": "cross-encoder", "name": "x", "base_model": "/tmp/m"}, "not a path"),
        ({"kind": "cross-encoder", "name": "x", "base_model": "m", "params": {"lr": "fast"}}, "lr must be"),
        ({"kind": "cross-encoder", "name": "x", "base_model": "m", "params": {"pickle": 1}}, "unknown training"),
        ({"kind": "bi-encoder", "name": "x", "base_model": "m", "params": {"negatives": "clever"}}, "negatives must"),
        ({"kind": "cross-encoder", "name": "x", "base_model": "m", "params": {"class_probs": "1,2"}}, "three"),
    ]
    for kwargs, message, *error in cases:
        with pytest.raises(error[0] if error else RunError, match=message):
            training_run_create(version=loci_version, **kwargs)
    assert not Job.objects.exists()
    with pytest.raises(RunError, match="needs a trained model"):
        evaluation_run_create(version=loci_version, method="bm25-lemma", reranker="cross-encoder")


@pytest.mark.django_db
def test_a_training_that_fails_registers_nothing_and_says_why(loci_version, models_dir, monkeypatch):
    monkeypatch.setenv("SIMILIA_ALLOW_HUB_DOWNLOADS", "1")  # queued while the operator allowed hub downloads ...
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    job = training_run_create(version=loci_version, kind="cross-encoder", name="ce", base_model="org/absent",
                              params={"max_steps": 1})
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # ... and run once they are off
    assert job.queue == "gpu"
    assert run_job(job.pk) == "failed"
    job.refresh_from_db()
    assert "org/absent" in job.error and "models directory" in job.error
    assert not TrainedModel.objects.exists() and not (models_dir / "ce").exists()


@pytest.mark.django_db
def test_tiny_cross_encoder_trains_per_fold_on_the_545_pairs_and_reranks(loci_version, models_dir, one_torch_thread):
    from benchmarks.loci import data
    from detection.methods.rerank.tiny import build_tiny_bert

    bench = data.load_default_545()
    build_tiny_bert(models_dir / "tiny-bert", [s.text for s in bench.queries + bench.sources], hidden=16)
    job = training_run_create(version=loci_version, kind="cross-encoder", name="tiny-ce", base_model="tiny-bert",
                              k=5, params={"max_steps": 2, "batch_size": 8, "effective_batch": 16,
                                           "max_length": 32, "neg_ratio": 1})
    assert run_job(job.pk) == "succeeded", Job.objects.get(pk=job.pk).error
    job.refresh_from_db()
    assert "no CUDA device: training on the CPU" in job.log and "class exposure" in job.log
    models = TrainedModel.objects.filter(kind="cross-encoder")
    assert models.count() == 5 and all(m.metrics["steps"] == 2 for m in models)
    assert all(m.versions["torch"] and "config.json" in m.files for m in models)
    run = evaluation_run_create(version=loci_version, method="bm25-lemma", reranker="cross-encoder",
                                reranker_params={"model": "tiny-ce", "max_length": 32}, ks=[1, 5], enqueue=False)
    assert run_job(run.job_id) == "succeeded", run.job.error
    run.refresh_from_db()
    assert [f["leaked_queries"] for f in run.report["rerank"]["folds"]] == [0] * 5
    assert run.summary["rerank_mrr@5"] is not None


@pytest.mark.django_db
def test_a_bi_encoder_per_fold_is_the_first_stage_of_a_reranker_trained_and_evaluated_per_fold(
        loci_version, models_dir, one_torch_thread):
    """Fold f: bi-encoder tiny-be/fold-f (trained on the other folds) → feature classifier rr/fold-f (trained on the
    other folds' candidates as tiny-be/fold-f ranks them); neither saw fold f's queries, and the run says so."""
    from benchmarks.loci import data
    from detection.methods.rerank.neural import read_card
    from detection.methods.rerank.tiny import build_tiny_bert

    bench = data.load_default_545()
    build_tiny_bert(models_dir / "tiny-bert", [s.text for s in bench.queries + bench.sources], hidden=16,
                    vocab_size=2000, max_position=64)
    job = training_run_create(version=loci_version, kind="bi-encoder", name="tiny-be", base_model="tiny-bert", k=5,
                              params={"max_steps": 2, "batch_size": 8})
    assert run_job(job.pk) == "succeeded", Job.objects.get(pk=job.pk).error
    held_out = {f: set(loci_version.gold.filter(fold=f).values_list("query__seg_id", flat=True)) for f in range(5)}
    for f in range(5):
        seen = set(read_card(models_dir / "tiny-be" / f"fold-{f}")["training_queries"])
        assert seen and not (seen & held_out[f])

    first_stage = {"retriever": "dense-encoder", "retriever_params": {"model": "tiny-be", "device": "cpu"}}
    with pytest.raises(TrainingError, match="needs the first stage tiny-be/all"):  # no bi-encoder trained on all
        training_run_create(version=loci_version, kind="feature-classifier", name="rr", method="feature-logreg",
                            final_model=True, **first_stage)
    job = training_run_create(version=loci_version, kind="feature-classifier", name="rr", method="feature-logreg",
                              k=5, **first_stage)
    # the job carries the first stage as configured from those parameters (MethodConfig.to_json, digest checked)
    carried = MethodConfig.from_json(job.params["retriever"])
    assert carried == configure("dense-encoder", {"model": "tiny-be", "device": "cpu"}, kind="retriever")
    assert {k: carried.params[k] for k in ("model", "device")} == {"model": "tiny-be", "device": "cpu"} \
        and not job.params["final_model"]
    assert run_job(job.pk) == "succeeded", Job.objects.get(pk=job.pk).error
    rows = {m.name: m for m in TrainedModel.objects.filter(kind="feature-classifier")}
    assert set(rows) == {f"rr/fold-{f}" for f in range(5)}
    for f in range(5):
        assert rows[f"rr/fold-{f}"].metrics["first_stage"] == f"tiny-be/fold-{f}"
        seen = set(json.loads((models_dir / "rr" / f"fold-{f}" / "reranker.json").read_text())["training_queries"])
        assert seen and not (seen & held_out[f])
    # one fold's bi-encoder as the first stage of every fold has seen the other folds' held-out queries: refused
    job = training_run_create(version=loci_version, kind="feature-classifier", name="rr2", method="feature-logreg",
                              k=5, retriever="dense-encoder", retriever_params={"model": "tiny-be/fold-2",
                                                                                "device": "cpu"})
    assert run_job(job.pk) == "failed"
    assert "first stage tiny-be/fold-2 trained on" in Job.objects.get(pk=job.pk).error
    assert not TrainedModel.objects.filter(name__startswith="rr2/").exists() and not (models_dir / "rr2").exists()

    run = evaluation_run_create(version=loci_version, method="dense-encoder", params={"model": "tiny-be",
                                                                                      "device": "cpu"},
                                reranker="feature-logreg", reranker_params={"model": "rr"}, ks=[1, 5], enqueue=False)
    assert run_job(run.job_id) == "succeeded", Job.objects.get(pk=run.job_id).error
    run.refresh_from_db()
    assert run.report["method"]["retriever"]["model"] == "tiny-be/fold-4"
    assert run.report["method"]["retriever"]["query_prefix"] == "Query: " and run.summary["mrr@5"] is not None
    folds = run.report["rerank"]["folds"]
    assert [f["retriever_model"] for f in folds] == [f"tiny-be/fold-{f}" for f in range(5)]
    assert [(f["leaked_queries"], f["retriever_leaked_queries"]) for f in folds] == [(0, 0)] * 5
    assert run.summary["rerank_mrr@5"] is not None


@pytest.mark.django_db
def test_trained_models_api_and_page(loci_version, models_dir, client_for, users, client):
    TrainedModel.objects.create(name="m/fold-0", kind="feature-classifier", method="feature-logreg",
                                train_folds=[1, 2, 3, 4], held_out_fold=0, metrics={"rerank_mrr@10": 0.9})
    rows = client_for("researcher").get("/api/v1/models/").json()
    rows = rows.get("results", rows)
    assert rows[0]["name"] == "m/fold-0" and rows[0]["held_out_fold"] == 0
    assert client_for("lead").get("/api/v1/models/").status_code == 200
    assert client_for("annotator").get("/api/v1/models/").status_code == 403
    assert client_for("lead").post("/api/v1/models/", {}, format="json").status_code == 403
    bad = client_for("researcher").post("/api/v1/models/", {"version": loci_version.pk, "kind": "svm", "name": "x"},
                                        format="json")
    assert bad.status_code == 400 and "kind must be" in bad.json()["detail"]
    client.force_login(users["researcher"])
    page = client.get("/benchmarks/models/").content.decode()
    assert "m/fold-0" in page and "feature-logreg" in page and "cross-encoder" in page
