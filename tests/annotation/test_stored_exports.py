"""The scores export and the dashboard read the analytics job's result stored per batch (issue 10 §5,
issue 16): pages are served without recomputing, filtered requests compute only their page's
batches within a refit budget."""
import csv
import io

import pytest
from django.core.management import call_command
from django.test import override_settings

from annotation import analytics
from annotation.models import AnalyticsBatchResult, Batch
from jobs.runner import run_job
from jobs.services import job_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(sts_project, users):
    # the noisier, uncalibrated annotators (θ = 6 · gold): the triad checks below need cycles to list
    call_command("simulate_annotations", "--project", "sts", "--annotators", "3", "--seed", "2",
                 "--max-judgements", "600", "--no-calibration")
    sts_project.owner = users["staff"]
    sts_project.save()
    return sts_project


def _analyse(project, n_boot=20):
    job = job_create(kind="annotation.analytics", params={"project_id": project.pk, "n_boot": n_boot})
    assert run_job(job.pk) == "succeeded"
    job.refresh_from_db()
    return job


def test_pages_come_from_the_stored_result_and_match_a_full_recomputation(judged, client_for,
                                                                          django_assert_max_num_queries):
    job = _analyse(judged)
    assert AnalyticsBatchResult.objects.filter(job=job).count() == 3
    assert "scores" not in job.result and job.result["n_rows"] == 296
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):  # as the job: a threaded BLAS sums the (longer) draws in another order (1e-14 apart)
        expected = analytics.project_report(judged, n_boot=20)["scores"]  # the same computation, returned whole
    client = client_for("researcher")
    got = []
    for page in (1, 2, 3):
        with django_assert_max_num_queries(8):  # auth, project, the job, its pieces: never the judgements
            body = client.get(f"/api/v1/projects/{judged.pk}/scores/?page={page}").json()
        assert body["source"] == "stored" and body["n_boot"] == 20 and body["job"] == job.pk
        assert body["count"] == 296
        got += body["results"]
    assert got == expected  # page 1 ends inside the second batch: the overlap is cut right
    text = client.get(f"/api/v1/projects/{judged.pk}/scores/?format=csv").content.decode()
    assert len(list(csv.DictReader(io.StringIO(text)))) == 296
    batch = Batch.objects.get(project=judged, name="ref 16977 2")
    body = client.get(f"/api/v1/batches/{batch.pk}/scores/").json()
    assert body["source"] == "stored" and body["results"] == [r for r in expected if r["batch_id"] == batch.pk]


def test_filtered_requests_compute_their_page_only(judged, client_for):
    _analyse(judged)
    client = client_for("researcher")
    body = client.get(f"/api/v1/projects/{judged.pk}/scores/?annotator=sim-sts-1&n_boot=10&page=3").json()
    assert body["source"] == "live" and body["n_boot"] == 10 and body["count"] == 296
    expected = analytics.score_rows(analytics.load_project_data(judged, annotator="sim-sts-1"), n_boot=10,
                                    exact=False)  # a request makes no exact draws
    assert body["results"] == expected[200:]
    other_boot = client.get(f"/api/v1/projects/{judged.pk}/scores/?n_boot=5").json()
    assert other_boot["source"] == "live" and other_boot["n_boot"] == 5


@override_settings(SIMILIA_EXPORT_MAX_REFITS=100)
def test_synchronous_bootstrap_work_is_capped(judged, client_for):
    client = client_for("researcher")
    response = client.get(f"/api/v1/projects/{judged.pk}/scores/?n_boot=200")
    assert response.status_code == 400 and "SIMILIA_EXPORT_MAX_REFITS" in response.json()["n_boot"][0]
    response = client.get(f"/api/v1/projects/{judged.pk}/scores/?format=csv")  # 3 batches: 33 resamples each
    assert response.status_code == 200 and response["X-Similia-N-Boot"] == "33"
    assert response["X-Similia-Source"] == "live"


def test_dashboard_reads_one_batch_piece(judged, client, users, django_assert_max_num_queries):
    job = _analyse(judged)
    client.force_login(users["staff"])
    with django_assert_max_num_queries(16):
        html = client.get(f"/projects/{judged.pk}/dashboard/?batch=ref+16977+1").content.decode()
    assert "<strong>ref 16977 1</strong>" in html and "Bradley–Terry strength with 95% credible interval, ref 16977 1" in html
    assert "interval, ref 16977 2" not in html
    other = client.get(f"/projects/{judged.pk}/dashboard/?batch=ref+17148+1").content.decode()
    assert "<strong>ref 17148 1</strong>" in other and "interval, ref 16977 1" not in other
    assert f"job <a href=\"/jobs/{job.pk}/\">#{job.pk}</a>" in html


def test_agreement_comes_from_the_stored_result_unless_filtered(judged, client_for):
    job = _analyse(judged)
    client = client_for("researcher")
    stored = client.get(f"/api/v1/projects/{judged.pk}/agreement/").json()
    live = client.get(f"/api/v1/projects/{judged.pk}/agreement/?since=2000-01-01").json()
    assert stored["source"] == "stored" and stored["job"] == job.pk and live["source"] == "live"
    # the separation reliability and leverage come with the job's posterior fits: stored only, not recomputed live
    assert {k: v for k, v in stored["agreement"].items() if k != "separation"} == live["agreement"]
    separation = stored["agreement"]["separation"]
    figures = [row[k] for row in separation for k in ("measured", "deflated") if row[k] is not None]
    assert figures and all(0 <= x <= 1 for x in figures), separation
    for a, b in zip(stored["triads"]["per_annotator"] + stored["triads"]["majority"], live["triads"]["per_annotator"] + live["triads"]["majority"]):
        assert a == b, (a, b)


