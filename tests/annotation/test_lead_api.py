"""The lead's housekeeping and study set-up over the API (issue 26): rename, archive, unarchive and delete projects,
batches and verses; the study set-up's consent, switches, training and check pairs. Two real leads with a project
each: everything of the other's answers 404 exactly like a missing id, and nothing of it changes."""
import pytest
from rest_framework.test import APIClient

from annotation.forms import StudySettingsForm
from annotation.models import Batch, Judgement, Project, StudyItem, StudyProgress, Verse
from annotation.services import study
from annotation.services.projects import batch_create, project_create, verses_import
from tests.conftest import api_key

pytestmark = pytest.mark.django_db


def _client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key(user)}")
    return client


@pytest.fixture
def two_leads(small_project, make_user):
    """(owner's client, other lead's client, project, batch, other lead's own project)."""
    project, batch = small_project
    other = make_user("leady", "lead")
    theirs = project_create(owner=other, name="theirs")
    verses_import(project=theirs, data=b"verse_id,text\n9 1,alpha\n9 2,beta\n9 3,gamma\n", filename="v.csv")
    return _client(project.owner), _client(other), project, batch, theirs


def _judge_once(client, batch):
    """One real judgement through the API by the first annotator of the project."""
    import uuid

    from annotation.models import Membership

    annotator = Membership.objects.filter(project=batch.project, role="annotator").first().user
    ann = _client(annotator)
    item = ann.post(f"/api/v1/batches/{batch.pk}/next-set/").json()["set"]["items"][0]
    assert ann.post("/api/v1/judgements/", {"assignment_id": item["assignment_id"], "chosen_verse": item["left"]["id"],
                                            "client_uuid": str(uuid.uuid4())}, format="json").status_code == 201


def _missing_like(client, method, url, missing_url, body=None):
    """The other user's object answers exactly what a missing id answers."""
    mine = getattr(client, method)(url, body, format="json")
    missing = getattr(client, method)(missing_url, body, format="json")
    assert mine.status_code == missing.status_code == 404, (url, mine.status_code, missing.status_code)
    assert mine.json().keys() == missing.json().keys() == {"detail"}
    return mine


def test_another_lead_gets_404_like_a_missing_id_and_changes_nothing(two_leads):
    owner, other, project, batch, _ = two_leads
    verse = Verse.objects.filter(project=project).first()
    item = StudyItem.objects.create(project=project, kind="training", reference=verse,
                                    answer=Verse.objects.get(project=project, verse_id="100 1"),
                                    other=Verse.objects.get(project=project, verse_id="100 2"))
    p, b, v, far = project.pk, batch.pk, verse.pk, 10**9
    calls = [("post", f"/api/v1/projects/{p}/rename/", f"/api/v1/projects/{far}/rename/", {"name": "stolen"}),
             ("post", f"/api/v1/projects/{p}/archive/", f"/api/v1/projects/{far}/archive/", None),
             ("post", f"/api/v1/projects/{p}/unarchive/", f"/api/v1/projects/{far}/unarchive/", None),
             ("get", f"/api/v1/projects/{p}/archive-plan/", f"/api/v1/projects/{far}/archive-plan/", None),
             ("get", f"/api/v1/projects/{p}/delete-plan/", f"/api/v1/projects/{far}/delete-plan/", None),
             ("delete", f"/api/v1/projects/{p}/", f"/api/v1/projects/{far}/", None),
             ("patch", f"/api/v1/batches/{b}/", f"/api/v1/batches/{far}/", {"name": "stolen"}),
             ("delete", f"/api/v1/batches/{b}/", f"/api/v1/batches/{far}/", None),
             ("get", f"/api/v1/batches/{b}/delete-plan/", f"/api/v1/batches/{far}/delete-plan/", None),
             ("get", f"/api/v1/verses/{v}/", f"/api/v1/verses/{far}/", None),
             ("patch", f"/api/v1/verses/{v}/", f"/api/v1/verses/{far}/", {"verse_id": "stolen"}),
             ("delete", f"/api/v1/verses/{v}/", f"/api/v1/verses/{far}/", None),
             ("get", f"/api/v1/verses/{v}/delete-plan/", f"/api/v1/verses/{far}/delete-plan/", None),
             ("get", f"/api/v1/projects/{p}/study/", f"/api/v1/projects/{far}/study/", None),
             ("patch", f"/api/v1/projects/{p}/study/", f"/api/v1/projects/{far}/study/", {"consent_text": "x"}),
             ("get", f"/api/v1/projects/{p}/study/items/", f"/api/v1/projects/{far}/study/items/", None),
             ("post", f"/api/v1/projects/{p}/study/items/", f"/api/v1/projects/{far}/study/items/",
              {"kind": "check", "reference_id": "100 0", "answer_id": "100 1", "other_id": "100 3"}),
             ("delete", f"/api/v1/projects/{p}/study/items/{item.pk}/", f"/api/v1/projects/{far}/study/items/1/", None),
             ("get", f"/api/v1/projects/{p}/study/annotators/", f"/api/v1/projects/{far}/study/annotators/", None)]
    for method, url, missing_url, body in calls:
        _missing_like(other, method, url, missing_url, body)
    project.refresh_from_db()
    batch.refresh_from_db()
    assert (project.name, project.archived_at, project.consent_text, batch.name) == ("small", None, "", batch.name)
    assert Verse.objects.filter(pk=v, verse_id=verse.verse_id).exists() and StudyItem.objects.filter(pk=item.pk).exists()
    assert StudyItem.objects.filter(project=project).count() == 1
    # an annotator of the project and a researcher (who may read it) may not change it either
    from annotation.models import Membership

    annotator = Membership.objects.filter(project=project, role="annotator").first().user
    assert _client(annotator).post(f"/api/v1/projects/{p}/rename/", {"name": "x"}, format="json").status_code == 404


