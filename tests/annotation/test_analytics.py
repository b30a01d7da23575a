"""Analytics wired to the database: export round trip against the released STS gold, commands,
the dashboard job and page."""
import csv
import uuid
from fractions import Fraction

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation import analytics
from annotation.models import Batch, BatchCandidate, Judgement
from annotation.services.judgements import judgement_submit
from annotation.services.scheduling import set_next
from jobs.runner import run_job
from jobs.services import job_create

pytestmark = pytest.mark.django_db


def _denominator(scores):
    for d in range(1, 1000):
        if all(abs(s * d - round(s * d)) < 1e-6 for s in scores):
            return d
    raise AssertionError("no denominator")


def test_judgements_reproducing_the_sts_ranking_export_the_files_normalised_scores(sts_project, annotators):
    """Round trip: one annotator judges all 4,851 pairs of reference 16977 1 through the scheduler,
    always choosing the candidate the released file scores higher. The export must rank candidates
    exactly as the file does and normalise as the file does (wins / the batch's largest win count)."""
    batch = Batch.objects.get(project=sts_project, name="ref 16977 1")
    gold = dict(BatchCandidate.objects.filter(batch=batch).values_list("verse_id", "gold_score"))
    assert _denominator(gold.values()) == 193  # the file's own definition: counts / 193
    sts_project.overlap_per_set = 0
    sts_project.set_size = 500
    sts_project.save()
    user = annotators[0]
    while (annotation_set := set_next(batch=batch, annotator=user)) is not None:
        for item in annotation_set.assignments.filter(status="open").select_related("pair"):
            a, b = item.pair.verse_a_id, item.pair.verse_b_id
            judgement_submit(annotator=user, assignment_id=item.pk, chosen_verse_id=a if gold[a] >= gold[b] else b,
                             client_uuid=uuid.uuid4())
    assert Judgement.objects.filter(batch=batch).count() == 4851
    rows = analytics.score_rows(analytics.load_project_data(sts_project, batch_ids=[batch.pk]), n_boot=20)
    top_wins = max(r["wins"] for r in rows)
    for row in rows:
        assert row["comparisons"] == 98
        assert Fraction(row["normalized_score"]).limit_denominator(1000) == Fraction(row["wins"], top_wins)
        assert row["win_share"] == pytest.approx(row["wins"] / 98)
    assert max(r["normalized_score"] for r in rows) == 1.0
    for x in rows:  # every strict order of the file is reproduced, by normalised score and by BT strength
        for y in rows:
            if x["gold_score"] > y["gold_score"]:
                assert x["normalized_score"] > y["normalized_score"]
                assert x["rank"] < y["rank"]
    assert {r["candidate_id"] for r in rows if r["normalized_score"] == 1.0} <= {
        r["candidate_id"] for r in rows if r["gold_score"] == 1.0}


def test_export_scores_command_writes_the_promised_columns(sts_project, annotators, tmp_path):
    batch = Batch.objects.get(project=sts_project, name="ref 16977 2")
    user = annotators[0]
    for _ in range(3):
        annotation_set = set_next(batch=batch, annotator=user)
        for item in annotation_set.assignments.select_related("pair"):
            judgement_submit(annotator=user, assignment_id=item.pk, chosen_verse_id=item.pair.verse_b_id,
                             client_uuid=uuid.uuid4())
    out = tmp_path / "scores.csv"
    call_command("export_scores", "--project", "sts", "--output", str(out), "--n-boot", "20")
    rows = list(csv.DictReader(out.open()))
    assert {"reference_id", "candidate_id", "wins", "comparisons", "normalized_score", "win_share", "bt_strength",
            "bt_low", "bt_high", "n_annotators"} <= set(rows[0])
    assert len(rows) == 99 + 99 + 98
    judged = [r for r in rows if r["reference_id"] == "16977 2" and int(r["comparisons"]) > 0]
    assert sum(int(r["wins"]) for r in judged) == 30
    assert all(r["n_annotators"] == "1" for r in judged)


