"""The workbench run page and the API show each method's parameters from the run's stored configurations
(``MethodConfig.to_json``, the digest checked): the one source."""
import pytest

pytestmark = pytest.mark.django_db


def test_the_run_page_and_the_api_show_the_configured_parameters(finished_detection, client, client_for, users):
    run = finished_detection
    assert run.retriever_config_params == {"k1": 1.5, "b": 0.75, "stopwords": True}
    api = client_for("researcher").get(f"/api/v1/workbench/runs/{run.pk}/").json()
    assert api["retriever_params"] == run.retriever_config_params
    assert api["reranker_params"] == run.reranker_config_params == {"gap": 3, "tol": 0.01}
    client.force_login(users["researcher"])
    setup = "bm25-lemma\n  (default parameters)"  # the configuration holds the defaults: the page folds nothing
    assert setup in client.get(f"/workbench/runs/{run.pk}/").content.decode()
