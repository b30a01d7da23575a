"""The study set-up in a real browser: an annotator agrees to the consent text, trains with feedback, fails the
comprehension check twice and gets no real pairs; another passes it and annotates exactly as today."""
import json
from pathlib import Path

import pytest

from annotation.models import Judgement, StudyItem, StudyProgress
from annotation.services import study
from annotation.services.projects import batch_create, membership_add, project_create, verses_import

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


@pytest.fixture
def study_batch(make_user):
    lead = make_user("slead", "lead")
    for name in ("sfail", "spass"):
        make_user(name, "annotator")
    project = project_create(owner=lead, name="study", set_size=3, overlap_per_set=1, instructions="Judge by wording.")
    verses = [{"verse_id": f"5 {k}", "text": f"στίχος ἀριθμὸς {k}"} for k in range(6)]
    verses_import(project=project, data=json.dumps(verses).encode(), filename="v.json", create_batches=False)
    for name in ("sfail", "spass"):
        membership_add(project=project, username=name)
    study.study_item_add(project=project, actor=lead, kind="training", reference_id="5 0", answer_id="5 1",
                         other_id="5 2", explanation="Verse 1 repeats the reference's opening.")
    for answer, other in (("5 1", "5 3"), ("5 2", "5 4")):
        study.study_item_add(project=project, actor=lead, kind="check", reference_id="5 0", answer_id=answer,
                             other_id=other)
    study.study_settings_update(project=project, actor=lead, consent_text="I agree that my choices are stored.",
                                training_on=True, check_on=True, check_pass_share=1.0)
    batch = batch_create(project=project, reference_id="5 0", candidate_ids=[f"5 {k}" for k in range(1, 6)], seed=2)
    return project, batch


def _consent_and_train(page, base, batch, *, right: bool):
    page.goto(f"{base}/annotate/{batch.pk}/")
    page.wait_for_selector("#consent")  # the annotation page sends them to the study steps first
    assert "Judge by wording." in page.inner_text("#study-instructions")
    page.click("#consent-agree")
    page.wait_for_selector("#training")
    item = StudyItem.objects.get(kind="training")
    wanted = item.answer_id if right else item.other_id
    page.locator(f"#training button[value='{wanted}']").focus()
    page.keyboard.press("Enter")  # keyboard: the choices are buttons
    page.wait_for_selector("#training-feedback")
    assert page.inner_text("#feedback-verdict") == ("Right" if right else "Not this time")
    assert "repeats the reference's opening" in page.inner_text("#feedback-why")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "study-training-feedback.png"), full_page=True)
    page.click("#training-next")
    page.wait_for_selector("#check-form")


def _answer_check(page, *, right: int):
    for k, item in enumerate(StudyItem.objects.filter(kind="check").order_by("pk")):
        chosen = item.answer_id if k < right else item.other_id
        page.check(f"input[name='item-{item.pk}'][value='{chosen}']")
    page.click("#check-submit")


def test_failing_the_check_twice_gives_no_real_pairs_and_passing_annotates_as_today(live_server, page, study_batch):
    project, batch = study_batch
    base = live_server.url
    login(page, base, "sfail", "pw-sfail")
    _consent_and_train(page, base, batch, right=False)
    _answer_check(page, right=1)
    page.wait_for_selector(".messages:has-text('Not passed: 1 of 2 right')")
    _answer_check(page, right=0)
    failed = page.wait_for_selector("#check-failed")
    assert "no real pairs" in failed.inner_text()
    page.screenshot(path=str(SHOTS / "study-check-failed.png"), full_page=True)
    page.goto(f"{base}/annotate/{batch.pk}/")  # the annotation page still sends them back
    page.wait_for_selector("#check-failed")
    status = page.evaluate("""async (url) => {
        const csrf = document.cookie.split('; ').find((c) => c.startsWith('csrftoken=')).split('=')[1];
        const res = await fetch(url, {method: 'POST', headers: {'X-CSRFToken': csrf}});
        return res.status; }""", f"{base}/api/v1/batches/{batch.pk}/next-set/")
    assert status == 403
    progress = StudyProgress.objects.get(user__username="sfail")
    assert progress.check_attempts == 2 and progress.check_passed_at is None and progress.consented_at

    page.context.clear_cookies()
    login(page, base, "spass", "pw-spass")
    _consent_and_train(page, base, batch, right=True)
    _answer_check(page, right=2)
    page.wait_for_selector("#pair-counter:has-text('Pair 1 of 3')")  # the annotation page, as today
    page.wait_for_selector("#choices[data-ready]")
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector("#pair-counter:has-text('Pair 2 of 3')")
    page.wait_for_selector("#save-state:has-text('saved')")
    assert page.locator("#instructions").count() == 1  # the instructions stay reachable while annotating
    assert Judgement.objects.filter(annotator__username="spass").count() == 1
    assert not Judgement.objects.filter(annotator__username="sfail").exists()