def test_simulation_recovers_the_gold_ranking_and_dashboard_job_runs(sts_project, client, users):
    from scipy.stats import spearmanr

    call_command("simulate_annotations", "--project", "sts", "--annotators", "3", "--noise", "0.5", "--seed", "1",
                 "--batch", str(Batch.objects.get(project=sts_project, name="ref 17148 1").pk), "--max-judgements", "1500")
    batch = Batch.objects.get(project=sts_project, name="ref 17148 1")
    rows = [r for r in analytics.score_rows(analytics.load_project_data(sts_project, batch_ids=[batch.pk]), n_boot=20)
            if r["comparisons"]]
    rho = spearmanr([r["bt_strength"] for r in rows], [r["gold_score"] for r in rows]).statistic
    assert rho > 0.6, rho  # ~1,500 of 4,851 pairs, noisy annotators: a clearly positive recovery
    sts_project.stop_top_k = 5
    sts_project.save(update_fields=["stop_top_k"])
    job = job_create(kind="annotation.analytics", params={"project_id": sts_project.pk, "n_boot": 20})
    assert run_job(job.pk) == "succeeded"
    job.refresh_from_db()
    report = job.result
    assert report["n_judgements"] == 1500
    # reliability measured and deflated, and the top-5 claim's leverage, for the judged batch (stored and exported)
    separation = {r["batch"]: r for r in report["agreement"]["separation"]}
    judged = separation["ref 17148 1"]
    assert 0.5 < judged["deflated"] <= 1 and 0.5 < judged["measured"] <= 1 and judged["n_candidates"] == 99
    assert judged["top_k"] == 5 and judged["leverage"] >= 1 and separation["ref 16977 1"]["leverage"] is None
    assert report["agreement"]["fleiss"]["value"] is not None
    assert set(report["agreement"]["annotators"]) == {"sim-sts-1", "sim-sts-2", "sim-sts-3"}
    assert {(d["a"], d["b"]) for d in report["directionality"]} == {("16977 1", "16977 2"), ("16977 1", "17148 1"),
                                                                     ("16977 2", "17148 1")}
    gold = {(d["a"], d["b"]): (d["gold_a_to_b"], d["gold_b_to_a"]) for d in report["directionality"]}
    assert gold[("16977 1", "16977 2")] == pytest.approx((91 / 193, 153 / 190))
    client.force_login(users["staff"])
    sts_project.owner = users["staff"]
    html = client.get(f"/projects/{sts_project.pk}/dashboard/").content.decode()
    assert "Pairwise agreement κ" in html and "<svg" in html and "Top five" in html
    assert "Bradley–Terry strength with 95% credible interval" in html
    assert "Top five by Bradley–Terry strength" in html and "Expected at random</strong> is" in html
    assert "Kendall's coefficient of agreement" in html and "Paper-comparable figures" in html
    assert "Scale-separation reliability" in html and html.count('class="separation-row"') == 3
    exported = client.get(reverse("api-project-agreement", args=[sts_project.pk]), {"format": "json"}).json()
    assert exported["source"] == "stored" and exported["agreement"]["separation"] == report["agreement"]["separation"]


def test_dashboard_is_for_leads_and_researchers(sts_project, client, users):
    for role, expected in (("annotator", 403), ("researcher", 200), ("norole", 403)):
        client.force_login(users[role])
        assert client.get(f"/projects/{sts_project.pk}/dashboard/").status_code == expected, role


def test_planning_job_answers_each_question_once(sts_project, users):
    """One simulator (`pair_selection.compare_designs`), one budget per design for the target ρ, the stop rule only
    on demand; the page names no developer path."""
    job = job_create(kind="annotation.plan", params={"project_id": sts_project.pk, "n_items": 20, "n_reps": 1,
                                                     "shares": [0.2, 0.5]})
    assert run_job(job.pk) == "succeeded"
    job.refresh_from_db()
    assert "rows" not in job.result and job.result["stop_rule"] is None
    # Issue 26: exhaustive, random and adaptive designs on the same simulated annotators (the gold batch's strengths)
    designs = job.result["designs"]
    assert "gold scores" in designs["strengths"] and designs["seeds"] == 1
    assert designs["exhaustive"]["judgements"] > 4851 and 0.8 < designs["exhaustive"]["rho"] <= 1
    for design in ("random", "adaptive"):
        curve = designs[design]
        assert [r["judgements"] for r in curve] == sorted(r["judgements"] for r in curve)
        assert curve[-1]["rho"] > curve[0]["rho"]
    client = Client()
    client.force_login(sts_project.owner)
    html = client.get(f"/projects/{sts_project.pk}/planning/").content.decode()
    assert html.count("Judgements per batch for a ranking that agrees with the true one") == 1
    assert "Rank correlation with the true strengths" in html and "<svg" in html
    assert "manage.py" not in html and "perf/" not in html and "))" not in html
    assert "The stop rule was not simulated" in html


def test_planning_job_simulates_the_stop_rule_on_demand(sts_project, users):
    """Issue 39: the top-k stop rule simulated on the same strengths before a lead sets it (9 of the top 10)."""
    job = job_create(kind="annotation.plan", params={"project_id": sts_project.pk, "n_items": 12, "n_reps": 1,
                                                     "shares": [0.5], "stop_runs": 1})
    assert run_job(job.pk) == "succeeded"
    job.refresh_from_db()
    stop = job.result["stop_rule"]
    assert stop["settings"] == [10, 0.9, 0.5, 0.95] and stop["runs"] == 1
    assert 0 <= stop["false_stops"] <= stop["stopped"] <= 1
    if stop["stopped"]:
        assert 0 < stop["share_min"] <= stop["share_median"] <= stop["share_max"] <= 1
    client = Client()
    client.force_login(sts_project.owner)
    html = client.get(f"/projects/{sts_project.pk}/planning/").content.decode()
    assert "The stop rule on simulated batches" in html and stop["rule"] in html


