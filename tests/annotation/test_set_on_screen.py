"""A set already on the annotator's screen stops taking choices when the lead archives the project, closes the
batch or turns a study step on between showing it and the choice (issue 26): the submit is refused with a sentence
saying why, nothing is counted, and undo is refused the same way."""
import uuid

import pytest

from annotation.models import AnnotationSet, Judgement, Project
from annotation.services import curation, study
from annotation.services.projects import batch_set_status

pytestmark = pytest.mark.django_db


def _served(client, batch):
    body = client.post(f"/api/v1/batches/{batch.pk}/next-set/").json()
    return body["set"]["id"], body["set"]["items"]


def _choose(client, item):
    return client.post("/api/v1/judgements/", {"assignment_id": item["assignment_id"], "pair_id": item["pair_id"],
                                               "chosen_verse": item["left"]["id"], "client_uuid": str(uuid.uuid4())},
                       content_type="application/json")


def test_a_choice_after_the_project_is_archived_is_refused_and_not_counted(page_client, small_project, annotators):
    project, batch = small_project
    client = page_client(annotators[0])
    set_id, items = _served(client, batch)
    assert _choose(client, items[0]).status_code == 201  # before: stored
    curation.project_archive(project=project, actor=project.owner)
    refused = _choose(client, items[1])
    assert refused.status_code == 409
    assert refused.json()["detail"] == ("The project 'small' is archived: it takes no more judgements; nothing was "
                                        "stored.")
    assert Judgement.objects.filter(batch=batch).count() == 1
    undo = client.post(f"/api/v1/sets/{set_id}/undo/", {}, content_type="application/json")
    assert undo.status_code == 409 and "archived" in undo.json()["detail"] and "nothing was undone" in undo.json()["detail"]
    assert Judgement.objects.filter(batch=batch, undone_at__isnull=True).count() == 1
    # Unarchived, the same set takes choices again.
    curation.project_archive(project=project, actor=project.owner, archived=False)
    assert _choose(client, items[1]).status_code == 201
    assert Judgement.objects.filter(batch=batch).count() == 2


def test_a_choice_on_a_pair_served_before_the_batch_closed_is_stored_and_marked(page_client, small_project, annotators):
    """Issue 39: nothing shown to an annotator is lost at a close. The answer is stored, marked `after_close`, and
    the answer says so (the page tells the annotator the batch is complete); the closed batch serves no new set."""
    project, batch = small_project
    client = page_client(annotators[0])
    _, items = _served(client, batch)
    batch_set_status(batch=batch, status="closed")
    stored = _choose(client, items[0])
    assert stored.status_code == 201 and stored.json()["after_close"] is True
    assert Judgement.objects.get(batch=batch).after_close
    lead = page_client(project.owner)
    exported = lead.get(f"/api/v1/projects/{project.pk}/judgements/").json()["results"]
    assert [row["after_close"] for row in exported] == [True]  # marked in the export too
    assert client.post(f"/api/v1/batches/{batch.pk}/next-set/").status_code == 409


@pytest.mark.parametrize("step", ["consent", "training", "check"])
def test_a_choice_after_a_study_step_is_turned_on_is_refused_until_the_step_is_done(
        page_client, small_project, annotators, step):
    project, batch = small_project
    lead = project.owner
    client = page_client(annotators[0])
    set_id, items = _served(client, batch)
    kind = "training" if step == "training" else "check"
    study.study_item_add(project=project, actor=lead, kind=kind, reference_id="100 0", answer_id="100 1",
                         other_id="100 2")
    study.study_settings_update(project=project, actor=lead, consent_text="I agree." if step == "consent" else "",
                                training_on=step == "training", check_on=step == "check", check_pass_share=None)
    refused = _choose(client, items[0])
    assert refused.status_code == 403
    assert refused.json()["detail"] == (f"Finish the study steps first (next: {step}) on /annotate/{batch.pk}/study/; "
                                        "real pairs come after them.")
    assert not Judgement.objects.filter(batch=batch).exists()
    assert AnnotationSet.objects.get(pk=set_id).status == "open"  # the set waits; nothing in it moved
    # Once the step is done, the set on screen takes the choice.
    user = annotators[0]
    proj = Project.objects.get(pk=project.pk)
    if step == "consent":
        study.consent_give(project=proj, user=user)
    elif step == "training":
        item = proj.study_items.get(kind="training")
        study.training_answer(project=proj, user=user, item_id=item.pk, chosen_pk=item.answer_id)
    else:
        item = proj.study_items.get(kind="check")
        assert study.check_submit(project=proj, user=user, answers={item.pk: item.answer_id})["passed"]
    assert _choose(client, items[0]).status_code == 201
    assert Judgement.objects.filter(batch=batch).count() == 1


def test_a_retried_choice_stored_before_the_archive_still_answers_its_stored_row(page_client, small_project, annotators):
    """A retry of a choice the server already stored (the page lost the answer) is not a new judgement: it gets the
    stored row back, as before, and nothing more is counted."""
    project, batch = small_project
    client = page_client(annotators[0])
    _, items = _served(client, batch)
    body = {"assignment_id": items[0]["assignment_id"], "chosen_verse": items[0]["left"]["id"],
            "client_uuid": str(uuid.uuid4())}
    first = client.post("/api/v1/judgements/", body, content_type="application/json")
    curation.project_archive(project=project, actor=project.owner)
    again = client.post("/api/v1/judgements/", body, content_type="application/json")
    assert first.status_code == 201 and again.status_code == 200 and again.json()["id"] == first.json()["id"]
    assert Judgement.objects.filter(batch=batch).count() == 1
