"""The workbench run page and the API show each method's parameters from the run's stored configurations
(``MethodConfig.to_json``, the digest checked): the one source, the same values the ``*_params`` columns hold."""
import pytest

pytestmark = pytest.mark.django_db


def test_the_run_page_and_the_api_show_the_configured_parameters(finished_detection, client, client_for, users):
    from workbench.models import DetectionRun

    run = finished_detection
    assert run.retriever_config_params == run.retriever_params == {"k1": 1.5, "b": 0.75, "stopwords": True}
    assert run.reranker_config_params == run.reranker_params
    api = client_for("researcher").get(f"/api/v1/workbench/runs/{run.pk}/").json()
    assert api["retriever_params"] == run.retriever_params and api["reranker_params"] == run.reranker_params
    client.force_login(users["researcher"])
    setup = "bm25-lemma\n  (default parameters)"  # the configuration holds the defaults: the page folds nothing
    assert setup in client.get(f"/workbench/runs/{run.pk}/").content.decode()

    # a params column out of step with the configuration is not what is shown
    DetectionRun.objects.filter(pk=run.pk).update(retriever_params={"k1": 9.9})
    page = client.get(f"/workbench/runs/{run.pk}/").content.decode()
    assert setup in page and "<code>k1</code>" not in page
    assert client_for("researcher").get(f"/api/v1/workbench/runs/{run.pk}/").json()["retriever_params"]["k1"] == 1.5
