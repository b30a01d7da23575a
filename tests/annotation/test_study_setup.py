"""The study set-up: consent, training with feedback, the comprehension check (two attempts), configured by the lead
on the project page, enforced by the server before real pairs, shown in the dashboard's annotator table and CSV."""
import csv
import html
import io

import pytest

from annotation.models import BatchCandidate, Project, StudyAnswer, StudyItem, StudyProgress
from annotation.services import study
from annotation.services.errors import AnnotationError, NotAllowed

pytestmark = pytest.mark.django_db


def _items(project, lead):
    """Two training pairs and two check pairs (the answer is the verse with the lower number)."""
    for kind, (ref, answer, other) in [("training", ("100 0", "100 1", "100 2")), ("training", ("100 0", "100 3", "100 4")),
                                       ("check", ("100 0", "100 1", "100 5")), ("check", ("100 0", "100 2", "100 5"))]:
        study.study_item_add(project=project, actor=lead, kind=kind, reference_id=ref, answer_id=answer, other_id=other,
                             explanation=f"{answer} shares the opening formula")


@pytest.fixture
def study_project(small_project):
    project, batch = small_project
    _items(project, project.owner)
    project = study.study_settings_update(project=project, actor=project.owner, consent_text="I agree to take part.",
                                          training_on=True, check_on=True, check_pass_share=1.0)
    batch.refresh_from_db()
    return project, batch



def _next_set(client, batch):
    return client.post(f"/api/v1/batches/{batch.pk}/next-set/")


def _do_training(client, batch, *, right: bool):
    for item in StudyItem.objects.filter(kind="training").order_by("pk"):
        chosen = item.answer_id if right else item.other_id
        response = client.post(f"/annotate/{batch.pk}/study/training/", {"item": item.pk, "chosen": chosen})
        assert response.status_code == 302 and "feedback=" in response["Location"]


def _check_answers(*, right: int) -> dict:
    items = list(StudyItem.objects.filter(kind="check").order_by("pk"))
    return {f"item-{it.pk}": it.answer_id if k < right else it.other_id for k, it in enumerate(items)}


def test_the_next_set_api_refuses_real_pairs_until_every_step_is_done(page_client, study_project, annotators):
    project, batch = study_project
    ann = annotators[0]
    client = page_client(ann)
    refused = _next_set(client, batch)
    assert refused.status_code == 403 and "next: consent" in refused.json()["detail"]
    assert f"/annotate/{batch.pk}/study/" in refused.json()["detail"]
    assert client.get(f"/annotate/{batch.pk}/").url == f"/annotate/{batch.pk}/study/"  # the page sends them there
    assert client.post(f"/annotate/{batch.pk}/study/consent/").status_code == 302
    progress = StudyProgress.objects.get(project=project, user=ann)
    assert progress.consented_at is not None
    assert "next: training" in _next_set(client, batch).json()["detail"]
    _do_training(client, batch, right=False)
    progress.refresh_from_db()
    assert (progress.training_correct, progress.training_answered) == (0, 2) and progress.training_done_at
    assert "next: check" in _next_set(client, batch).json()["detail"]
    passed = client.post(f"/annotate/{batch.pk}/study/check/", _check_answers(right=2))
    assert passed.status_code == 302 and passed.url == f"/annotate/{batch.pk}/"
    body = _next_set(client, batch).json()
    assert body["done"] is False and len(body["set"]["items"]) == 4  # real pairs, as without the study set-up
    assert client.get(f"/annotate/{batch.pk}/").status_code == 200