def test_rename_archive_unarchive_and_delete_a_project(two_leads, annotators):
    owner, _, project, batch, _ = two_leads
    renamed = owner.post(f"/api/v1/projects/{project.pk}/rename/", {"name": "byz-2", "title": "Byzantine"}, format="json")
    assert renamed.status_code == 200 and renamed.json()["name"] == "byz-2" and renamed.json()["title"] == "Byzantine"
    bad = owner.post(f"/api/v1/projects/{project.pk}/rename/", {"name": "a b"}, format="json")
    assert bad.status_code == 400 and bad.json()["detail"].startswith("name:")
    taken = owner.post(f"/api/v1/projects/{project.pk}/rename/", {"name": "theirs"}, format="json")
    assert taken.status_code == 409 and "exists already" in taken.json()["detail"]
    assert owner.post(f"/api/v1/projects/{project.pk}/rename/", {"name": ""}, format="json").json() == {
        "name": ["This field is required."]}  # the page form's own message
    retitled = owner.post(f"/api/v1/projects/{project.pk}/rename/", {"title": "Byzantine epigrams"}, format="json")
    assert (retitled.json()["name"], retitled.json()["title"]) == ("byz-2", "Byzantine epigrams")  # name kept
    plan = owner.get(f"/api/v1/projects/{project.pk}/archive-plan/").json()
    assert plan["refused"] is None and any("refused" in line for line in plan["goes"])
    archived = owner.post(f"/api/v1/projects/{project.pk}/archive/")
    assert archived.status_code == 200 and archived.json()["archived_at"]
    assert _client(annotators[0]).post(f"/api/v1/batches/{batch.pk}/next-set/").status_code == 409
    active = owner.post(f"/api/v1/projects/{project.pk}/unarchive/")
    assert active.status_code == 200 and active.json()["archived_at"] is None
    _judge_once(owner, batch)
    refused_plan = owner.get(f"/api/v1/projects/{project.pk}/delete-plan/").json()
    assert "1 judgement" in refused_plan["refused"]
    refused = owner.delete(f"/api/v1/projects/{project.pk}/")
    assert refused.status_code == 409 and refused.json()["detail"] == f"Project 'byz-2' not deleted: {refused_plan['refused']}"
    assert Project.objects.filter(pk=project.pk).exists()
    empty = project_create(owner=project.owner, name="empty")
    verses_import(project=empty, data=b"verse_id,text\n1 1,a\n1 2,b\n1 3,c\n", filename="v.csv")
    batch_create(project=empty, reference_id="1 1", candidate_ids=["1 2", "1 3"])
    gone = owner.delete(f"/api/v1/projects/{empty.pk}/")
    assert gone.status_code == 200 and gone.json() == {"detail": "Project 'empty' deleted."}
    assert not Project.objects.filter(pk=empty.pk).exists() and not Verse.objects.filter(project_id=empty.pk).exists()


