"""The trained-model registry page in a real browser: a researcher finds it in the menu and reads every fold."""
import pytest

from detection.models import TrainedModel

from .conftest import login


def test_researcher_lists_trained_models_by_kind(live_server, page, make_user):
    user = make_user("res-models", "researcher")
    user.set_password("pw-res-models")
    user.save()
    for fold in range(2):
        TrainedModel.objects.create(name=f"logreg-545/fold-{fold}", kind="feature-classifier", method="feature-logreg",
                                    benchmark="loci-similes-545 v1", train_folds=[f for f in range(5) if f != fold],
                                    held_out_fold=fold, metrics={"rerank_mrr@10": 0.9 + fold / 100})
    TrainedModel.objects.create(name="ce/fold-0", kind="cross-encoder", method="cross-encoder", base_model="tiny-bert",
                                held_out_fold=0, train_folds=[1, 2, 3, 4])
    login(page, live_server.url, "res-models", "pw-res-models")
    page.click("text=Models")
    page.wait_for_url(f"{live_server.url}/benchmarks/models/")
    table = page.locator("#trained-models")
    assert table.locator("tbody tr").count() == 3
    assert "rerank_mrr@10 0.910" in table.inner_text() and "1, 2, 3, 4" in table.inner_text()
    page.click("#trained-models >> xpath=preceding::a[text()='cross-encoder'][1]")
    page.wait_for_url("**/benchmarks/models/?kind=cross-encoder")
    assert page.locator("#trained-models tbody tr").count() == 1
    assert "tiny-bert" in page.locator("#trained-models").inner_text()
    assert "feature-hgb" in page.locator("#rerankers").inner_text()


@pytest.mark.django_db(transaction=True)
def test_a_lead_researcher_trains_a_small_ranker_from_the_page_and_sees_it_listed(live_server, page, make_user,
                                                                                  settings, tmp_path):
    """The training form on the models page: a refused request keeps the form with the error; a small ranker
    (feature-ltr, top 10) trains as a job whose row on the page ends 'succeeded', and its models are listed."""
    from benchmarks.services import benchmark_import_545
    from detection.methods.infrastructure import model_store
    from jobs.models import Job
    from tests.benchmarks.conftest import REF_TYPE, WITH_TEXT

    settings.VAR_DIR = tmp_path / "var"
    version, _ = benchmark_import_545(with_text_path=WITH_TEXT, ref_type_path=REF_TYPE, name="loci-similes-545")
    make_user("leadres", "lead", "researcher")
    with model_store.using(tmp_path / "models") as models:
        models.mkdir()
        login(page, live_server.url, "leadres", "pw-leadres")
        page.goto(f"{live_server.url}/benchmarks/models/")
        assert "No training job yet" in page.inner_text("#training-jobs")
        page.select_option("#id_version", str(version.pk))
        page.fill("#id_name", "small-ltr")
        page.select_option("#id_method", "feature-ltr")
        page.fill("#id_params", '{"query_norm": "maybe"}')
        page.fill("#id_k", "10")
        page.click("#train button[type=submit]")
        assert "query_norm" in page.inner_text("#train")  # the registry's refusal, on the form
        assert not Job.objects.exists()
        page.fill("#id_params", '{"query_norm": true}')
        page.click("#train button[type=submit]")
        page.wait_for_url("**/benchmarks/models/#training-jobs")
        row = page.locator("#training-jobs tr.training-job").first
        row.locator("text=succeeded").wait_for(timeout=120000)  # ran in-process, or the page reloads until done
        job = Job.objects.get()
        assert job.status == "succeeded" and job.progress == 1.0
        assert "small-ltr" in row.inner_text() and f"/jobs/{job.pk}/" in row.inner_html()
        listed = page.inner_text("#trained-models")
        assert "small-ltr/all" in listed and all(f"small-ltr/fold-{f}" in listed for f in range(5))
        assert (models / "small-ltr" / "all" / "classifier.json").is_file()