def test_two_failed_checks_mean_no_real_pairs_and_the_lead_sees_it(page_client, study_project, annotators):
    project, batch = study_project
    ann = annotators[1]
    client = page_client(ann)
    client.post(f"/annotate/{batch.pk}/study/consent/")
    _do_training(client, batch, right=True)
    first = client.post(f"/annotate/{batch.pk}/study/check/", _check_answers(right=1), follow=True)
    assert "Not passed: 1 of 2 right" in first.content.decode() and "one more attempt" in first.content.decode()
    client.post(f"/annotate/{batch.pk}/study/check/", _check_answers(right=1))
    refused = _next_set(client, batch)
    assert refused.status_code == 403 and "did not pass the comprehension check in 2 attempts" in refused.json()["detail"]
    page = client.get(f"/annotate/{batch.pk}/study/").content.decode()
    assert 'id="check-failed"' in page and "no real pairs" in page
    third = client.post(f"/annotate/{batch.pk}/study/check/", _check_answers(right=2))  # no third attempt
    assert third.status_code == 403
    assert StudyAnswer.objects.filter(progress__user=ann, attempt__gte=1).count() == 4
    lead = page_client(project.owner)
    dashboard = lead.get(f"/projects/{project.pk}/dashboard/").content.decode()
    assert "Check attempts" in dashboard and "<strong>failed</strong>" in dashboard and ann.username in dashboard
    table = list(csv.DictReader(io.StringIO(lead.get(f"/projects/{project.pk}/dashboard/annotators.csv")
                                            .content.decode())))
    row = next(r for r in table if r["annotator"] == ann.username)
    assert (row["check_attempts"], row["check_passed"], row["study_step"], row["training_correct"]) == (
        "2", "False", "failed", "2")
    assert row["consented_at"].startswith("20") and row["check_last_score"] == "0.5"
    # the lead allows two new attempts; the annotator passes and gets real pairs
    assert f'/study/retry/{ann.pk}/' in lead.get(f"/projects/{project.pk}/").content.decode()
    lead.post(f"/projects/{project.pk}/study/retry/{ann.pk}/")
    assert client.post(f"/annotate/{batch.pk}/study/check/", _check_answers(right=2)).status_code == 302
    assert _next_set(client, batch).status_code == 200
    assert StudyProgress.objects.get(user=ann).check_attempts == 3


def test_training_feedback_says_right_or_wrong_and_why(page_client, study_project, annotators):
    _, batch = study_project
    client = page_client(annotators[2])
    client.post(f"/annotate/{batch.pk}/study/consent/")
    item = StudyItem.objects.filter(kind="training").order_by("pk").first()
    wrong = client.post(f"/annotate/{batch.pk}/study/training/", {"item": item.pk, "chosen": item.other_id}, follow=True)
    text = wrong.content.decode()
    assert "Not this time" in text and "100 1 shares the opening formula" in text and item.answer.text in text
    again = client.post(f"/annotate/{batch.pk}/study/training/", {"item": item.pk, "chosen": item.answer_id})
    assert StudyAnswer.objects.filter(item=item).count() == 1 and not StudyAnswer.objects.get(item=item).correct
    assert "feedback=" in again.url  # a repeated answer shows the first one's feedback
    second = StudyItem.objects.filter(kind="training").order_by("pk").last()
    right = client.post(f"/annotate/{batch.pk}/study/training/", {"item": second.pk, "chosen": second.answer_id},
                        follow=True).content.decode()
    assert ">Right<" in right
    outside = client.post(f"/annotate/{batch.pk}/study/training/", {"item": second.pk, "chosen": batch.reference_id},
                          follow=True)
    assert StudyAnswer.objects.filter(item=second).count() == 1 and outside.status_code == 200


def test_a_check_with_a_pair_unanswered_counts_nothing(page_client, study_project, annotators):
    _, batch = study_project
    client = page_client(annotators[3])
    client.post(f"/annotate/{batch.pk}/study/consent/")
    _do_training(client, batch, right=True)
    answers = _check_answers(right=2)
    answers.pop(next(iter(answers)))
    response = client.post(f"/annotate/{batch.pk}/study/check/", answers)
    assert response.status_code == 400 and "pair(s) 1 have no answer; nothing was counted" in response.content.decode()
    assert StudyProgress.objects.get(user=annotators[3]).check_attempts == 0


def test_bad_study_settings_come_back_as_form_errors(lead_client):
    client, project, _ = lead_client
    url = f"/projects/{project.pk}/study/"
    response = client.post(url, {"training_on": "on", "consent_text": "kept text", "check_pass_share": "0.8"})
    page = response.content.decode()
    assert response.status_code == 400 and "Add at least one training pair before turning training on." in page
    assert "kept text" in page  # what the lead typed stays
    response = client.post(url, {"check_pass_share": "0"})
    assert response.status_code == 400 and "Share of check pairs right to pass: must be greater than 0." in \
        response.content.decode()
    response = client.post(url, {"check_pass_share": "1.5"})
    assert response.status_code == 400 and "Ensure this value is less than or equal to 1" in response.content.decode()
    project.refresh_from_db()
    assert not project.training_on and project.consent_text == "" and project.check_pass_share == 0.8
    bad_pair = client.post(f"/projects/{project.pk}/study/pairs/", {"kind": "training", "reference_id": "100 0",
                                                                   "answer_id": "nope", "other_id": "100 2"}, follow=True)
    assert "answer_id: 'nope' is not a verse of the project" in html.unescape(bad_pair.content.decode())
    assert client.post(url, {"consent_text": "Consent.", "check_pass_share": "0.8"}).status_code == 302
    project.refresh_from_db()
    assert project.consent_text == "Consent." and study.study_on(project)


