"""A run's owner renames and deletes it from its page; the confirmation page says what goes and what is kept;
nobody else can."""
import pytest

from workbench.models import Candidate, DetectionRun, Document, Verdict
from workbench.services import verdict_set

pytestmark = pytest.mark.django_db



def test_the_owner_renames_and_deletes_a_run_after_the_confirmation_page(page_client, finished_detection, users):
    run = finished_detection
    owner = page_client(users["researcher"])
    renamed = owner.post(f"/workbench/runs/{run.pk}/rename/", {"name": "Jerome vs Virgil"}, follow=True)
    assert "Renamed: Jerome vs Virgil" in renamed.content.decode()
    assert DetectionRun.objects.get(pk=run.pk).name == "Jerome vs Virgil"
    too_long = owner.post(f"/workbench/runs/{run.pk}/rename/", {"name": "x" * 201}, follow=True)
    assert "Not renamed: name: at most 200 characters" in too_long.content.decode()
    verdict_set(candidate=Candidate.objects.filter(run=run).first(), user=users["researcher"], decision="cit.")
    n_candidates = Candidate.objects.filter(run=run).count()
    page = owner.get(f"/workbench/runs/{run.pk}/delete/").content.decode()
    assert f"its {n_candidates} candidate(s) and the 1 verdict(s)" in page
    assert "Its two documents" in page and "Benchmark versions promoted from it" in page
    assert DetectionRun.objects.filter(pk=run.pk).exists()  # the page itself changes nothing
    gone = owner.post(f"/workbench/runs/{run.pk}/delete/", follow=True)
    assert "Jerome vs Virgil deleted with its candidates and verdicts." in gone.content.decode()
    assert not DetectionRun.objects.filter(pk=run.pk).exists()
    assert not Candidate.objects.filter(run_id=run.pk).exists() and not Verdict.objects.exists()
    assert Document.objects.count() == 2  # the documents stay


def test_only_the_runs_owner_may_rename_or_delete_it(page_client, finished_detection, make_user, users):
    run = finished_detection
    other = make_user("other-researcher", "researcher")
    for client in (page_client(other), page_client(users["lead"])):
        assert client.post(f"/workbench/runs/{run.pk}/rename/", {"name": "mine"}).status_code in (403, 404)
        assert client.get(f"/workbench/runs/{run.pk}/delete/").status_code in (403, 404)
        assert client.post(f"/workbench/runs/{run.pk}/delete/").status_code in (403, 404)
    run.refresh_from_db()
    assert run.name == "" and DetectionRun.objects.filter(pk=run.pk).exists()


def test_a_run_whose_job_is_still_running_is_not_deleted(page_client, finished_detection, users):
    run = finished_detection
    run.job.status = "running"
    run.job.save(update_fields=["status"])
    owner = page_client(users["researcher"])
    page = owner.get(f"/workbench/runs/{run.pk}/delete/").content.decode()
    assert "still queued or running" in page and 'id="confirm-button"' not in page
    owner.post(f"/workbench/runs/{run.pk}/delete/")
    assert DetectionRun.objects.filter(pk=run.pk).exists()


def test_the_owner_renames_and_deletes_a_run_over_the_api(client_for, finished_detection, users, make_user):
    """The same services as the page, over the API: another researcher (a second real user) gets 404 exactly like
    a missing id, and the run is unchanged."""
    run = finished_detection
    owner, other = client_for("researcher"), client_for(make_user("other-researcher", "researcher"))
    for method, body in (("patch", {"name": "mine"}), ("delete", None), ("get", None)):
        url = f"/api/v1/workbench/runs/{run.pk}/" if method != "get" else f"/api/v1/workbench/runs/{run.pk}/delete-plan/"
        missing = url.replace(f"/{run.pk}/", "/999999/")
        theirs, absent = getattr(other, method)(url, body, format="json"), getattr(other, method)(missing, body, format="json")
        assert theirs.status_code == absent.status_code == 404 and theirs.json() == absent.json()
    assert DetectionRun.objects.get(pk=run.pk).name == ""
    renamed = owner.patch(f"/api/v1/workbench/runs/{run.pk}/", {"name": "Jerome vs Virgil"}, format="json")
    assert renamed.status_code == 200 and renamed.json()["name"] == "Jerome vs Virgil"
    too_long = owner.patch(f"/api/v1/workbench/runs/{run.pk}/", {"name": "x" * 201}, format="json")
    assert too_long.status_code == 400 and too_long.json() == {"detail": "name: at most 200 characters"}
    n_candidates = Candidate.objects.filter(run=run).count()
    plan = owner.get(f"/api/v1/workbench/runs/{run.pk}/delete-plan/").json()
    assert plan["refused"] is None and f"its {n_candidates} candidate(s)" in plan["goes"][0]
    run.job.status = "running"
    run.job.save(update_fields=["status"])
    busy = owner.delete(f"/api/v1/workbench/runs/{run.pk}/")
    assert busy.status_code == 409 and "still queued or running" in busy.json()["detail"]
    run.job.status = "succeeded"
    run.job.save(update_fields=["status"])
    gone = owner.delete(f"/api/v1/workbench/runs/{run.pk}/")
    assert gone.status_code == 200 and gone.json() == {"detail": "Jerome vs Virgil deleted with its candidates and verdicts."}
    assert not DetectionRun.objects.filter(pk=run.pk).exists() and Document.objects.count() == 2
