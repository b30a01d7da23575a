"""A lead renames, archives and deletes projects, renames and deletes verses and deletes batches without the admin
site; each confirmation page says what goes and what is kept; only the project's leads may; judgements are never
deleted."""
import html
import uuid

import pytest

from annotation.models import Batch, BatchCandidate, Judgement, Membership, Project, StudyItem, Verse
from annotation.services import study
from annotation.services.judgements import judgement_submit
from annotation.services.projects import batch_create
from annotation.services.scheduling import set_next

pytestmark = pytest.mark.django_db



def _judge_once(batch, annotator):
    item = set_next(batch=batch, annotator=annotator).assignments.select_related("pair").first()
    judgement_submit(annotator=annotator, assignment_id=item.pk, chosen_verse_id=item.pair.verse_a_id,
                     client_uuid=uuid.uuid4())


def _text(response) -> str:
    return html.unescape(response.content.decode())


def test_rename_a_project_and_its_name_clash_or_bad_slug_is_refused(lead_client, make_user):
    client, project, _ = lead_client
    done = client.post(f"/projects/{project.pk}/rename/", {"name": "byzantine-2", "title": "Byzantine verses"}, follow=True)
    assert "Project small is now byzantine-2 (Byzantine verses)" in _text(done)
    project.refresh_from_db()
    assert (project.name, project.title) == ("byzantine-2", "Byzantine verses")
    other = Project.objects.create(owner=project.owner, name="taken")
    clash = client.post(f"/projects/{project.pk}/rename/", {"name": "taken"}, follow=True)
    assert "a project named 'taken' exists already" in _text(clash)
    bad = client.post(f"/projects/{project.pk}/rename/", {"name": "has space"}, follow=True)
    assert "name: 1 to 100 letters, digits, '-' or '_'." in _text(bad)
    empty = client.post(f"/projects/{project.pk}/rename/", {"name": ""})
    assert empty.status_code == 400 and "This field is required" in _text(empty)
    assert Project.objects.get(pk=project.pk).name == "byzantine-2" and other.name == "taken"


def test_archiving_keeps_everything_serves_nothing_and_exports_still_work(page_client, lead_client, annotators):
    client, project, batch = lead_client
    _judge_once(batch, annotators[0])
    page = _text(client.get(f"/projects/{project.pk}/archive/"))
    assert "Annotators get no more pairs" in page and "1 judgement" in page and "exports" in page
    assert Project.objects.get(pk=project.pk).archived_at is None  # the page changes nothing
    client.post(f"/projects/{project.pk}/archive/")
    project.refresh_from_db()
    assert project.archived_at is not None
    ann = page_client(annotators[1])
    refused = ann.post(f"/api/v1/batches/{batch.pk}/next-set/")
    assert refused.status_code == 409 and "archived" in refused.json()["detail"]
    mine = ann.get("/api/v1/me/batches/").json()  # one page shape (a paginated list); here every row is on it
    assert mine["count"] == len(mine["results"]) and not [b for b in mine["results"] if b["batch_id"] == batch.pk]
    exported = client.get(f"/api/v1/projects/{project.pk}/judgements/?format=csv")
    assert exported.status_code == 200 and len(exported.content.decode().strip().splitlines()) == 2
    assert 'id="archived-tag"' in _text(client.get(f"/projects/{project.pk}/"))
    client.post(f"/projects/{project.pk}/archive/")  # unarchive
    assert Project.objects.get(pk=project.pk).archived_at is None
    assert ann.post(f"/api/v1/batches/{batch.pk}/next-set/").status_code == 200


def test_a_project_with_judgements_is_not_deleted_one_without_is_with_all_it_holds(lead_client, annotators):
    client, project, batch = lead_client
    _judge_once(batch, annotators[0])
    page = _text(client.get(f"/projects/{project.pk}/delete/"))
    assert "This cannot be done" in page and "Archive it instead" in page and 'id="confirm-button"' not in page
    client.post(f"/projects/{project.pk}/delete/")
    assert Project.objects.filter(pk=project.pk).exists() and Judgement.objects.count() == 1

    empty = Project.objects.create(owner=project.owner, name="scratch")
    Membership.objects.create(project=empty, user=project.owner, role="lead")
    for k in range(4):
        Verse.objects.create(project=empty, verse_id=f"9 {k}", text=f"verse {k}")
    scratch = batch_create(project=empty, reference_id="9 0", candidate_ids=["9 1", "9 2", "9 3"])
    study.study_item_add(project=empty, actor=project.owner, kind="training", reference_id="9 0", answer_id="9 1",
                         other_id="9 2")
    page = _text(client.get(f"/projects/{empty.pk}/delete/"))
    assert "1 batch with their pairs" in page and "4 verses" in page and "User accounts." in page
    gone = client.post(f"/projects/{empty.pk}/delete/", follow=True)
    assert "Project 'scratch' deleted." in _text(gone)
    assert not Project.objects.filter(pk=empty.pk).exists() and not Batch.objects.filter(pk=scratch.pk).exists()
    assert not Verse.objects.filter(verse_id__startswith="9 ").exists() and not StudyItem.objects.exists()


