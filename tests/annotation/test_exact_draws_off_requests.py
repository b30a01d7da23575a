"""Issue 26: no page or API read makes exact posterior draws (seconds at 99 candidates). The dashboard's stop-rule card
reads the latest stored `annotation.stop_check` result and queues one when it is stale; the scores API's live rows of
an adaptive project carry approximate intervals and queue the analytics job that stores the exact ones; the gold set
made from a batch reads counts only. Counted on the real Pólya-Gamma sampler (`bt_bayes._gibbs_draws`, wrapped, still
run): none in the requests, some in the jobs."""
import numpy as np
import pytest

from annotation.models import AnalyticsBatchResult, Project
from annotation.services.adaptive_batches import STOP_JOB, batch_counts, laplace_settled, stop_rule
from jobs.models import Job
from jobs.runner import run_job

from .test_adaptive_batches import _adaptive_project, _take_turns


@pytest.fixture
def draws(monkeypatch):
    """The exact sampler's calls, counted (the real sampler still runs)."""
    from annotation.stats import bt_bayes

    made = []
    real = bt_bayes._gibbs_draws

    def counting(*args, **kwargs):
        made.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(bt_bayes, "_gibbs_draws", counting)
    return made


def judged_adaptive_batch(lead, people, n: int = 7):
    """An adaptive batch of n − 1 candidates judged by their number (a known order) until no pair is left to serve;
    then the top-2 rule (margin 0.5) gets a level 0.05 above its Laplace probability, so the rule's gate passes and
    the exact draws decide. Returns (project, batch)."""
    from annotation.stats import pair_selection

    project, batch = _adaptive_project(lead, people, n=n)
    for _ in range(6):
        _take_turns(batch, people, 1)
    counts = batch_counts(batch)[0]
    assert ((counts.sum(0) + counts.sum(1)) > 0).all()
    Project.objects.filter(pk=project.pk).update(stop_top_k=2, stop_recall=1.0, stop_margin=0.5, stop_level=0.5)
    project.refresh_from_db()
    p = laplace_settled(pair_selection.posterior(counts), np.ones(len(counts), bool), stop_rule(project))["p"]
    assert p >= 0.45  # so a level 0.05 above it is a valid level the gate passes
    Project.objects.filter(pk=project.pk).update(stop_level=round(min(0.99, max(0.5, p + 0.05)), 3))
    project.refresh_from_db()
    return project, batch


def stop_card(client, project) -> str:
    html = client.get(f"/projects/{project.pk}/dashboard/").content.decode()
    return html[html.index('id="stop-rule"'):html.index("</section>", html.index('id="stop-rule"'))]


@pytest.mark.django_db
def test_dashboard_stop_card_reads_the_stored_check_queues_one_and_makes_no_draws(lead_user, annotators, client,
                                                                                   draws):
    project, batch = judged_adaptive_batch(lead_user, annotators[:2])
    judged = int(batch_counts(batch)[0].sum())
    checks = Job.objects.filter(kind=STOP_JOB, params__batch_id=batch.pk)
    assert not checks.exists() and draws == []
    client.force_login(lead_user)
    card = stop_card(client, project)
    check = checks.get()  # queued by the read: no stored result yet
    assert check.status == Job.Status.QUEUED and draws == []
    assert "computing… <span class=\"status\">queued" in card and f'data-job="{check.pk}"' in card and "(approx.)" in card
    assert "(exact)" not in card
    stop_card(client, project)
    assert checks.count() == 1 and draws == []  # one check at a time
    assert run_job(check.pk) == "succeeded"  # the worker's part
    assert len(draws) == 1
    check.refresh_from_db()
    assert check.result["judgements"] == judged and check.result["rule"] == stop_rule(project).as_list()
    assert 0 <= check.result["p"] <= 1
    card = stop_card(client, project)
    assert len(draws) == 1 and checks.count() == 1  # read back, not recomputed, nothing queued
    assert "(exact)" in card and "exact-computing" not in card
    assert f"made at {judged} judgements (0 since)" in card
    assert f"{check.result['p']:.3f} (exact)" in card


@pytest.mark.django_db
def test_live_scores_of_an_adaptive_project_make_no_draws_and_queue_the_analytics_job(lead_user, annotators, client,
                                                                                     draws):
    from annotation import analytics

    project, batch = judged_adaptive_batch(lead_user, annotators[:2])
    client.force_login(lead_user)
    url = f"/api/v1/projects/{project.pk}/scores/"
    body = client.get(url).json()
    assert draws == [] and body["source"] == "live"
    job = Job.objects.get(kind="annotation.analytics", params__project_id=project.pk)
    assert body["pending_job"] == job.pk and job.status == Job.Status.QUEUED
    compared = [r for r in body["results"] if r["comparisons"]]
    assert compared and all(r["interval_note"] == analytics.LIVE_APPROXIMATE for r in compared)
    assert client.get(url).json()["pending_job"] == job.pk  # one job at a time
    filtered = client.get(f"{url}?annotator={annotators[0].username}").json()
    assert filtered["source"] == "live" and filtered["pending_job"] == job.pk and draws == []
    # the gold set made from the batch reads counts only
    assert client.post(f"/benchmarks/gold-sets/from-batch/{batch.pk}/", {"name": "g"}).status_code == 302
    assert draws == []
    assert run_job(job.pk) == "succeeded"  # the analytics job makes the exact draws and stores them
    made = len(draws)
    assert made >= 1 and AnalyticsBatchResult.objects.filter(job=job).exists()
    stored = client.get(url).json()
    assert len(draws) == made and stored["source"] == "stored" and stored["job"] == job.pk
    assert stored["pending_job"] is None
    assert not any(r["interval_note"] == analytics.LIVE_APPROXIMATE for r in stored["results"])
    assert Job.objects.filter(kind="annotation.analytics", params__project_id=project.pk).count() == 1
