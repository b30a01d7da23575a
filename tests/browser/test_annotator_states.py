"""The annotator page says where you are and how far the batch is, and its finished and closed states
are clear (issue 15, "Annotators")."""
import json

import pytest

from annotation.models import Judgement
from annotation.services.projects import batch_create, batch_set_status

from .conftest import login
from .test_annotator_page import greek_project  # noqa: F401  (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _annotate(page, base_url, batch):
    login(page, base_url, "gann", "pw-gann")
    page.goto(f"{base_url}/annotate/{batch.pk}/")


def test_header_names_project_and_batch_and_progress_moves_during_the_set(live_server, page, greek_project):  # noqa: F811
    batch, _ = greek_project
    _annotate(page, live_server.url, batch)
    page.wait_for_selector("#choices[data-ready]")
    assert page.inner_text("#project-name") == "greek" and page.inner_text("#batch-name") == batch.name
    assert page.inner_text("#batch-progress") == f"· batch: 0 of {batch.n_pairs} pairs judged; you: 0"
    for k in (1, 2):
        page.keyboard.press("ArrowLeft")
        page.wait_for_selector(f"#batch-progress:has-text('batch: {k} of {batch.n_pairs} pairs judged; you: {k}')")
        page.wait_for_selector("#choices[data-ready]")
    page.keyboard.press("u")
    page.wait_for_selector(f"#batch-progress:has-text('batch: 1 of {batch.n_pairs} pairs judged; you: 1')")
    page.wait_for_selector("#save-state:has-text('All choices saved')")
    page.click("#back-home")
    page.wait_for_url(f"{live_server.url}/#annotate")
    assert page.is_visible(f"#annotate a[href='/annotate/{batch.pk}/']")
    # Issue 39: what is left for this annotator (their open set's pairs and the pairs still to serve) and for the
    # batch (pairs no one has judged), not the batch's total
    row = page.locator("#annotate tr", has_text=batch.name)
    assert row.locator(".left-batch").inner_text() == f"{batch.n_pairs - 1} of {batch.n_pairs}"
    left_you = int(row.locator(".left-you").inner_text().removeprefix("up to "))
    assert 0 < left_you <= batch.n_pairs - 1


def test_finished_batch_hides_undo_and_keys_and_home_stops_offering_it(live_server, page, greek_project):  # noqa: F811
    batch, annotator = greek_project
    ids = list(batch.project.verses.order_by("id").values_list("verse_id", flat=True))
    tiny = batch_create(project=batch.project, reference_id=ids[0], candidate_ids=ids[1:4], name="tiny", seed=1)
    _annotate(page, live_server.url, tiny)
    for _ in range(tiny.n_pairs):
        page.wait_for_selector("#choices[data-ready]")
        page.keyboard.press("ArrowRight")
    page.wait_for_selector("#set-done-title:has-text('Set complete')")
    page.keyboard.press("Enter")
    page.wait_for_selector("#pair-counter:has-text('Batch finished')")
    assert page.is_visible("#batch-done")
    assert page.is_hidden("#undo") and page.is_hidden("#key-hints") and page.is_hidden("#choices")
    assert Judgement.objects.filter(batch=tiny, annotator=annotator).count() == 3
    page.goto(f"{live_server.url}/")
    row = page.locator("#annotate tr", has_text="tiny")
    assert "finished" in row.inner_text() and row.locator("a").count() == 0
    assert page.locator(f"#annotate a[href='/annotate/{batch.pk}/']").count() == 1  # the other batch is still offered


def test_a_batch_closed_while_the_annotator_works_keeps_the_answer_and_says_complete(live_server, page,
                                                                                      greek_project):  # noqa: F811
    """Issue 39: the pair on screen was served before the close: its answer is stored (marked after the close), the
    page says the batch is complete, and a reload shows the closed batch's message instead of empty cards."""
    batch, annotator = greek_project
    _annotate(page, live_server.url, batch)
    page.wait_for_selector("#choices[data-ready]")
    assert page.is_hidden("#batch-complete-note")
    batch_set_status(batch=batch, status="closed")  # its stop rule held, or its lead closed it, while the annotator works
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector("#batch-complete-note:not([hidden])")  # shown once the server stored the choice
    page.wait_for_selector("#save-state:has-text('All choices saved')")
    assert Judgement.objects.get(batch=batch, annotator=annotator).after_close
    assert page.locator("#refused-list li").count() == 0
    page.reload()  # opened while closed: the server renders the message, no empty cards
    page.wait_for_selector("#batch-closed:not([hidden])")
    assert page.inner_text("#batch-closed-title") == "This batch is complete"
    assert "answers to pairs you were already shown are still stored" in page.inner_text("#batch-closed-reason")
    assert page.is_hidden("#workspace") and page.is_hidden("#choice-left")
    page.goto(f"{live_server.url}/")
    assert page.locator(f"#annotate a[href='/annotate/{batch.pk}/']").count() == 0
    row = page.locator("#annotate tr", has_text=batch.name)
    assert "complete (closed)" in row.inner_text() and row.locator(".left-batch").inner_text() == "complete"


def test_home_page_offers_annotate_only_where_pairs_remain(live_server, page, greek_project, make_user):  # noqa: F811
    """A batch whose pairs all went to others (none waits for this annotator) is not offered."""
    from annotation.services.judgements import judgement_submit
    from annotation.services.projects import membership_add, project_create, verses_import
    from annotation.services.scheduling import set_next

    lead = make_user("lead2", "lead")
    other = make_user("gann9", "annotator")
    project = project_create(owner=lead, name="solo", set_size=3, overlap_per_set=0)
    verses_import(project=project, data=json.dumps([{"verse_id": str(k), "text": f"v{k}"} for k in range(4)]).encode())
    for name in ("gann", "gann9"):
        membership_add(project=project, username=name)
    solo = batch_create(project=project, reference_id="0", candidate_ids=["1", "2", "3"], name="solo-batch")
    for item in set_next(batch=solo, annotator=other).assignments.select_related("pair"):
        judgement_submit(annotator=other, assignment_id=item.pk, chosen_verse_id=item.pair.verse_a_id,
                         client_uuid=f"00000000-0000-4000-8000-00000000000{item.position}")
    login(page, live_server.url, "gann", "pw-gann")
    row = page.locator("#annotate tr", has_text="solo-batch")
    assert "finished" in row.inner_text() and row.locator("a").count() == 0
