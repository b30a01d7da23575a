"""Benchmarks API: permission matrix per endpoint, create → 201 with a job, filters, CSV, query counts."""
import pytest

from benchmarks.models import EvaluationRun, SimilarityRun
from jobs.models import Job

READERS = {"researcher", "lead"}
ROLES = ["annotator", "lead", "researcher", "norole", None]


@pytest.fixture
def finished_runs(loci_version, gold_set, users):
    job = Job.objects.create(kind="benchmarks.loci_evaluate", status="succeeded", owner=users["researcher"])
    run = EvaluationRun.objects.create(
        version=loci_version, method="bm25-lemma", ks=[1, 10], job=job, owner=users["researcher"],
        report={"ks": [1, 10], "recall@10": 0.8, "per_pair": [{"query_id": "q", "source_id": "s", "label": "cit.",
                                                              "fold": 0, "rank": 3}]},
        summary={"recall@1": 0.5, "recall@10": 0.8},
        per_fold=[{"fold": 0, "n_queries": 2, "n_gold": 3, "metrics": {"all": {"recall@1": 0.5, "recall@10": 0.8}}}],
        per_query=[{"query_id": "hier. epist. 1", "fold": 0, "n_gold": 2, "n_cit": 1, "n_cf": 1, "recall@1": 0.5,
                    "recall@10": 1.0, "rr": 1.0}])
    sim = SimilarityRun.objects.create(
        gold_set=gold_set, method="levenshtein", owner=users["researcher"], rmse=0.3, spearman=0.4, pearson=0.5,
        report={"rmse": 0.3, "predictions": [{"reference_id": "a", "candidate_id": "b", "gold": 0.5,
                                              "predicted": 0.25, "predicted_raw": 0.25, "predicted_reverse": 0.25}]})
    return run, sim


