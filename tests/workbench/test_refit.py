"""Re-ranking a workbench run with its owner's verdicts: the service, the job and the API (a real `channels` run
over the locisimiles package's examples, jobs run in-process)."""
import numpy as np
import pytest

from workbench.engine.verdict_fit import MIN_NEGATIVE, MIN_POSITIVE
from workbench.models import Candidate, DetectionRun
from workbench.services import WorkbenchError, channel_scores, run_refit_queue, verdict_set

from .conftest import EXAMPLES

pytestmark = pytest.mark.django_db


def _channels_run(owner, query=None, source=None):
    from jobs.runner import run_job
    from workbench.services import detection_run_create, document_upload

    query = query or document_upload(name="hieronymus_samples.csv",
                                     data=(EXAMPLES / "hieronymus_samples.csv").read_bytes(), owner=owner)
    source = source or document_upload(name="vergil_samples.csv", data=(EXAMPLES / "vergil_samples.csv").read_bytes(),
                                       owner=owner)
    run = detection_run_create(query_document=query, source_document=source, retriever="channels",
                               retriever_params={"profile": "prose"}, top_k=10, owner=owner)
    assert run_job(run.job_id) == "succeeded"
    run.refresh_from_db()
    return run


@pytest.fixture
def two_runs(make_user):
    """Researcher a's run and researcher b's run over the same two documents."""
    a, b = make_user("res-a", "researcher"), make_user("res-b", "researcher")
    run_a = _channels_run(a)
    return run_a, _channels_run(b, run_a.query_document, run_a.source_document)


def _planted_verdicts(run, user, channel="semantic", undecided_top=0):
    """Verdicts by ``user`` that follow one channel only (its top half confirmed, the rest rejected): evidence that
    channel deserves more weight than the shipped profile gives it. Each query's first ``undecided_top`` candidates
    are left undecided."""
    cands = list(Candidate.objects.filter(run=run, rank__gt=undecided_top).order_by("id"))
    key = np.asarray([channel_scores(c.explain).get(channel, (0.0, 0.0))[0] for c in cands])
    cut = np.median(key)
    for c, k in zip(cands, key):
        verdict_set(candidate=c, user=user, decision="cit." if k > cut else "rejected")
    return cands


def _run_refit(run, user):
    from jobs.runner import run_job

    job = run_refit_queue(run=run, user=user)
    assert run_job(job.pk) == "succeeded", job.error
    run.refresh_from_db()
    return run


def test_refit_reorders_with_the_owners_verdicts_and_leaves_other_runs_alone(two_runs, make_user):
    run_a, run_b = two_runs
    owner = run_a.owner
    assert all(channel_scores(c.explain) for c in run_a.candidates.all()[:20])  # the channels' scores are stored
    _planted_verdicts(run_a, owner)
    staff = make_user("boss", staff=True)  # another person's verdicts on the same run do not count
    for c in run_a.candidates.all()[:15]:
        verdict_set(candidate=c, user=staff, decision="cf.")
    run_a = _run_refit(run_a, owner)
    refit = run_a.refit
    assert refit["fitted"], refit["message"]
    n_owner = run_a.candidates.filter(verdicts__user=owner).count()
    assert refit["n_positive"] + refit["n_negative"] == n_owner
    changes = {c["channel"]: c["ratio"] for c in refit["changes"]}
    assert changes["semantic"] == max(changes.values()) > 1  # the channel the verdicts follow gained most
    assert "Gained weight: semantic" in refit["message"] and refit["by"] == owner.username
    scores = dict(run_a.candidates.values_list("id", "refit_score"))
    assert None not in scores.values()
    # the re-ranked order is the explorer's order=refit and differs from the shipped one
    from workbench import selectors

    refit_order = list(selectors.candidates(run=run_a, filters=selectors.CandidateFilters(order="refit"))
                       .values_list("id", flat=True))
    shipped = list(selectors.candidates(run=run_a, filters=selectors.CandidateFilters(order="score"))
                   .values_list("id", flat=True))
    assert sorted(refit_order) == sorted(shipped) and refit_order != shipped
    assert set(refit["verify_next"]) <= set(scores) and not (set(refit["verify_next"]) & set(
        run_a.candidates.filter(verdicts__user=owner).values_list("id", flat=True)))
    # b's run over the same documents is untouched
    run_b.refresh_from_db()
    assert run_b.refit == {} and not run_b.candidates.exclude(refit_score=None).exists()
    # nobody but the owner re-ranks it, staff included
    with pytest.raises(WorkbenchError, match="only the run's owner"):
        run_refit_queue(run=run_a, user=staff)


