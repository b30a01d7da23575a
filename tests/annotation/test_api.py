"""Annotation API: the permission matrix of every endpoint, and the request flow."""
import csv
import io
import uuid

import pytest

from annotation.models import Judgement, Membership

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(users, small_project, lead_user):
    """The role users of conftest: the 'lead' leads the project, the 'annotator' is a member."""
    from annotation.services.projects import membership_add

    project, batch = small_project
    Membership.objects.create(project=project, user=users["lead"], role="lead")
    membership_add(project=project, username=users["annotator"].username)
    return project, batch


def _status(client, method, url, data=None, **kw):
    return getattr(client, method)(url, data, format="json", **kw).status_code


ROLES = ["annotator", "lead", "researcher", "norole", None]


@pytest.mark.parametrize("role, allowed", [("lead", True), ("annotator", False), ("researcher", False),
                                           ("norole", False), (None, False)])
def test_create_project(client_for, users, role, allowed):
    code = _status(client_for(role), "post", "/api/v1/projects/", {"name": f"p-{role}", "set_size": 10})
    assert (code == 201) == allowed, code


@pytest.mark.parametrize("method, path, body, allowed_roles", [
    ("get", "/api/v1/projects/{p}/", None, {"lead", "annotator", "researcher", "staff"}),
    ("patch", "/api/v1/projects/{p}/", {"set_size": 12}, {"lead", "staff"}),
    ("get", "/api/v1/projects/{p}/members/", None, {"lead", "staff"}),
    ("post", "/api/v1/projects/{p}/members/", {"username": "ann4"}, {"lead", "staff"}),
    ("get", "/api/v1/projects/{p}/verses/", None, {"lead", "annotator", "researcher", "staff"}),
    ("get", "/api/v1/projects/{p}/batches/", None, {"lead", "annotator", "researcher", "staff"}),
    ("post", "/api/v1/projects/{p}/batches/", {"reference_id": "100 1", "candidate_ids": ["100 2", "100 3"], "name": "n"}, {"lead", "staff"}),
    ("get", "/api/v1/projects/{p}/progress/", None, {"lead", "staff"}),
    ("get", "/api/v1/batches/{b}/", None, {"lead", "annotator", "researcher", "staff"}),
    ("patch", "/api/v1/batches/{b}/", {"status": "open"}, {"lead", "staff"}),
    ("post", "/api/v1/batches/{b}/next-set/", None, {"annotator"}),
    ("get", "/api/v1/projects/{p}/scores/", None, {"lead", "researcher", "staff"}),
    ("get", "/api/v1/batches/{b}/scores/", None, {"lead", "researcher", "staff"}),
    ("get", "/api/v1/projects/{p}/judgements/", None, {"lead", "researcher", "staff"}),
    ("get", "/api/v1/projects/{p}/agreement/", None, {"lead", "researcher", "staff"}),
    ("get", "/api/v1/me/batches/", None, {"annotator", "staff"}),
])
@pytest.mark.parametrize("role", ["annotator", "lead", "researcher", "norole", "staff", None])
def test_permission_matrix(world, client_for, method, path, body, allowed_roles, role):
    project, batch = world
    url = path.format(p=project.pk, b=batch.pk)
    code = _status(client_for(role), method, url, body)
    if role in allowed_roles:
        assert code in (200, 201), f"{role} {method} {url}: {code}"
    else:
        assert code in (401, 403, 404), f"{role} {method} {url}: {code}"


def test_annotator_flow_over_the_api(world, client_for, users):
    project, batch = world
    client = client_for("annotator")
    body = client.post(f"/api/v1/batches/{batch.pk}/next-set/").json()
    assert body["reference"]["verse_id"] == "100 0" and len(body["set"]["items"]) == 4
    item = body["set"]["items"][0]
    payload = {"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
               "client_uuid": str(uuid.uuid4()), "response_ms": 1500}
    first = client.post("/api/v1/judgements/", payload, format="json")
    retry = client.post("/api/v1/judgements/", payload, format="json")
    assert first.status_code == 201 and retry.status_code == 200 and first.json()["id"] == retry.json()["id"]
    assert first.json()["chose_left"] is True
    wrong = client.post("/api/v1/judgements/", dict(payload, client_uuid=str(uuid.uuid4()), chosen_verse=body["reference"]["id"],
                                                     assignment_id=body["set"]["items"][1]["assignment_id"]), format="json")
    assert wrong.status_code == 400 and "not one of the two candidates" in wrong.json()["detail"]
    stranger = client_for("staff").post("/api/v1/judgements/", dict(payload, client_uuid=str(uuid.uuid4())), format="json")
    assert stranger.status_code == 403
    undo = client.post(f"/api/v1/sets/{body['set']['id']}/undo/")
    assert undo.status_code == 200 and undo.json()["undone_at"]
    again = client.post(f"/api/v1/sets/{body['set']['id']}/undo/")
    assert again.status_code == 409 and "Nothing to undo" in again.json()["detail"]
    assert Judgement.objects.filter(undone_at__isnull=True).count() == 0


