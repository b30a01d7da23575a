"""The models page's training form: the API's checks and limits (one source: ``run_limits.TRAINING_K`` and
``training_run_create``), a job whose progress the page lists, and nothing queued for a refused request."""
import pytest

from core.run_limits import TRAINING_K
from detection.methods.registry import MethodConfig
from detection.models import TrainedModel
from jobs.models import Job


def _post(client, version, **fields):
    data = {"version": version.pk, "name": "ltr-form", "kind": "feature-classifier", "method": "feature-ltr",
            "params": "{}", "retriever": "bm25-lemma", "retriever_params": "{}", "k": "10", "final_model": ""}
    data.update(fields)
    return client.post("/benchmarks/models/", data)


@pytest.mark.django_db
def test_the_form_refuses_what_the_api_refuses_naming_the_field(loci_version, models_dir, users, client,
                                                                 client_for):
    client.force_login(users["researcher"])
    page = client.get("/benchmarks/models/").content.decode()
    assert 'id="train"' in page and f'max="{TRAINING_K.high}"' in page and f'min="{TRAINING_K.low}"' in page
    cases = [({"k": "0"}, TRAINING_K.message), ({"k": "1001"}, TRAINING_K.message),
             ({"method": "feature-logreg", "params": '{"vectors": "la-none"}'}, "no word-vector model &#x27;la-none&#x27;"),
             ({"params": "[1]"}, "must be a JSON object"), ({"name": "../etc"}, "not a path"),
             ({"name": "a/b"}, "no &#x27;/&#x27;"), ({"kind": "cross-encoder", "method": ""}, "needs base_model"),
             ({"params": '{"pickle": 1}'}, "pickle")]
    for fields, message in cases:
        response = _post(client, loci_version, **fields)
        assert response.status_code == 200, fields  # the form again, with the error
        assert message in response.content.decode(), (fields, message)
    assert not Job.objects.exists()
    # the API says the same for the same k (one limit, one message)
    api = client_for("researcher").post("/api/v1/models/", {"version": loci_version.pk, "kind": "feature-classifier",
                                                            "name": "x", "method": "feature-ltr", "k": 0},
                                        format="json")
    assert api.status_code == 400 and TRAINING_K.message in str(api.json())


@pytest.mark.django_db(transaction=True)  # the job is sent when the request's transaction commits
def test_a_researcher_trains_from_the_form_and_the_page_lists_the_job_and_the_models(loci_version, models_dir,
                                                                                      users, client):
    client.force_login(users["researcher"])
    response = _post(client, loci_version, params='{"query_norm": true}')
    assert response.status_code == 302 and response.url.endswith("#training-jobs")
    job = Job.objects.get()
    assert job.status == "succeeded", job.error  # the test settings run jobs in-process
    # the job carries the form's parameters as the method's configuration (MethodConfig.to_json, digest checked)
    assert MethodConfig.from_json(job.params["reranker"]).params["query_norm"] is True and job.params["k"] == 10 \
        and job.owner == users["researcher"]
    names = set(TrainedModel.objects.values_list("name", flat=True))
    assert names == {f"ltr-form/fold-{f}" for f in range(5)} | {"ltr-form/all"}
    page = client.get("/benchmarks/models/").content.decode()
    assert f'data-job="{job.pk}" data-status="succeeded"' in page and "ltr-form/all" in page
    assert 'http-equiv="refresh"' not in page  # nothing running: no reload


@pytest.mark.django_db
def test_a_lead_reads_the_page_without_the_form_and_cannot_post(loci_version, users, client):
    client.force_login(users["lead"])
    page = client.get("/benchmarks/models/").content.decode()
    assert 'id="trained-models"' in page and 'id="train"' not in page
    assert _post(client, loci_version).status_code == 403
    assert not Job.objects.exists()