def _without_csrf(response) -> str:
    import re

    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", response.content.decode())


def test_one_click_gold_set_from_a_batch(sts_project, client, users, annotators):
    from annotation.models import Membership
    from benchmarks.models import GoldSimilarityPair, GoldSimilaritySet

    batch = Batch.objects.get(project=sts_project, name="ref 16977 2")
    user = annotators[0]
    annotation_set = set_next(batch=batch, annotator=user)
    for item in annotation_set.assignments.select_related("pair"):
        judgement_submit(annotator=user, assignment_id=item.pk, chosen_verse_id=item.pair.verse_a_id, client_uuid=uuid.uuid4())
    client.force_login(users["annotator"])
    # not a lead of the project: answered exactly like a missing batch (a 403 told whether the batch exists)
    refused, missing = (client.post(f"/benchmarks/gold-sets/from-batch/{pk}/") for pk in (batch.pk, 10**9))
    assert refused.status_code == missing.status_code == 404
    assert _without_csrf(refused) == _without_csrf(missing)  # the same page, but for the per-response CSRF mask
    assert not GoldSimilaritySet.objects.exists()
    Membership.objects.create(project=sts_project, user=users["lead"], role="lead")
    client.force_login(users["lead"])
    response = client.post(f"/benchmarks/gold-sets/from-batch/{batch.pk}/", {"name": "round 2"})
    gold = GoldSimilaritySet.objects.get(name="round 2")
    assert response.status_code == 302 and response["Location"].endswith(f"/benchmarks/gold-sets/{gold.pk}/")
    pairs = GoldSimilarityPair.objects.filter(gold_set=gold)
    compared = {v for item in annotation_set.assignments.select_related("pair__verse_a", "pair__verse_b")
                for v in (item.pair.verse_a.verse_id, item.pair.verse_b.verse_id)}
    # Candidates nobody compared yet have no score and are left out of the gold set (not scored 0).
    assert pairs.count() == len(compared) < 98
    assert set(pairs.values_list("candidate_id", flat=True)) == compared
    assert max(pairs.values_list("score", flat=True)) == 1.0
    assert set(pairs.values_list("reference_id", flat=True)) == {"16977 2"}


def test_dashboard_computes_on_first_view_when_judgements_exist_and_nothing_is_stored(lead_user, annotators, client):
    """Issue 39: a project with judgements opened on "Not computed yet." until the lead pressed the button (the demo
    too). The first view queues the analytics job and shows its progress; one job at a time; no judgements, no job;
    a failed job is not retried by views (the button is there)."""
    import json

    from annotation.services.projects import batch_create, membership_add, project_create, verses_import
    from jobs.models import Job

    project = project_create(owner=lead_user, name="first-view")
    verses_import(project=project, data=json.dumps([{"verse_id": f"5 {k}", "text": f"v{k}"} for k in range(6)]).encode(),
                  filename="v.json")
    batch = batch_create(project=project, reference_id="5 0", candidate_ids=[f"5 {k}" for k in range(1, 6)], name="b")
    membership_add(project=project, username=annotators[0].username)
    client.force_login(lead_user)
    url = f"/projects/{project.pk}/dashboard/"
    jobs = Job.objects.filter(kind="annotation.analytics", params__project_id=project.pk)
    assert "Not computed yet." in client.get(url).content.decode() and not jobs.exists()  # nothing to compute
    item = set_next(batch=batch, annotator=annotators[0]).assignments.first()
    judgement_submit(annotator=annotators[0], assignment_id=item.pk, chosen_verse_id=item.left_id,
                     client_uuid=uuid.uuid4())
    html = client.get(url).content.decode()
    job = jobs.get()
    assert job.status == Job.Status.QUEUED and f'data-job="{job.pk}"' in html
    assert "Computing the figures of the judgements so far" in html
    client.get(url)
    assert jobs.count() == 1  # one at a time
    assert run_job(job.pk) == "succeeded"
    html = client.get(url).content.decode()
    assert "Last computed" in html and jobs.count() == 1
    Job.objects.filter(pk=job.pk).update(status=Job.Status.FAILED)  # nothing stored and the last attempt failed
    assert "Recompute now" in client.get(url).content.decode() and jobs.count() == 1