def test_closed_batch_stores_answers_to_served_pairs_and_serves_no_new_set(world, client_for):
    project, batch = world
    client = client_for("annotator")
    item = client.post(f"/api/v1/batches/{batch.pk}/next-set/").json()["set"]["items"][0]
    client_for("lead").patch(f"/api/v1/batches/{batch.pk}/", {"status": "closed"}, format="json")
    response = client.post("/api/v1/judgements/", {"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
                                                   "client_uuid": str(uuid.uuid4())}, format="json")
    assert response.status_code == 201 and response.json()["after_close"] is True
    closed = client.post(f"/api/v1/batches/{batch.pk}/next-set/")
    assert closed.status_code == 409 and "complete" in closed.json()["detail"]


def test_verse_upload_reports_the_line_and_imports_nothing(world, client_for):
    from django.core.files.uploadedfile import SimpleUploadedFile

    project, _ = world
    bad = SimpleUploadedFile("bad.csv", "verse_id,text\n7 1,α\n7 1,β\n".encode(), content_type="text/csv")
    response = client_for("lead").post(f"/api/v1/projects/{project.pk}/verses/import/", {"file": bad}, format="multipart")
    assert response.status_code == 400 and "line 3: duplicate verse id '7 1'" in response.json()["detail"]
    assert not project.verses.filter(verse_id="7 1").exists()
    good = SimpleUploadedFile("good.csv", "verse_id,text\n7 1,α\n7 2,β\n".encode(), content_type="text/csv")
    response = client_for("lead").post(f"/api/v1/projects/{project.pk}/verses/import/", {"file": good}, format="multipart")
    assert response.status_code == 201 and response.json()["created"] == 2


def test_scores_and_judgements_export_csv_and_pagination(world, client_for):
    from annotation.services.judgements import judgement_submit
    from annotation.services.scheduling import set_next
    from core.services import user_create_or_update  # noqa: F401

    project, batch = world
    user = project.memberships.get(role="annotator", user__username="ann").user
    annotation_set = set_next(batch=batch, annotator=user)
    for item in annotation_set.assignments.select_related("pair"):
        judgement_submit(annotator=user, assignment_id=item.pk, chosen_verse_id=item.pair.verse_a_id, client_uuid=uuid.uuid4())
    lead = client_for("lead")
    page = lead.get(f"/api/v1/projects/{project.pk}/scores/?n_boot=20").json()
    assert page["count"] == 5 and len(page["results"]) == 5
    text = lead.get(f"/api/v1/projects/{project.pk}/scores/?format=csv&n_boot=20").content.decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0])[:9] == ["batch", "batch_id", "reference_id", "reference_text", "candidate_id", "candidate_text", "wins",
                                 "comparisons", "normalized_score"]
    assert sum(int(r["wins"]) for r in rows) == 4
    assert max(float(r["normalized_score"]) for r in rows if r["normalized_score"]) == 1.0
    judgements = lead.get(f"/api/v1/projects/{project.pk}/judgements/?format=csv&annotator=ann").content.decode()
    assert len(list(csv.DictReader(io.StringIO(judgements)))) == 4
    assert lead.get(f"/api/v1/projects/{project.pk}/judgements/?annotator=nobody").json()["count"] == 0
    assert lead.get(f"/api/v1/projects/{project.pk}/judgements/?since=yesterday").status_code == 400


def test_list_endpoints_have_a_fixed_number_of_queries(world, client_for, query_budget, sts_project):
    client = client_for("researcher")
    with query_budget("GET /api/v1/projects/"):
        assert client.get("/api/v1/projects/").status_code == 200
    with query_budget("GET /api/v1/projects/{id}/verses/"):
        assert client.get(f"/api/v1/projects/{sts_project.pk}/verses/").status_code == 200
    with query_budget("GET /api/v1/projects/{id}/batches/"):
        assert client.get(f"/api/v1/projects/{sts_project.pk}/batches/").status_code == 200
    with query_budget("GET /api/v1/projects/{id}/judgements/"):
        assert client.get(f"/api/v1/projects/{sts_project.pk}/judgements/").status_code == 200


def test_next_set_and_submit_query_counts(world, client_for, query_budget):
    project, batch = world
    client = client_for("annotator")
    # a new set: 7 statements on PostgreSQL, 9 on SQLite (test_request_queries.py) + the service's savepoint (2)
    with query_budget("POST /api/v1/batches/{id}/next-set/"):
        body = client.post(f"/api/v1/batches/{batch.pk}/next-set/").json()
    item = body["set"]["items"][0]
    with query_budget("POST /api/v1/judgements/"):  # 3 on PostgreSQL, 5 on SQLite + savepoint (2)
        response = client.post("/api/v1/judgements/", {"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
                                                       "client_uuid": str(uuid.uuid4())}, format="json")
    assert response.status_code == 201