def test_patch_on_a_project_renames_it_through_the_rename_service(two_leads, annotators):
    """PATCH on a project takes `name` as PATCH on a batch does, with the rename's rule and service: the owner renames
    (with a setting in the same request), a member who may only read the project gets 403, a bad name a field error,
    a taken one 409; a refused request saves nothing of it. POST `…/rename/` still works."""
    owner, _, project, _, _ = two_leads
    url = f"/api/v1/projects/{project.pk}/"
    reader = _client(annotators[0])  # a member of the project: may read it, not change it
    assert reader.get(url).status_code == 200
    refused = reader.patch(url, {"name": "mine"}, format="json")
    assert refused.status_code == 403 and "detail" in refused.json()
    renamed = owner.patch(url, {"name": "byz-3", "set_size": 6}, format="json")
    assert renamed.status_code == 200
    assert (renamed.json()["name"], renamed.json()["set_size"], renamed.json()["title"]) == ("byz-3", 6, "small")
    bad = owner.patch(url, {"name": "a b", "set_size": 8}, format="json")
    assert bad.status_code == 400 and bad.json() == {"name": ["1 to 100 letters, digits, '-' or '_'."]}
    too_long = owner.patch(url, {"name": "x" * 101}, format="json")
    assert too_long.status_code == 400 and list(too_long.json()) == ["name"]
    taken = owner.patch(url, {"name": "theirs", "set_size": 9}, format="json")
    assert taken.status_code == 409 and taken.json()["detail"] == "name: a project named 'theirs' exists already."
    project.refresh_from_db()
    assert (project.name, project.set_size, project.title) == ("byz-3", 6, "small")  # nothing of the refused ones
    assert Project.objects.filter(name="mine").count() == 0
    again = owner.post(f"/api/v1/projects/{project.pk}/rename/", {"name": "byz-4"}, format="json")
    assert again.status_code == 200 and again.json()["name"] == "byz-4"


def test_rename_close_and_delete_batches(two_leads):
    owner, _, project, batch, _ = two_leads
    changed = owner.patch(f"/api/v1/batches/{batch.pk}/", {"name": "first", "status": "closed"}, format="json")
    assert changed.status_code == 200 and (changed.json()["name"], changed.json()["status"]) == ("first", "closed")
    other = batch_create(project=project, reference_id="100 1", candidate_ids=["100 2", "100 3"], name="second")
    clash = owner.patch(f"/api/v1/batches/{other.pk}/", {"name": "first"}, format="json")
    assert clash.status_code == 400 and "already" in clash.json()["detail"]
    assert owner.patch(f"/api/v1/batches/{batch.pk}/", {"status": "gone"}, format="json").status_code == 400
    owner.patch(f"/api/v1/batches/{batch.pk}/", {"status": "open"}, format="json")
    _judge_once(owner, batch)
    plan = owner.get(f"/api/v1/batches/{batch.pk}/delete-plan/").json()
    assert "1 judgement" in plan["refused"] and plan["stays"]
    refused = owner.delete(f"/api/v1/batches/{batch.pk}/")
    assert refused.status_code == 409 and "close the batch instead" in refused.json()["detail"]
    assert owner.get(f"/api/v1/batches/{other.pk}/delete-plan/").json()["refused"] is None
    gone = owner.delete(f"/api/v1/batches/{other.pk}/")
    assert gone.status_code == 200 and gone.json()["detail"].startswith("Batch 'second' deleted with its 1 pair(s)")
    assert list(Batch.objects.filter(project=project).values_list("name", flat=True)) == ["first"]
    assert Judgement.objects.filter(batch=batch).count() == 1


def test_read_rename_and_delete_verses(two_leads):
    owner, _, project, batch, _ = two_leads
    used = Verse.objects.get(project=project, verse_id="100 1")
    read = owner.get(f"/api/v1/verses/{used.pk}/").json()
    assert read["verse_id"] == "100 1" and read["project"] == project.pk
    assert read["uses"] == {"reference_of": 0, "candidate_in": 1, "attention_checks": 0, "study_pairs": 0}
    renamed = owner.patch(f"/api/v1/verses/{used.pk}/", {"verse_id": "100 1a"}, format="json")
    assert renamed.status_code == 200 and renamed.json()["verse_id"] == "100 1a"
    clash = owner.patch(f"/api/v1/verses/{used.pk}/", {"verse_id": "100 2"}, format="json")
    assert clash.status_code == 409 and clash.json()["detail"] == "verse_id: the project has a verse '100 2' already."
    tab = owner.patch(f"/api/v1/verses/{used.pk}/", {"verse_id": "a\tb"}, format="json")
    assert tab.status_code == 400 and tab.json()["detail"].startswith("verse_id:")
    too_long = owner.patch(f"/api/v1/verses/{used.pk}/", {"verse_id": "x" * 65}, format="json")
    assert too_long.status_code == 400 and "verse_id" in too_long.json()  # the page form's field error
    plan = owner.get(f"/api/v1/verses/{used.pk}/delete-plan/").json()
    assert "candidate in 1 batch" in plan["refused"]
    refused = owner.delete(f"/api/v1/verses/{used.pk}/")
    assert refused.status_code == 409 and Verse.objects.filter(pk=used.pk).exists()
    spare = Verse.objects.create(project=project, verse_id="spare", text="λάθος")
    gone = owner.delete(f"/api/v1/verses/{spare.pk}/")
    assert gone.status_code == 200 and gone.json() == {"detail": "Verse 'spare' deleted."}
    assert not Verse.objects.filter(pk=spare.pk).exists()


