"""A workbench run reranked by a model trained elsewhere shows, on its page in Debian's chromium, the first stage
the model learned from against the one used, each label's share against its training data's, and the warnings."""
import pytest

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_run_page_says_where_the_reranker_is_outside_what_it_learned(live_server, page, make_user, tmp_path):
    from django.core.management import call_command

    from benchmarks.services import benchmark_import_545
    from detection.methods.infrastructure import model_store
    from jobs.runner import run_job
    from tests.benchmarks.conftest import REF_TYPE, WITH_TEXT
    from workbench.services import detection_run_create, document_upload

    version, _ = benchmark_import_545(with_text_path=WITH_TEXT, ref_type_path=REF_TYPE, name="loci-similes-545")
    owner = make_user("wbcheck", "researcher")
    with model_store.using(tmp_path / "models"):
        call_command("train_model", "--benchmark", version.benchmark.name, "--name", "ltr-elsewhere", "--k", "10",
                     "--retriever", "bm25-lemma")
        query = document_upload(name="q.csv", data=b"seg_id,text\nq1,arma virumque cano Troiae qui primus ab oris\n",
                                owner=owner)
        source = document_upload(name="s.csv", data=b"seg_id,text\ns1,arma virumque canebat miles fortis\n"
                                 b"s2,Troiae muros vidi\n", owner=owner)
        run = detection_run_create(query_document=query, source_document=source, retriever="tfidf-surface", top_k=2,
                                   reranker="feature-ltr", reranker_params={"model": "ltr-elsewhere/all"}, owner=owner)
        assert run_job(run.job_id) == "succeeded"
    login(page, live_server.url, "wbcheck", "pw-wbcheck")
    page.goto(f"{live_server.url}/workbench/runs/{run.pk}/")
    section = page.locator("#reranker-check")
    text = section.inner_text()
    assert "learned from bm25-lemma" in text and "this run used tfidf-surface" in text and "different" in text
    rows = section.locator("#label-distribution tbody tr")
    assert rows.count() == 3 and [rows.nth(i).get_attribute("data-label") for i in range(3)] == ["none", "cit.", "cf."]
    shares = [int(rows.nth(i).locator("td").nth(1).inner_text().rstrip("%")) for i in range(3)]
    trained = [int(rows.nth(i).locator("td").nth(2).inner_text().rstrip("%")) for i in range(3)]
    assert 98 <= sum(shares) <= 102 and 98 <= sum(trained) <= 102  # percentages of this run and of the training data
    warnings = section.locator("#reranker-warnings li")
    assert warnings.count() >= 1
    assert warnings.first.inner_text().startswith(
        "feature-ltr learned to rerank bm25-lemma's candidates, not tfidf-surface's")
