"""Server-rendered annotation pages: who may open and post what."""
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Batch, Membership, Project

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(users, small_project):
    from annotation.services.projects import membership_add

    project, batch = small_project
    Membership.objects.create(project=project, user=users["lead"], role="lead")
    membership_add(project=project, username=users["annotator"].username)
    return project, batch


@pytest.mark.parametrize("method, path, data, allowed", [
    ("get", "/projects/", None, {"lead", "staff"}),
    ("get", "/projects/{p}/", None, {"lead", "staff"}),
    ("post", "/projects/{p}/members/", {"username": "ann4", "role": "annotator"}, {"lead", "staff"}),
    ("post", "/projects/{p}/batches/new/", {"reference_id": "100 1", "candidate_ids": "100 2\n100 3", "name": "x"}, {"lead", "staff"}),
    ("post", "/projects/{p}/batches/{b}/status/", {"status": "open"}, {"lead", "staff"}),
    ("get", "/projects/{p}/dashboard/", None, {"lead", "researcher", "staff"}),
    ("get", "/projects/{p}/planning/", None, {"lead", "researcher", "staff"}),
    ("get", "/annotate/{b}/", None, {"annotator"}),
])
@pytest.mark.parametrize("role", ["annotator", "lead", "researcher", "norole", "staff"])
def test_page_permissions(client, users, world, method, path, data, allowed, role):
    project, batch = world
    client.force_login(users[role])
    response = getattr(client, method)(path.format(p=project.pk, b=batch.pk), data)
    if role in allowed:
        assert response.status_code in (200, 302), (role, path, response.status_code)
    else:
        assert response.status_code == 403, (role, path, response.status_code)


def test_anonymous_is_sent_to_login(client, world):
    project, batch = world
    for path in (f"/projects/{project.pk}/", f"/annotate/{batch.pk}/", f"/projects/{project.pk}/dashboard/"):
        response = client.get(path)
        assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_lead_creates_project_uploads_verses_and_makes_a_batch(client, users):
    client.force_login(users["lead"])
    response = client.post("/projects/new/", {"name": "fresh", "title": "Fresh", "set_size": 10, "overlap_per_set": 3,
                                              "overlap_mode": "inter", "session_minutes": 30})
    project = Project.objects.get(name="fresh")
    assert response.status_code == 302
    bad = SimpleUploadedFile("v.csv", "verse_id,text\n1 1,α\n1 1,β\n".encode())
    page = client.post(f"/projects/{project.pk}/verses/upload/", {"file": bad, "create_batches": "on"}, follow=True)
    assert "Nothing imported" in page.content.decode() and "line 3" in page.content.decode()
    good = SimpleUploadedFile("v.csv", "verse_id,text\n1 1,α\n1 2,β\n1 3,γ\n1 4,δ\n".encode())
    client.post(f"/projects/{project.pk}/verses/upload/", {"file": good})
    page = client.post(f"/projects/{project.pk}/batches/new/", {"reference_id": "1 1", "all_others": "on"}, follow=True)
    assert "created with 3 pairs" in page.content.decode()
    assert Batch.objects.get(project=project).n_pairs == 3
    invalid = client.post("/projects/new/", {"name": "bad name/x", "overlap_mode": "bogus"}, follow=True)
    assert "Project not created" in invalid.content.decode()


def test_csv_error_bodies_say_what_went_wrong(client_for, world):
    project, _ = world
    response = client_for("annotator").get(f"/api/v1/projects/{project.pk}/scores/?format=csv")
    assert response.status_code == 403
    assert response.content.decode().splitlines()[0] == "detail"
    impossible = client_for("lead").get(f"/api/v1/projects/{project.pk}/judgements/?until=2999-13-01T00:00")
    assert impossible.status_code == 400


def test_project_jobs_are_visible_to_every_lead_of_the_project(client_for, users, world):
    from jobs.models import Job

    project, _ = world
    job = Job.objects.create(kind="annotation.analytics", params={"project_id": project.pk}, owner=users["staff"])
    assert client_for("lead").get(f"/api/v1/jobs/{job.pk}/").status_code == 200
    assert client_for("researcher").get(f"/api/v1/jobs/{job.pk}/").status_code == 200
    assert client_for("annotator").get(f"/api/v1/jobs/{job.pk}/").status_code == 404


def test_page_forms_check_shape_and_keep_defaults(client, users):
    from annotation.forms import PlanningForm, ProjectCreateForm

    form = ProjectCreateForm({"name": " fresh2 ", "title": ""})
    assert form.is_valid() and form.cleaned_data["name"] == "fresh2" and form.cleaned_data["set_size"] == 10
    assert form.cleaned_data["overlap_mode"] == "inter" and form.cleaned_data["session_minutes"] is None
    bad = ProjectCreateForm({"name": "x", "set_size": "ten", "overlap_mode": "bogus"})
    assert not bad.is_valid() and set(bad.errors) == {"set_size", "overlap_mode"}
    plan = PlanningForm({"n_items": "50"})
    assert plan.is_valid() and plan.cleaned_data == {"n_items": 50, "strengths_sd": 1.5, "noise": 1.0,
                                                     "n_annotators": 11, "target": 0.95, "n_reps": 3,
                                                     "stop_top_k": 10, "stop_recall": 0.9, "stop_margin": 0.5,
                                                     "stop_level": 0.95, "stop_runs": 0}
    for field, value in (("noise", "0"), ("noise", "nan"), ("target", "1.5"), ("n_items", "2"), ("n_reps", "x"),
                         ("stop_level", "1"), ("stop_recall", "0"), ("stop_margin", "-0.1")):
        assert not PlanningForm({field: value}).is_valid(), (field, value)
    client.force_login(users["lead"])
    page = client.post("/projects/new/", {"name": "y", "set_size": "-1"}, follow=True).content.decode()
    assert "Project not created: set_size:" in page
