"""Issue 39 in chromium: the planning page simulates the top-k stop rule a lead is about to set, and a project's
dashboard with judgements and nothing stored computes itself on first view (the demo shows figures after `make run`)."""
import json
import uuid

import pytest

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _project(make_user, name: str, n: int = 9):
    from annotation.services.projects import batch_create, membership_add, project_create, verses_import

    lead = make_user(f"{name}lead", "lead")
    annotator = make_user(f"{name}ann", "annotator")
    project = project_create(owner=lead, name=name, overlap_mode="adaptive")
    verses_import(project=project, data=json.dumps([{"verse_id": f"4 {k}", "text": f"v{k}"} for k in range(n)]).encode(),
                  filename="v.json")
    batch = batch_create(project=project, reference_id="4 0", candidate_ids=[f"4 {k}" for k in range(1, n)],
                         name="b", seed=1)
    membership_add(project=project, username=annotator.username)
    return project, batch, annotator


def test_planning_page_simulates_the_stop_rule_before_it_is_set(live_server, page, make_user):
    project, _, _ = _project(make_user, "plan")
    login(page, live_server.url, "planlead", "pw-planlead")
    page.goto(f"{live_server.url}/projects/{project.pk}/planning/")
    assert page.input_value("#pl-recall") == "0.9" and page.input_value("#pl-level") == "0.95"  # the defaults
    page.fill("#pl-n", "8")
    page.fill("#pl-reps", "1")
    page.fill("#pl-k", "2")
    page.fill("#pl-margin", "1")
    page.fill("#pl-runs", "2")  # the stop-rule simulation runs on demand
    page.click("button:has-text('Simulate')")
    page.wait_for_selector("#stop-rule-simulation", timeout=120_000)  # the job's result (eager in tests)
    text = page.locator("section.card", has=page.locator("#stop-rule-simulation")).inner_text()
    assert "all 2 candidates ranked highest are truly among the 2 strongest" in text
    assert "within 1 of the 2nd strongest" in text and "simulated adaptive batches" in text
    assert "claimed a top k that the simulated truth denies" in text


def test_dashboard_with_judgements_and_nothing_stored_computes_on_first_view(live_server, page, make_user):
    from annotation.services.judgements import judgement_submit
    from annotation.services.scheduling import set_next

    project, batch, annotator = _project(make_user, "first")
    for item in set_next(batch=batch, annotator=annotator).assignments.all():
        judgement_submit(annotator=annotator, assignment_id=item.pk, chosen_verse_id=item.left_id,
                         client_uuid=uuid.uuid4())
    login(page, live_server.url, "firstlead", "pw-firstlead")
    page.goto(f"{live_server.url}/projects/{project.pk}/dashboard/")
    # queued by this view; the page shows its progress and then the figures, without a button or a reload by hand
    page.wait_for_selector("text=Last computed", timeout=60_000)
    assert page.locator("text=Not computed yet").count() == 0
    assert page.is_visible("#stop-rule")