@pytest.mark.django_db
def test_a_project_without_batches_has_an_empty_report(users):
    """No batch yet: the report is empty, not an EmptyResultSet from an empty `batch__in`."""
    from annotation import analytics
    from annotation.services.projects import project_create

    project = project_create(owner=users["lead"], name="no-batches-yet")
    report = analytics.project_report(project, n_boot=0)
    assert report["scores"] == []


def test_the_stored_summary_counts_majority_triads_without_listing_them(judged, client):
    """No page, API or export shows the pooled-majority cycles, so the summary the page decodes on every view
    keeps their counts only; the per-annotator cycles the page lists stay in the batch pieces."""
    import json

    job = _analyse(judged, n_boot=0)
    majority = job.result["majority_triads"]
    assert majority and all(row["triads"] == [] for row in majority)  # one row per batch with judgements
    listed = analytics.triads_report(analytics.load_project_data(judged), majority_list_cap=20)["majority"]
    assert [dict(row, triads=[]) for row in listed] == majority  # the same counts as when they were listed
    assert sum(row["n_circular"] for row in majority) > 0  # there were cycles to list
    with_listing = len(json.dumps(dict(job.result, majority_triads=listed)))
    assert len(json.dumps(job.result)) < with_listing
    pieces = AnalyticsBatchResult.objects.filter(job=job).values_list("triads", flat=True)
    assert any(row["triads"] for triads in pieces for row in triads)  # per-annotator cycles, as verse texts

    client.force_login(judged.owner)
    html = client.get(f"/projects/{judged.pk}/dashboard/").content.decode()
    for row in majority:
        assert (f"<td>{row['batch']}</td><td class=\"num\">{row['n_circular']} circular of "
                f"{row['n_complete_triples']} complete triples ({row['n_tied_pairs']} tied pairs)</td>") in html
    assert "shown</summary>" in html  # the shown batch's per-annotator cycles are still listed


def test_a_convergence_alarm_is_a_warning_on_the_dashboard_and_in_the_export(judged, client, client_for, users,
                                                                              monkeypatch):
    """Issue 39/46: when the exact sampler's convergence alarm fires, the dashboard shows a warning (not the muted note)
    and every exported row of the batch says so (``posterior`` and ``interval_note``); every row carries the Monte
    Carlo error of its interval's ends. The alarm is real: its effective-sample level is set beyond reach, the draws
    are made and checked as always (no running on: the budget is 0)."""
    from annotation.stats import bt_bayes

    monkeypatch.setattr(bt_bayes, "ALARM_ESS", 10 ** 9)
    monkeypatch.setattr(bt_bayes, "CPU_BUDGET_S", 0.0)
    _analyse(judged, n_boot=0)
    client.force_login(users["staff"])
    html = client.get(f"/projects/{judged.pk}/dashboard/?batch=ref+16977+1").content.decode()
    warning = html[html.index('id="posterior-warning"'):]
    assert "convergence alarm: R-hat" in warning[:600] and "over 4 chains" in warning[:600]
    text = client_for("researcher").get(f"/api/v1/projects/{judged.pk}/scores/?format=csv").content.decode()
    compared = [r for r in csv.DictReader(io.StringIO(text)) if r["comparisons"] != "0"]
    assert compared and all(r["posterior"] == "exact, not converged" for r in compared)
    assert all(r["interval_note"].startswith("convergence alarm") for r in compared)
    assert all(float(r["bt_mc_error"]) > 0 for r in compared) and "±" in html


def test_stored_rows_say_exact_and_live_rows_say_approximate(judged, client, client_for, users):
    """Every batch of a non-adaptive project gets the exact posterior in the analytics job (no Laplace unless the
    sampler fails, labelled then); a request's live rows are labelled approximate and queue the job that stores the
    exact ones."""
    client_api = client_for("researcher")
    live = client_api.get(f"/api/v1/projects/{judged.pk}/scores/").json()
    assert live["source"] == "live" and live["pending_job"] is not None
    compared = [r for r in live["results"] if r["comparisons"]]
    assert compared and all(r["posterior"] in ("approximate (importance)", "approximate (laplace)") for r in compared)
    assert all(r["interval_note"] == analytics.LIVE_APPROXIMATE for r in compared)
    assert run_job(live["pending_job"]) == "succeeded"
    stored = client_api.get(f"/api/v1/projects/{judged.pk}/scores/").json()
    assert stored["source"] == "stored"
    labels = {r["posterior"] for r in stored["results"] if r["comparisons"]}
    assert labels and labels <= {"exact", "exact, not converged"}
    client.force_login(users["staff"])
    html = client.get(f"/projects/{judged.pk}/dashboard/?batch=ref+16977+1").content.decode()
    shown = {r["posterior"] for r in stored["results"] if r["comparisons"] and r["batch"] == "ref 16977 1"}
    assert ('id="posterior-warning"' in html) == ("exact, not converged" in shown)