def test_study_set_up_over_the_api(two_leads, annotators):
    owner, _, project, batch, _ = two_leads
    url = f"/api/v1/projects/{project.pk}/study/"
    start = owner.get(url).json()
    assert start == {"consent_text": "", "training_on": False, "check_on": False, "check_pass_share": 0.8,
                     "instructions": project.instructions, "n_training": 0, "n_check": 0, "max_check_attempts": 2}
    early = owner.patch(url, {"training_on": True}, format="json")
    assert early.status_code == 400
    assert early.json()["detail"] == "training_on: Add at least one training pair before turning training on."
    share = owner.patch(url, {"check_pass_share": 1.5}, format="json")
    page_form = StudySettingsForm({"check_pass_share": 1.5})
    assert share.status_code == 400 and share.json() == {"check_pass_share": page_form.errors["check_pass_share"]}
    unknown = owner.patch(url, {"consent": "I agree"}, format="json")
    assert unknown.status_code == 400 and "not a field of this request" in unknown.json()["consent"][0]
    nested = owner.patch(url, {"consent_text": ["I agree"]}, format="json")
    assert nested.status_code == 400 and "one value" in nested.json()["consent_text"][0]
    items = f"{url}items/"
    missing = owner.post(items, {"kind": "training", "reference_id": "100 0", "answer_id": "100 9", "other_id": "100 2"},
                         format="json")
    assert missing.status_code == 404 and missing.json()["detail"] == "answer_id: '100 9' is not a verse of the project."
    bad_kind = owner.post(items, {"kind": "exam", "reference_id": "100 0", "answer_id": "100 1", "other_id": "100 2"},
                          format="json")
    assert bad_kind.status_code == 400 and "kind" in bad_kind.json()
    added = {}
    for kind, answer, other in (("training", "100 1", "100 2"), ("check", "100 1", "100 3"), ("check", "100 4", "100 5")):
        made = owner.post(items, {"kind": kind, "reference_id": "100 0", "answer_id": answer, "other_id": other,
                                  "explanation": "shares the opening"}, format="json")
        assert made.status_code == 201 and made.json()["answer_id"] == answer and made.json()["source"] == "marked"
        added[(kind, answer)] = made.json()["id"]
    assert [row["kind"] for row in owner.get(items).json()["results"]] == ["check", "check", "training"]
    exported = owner.get(f"{items}?format=csv").content.decode().splitlines()
    assert exported[0].startswith("id,kind,reference_id,answer_id,other_id") and len(exported) == 4
    gold = owner.post(f"{items}from-gold/", {"kind": "training", "n": 3}, format="json")
    assert gold.status_code == 400 and "gold scores" in gold.json()["detail"]
    assert owner.post(f"{items}from-gold/", {"kind": "training", "n": 0}, format="json").json()["n"]
    on = owner.patch(url, {"consent_text": "  I agree.  ", "training_on": True, "check_on": True,
                           "check_pass_share": 1.0}, format="json").json()
    assert (on["consent_text"], on["training_on"], on["check_on"], on["check_pass_share"]) == ("I agree.", True, True, 1.0)
    kept = owner.patch(url, {"check_pass_share": 0.5}, format="json").json()  # the fields not named keep their values
    assert (kept["consent_text"], kept["training_on"], kept["check_on"], kept["check_pass_share"]) == (
        "I agree.", True, True, 0.5)
    last = owner.delete(f"{items}{added[('training', '100 1')]}/")
    assert last.status_code == 400 and "last training pair" in last.json()["detail"]
    removed = owner.delete(f"{items}{added[('check', '100 4')]}/")
    assert removed.status_code == 200 and "removed" in removed.json()["detail"]
    # an annotator fails the check twice; the lead sees it and gives new attempts
    ann = annotators[0]
    proj = Project.objects.get(pk=project.pk)
    study.consent_give(project=proj, user=ann)
    training = proj.study_items.get(kind="training")
    study.training_answer(project=proj, user=ann, item_id=training.pk, chosen_pk=training.answer_id)
    check = proj.study_items.get(kind="check")
    for _ in range(2):
        study.check_submit(project=proj, user=ann, answers={check.pk: check.other_id})
    rows = owner.get(f"{url}annotators/").json()["results"]
    row = next(r for r in rows if r["username"] == ann.username)
    assert row["failed"] and row["study_step"] == "failed" and row["check_attempts"] == 2 and row["consented_at"]
    retry = owner.post(f"{url}annotators/{ann.pk}/retry/")
    assert retry.status_code == 200 and "may take the comprehension check again" in retry.json()["detail"]
    assert StudyProgress.objects.get(project=project, user=ann).check_retries == 1
    again = owner.post(f"{url}annotators/{ann.pk}/retry/")
    assert again.status_code == 400 and "has not failed" in again.json()["detail"]
