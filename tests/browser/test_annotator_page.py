"""An annotator judges a whole set with the keyboard in a real browser, undoes once, finishes."""
import json
from pathlib import Path

import pytest

from annotation.models import AnnotationSet, Judgement

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


@pytest.fixture
def greek_project(make_user):
    from annotation.demo import PILOT_VERSES
    from annotation.services.projects import batch_create, membership_add, project_create, verses_import

    lead = make_user("glead", "lead")
    annotator = make_user("gann", "annotator")
    project = project_create(owner=lead, name="greek", set_size=5, overlap_per_set=2, session_minutes=30)
    verses = [{"verse_id": v, "text": t, "translation": tr} for v, t, tr in PILOT_VERSES]
    verses += [{"verse_id": f"18181 {k}", "text": t} for k, t in enumerate(["ἐν ἀρχῇ ἦν ὁ λόγος", "Ἰησοῦ Χριστὲ ὁ θεὸς ἡμῶν"], 1)]
    verses_import(project=project, data=json.dumps(verses).encode())
    membership_add(project=project, username=annotator.username)
    ids = [v["verse_id"] for v in verses]
    batch = batch_create(project=project, reference_id=ids[0], candidate_ids=ids[1:], seed=7)
    return batch, annotator


def test_keyboard_judging_undo_and_finish(live_server, page, greek_project):
    batch, annotator = greek_project
    login(page, live_server.url, "gann", "pw-gann")
    assert page.locator("#recent-jobs").count() == 0  # an annotator without jobs: no empty "Recent jobs" card
    page.click(f"a[href='/annotate/{batch.pk}/']")
    page.wait_for_selector("#pair-counter:has-text('Pair 1 of 5')")
    page.wait_for_selector("#choices[data-ready]")
    assert "Ὥσπερ ξένοι" in page.inner_text("#reference-text")
    assert page.inner_text("#choice-left .translation") or page.inner_text("#choice-right .translation")
    for k in range(1, 5):
        page.keyboard.press("ArrowLeft" if k % 2 else "ArrowRight")
        page.wait_for_selector(f"#pair-counter:has-text('Pair {k + 1} of 5')")
        page.wait_for_selector("#choices[data-ready]")  # input is taken once the pair has been shown
    page.keyboard.press("u")
    page.wait_for_selector("#pair-counter:has-text('Pair 4 of 5')")
    page.wait_for_selector("#save-state:has-text('undone')")
    page.wait_for_selector("#choices[data-ready]")
    page.keyboard.press("ArrowRight")
    page.wait_for_selector("#pair-counter:has-text('Pair 5 of 5')")
    page.wait_for_selector("#choices[data-ready]")
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector("#set-done:not([hidden])")
    page.wait_for_selector("#save-state:has-text('All choices saved')")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "annotator-set-done.png"))

    annotation_set = AnnotationSet.objects.get(batch=batch, annotator=annotator)
    live = Judgement.objects.filter(set=annotation_set, undone_at__isnull=True)
    assert live.count() == 5
    assert Judgement.objects.filter(set=annotation_set, undone_at__isnull=False).count() == 1
    assert annotation_set.status == "completed"
    assert all(j.response_ms is not None and j.chosen_id in (j.pair.verse_a_id, j.pair.verse_b_id) for j in live)
    # Left/right as shown is recorded: each choice matches the key pressed for its pair.
    # Keys per pair: ←, →, ←, (→ undone) →, ←.
    assert [j.chose_left for j in live.order_by("assignment__position")] == [True, False, True, False, True]

    page.keyboard.press("Enter")  # the next set
    page.wait_for_selector("#pair-counter:has-text('Pair 1 of')")


def test_polytonic_greek_uses_the_bundled_font_and_fits_a_phone(live_server, browser, greek_project):
    batch, _ = greek_project
    context = browser.new_context(viewport={"width": 375, "height": 740}, device_scale_factor=2, is_mobile=True,
                                  has_touch=True)
    page = context.new_page()
    login(page, live_server.url, "gann", "pw-gann")
    page.goto(f"{live_server.url}/annotate/{batch.pk}/")
    page.wait_for_selector("#pair-counter:has-text('Pair 1 of')")
    page.evaluate("document.fonts.ready")
    loaded = page.evaluate("""async () => {
        await document.fonts.load('16px "Similia Serif"', 'ὥσπερ ξένοι χαίρουσιν');
        return document.fonts.check('16px "Similia Serif"', 'Ὥσπερ ἰδεῖν ῥεῦμα ᾧ');
    }""")
    assert loaded is True
    family = page.evaluate("getComputedStyle(document.querySelector('#reference-text')).fontFamily")
    assert "Similia Serif" in family
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    left = page.locator("#choice-left").bounding_box()
    right = page.locator("#choice-right").bounding_box()
    assert left["x"] + left["width"] <= right["x"] + 1 and right["x"] + right["width"] <= 376  # side by side
    page.locator("#choice-right").tap()
    page.wait_for_selector("#pair-counter:has-text('Pair 2 of')")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "annotator-phone.png"))
    context.close()