def test_rename_a_verse_judgements_follow_and_clashes_are_field_errors(lead_client, annotators):
    client, project, batch = lead_client
    _judge_once(batch, annotators[0])
    verse = Verse.objects.get(project=project, verse_id="100 1")
    done = client.post(f"/projects/{project.pk}/verses/{verse.pk}/rename/", {"verse_id": "200 1"}, follow=True)
    assert "Verse 100 1 is now 200 1" in _text(done)
    assert Verse.objects.get(pk=verse.pk).verse_id == "200 1"
    assert BatchCandidate.objects.filter(batch=batch, verse=verse).exists()
    clash = client.post(f"/projects/{project.pk}/verses/{verse.pk}/rename/", {"verse_id": "100 2"})
    assert clash.status_code == 409 and "the project has a verse '100 2' already" in _text(clash)
    bad = client.post(f"/projects/{project.pk}/verses/{verse.pk}/rename/", {"verse_id": "a\u202eb"})
    assert bad.status_code == 400 and "U+202E" in _text(bad)
    assert Verse.objects.get(pk=verse.pk).verse_id == "200 1"


def test_a_verse_in_use_is_not_deleted_an_unused_one_is(lead_client):
    client, project, batch = lead_client
    used = Verse.objects.get(project=project, verse_id="100 0")
    page = _text(client.get(f"/projects/{project.pk}/verses/{used.pk}/delete/"))
    assert "the verse is in use (reference of 1 batch)" in page and 'id="confirm-button"' not in page
    client.post(f"/projects/{project.pk}/verses/{used.pk}/delete/")
    assert Verse.objects.filter(pk=used.pk).exists()
    spare = Verse.objects.create(project=project, verse_id="100 9", text="spare")
    page = _text(client.get(f"/projects/{project.pk}/verses/{spare.pk}/delete/"))
    assert "Verse 100 9: its text" in page and "Every other verse, batch and judgement" in page
    gone = client.post(f"/projects/{project.pk}/verses/{spare.pk}/delete/", follow=True)
    assert "Verse '100 9' deleted." in _text(gone) and not Verse.objects.filter(pk=spare.pk).exists()


def test_the_verse_list_searches_by_id_and_text_and_pages(lead_client):
    client, project, _ = lead_client
    for k in range(60):
        Verse.objects.create(project=project, verse_id=f"300 {k}", text=f"ἄλλος στίχος {k}")
    found = _text(client.get(f"/projects/{project.pk}/verses/?q=300 4"))
    assert "300 4<" in found and "300 41<" in found and "100 1<" not in found and "11 verse(s)" in found
    assert "στίχος 3" in _text(client.get(f"/projects/{project.pk}/verses/?q=στίχος 3"))
    first = _text(client.get(f"/projects/{project.pk}/verses/"))
    assert "66 verse(s)" in first and "page 1 of 2" in first


def test_the_batch_delete_page_says_what_goes_and_what_stays(lead_client, annotators):
    client, project, batch = lead_client
    page = _text(client.get(f"/projects/{project.pk}/batches/{batch.pk}/delete/"))
    assert "10 pairs" in page and "Its reference and candidate verses" in page
    _judge_once(batch, annotators[0])
    refused = _text(client.get(f"/projects/{project.pk}/batches/{batch.pk}/delete/"))
    assert "holds 1 judgement" in refused and "Close it instead" in refused and 'id="confirm-button"' not in refused


@pytest.mark.parametrize("path, method", [
    ("/projects/{p}/rename/", "post"), ("/projects/{p}/archive/", "get"), ("/projects/{p}/archive/", "post"),
    ("/projects/{p}/delete/", "get"), ("/projects/{p}/delete/", "post"), ("/projects/{p}/verses/", "get"),
    ("/projects/{p}/verses/{v}/", "get"), ("/projects/{p}/verses/{v}/rename/", "post"),
    ("/projects/{p}/verses/{v}/delete/", "get"), ("/projects/{p}/verses/{v}/delete/", "post"),
    ("/projects/{p}/batches/{b}/delete/", "get"), ("/projects/{p}/batches/{b}/delete/", "post"),
])
def test_only_the_projects_leads_manage_it(page_client, small_project, annotators, make_user, path, method):
    project, batch = small_project
    verse = Verse.objects.filter(project=project).last()
    url = path.format(p=project.pk, v=verse.pk, b=batch.pk)
    for user in (annotators[0], make_user("lead-elsewhere", "lead")):
        response = getattr(page_client(user), method)(url, {"name": "stolen", "verse_id": "stolen"})
        assert response.status_code == 403, (url, user.username)
    project.refresh_from_db()
    assert project.name == "small" and project.archived_at is None and Batch.objects.filter(pk=batch.pk).exists()
    assert Verse.objects.filter(pk=verse.pk, verse_id=verse.verse_id).exists()
