"""Benchmark pages: who may see them, what they show, and launching runs from the forms."""
import pytest

from benchmarks.models import EvaluationRun, SimilarityRun


def _pages(loci_version, gold_set, run, sim):
    return ["/benchmarks/", f"/benchmarks/versions/{loci_version.pk}/", f"/benchmarks/runs/{run.pk}/",
            f"/benchmarks/gold-sets/{gold_set.pk}/", f"/benchmarks/similarity-runs/{sim.pk}/",
            "/benchmarks/pilots/", f"/benchmarks/gold-sets/{gold_set.pk}/pairs.csv"]


@pytest.fixture
def runs(loci_version, gold_set, users):
    from benchmarks.services import evaluation_run_create, similarity_run_create

    run = evaluation_run_create(version=loci_version, method="bm25-lemma", owner=users["researcher"])
    sim = similarity_run_create(gold_set=gold_set, method="levenshtein", owner=users["researcher"])
    return run, sim


@pytest.mark.django_db
@pytest.mark.parametrize("role, expected", [("researcher", 200), ("lead", 200), ("annotator", 403),
                                            ("norole", 403)])
def test_pages_follow_roles(client, users, loci_version, gold_set, runs, role, expected):
    client.force_login(users[role])
    for url in _pages(loci_version, gold_set, *runs):
        assert client.get(url).status_code == expected, url


@pytest.mark.django_db
def test_anonymous_is_sent_to_login(client, loci_version):
    response = client.get("/benchmarks/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


@pytest.mark.django_db
def test_version_page_shows_gold_overview_and_form(client, users, loci_version):
    client.force_login(users["researcher"])
    html = client.get(f"/benchmarks/versions/{loci_version.pk}/").content.decode()
    assert "545 gold references between 463 query segments and 408 source segments" in html
    assert 'id="fold-table"' in html and "Queue evaluation" in html and 'value="bm25-lemma"' in html
    client.force_login(users["lead"])
    assert "Queue evaluation" not in client.get(f"/benchmarks/versions/{loci_version.pk}/").content.decode()


@pytest.mark.django_db
def test_launch_from_the_form_queues_a_run(client, users, loci_version):
    client.force_login(users["researcher"])
    response = client.post(f"/benchmarks/versions/{loci_version.pk}/", {
        "method": "tfidf-lemma", "params": "{}", "reranker": "", "ks": "1, 5, 10", "split": "grouped",
        "n_folds": 3, "seed": 7})
    run = EvaluationRun.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/benchmarks/runs/{run.pk}/"
    assert (run.method, run.ks, run.split, run.n_folds, run.seed) == ("tfidf-lemma", [1, 5, 10], "grouped", 3, 7)
    page = client.get(response["Location"]).content.decode()
    assert 'http-equiv="refresh"' in page and f'data-job="{run.job_id}"' in page
    bad = client.post(f"/benchmarks/versions/{loci_version.pk}/", {"method": "tfidf-lemma", "params": "[1]",
                                                                    "ks": "a", "split": "file", "n_folds": 5,
                                                                    "seed": 0})
    assert bad.status_code == 200 and "must be a JSON object" in bad.content.decode()
    assert EvaluationRun.objects.count() == 1


@pytest.mark.django_db
def test_the_launch_form_takes_shards_within_bounds(client, users, loci_version):
    client.force_login(users["researcher"])
    form = {"method": "bm25-lemma", "params": "{}", "reranker": "", "ks": "1, 10", "split": "file", "n_folds": 5,
            "seed": 0}
    for bad in ("0", "257", "two"):
        refused = client.post(f"/benchmarks/versions/{loci_version.pk}/", {**form, "shards": bad})
        assert refused.status_code == 200 and "shards must be an integer between 1 and 256" in refused.content.decode()
    assert not EvaluationRun.objects.exists()
    client.post(f"/benchmarks/versions/{loci_version.pk}/", {**form, "shards": "4"})
    client.post(f"/benchmarks/versions/{loci_version.pk}/", {**form, "shards": ""})
    four, default = EvaluationRun.objects.order_by("pk")
    assert four.job.params["shards"] == 4 and "shards" not in default.job.params


@pytest.mark.django_db
def test_lead_cannot_launch(client, users, gold_set):
    client.force_login(users["lead"])
    response = client.post(f"/benchmarks/gold-sets/{gold_set.pk}/", {"method": "levenshtein", "params": "{}"})
    assert response.status_code == 403 and not SimilarityRun.objects.exists()


@pytest.mark.django_db
def test_gold_set_page_lists_pairs_and_rmse_note(client, users, gold_set):
    client.force_login(users["researcher"])
    html = client.get(f"/benchmarks/gold-sets/{gold_set.pk}/").content.decode()
    assert html.count('<td class="greek">') == 2 * 296
    assert "RMSE alone rewards matching the scale, not the ranking" in html


@pytest.mark.django_db
def test_home_and_nav_link_to_benchmarks(client, users):
    client.force_login(users["researcher"])
    html = client.get("/").content.decode()
    assert 'id="benchmarks"' in html and 'href="/benchmarks/" data-role="researcher"' in html
    client.force_login(users["annotator"])
    assert 'href="/benchmarks/"' not in client.get("/").content.decode()


@pytest.mark.django_db
def test_the_three_launch_forms_queue_or_show_the_refusal(client, users, gold_set, loci_version):
    """Version, gold-set and pilot pages share one form-to-run step: a valid POST queues and redirects with a
    message, a refusal by the service comes back as a form error and creates nothing."""
    client.force_login(users["researcher"])
    ok = client.post(f"/benchmarks/gold-sets/{gold_set.pk}/", {"method": "levenshtein", "params": "{}"}, follow=True)
    run = SimilarityRun.objects.get()
    assert ok.redirect_chain == [(f"/benchmarks/similarity-runs/{run.pk}/", 302)]
    assert f"Similarity run {run.pk} " in ok.content.decode()
    refused = client.post(f"/benchmarks/versions/{loci_version.pk}/", {
        "method": "tfidf-lemma", "params": '{"no_such_parameter": 1}', "reranker": "", "ks": "1, 10",
        "split": "file", "n_folds": 5, "seed": 0})
    html = refused.content.decode()
    assert refused.status_code == 200 and not EvaluationRun.objects.exists()
    assert 'class="errorlist nonfield"' in html and "no_such_parameter" in html
