"""Re-ranking with one's verdicts left the product (an experiment, now `perf/verdict_fit.py`): a run re-ranked by an
earlier version keeps its stored result readable (API, the `order=refit` list, the run page's card), and nothing
starts a new one (a real `channels` run over the locisimiles package's examples, its job run in-process)."""
import pytest

from workbench.models import Candidate, DetectionRun

from .conftest import EXAMPLES

pytestmark = pytest.mark.django_db

STORED = {"fitted": True, "message": "Gained weight: semantic.", "n_positive": 12, "n_negative": 14,
          "needed": {}, "changes": [{"channel": "semantic", "shipped": 1.0, "fitted": 2.5, "ratio": 2.5}],
          "verify_next": [], "by": "res-a", "at": "2026-11-30T10:00:00+00:00"}


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


def store_refit(run):
    """What an earlier version's `workbench.refit` job left: the result and a score per candidate (reversed)."""
    DetectionRun.objects.filter(pk=run.pk).update(refit=STORED)
    for c in Candidate.objects.filter(run=run):
        Candidate.objects.filter(pk=c.pk).update(refit_score=-c.score)
    run.refresh_from_db()
    return run


def test_a_stored_refit_stays_readable_and_none_is_started(make_user, client):
    from rest_framework.test import APIClient

    from tests.conftest import api_key

    owner, other = make_user("res-a", "researcher"), make_user("res-b", "researcher")
    run = _channels_run(owner)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {api_key(owner)}")
    url = f"/api/v1/workbench/runs/{run.pk}/refit/"
    assert api.get(url).json()["fitted"] is None  # never re-ranked
    client.force_login(owner)
    assert 'id="refit-card"' not in client.get(f"/workbench/runs/{run.pk}/").content.decode()

    store_refit(run)
    body = api.get(url).json()
    assert body["fitted"] is True and body["changes"][0]["channel"] == "semantic" and body["n_positive"] == 12
    listed = api.get(f"/api/v1/workbench/runs/{run.pk}/candidates/?order=refit&page_size=500").json()["results"]
    assert [r["id"] for r in listed] == list(Candidate.objects.filter(run=run).order_by(
        "-refit_score", "query_position", "rank", "id").values_list("id", flat=True))
    page = client.get(f"/workbench/runs/{run.pk}/").content.decode()
    assert 'id="refit-weights"' in page and "Gained weight: semantic." in page and "refit-button" not in page

    assert api.post(url).status_code == 405  # no new re-ranking
    assert client.post(f"/workbench/runs/{run.pk}/refit/").status_code == 404
    other_api = APIClient()
    other_api.credentials(HTTP_AUTHORIZATION=f"Token {api_key(other)}")
    assert other_api.get(url).status_code == 404