def test_only_the_projects_lead_configures_the_study(page_client, small_project, annotators, make_user):
    project, _ = small_project
    other_lead = make_user("otherlead", "lead")
    for user in (annotators[0], other_lead):
        assert page_client(user).post(f"/projects/{project.pk}/study/", {"consent_text": "x"}).status_code == 403
        with pytest.raises(AnnotationError):
            study.study_item_add(project=project, actor=user, kind="check", reference_id="100 0", answer_id="100 1",
                                 other_id="100 2")
    assert Project.objects.get(pk=project.pk).consent_text == ""
    assert page_client(other_lead).get(f"/annotate/{small_project[1].pk}/study/").status_code == 403


def test_pairs_drawn_from_gold_scores_take_the_higher_scored_verse_as_answer(small_project):
    project, batch = small_project
    for k, candidate in enumerate(BatchCandidate.objects.filter(batch=batch).order_by("position")):
        candidate.gold_score = float(k)  # 0, 1, 2, 3, 4
        candidate.save()
    added = study.study_items_from_gold(project=project, actor=project.owner, kind="training", n=5, min_gap=2)
    items = list(StudyItem.objects.filter(project=project))
    assert added == len(items) == 2  # each candidate once: (4 vs 0), then (3 vs 1)
    gold = dict(BatchCandidate.objects.filter(batch=batch).values_list("verse_id", "gold_score"))
    assert all(gold[it.answer_id] - gold[it.other_id] >= 2 and it.source == "gold" for it in items)
    for _ in range(3):  # later draws add the pairs not drawn yet: 6 pairs of scores differ by 2 or more
        study.study_items_from_gold(project=project, actor=project.owner, kind="training", n=5, min_gap=2)
    with pytest.raises(AnnotationError, match="No new pair of gold scores differs by 2 or more"):
        study.study_items_from_gold(project=project, actor=project.owner, kind="training", n=5, min_gap=2)
    keys = list(StudyItem.objects.filter(project=project).values_list("answer_id", "other_id"))
    assert len(keys) == len(set(keys)) == 6


def test_the_last_pair_of_a_step_that_is_on_cannot_be_removed(study_project):
    project, _ = study_project
    first, last = StudyItem.objects.filter(kind="check").order_by("pk")
    study.study_item_delete(project=project, actor=project.owner, item_id=first.pk)
    with pytest.raises(AnnotationError, match="last check pair and the step is on"):
        study.study_item_delete(project=project, actor=project.owner, item_id=last.pk)


def test_projects_without_a_study_set_up_serve_as_before(page_client, small_project, annotators):
    project, batch = small_project
    assert not study.study_on(project)
    study.require_study_done(project, annotators[0])  # no query, no refusal
    assert _next_set(page_client(annotators[0]), batch).status_code == 200
    with pytest.raises(NotAllowed):
        project.consent_text = "Agree?"
        study.require_study_done(project, annotators[0])


def test_training_closes_when_its_last_unanswered_pairs_are_removed(page_client, study_project, annotators):
    project, batch = study_project
    client = page_client(annotators[0])
    client.post(f"/annotate/{batch.pk}/study/consent/")
    first, second = StudyItem.objects.filter(kind="training").order_by("pk")
    client.post(f"/annotate/{batch.pk}/study/training/", {"item": first.pk, "chosen": first.answer_id})
    study.study_item_delete(project=project, actor=project.owner, item_id=second.pk)
    page = client.get(f"/annotate/{batch.pk}/study/", follow=True).content.decode()
    assert 'id="check-form"' in page  # on to the check, not stuck on an empty training step
    assert StudyProgress.objects.get(user=annotators[0]).training_done_at is not None