def _get_urls(loci_version, gold_set, run, sim):
    return [
        "/api/v1/benchmarks/versions/",
        f"/api/v1/benchmarks/versions/{loci_version.pk}/",
        f"/api/v1/benchmarks/versions/{loci_version.pk}/gold/",
        "/api/v1/benchmarks/runs/",
        f"/api/v1/benchmarks/runs/{run.pk}/",
        f"/api/v1/benchmarks/runs/{run.pk}/report/",
        f"/api/v1/benchmarks/runs/{run.pk}/report.csv",
        "/api/v1/sts/gold-sets/",
        f"/api/v1/sts/gold-sets/{gold_set.pk}/",
        f"/api/v1/sts/gold-sets/{gold_set.pk}/pairs/",
        f"/api/v1/sts/gold-sets/{gold_set.pk}/pairs.csv",
        "/api/v1/sts/runs/",
        f"/api/v1/sts/runs/{sim.pk}/",
        f"/api/v1/sts/runs/{sim.pk}/predictions.csv",
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
def test_read_endpoints_allow_researchers_and_leads_only(client_for, loci_version, gold_set, finished_runs, role):
    client = client_for(role)
    for url in _get_urls(loci_version, gold_set, *finished_runs):
        status = client.get(url).status_code
        if role in READERS:
            assert status == 200, url
        elif role is None:
            assert status in (401, 403), url
        else:
            assert status == 403, url


@pytest.mark.django_db
@pytest.mark.parametrize("role, expected", [("researcher", 201), ("lead", 403), ("annotator", 403),
                                            ("norole", 403), (None, 403)])
def test_create_runs_only_for_researchers(client_for, loci_version, gold_set, role, expected):
    client = client_for(role)
    loci = client.post("/api/v1/benchmarks/runs/", {"version": loci_version.pk, "method": "bm25-lemma",
                                                   "ks": [1, 10], "seed": 3}, format="json")
    sts = client.post("/api/v1/sts/runs/", {"gold_set": gold_set.pk, "method": "levenshtein"}, format="json")
    assert (loci.status_code, sts.status_code) == (expected, expected)
    if expected == 201:
        body = loci.json()
        run = EvaluationRun.objects.get(pk=body["id"])
        assert body["job"] == run.job_id and run.job.kind == "benchmarks.loci_evaluate"
        assert run.ks == [1, 10] and run.seed == 3 and body["status"] == "queued"
        assert sts.json()["job"] == SimilarityRun.objects.get().job_id
    else:
        assert not EvaluationRun.objects.exists() and not Job.objects.exists()


@pytest.mark.django_db
def test_create_rejects_bad_input(client_for, loci_version):
    client = client_for("researcher")
    bad_method = client.post("/api/v1/benchmarks/runs/", {"version": loci_version.pk, "method": "nope"}, format="json")
    assert bad_method.status_code == 400 and "unknown retrieval method" in bad_method.json()["detail"]
    bad_ks = client.post("/api/v1/benchmarks/runs/", {"version": loci_version.pk, "method": "bm25-lemma", "ks": [0]},
                         format="json")
    assert bad_ks.status_code == 400 and "ks" in bad_ks.json()
    assert not EvaluationRun.objects.exists()


@pytest.mark.django_db
def test_gold_filters_by_fold_and_type(client_for, loci_version):
    client = client_for("researcher")
    body = client.get(f"/api/v1/benchmarks/versions/{loci_version.pk}/gold/?fold=2&ref_type=cf.").json()
    expected = loci_version.gold.filter(fold=2, ref_type="cf.").count()
    assert body["count"] == expected > 0
    assert all(row["fold"] == 2 and row["ref_type"] == "cf." for row in body["results"])
    everything = client.get(f"/api/v1/benchmarks/versions/{loci_version.pk}/gold/").json()
    assert everything["count"] == 545 and len(everything["results"]) == 100 and everything["next"]
    assert client.get(f"/api/v1/benchmarks/versions/{loci_version.pk}/gold/?fold=x").status_code == 400
    overview = client.get(f"/api/v1/benchmarks/versions/{loci_version.pk}/").json()["overview"]
    assert overview["total"]["refs"] == 545 and overview["n_query_segments"] == 463


@pytest.mark.django_db
def test_report_json_and_csv(client_for, finished_runs, loci_version):
    run, sim = finished_runs
    client = client_for("lead")
    report = client.get(f"/api/v1/benchmarks/runs/{run.pk}/report/").json()
    assert report["per_query"][0]["query_id"] == "hier. epist. 1" and report["run"]["job"] == run.job_id
    text = client.get(f"/api/v1/benchmarks/runs/{run.pk}/report.csv").content.decode()
    assert text.splitlines() == ["query_id,fold,n_gold,n_cit,n_cf,recall@1,recall@10,rr,query_text,top_sources",
                                 "hier. epist. 1,0,2,1,1,0.500000,1.000000,1.000000,,"]
    pairs = client.get(f"/api/v1/benchmarks/runs/{run.pk}/report.csv?table=per_pair").content.decode()
    assert pairs.splitlines()[1] == "q,s,cit.,0,3,,,,,,"
    assert client.get(f"/api/v1/benchmarks/runs/{run.pk}/report.csv?table=x").status_code == 400
    queued = EvaluationRun.objects.create(version=loci_version, method="bm25-lemma")
    assert client.get(f"/api/v1/benchmarks/runs/{queued.pk}/report/").status_code == 409
    gold_csv = client.get(f"/api/v1/sts/gold-sets/{sim.gold_set_id}/pairs.csv")
    assert gold_csv["Content-Type"].startswith("text/csv")
    lines = gold_csv.content.decode().splitlines()
    assert lines[0] == "reference_id,candidate_id,reference_text,candidate_text,score" and len(lines) == 297


@pytest.mark.django_db
def test_list_endpoints_have_pinned_query_counts(client_for, loci_version, gold_set, users, query_budget):
    for i in range(15):
        job = Job.objects.create(kind="benchmarks.loci_evaluate", owner=users["researcher"])
        EvaluationRun.objects.create(version=loci_version, method="bm25-lemma", job=job, owner=users["researcher"])
        SimilarityRun.objects.create(gold_set=gold_set, method="levenshtein", job=job, owner=users["lead"])
    client = client_for("researcher")
    client.get("/api/v1/benchmarks/runs/")  # warm the token/role lookups' code paths
    for url in ["/api/v1/benchmarks/runs/", "/api/v1/sts/runs/", "/api/v1/benchmarks/versions/",
                f"/api/v1/benchmarks/versions/{loci_version.pk}/gold/", "/api/v1/sts/gold-sets/",
                f"/api/v1/sts/gold-sets/{gold_set.pk}/pairs/"]:
        endpoint = "GET " + url.replace(f"/{loci_version.pk}/", "/{id}/").replace(f"/{gold_set.pk}/", "/{id}/")
        with query_budget(endpoint):
            assert client.get(url).status_code == 200, url


@pytest.mark.django_db
def test_schema_lists_the_benchmark_endpoints(client):
    import yaml

    paths = yaml.safe_load(client.get("/api/schema/").content)["paths"]
    assert "/api/v1/benchmarks/runs/" in paths and "post" in paths["/api/v1/benchmarks/runs/"]
    assert "/api/v1/sts/runs/" in paths and "/api/v1/benchmarks/versions/{id}/gold/" in paths


@pytest.mark.django_db
def test_create_takes_shards_within_bounds(client_for, loci_version):
    """``shards`` is a declared parameter: an integer 1..MAX_SHARDS goes to the run's job; anything else is a
    400 naming the bounds, and nothing is created."""
    from benchmarks.services.runs import MAX_SHARDS

    client = client_for("researcher")
    url = "/api/v1/benchmarks/runs/"
    ok = client.post(url, {"version": loci_version.pk, "method": "bm25-lemma", "shards": 3}, format="json")
    assert ok.status_code == 201
    assert Job.objects.get(pk=ok.json()["job"]).params == {"run_id": ok.json()["id"], "shards": 3}
    default = client.post(url, {"version": loci_version.pk, "method": "bm25-lemma", "shards": None}, format="json")
    assert default.status_code == 201 and "shards" not in Job.objects.get(pk=default.json()["job"]).params
    for bad in (0, -1, MAX_SHARDS + 1, "two", 2.5, True, [2]):
        r = client.post(url, {"version": loci_version.pk, "method": "bm25-lemma", "shards": bad}, format="json")
        assert r.status_code == 400, bad
        assert r.json()["shards"] == [f"shards must be an integer between 1 and {MAX_SHARDS}"], bad
    assert EvaluationRun.objects.count() == 2


@pytest.mark.django_db
def test_schema_declares_shards_with_its_bounds(client):
    import yaml

    from benchmarks.services.runs import MAX_SHARDS

    schema = yaml.safe_load(client.get("/api/schema/").content)
    body = schema["paths"]["/api/v1/benchmarks/runs/"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    fields = schema["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]["properties"]
    assert fields["shards"]["type"] == "integer" and fields["shards"]["nullable"] is True
    assert (fields["shards"]["minimum"], fields["shards"]["maximum"]) == (1, MAX_SHARDS)


def test_a_hub_model_is_refused_when_asked_for_in_the_workers_sentence(loci_version, client_for, models_dir):
    """Hub downloads are off: a hub id is refused with 400 when the run or the training is asked for, in the sentence
    the worker would fail with (model_store.resolve), and nothing is queued."""
    from detection.methods.infrastructure import model_store
    from jobs.models import Job

    hub = "sentence-transformers/foo"
    with pytest.raises(model_store.ModelUnavailable) as worker:
        model_store.resolve(hub)
    training = client_for("researcher").post("/api/v1/models/", {
        "version": loci_version.pk, "kind": "cross-encoder", "name": "from-hub", "base_model": hub}, format="json")
    run = client_for("researcher").post("/api/v1/benchmarks/runs/", {
        "version": loci_version.pk, "method": "dense-encoder", "params": {"model": hub}}, format="json")
    for response in (training, run):
        assert response.status_code == 400 and response.json()["detail"] == str(worker.value)
    assert not Job.objects.exists()
