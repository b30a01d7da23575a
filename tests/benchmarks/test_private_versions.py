"""A version awaiting a lead's approval is its proposer's alone: another researcher can neither train nor evaluate on
it, nor read, export or compare the runs made on it, and every refusal is the answer given for an id that does not
exist (nothing is learnt of the version). Two real researchers, token and session clients, real runs."""
import pytest

from benchmarks.models import BenchmarkVersion, EvaluationRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def private(loci_version, make_user):
    """(the proposer, another researcher, the proposer's version awaiting approval)."""
    owner, other = make_user("res1", "researcher"), make_user("res2", "researcher")
    loci_version.awaiting_approval, loci_version.proposed_by = True, owner
    loci_version.save(update_fields=["awaiting_approval", "proposed_by"])
    return owner, other, loci_version


def _missing_id() -> int:
    return (BenchmarkVersion.objects.order_by("-pk").first().pk or 0) + 1000


def _same_refusal(invisible, missing, invisible_id, missing_id):
    assert invisible.status_code == missing.status_code == 400
    assert str(invisible.json()).replace(str(invisible_id), "N") == str(missing.json()).replace(str(missing_id), "N")


def test_training_on_a_version_one_may_not_read_is_refused_like_a_missing_one(private, client_for, models_dir):
    owner, other, version = private
    body = {"kind": "feature-classifier", "method": "feature-ltr", "name": "stolen", "retriever": "bm25-lemma"}
    refused = client_for(other).post("/api/v1/models/", {**body, "version": version.pk}, format="json")
    missing = client_for(other).post("/api/v1/models/", {**body, "version": _missing_id()}, format="json")
    _same_refusal(refused, missing, version.pk, _missing_id())
    assert "version" in refused.json()
    from jobs.models import Job

    assert not Job.objects.filter(kind="benchmarks.train_model").exists()
    # the proposer passes the version check (refused later for a reason that is not the version's)
    mine = client_for(owner).post("/api/v1/models/", {**body, "version": version.pk, "kind": "svm"}, format="json")
    assert mine.status_code == 400 and "kind must be" in mine.json()["detail"]
    # the service refuses it too, in the same words, whatever entry point calls it
    from benchmarks.services.model_training import training_run_create
    from benchmarks.services.runs import RunError

    with pytest.raises(RunError, match=f"no benchmark version {version.pk}"):
        training_run_create(version=version, kind="feature-classifier", method="feature-ltr", name="s2", owner=other)


def test_evaluating_a_version_one_may_not_read_is_refused_like_a_missing_one(private, client_for):
    owner, other, version = private
    body = {"method": "bm25-lemma", "ks": [1, 10]}
    refused = client_for(other).post("/api/v1/benchmarks/runs/", {**body, "version": version.pk}, format="json")
    missing = client_for(other).post("/api/v1/benchmarks/runs/", {**body, "version": _missing_id()}, format="json")
    _same_refusal(refused, missing, version.pk, _missing_id())
    assert not EvaluationRun.objects.exists()
    from benchmarks.services import RunError, evaluation_run_create

    with pytest.raises(RunError, match=f"no benchmark version {version.pk}"):
        evaluation_run_create(version=version, method="bm25-lemma", owner=other, enqueue=False)


def test_runs_on_a_private_version_are_invisible_to_another_researcher(private, client_for, client):
    from urllib.parse import quote

    from benchmarks.services import evaluation_run_create
    from jobs.runner import run_job

    owner, other, version = private
    runs = []
    for method in ("bm25-lemma", "tfidf-surface"):
        run = evaluation_run_create(version=version, method=method, ks=[1, 10], owner=owner, enqueue=False)
        assert run_job(run.job_id) == "succeeded"
        runs.append(EvaluationRun.objects.get(pk=run.pk))
    a, b = runs
    q = a.per_query[0]["query_id"]
    api = {"list": "/api/v1/benchmarks/runs/", "detail": f"/api/v1/benchmarks/runs/{a.pk}/",
           "report": f"/api/v1/benchmarks/runs/{a.pk}/report/", "csv": f"/api/v1/benchmarks/runs/{a.pk}/report.csv"}
    pages = [f"/benchmarks/runs/{a.pk}/", f"/benchmarks/runs/{a.pk}/report.json",
             f"/benchmarks/runs/{a.pk}/per_query.csv", f"/benchmarks/runs/{a.pk}/run.trec",
             f"/benchmarks/runs/{a.pk}/qrels.txt", f"/workbench/compare/?a={a.pk}&b={b.pk}",
             f"/workbench/compare/query/?a={a.pk}&b={b.pk}&q={quote(q)}"]
    compare_api = ("/api/v1/workbench/compare/", {"a": a.pk, "b": b.pk, "query": q})

    mine = client_for(owner)
    assert {r["id"] for r in mine.get(api["list"]).json()["results"]} == {a.pk, b.pk}
    assert all(mine.get(url).status_code == 200 for key, url in api.items() if key != "list")
    assert mine.get(*compare_api).status_code == 200
    client.force_login(owner)
    assert all(client.get(url).status_code == 200 for url in pages)
    assert f"/benchmarks/runs/{a.pk}/" in client.get("/benchmarks/").content.decode()

    theirs = client_for(other)
    assert theirs.get(api["list"]).json()["results"] == []
    assert theirs.get(api["list"], {"method": "bm25-lemma"}).json()["count"] == 0
    assert all(theirs.get(url).status_code == 404 for key, url in api.items() if key != "list")
    assert theirs.get(*compare_api).status_code == 404
    client.force_login(other)
    assert [client.get(url).status_code for url in pages] == [404] * len(pages)
    assert f"/benchmarks/runs/{a.pk}/" not in client.get("/benchmarks/").content.decode()
    assert f'value="{a.pk}"' not in client.get("/workbench/compare/").content.decode()
    # filtering by the version's id answers as for an id that does not exist
    by_version = theirs.get(api["list"], {"version": version.pk})
    by_missing = theirs.get(api["list"], {"version": _missing_id()})
    assert by_version.status_code == by_missing.status_code
    assert str(by_version.json()).replace(str(version.pk), "N") == str(by_missing.json()).replace(str(_missing_id()), "N")

    # once a lead approves it, the other researcher sees the runs
    client_for("lead").post(f"/api/v1/benchmarks/versions/{version.pk}/approve/")
    assert {r["id"] for r in theirs.get(api["list"]).json()["results"]} == {a.pk, b.pk}
    assert theirs.get(*compare_api).status_code == 200


