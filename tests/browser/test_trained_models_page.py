"""The trained-model registry page in a real browser: a researcher finds it in the menu and reads every fold."""
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