def test_too_few_verdicts_keep_the_shipped_order_and_say_how_many_more(two_runs):
    run, _ = two_runs
    cands = list(run.candidates.order_by("-score", "id"))
    for c in cands[:3]:
        verdict_set(candidate=c, user=run.owner, decision="cit.")
    for c in cands[3:15]:
        verdict_set(candidate=c, user=run.owner, decision="rejected")
    verdict_set(candidate=cands[20], user=run.owner, decision="unsure")  # unsure counts for neither
    run = _run_refit(run, run.owner)
    assert not run.refit["fitted"] and run.refit["needed"] == {"confirmed": MIN_POSITIVE - 3}
    assert f"needs {MIN_POSITIVE - 3} more confirmed" in run.refit["message"]
    assert not run.candidates.exclude(refit_score=None).filter(refit_score__lt=0).exists()
    assert all(c.refit_score == c.score for c in run.candidates.all())  # the shipped order, kept


def test_verdicts_of_one_class_get_a_sentence(two_runs):
    run, _ = two_runs
    for c in run.candidates.order_by("id")[:MIN_NEGATIVE + 5]:
        verdict_set(candidate=c, user=run.owner, decision="rejected")
    run = _run_refit(run, run.owner)
    assert not run.refit["fitted"] and run.refit["changes"] and run.refit["needed"] == {}
    assert run.refit["message"].startswith(f"All {MIN_NEGATIVE + 5} of your verdicts reject")


def test_refusals(two_runs, finished_detection):
    run, _ = two_runs
    with pytest.raises(WorkbenchError, match="gives no per-channel scores"):  # a bm25-lemma run
        run_refit_queue(run=finished_detection, user=finished_detection.owner)
    job = run_refit_queue(run=run, user=run.owner)  # queued (eager: already run) ...
    run.refresh_from_db()
    job.status = "running"
    job.save(update_fields=["status"])
    with pytest.raises(WorkbenchError, match="already queued or running") as exc:
        run_refit_queue(run=run, user=run.owner)
    assert exc.value.status == 409
    from workbench.services import run_delete

    with pytest.raises(WorkbenchError, match="re-ranking with your verdicts is still queued or running"):
        run_delete(run=run, user=run.owner)


def test_api_refit_for_the_owner_and_404_for_others(two_runs, make_user):
    from rest_framework.test import APIClient

    from tests.conftest import api_key

    run_a, run_b = two_runs

    def client(user):
        c = APIClient()
        c.credentials(HTTP_AUTHORIZATION=f"Token {api_key(user)}")
        return c

    a, b = client(run_a.owner), client(run_b.owner)
    assert a.get(f"/api/v1/workbench/runs/{run_a.pk}/refit/").json()["status"] is None
    _planted_verdicts(run_a, run_a.owner)
    answer = a.post(f"/api/v1/workbench/runs/{run_a.pk}/refit/")
    assert answer.status_code == 202, answer.content
    assert answer.json()["status"] == "queued" and answer.json()["fitted"] is None
    assert a.post(f"/api/v1/workbench/runs/{run_a.pk}/refit/").status_code == 409  # one at a time
    from jobs.runner import run_job

    assert run_job(answer.json()["job"]) == "succeeded"  # the worker (enqueued after the commit)
    body = a.get(f"/api/v1/workbench/runs/{run_a.pk}/refit/").json()
    assert body["status"] == "succeeded" and body["fitted"] is True and body["changes"][0]["channel"] == "semantic"
    listed = a.get(f"/api/v1/workbench/runs/{run_a.pk}/candidates/?order=refit&page_size=500").json()["results"]
    assert [r["id"] for r in listed] == list(Candidate.objects.filter(run=run_a).order_by(
        "-refit_score", "query_position", "rank", "id").values_list("id", flat=True))
    # b sees neither a's run nor its re-ranking, and cannot start one
    assert b.get(f"/api/v1/workbench/runs/{run_a.pk}/refit/").status_code == 404
    assert b.post(f"/api/v1/workbench/runs/{run_a.pk}/refit/").status_code == 404
    assert DetectionRun.objects.get(pk=run_b.pk).refit == {}
    few = b.post(f"/api/v1/workbench/runs/{run_b.pk}/refit/").json()
    assert run_job(few["job"]) == "succeeded"
    few = b.get(f"/api/v1/workbench/runs/{run_b.pk}/refit/").json()
    assert few["fitted"] is False and few["message"].startswith("No verdicts yet")
    schema = a.get("/api/schema/").content.decode()
    assert "/api/v1/workbench/runs/{id}/refit/" in schema and "verify_next" in schema