def test_models_learnt_from_a_private_version_are_hidden_and_refused(private, client_for, client, models_dir):
    """A model trained on the proposer's private gold carries that gold: another researcher neither sees it (API,
    models page, training jobs) nor uses it by name (as a reranker, as the base of a new model)."""
    from detection.models import TrainedModel
    from jobs.models import Job

    owner, other, version = private
    job = Job.objects.create(kind="benchmarks.train_model", owner=owner, params={"version_id": version.pk,
                                                                                 "name": "privy", "kind": "x"})
    for name in ("privy/fold-0", "privy/all"):
        TrainedModel.objects.create(name=name, kind="feature-classifier", method="feature-logreg", training_job=job,
                                    benchmark=str(version), metrics={"rerank_mrr@10": 0.9})
    TrainedModel.objects.create(name="open/all", kind="feature-classifier", method="feature-logreg")
    names = {m["name"] for m in client_for(owner).get("/api/v1/models/").json()["results"]}
    assert names == {"privy/fold-0", "privy/all", "open/all"}
    assert {m["name"] for m in client_for(other).get("/api/v1/models/").json()["results"]} == {"open/all"}
    client.force_login(other)
    page = client.get("/benchmarks/models/").content.decode()
    assert "open/all" in page and "privy" not in page
    client.force_login(owner)
    assert "privy/all" in client.get("/benchmarks/models/").content.decode()

    visible = BenchmarkVersion.objects.create(benchmark=version.benchmark, version="open",
                                              query_corpus=version.query_corpus, source_corpus=version.source_corpus)
    run = {"version": visible.pk, "method": "bm25-lemma", "ks": [1, 10], "reranker": "feature-logreg"}
    for model in ("privy/all", "privy/fold-0"):
        refused = client_for(other).post("/api/v1/benchmarks/runs/", {**run, "reranker_params": {"model": model}},
                                         format="json")
        assert refused.status_code == 400 and f"no trained model {model!r}" in refused.json()["detail"]
    assert client_for(other).post("/api/v1/benchmarks/runs/", {**run, "reranker_params": {"model": "open/all"}},
                                  format="json").status_code == 201
    assert client_for(owner).post("/api/v1/benchmarks/runs/", {**run, "reranker_params": {"model": "privy/all"}},
                                  format="json").status_code == 201
    base = client_for(other).post("/api/v1/models/", {"version": visible.pk, "kind": "cross-encoder", "name": "c2",
                                                      "base_model": "privy"}, format="json")
    assert base.status_code == 400 and "no trained model 'privy'" in base.json()["detail"]


def test_suite_tables_over_a_private_version_are_the_proposers_alone(private, client):
    """The suite page shows every user's suite jobs; one over another user's private stored version is left out
    (its table is that version's figures)."""
    from benchmarks.services.suite_jobs import stored_key, suite_job_create
    from jobs.models import Job

    owner, other, version = private
    mine = suite_job_create(methods="bm25-lemma", benchmarks=[stored_key(version)], owner=owner)
    public = suite_job_create(methods="bm25-lemma", benchmarks=["loci-similes"], owner=owner)
    Job.objects.filter(pk=mine.pk).update(status="succeeded", result={"rows": {stored_key(version): {}}})
    client.force_login(owner)
    html = client.get("/benchmarks/suite/").content.decode()
    assert f'id="suite-{mine.pk}"' in html and f'id="suite-{public.pk}"' in html
    client.force_login(other)
    html = client.get("/benchmarks/suite/").content.decode()
    assert f'id="suite-{mine.pk}"' not in html and stored_key(version) not in html and f'id="suite-{public.pk}"' in html
