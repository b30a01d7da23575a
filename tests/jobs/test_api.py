"""Job API: list/detail/cancel and its permission matrix."""
import json

import pytest

from jobs.models import Job


@pytest.fixture
def jobs_by_owner(users):
    return {role: Job.objects.create(kind="system.sleep", owner=user) for role, user in users.items()}


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["annotator", "lead", "researcher", "norole", "staff"])
def test_allows_every_authenticated_role_to_list_own_jobs(client_for, jobs_by_owner, role):
    response = client_for(role).get("/api/v1/jobs/")
    assert response.status_code == 200
    ids = {row["id"] for row in response.json()["results"]}
    if role == "staff":
        assert ids == {job.pk for job in jobs_by_owner.values()}
    else:
        assert ids == {jobs_by_owner[role].pk}


@pytest.mark.django_db
def test_denies_anonymous_to_list_jobs(client_for):
    assert client_for(None).get("/api/v1/jobs/").status_code in (401, 403)


@pytest.mark.django_db
def test_denies_seeing_someone_elses_job(client_for, jobs_by_owner):
    assert client_for("annotator").get(f"/api/v1/jobs/{jobs_by_owner['lead'].pk}/").status_code == 404
    assert client_for("staff").get(f"/api/v1/jobs/{jobs_by_owner['lead'].pk}/").status_code == 200


@pytest.mark.django_db
def test_allows_owner_to_cancel_and_reports_conflict_when_finished(client_for, jobs_by_owner):
    job = jobs_by_owner["researcher"]
    response = client_for("researcher").post(f"/api/v1/jobs/{job.pk}/cancel/")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    again = client_for("researcher").post(f"/api/v1/jobs/{job.pk}/cancel/")
    assert again.status_code == 409 and "already cancelled" in again.json()["detail"]


@pytest.mark.django_db
def test_denies_cancel_to_other_users(client_for, jobs_by_owner):
    job = jobs_by_owner["lead"]
    assert client_for("annotator").post(f"/api/v1/jobs/{job.pk}/cancel/").status_code == 404
    assert client_for(None).post(f"/api/v1/jobs/{job.pk}/cancel/").status_code in (401, 403)
    Job.objects.filter(pk=job.pk).update(status="queued")
    assert client_for("staff").post(f"/api/v1/jobs/{job.pk}/cancel/").status_code == 200


@pytest.mark.django_db
def test_filter_by_status(client_for, users):
    Job.objects.create(kind="system.sleep", owner=users["lead"], status="failed")
    Job.objects.create(kind="system.sleep", owner=users["lead"], status="queued")
    rows = client_for("lead").get("/api/v1/jobs/?status=failed").json()["results"]
    assert [row["status"] for row in rows] == ["failed"]


@pytest.mark.django_db
def test_me_reports_roles(client_for):
    body = client_for("lead").get("/api/v1/me/").json()
    assert body == {"username": "lea", "roles": ["lead"], "is_staff": False}


@pytest.mark.django_db
def test_token_endpoint_issues_the_users_token(api_client, users):
    from core.models import ApiToken

    response = api_client.post("/api/v1/auth/token/", {"username": "lea", "password": "pw-lea"})
    assert response.status_code == 200
    key = response.json()["token"]
    assert ApiToken.objects.get(user=users["lead"]).digest == ApiToken.digest_of(key)
    assert api_client.post("/api/v1/auth/token/", {"username": "lea", "password": "wrong"}).status_code == 400


@pytest.mark.django_db
def test_benchmark_jobs_are_visible_to_researchers_and_leads(client_for, users):
    from benchmarks.services.runs import LOCI_KIND

    job = Job.objects.create(kind=LOCI_KIND, params={"run_id": 1}, owner=users["staff"])
    assert client_for("researcher").get(f"/api/v1/jobs/{job.pk}/").status_code == 200
    assert client_for("lead").get(f"/api/v1/jobs/{job.pk}/").status_code == 200
    assert client_for("annotator").get(f"/api/v1/jobs/{job.pk}/").status_code == 404
    # Seeing is not cancelling: only the owner and staff may cancel.
    assert client_for("researcher").post(f"/api/v1/jobs/{job.pk}/cancel/").status_code == 403


@pytest.mark.django_db
def test_the_jobs_list_exports_every_filtered_row_as_csv(client_for, users):
    """`?format=csv` (core.pagination's CSV): every row the filters keep, not a page; `params` as one JSON cell;
    another user's jobs never in it."""
    import csv
    import io

    mine = [Job.objects.create(kind="system.sleep", owner=users["researcher"], params={"seconds": k, "note": "é,\""})
            for k in range(3)]
    Job.objects.filter(pk=mine[0].pk).update(status="succeeded")
    Job.objects.create(kind="system.sleep", owner=users["lead"], params={"seconds": 9})
    client = client_for("researcher")
    response = client.get("/api/v1/jobs/?format=csv&page_size=1")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert sorted(int(r["id"]) for r in rows) == sorted(job.pk for job in mine)  # every row, not one page
    assert list(rows[0]) == [f for f in ("id", "kind", "queue", "lane", "params", "status", "progress", "progress_message",
                                         "error", "error_message", "owner", "created", "started", "finished",
                                         "heartbeat", "worker", "duration_seconds")]
    by_id = {int(r["id"]): r for r in rows}
    assert json.loads(by_id[mine[2].pk]["params"]) == {"seconds": 2, "note": "é,\""}
    assert {r["owner"] for r in rows} == {"res"}
    queued = list(csv.DictReader(io.StringIO(client.get("/api/v1/jobs/?format=csv&status=queued").content.decode(
        "utf-8-sig"))))
    assert sorted(int(r["id"]) for r in queued) == sorted(job.pk for job in mine[1:])
    page = client.get("/api/v1/jobs/?page_size=1").json()  # JSON stays the one page shape
    assert page["count"] == 3 and len(page["results"]) == 1


@pytest.mark.django_db
def test_a_job_says_its_lane_and_how_many_jobs_are_ahead_of_it(client_for, users, client):
    """Issue 45: the API and the job page name the lane and count the jobs queued before it in the same queue."""
    owner = users["researcher"]
    bulk = [Job.objects.create(kind="system.sleep", owner=owner) for _ in range(3)]
    quick = Job.objects.create(kind="annotation.plan", queue="interactive", owner=owner)
    Job.objects.filter(pk=bulk[0].pk).update(status="running")
    api = client_for("researcher")
    assert [api.get(f"/api/v1/jobs/{j.pk}/").json()["ahead"] for j in (*bulk, quick)] == [None, 0, 1, 0]
    assert api.get(f"/api/v1/jobs/{quick.pk}/").json()["lane"] == "interactive"
    client.force_login(owner)
    html = client.get(f"/jobs/{bulk[2].pk}/").content.decode()
    assert "bulk lane (queue cpu)" in html and " · 1 job ahead of it" in html
