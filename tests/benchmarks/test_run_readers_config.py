"""Pages, exports and the API show a run's method parameters from its stored configuration (``MethodConfig.to_json``,
the digest checked), the one source, and an edited configuration refused rather than shown."""
import pytest

from benchmarks.models import EvaluationRun
from benchmarks.services import evaluation_run_create, similarity_run_create

pytestmark = pytest.mark.django_db


def _finished(run):
    EvaluationRun.objects.filter(pk=run.pk).update(report={"per_pair": []}, per_query=[], summary={"pool": "gold"})
    return EvaluationRun.objects.get(pk=run.pk)


def test_the_run_page_the_report_and_the_api_show_the_configured_parameters(loci_version, client_for, client, users):
    run = _finished(evaluation_run_create(version=loci_version, method="bm25-lemma", params={"k1": 1.1},
                                          reranker="lexical-rule", enqueue=False))
    params = {"k1": 1.1, "b": 0.75, "stopwords": True}
    assert run.config_params == params and run.reranker_config_params == {"gap": 3, "tol": 0.01}
    client = client_for("lead")
    report = client.get(f"/api/v1/benchmarks/runs/{run.pk}/report/").json()["run"]
    assert report["params"] == params and report["reranker_params"] == run.reranker_config_params
    listed = client.get(f"/api/v1/benchmarks/runs/{run.pk}/").json()
    assert listed["params"] == params and listed["reranker_params"] == run.reranker_config_params
    client_page = client
    client_page.force_login(users["lead"])
    page = client_page.get(f"/benchmarks/runs/{run.pk}/")
    assert page.status_code == 200 and "1.1" in page.content.decode()

    # an edited configuration is refused where it is read, with the registry's sentence
    row = EvaluationRun.objects.get(pk=run.pk)
    EvaluationRun.objects.filter(pk=run.pk).update(config={**row.config, "params": {**row.config["params"], "k1": 2}})
    refused = client.get(f"/api/v1/benchmarks/runs/{run.pk}/report/")
    assert refused.status_code == 400 and "does not match its digest" in str(refused.json())


def test_a_similarity_run_shows_its_configured_parameters(gold_set, client_for):
    sim = similarity_run_create(gold_set=gold_set, method="levenshtein")
    shown = client_for("lead").get(f"/api/v1/sts/runs/{sim.pk}/").json()
    assert shown["params"] == sim.config_params and shown["method"] == "levenshtein"
