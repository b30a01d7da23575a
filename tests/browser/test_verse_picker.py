"""The batch form's verse pickers in a real browser, by keyboard alone: type part of a text, ↓ and Enter choose the
reference; the candidate picker adds verses to the list; "Show more…" loads the next page; the batch is made."""
import json

import pytest

from annotation.models import Batch, BatchCandidate
from annotation.services.projects import project_create, verses_import

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_choose_the_reference_and_candidates_with_the_keyboard(live_server, page, make_user):
    project = project_create(owner=make_user("plead", "lead"), name="picker")
    verses = [{"verse_id": f"16977 {k}", "text": f"ἄγγελος λόγος {k}"} for k in range(40)]
    verses += [{"verse_id": "2 1", "text": "Ὥσπερ ξένοι χαίρουσιν"}, {"verse_id": "2 2", "text": "οὕτως καὶ οἱ γράφοντες"}]
    verses_import(project=project, data=json.dumps(verses).encode(), filename="v.json", create_batches=False)
    login(page, live_server.url, "plead", "pw-plead")
    page.goto(f"{live_server.url}/projects/{project.pk}/")
    assert page.locator("#b-ref").get_attribute("role") == "combobox"
    page.focus("#b-ref")
    page.keyboard.type("ξένοι")
    page.wait_for_selector("#b-ref-list li[role=option]:has-text('2 1')")
    assert page.get_attribute("#b-ref", "aria-expanded") == "true"
    page.keyboard.press("ArrowDown")
    assert page.get_attribute("#b-ref", "aria-activedescendant") == "b-ref-list-0"
    page.keyboard.press("Enter")
    assert page.input_value("#b-ref") == "2 1" and page.is_hidden("#b-ref-list")
    assert "/batches/" not in page.url  # Enter chose; it did not submit the form

    page.focus("#b-find")
    page.keyboard.type("λόγος")
    page.wait_for_selector("#b-find-status:has-text('40 verse(s) match; showing 20')")
    for _ in range(21):  # past the 20 shown, to "Show more…"
        page.keyboard.press("ArrowDown")
    assert page.get_attribute("#b-find", "aria-activedescendant") == "b-find-list-more"
    page.keyboard.press("Enter")
    page.wait_for_selector("#b-find-status:has-text('showing 40')")
    page.keyboard.press("Home")  # the caret; the listbox keeps its place
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_selector("#b-find-status:has-text('1 candidate(s) listed')")
    page.keyboard.type("γράφοντες")
    page.wait_for_selector("#b-find-list li[role=option]:has-text('2 2')")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_selector("#b-find-status:has-text('2 candidate(s) listed')")
    page.keyboard.type("λόγος 39")
    page.wait_for_selector("#b-find-list li[role=option]:has-text('16977 39')")
    page.keyboard.press("Escape")
    assert page.is_hidden("#b-find-list")
    cands = page.input_value("#b-cands").split("\n")
    assert len(cands) == 2 and cands[1] == "2 2" and cands[0].startswith("16977 ")
    page.fill("#b-name", "picked")
    page.click("form[action$='/batches/new/'] button[type=submit]")
    page.wait_for_selector(".messages:has-text('Batch picked created with 1 pairs')")
    batch = Batch.objects.get(project=project, name="picked")
    assert batch.reference.verse_id == "2 1"
    assert set(BatchCandidate.objects.filter(batch=batch).values_list("verse__verse_id", flat=True)) == set(cands)
