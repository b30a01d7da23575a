"""A set on the annotator's screen while the lead archives the project or turns a study step on, in a real browser:
the next choice is refused, the page says why (never "saved"), and nothing is counted (issue 26)."""
import pytest

from annotation.models import Judgement
from annotation.services import study

from .conftest import login
from .test_annotator_page import greek_project  # noqa: F401  (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _two_choices_then_wait(page, base_url, batch):
    login(page, base_url, "gann", "pw-gann")
    page.goto(f"{base_url}/annotate/{batch.pk}/")
    for k in (1, 2):
        page.wait_for_selector("#choices[data-ready]")
        page.keyboard.press("ArrowLeft")
        page.wait_for_selector(f"#pair-counter:has-text('Pair {k + 1} of 5')")
    page.wait_for_selector("#save-state:has-text('All choices saved')")
    page.wait_for_selector("#choices[data-ready]")


def test_lead_archives_the_project_between_showing_and_choosing(live_server, browser, page, greek_project):  # noqa: F811
    batch, annotator = greek_project
    _two_choices_then_wait(page, live_server.url, batch)
    # The lead archives the project from their own page, in another browser session.
    lead = browser.new_context()
    try:
        lead_page = lead.new_page()
        login(lead_page, live_server.url, "glead", "pw-glead")
        lead_page.goto(f"{live_server.url}/projects/{batch.project_id}/")
        lead_page.click("#project-archive")
        assert "refused" in lead_page.inner_text("#confirm-goes")  # the confirmation says what happens to open sets
        lead_page.click("#confirm-button")
        lead_page.wait_for_selector("#archived-tag")
    finally:
        lead.close()
    page.keyboard.press("ArrowLeft")  # the third pair, still on screen
    page.wait_for_selector("#batch-closed:not([hidden])")
    assert page.inner_text("#batch-closed-title") == "This project is archived"
    assert "archived" in page.inner_text("#batch-closed-reason")
    refused = page.inner_text("#refused-list")
    assert "A choice was not stored" in refused and "archived" in refused and "nothing was stored" in refused
    assert page.is_hidden("#workspace") and page.is_hidden("#save-state") and page.is_hidden("#batch-closed-study")
    assert "saved" not in page.inner_text("#annotator").lower()  # what is on screen (hidden parts left out)
    assert Judgement.objects.filter(batch=batch, annotator=annotator).count() == 2  # nothing counted
    page.reload()  # opened while archived: the server renders the message, no empty cards
    page.wait_for_selector("#batch-closed:not([hidden])")
    assert page.inner_text("#batch-closed-title") == "This project is archived" and page.is_hidden("#workspace")


def test_lead_turns_consent_on_between_showing_and_choosing(live_server, page, greek_project):  # noqa: F811
    batch, annotator = greek_project
    _two_choices_then_wait(page, live_server.url, batch)
    project = batch.project
    study.study_settings_update(project=project, actor=project.owner, consent_text="I agree that my choices are stored.",
                                training_on=False, check_on=False, check_pass_share=None)
    page.keyboard.press("ArrowRight")
    page.wait_for_selector("#batch-closed:not([hidden])")
    assert page.inner_text("#batch-closed-title") == "Study steps first"
    assert "next: consent" in page.inner_text("#batch-closed-reason")
    assert "A choice was not stored" in page.inner_text("#refused-list")
    assert Judgement.objects.filter(batch=batch, annotator=annotator).count() == 2
    page.click("#batch-closed-study a")  # the way on: the study page, then the same set again
    page.wait_for_url(f"{live_server.url}/annotate/{batch.pk}/study/")
    assert "I agree that my choices are stored." in page.inner_text("main")
