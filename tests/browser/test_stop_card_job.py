"""Issue 26: the dashboard's stop-rule card makes no exact posterior draws in the page request. It shows "computing…"
with the queued `annotation.stop_check` job's progress, and the exact figures once the job has run (the page polls the
job and reloads itself)."""
import pytest

from annotation.services.adaptive_batches import STOP_JOB, batch_counts
from jobs.models import Job
from jobs.runner import run_job
from tests.annotation.test_exact_draws_off_requests import judged_adaptive_batch

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def no_eager_jobs():
    """Jobs sent for real, as in production, not run at commit by the test settings' eager mode: the check stays
    queued until the test runs it as a worker would. The messages go to an in-process broker nobody consumes (not
    CI's Redis, where a later worker could pick them up)."""
    from tests.celery_broker import broker_at

    with broker_at("memory://"):
        yield


def test_stop_card_shows_computing_then_the_exact_figures(live_server, page, make_user, no_eager_jobs):
    lead = make_user("slead", "lead")
    people = [make_user(f"sann{k}", "annotator") for k in range(2)]
    project, batch = judged_adaptive_batch(lead, people)
    judged = int(batch_counts(batch)[0].sum())

    login(page, live_server.url, "slead", "pw-slead")
    page.goto(f"{live_server.url}/projects/{project.pk}/dashboard/")
    card = page.locator("#stop-rule")
    card.locator(".exact-computing .status:has-text('queued')").wait_for()
    assert card.locator(".exact-computing progress").count() == 1
    assert "(approx.)" in card.inner_text() and "(exact)" not in card.inner_text()
    check = Job.objects.get(kind=STOP_JOB, params__batch_id=batch.pk)
    assert check.status == Job.Status.QUEUED

    assert run_job(check.pk) == "succeeded"  # a worker's part, while the page waits
    page.wait_for_selector("#stop-rule td:has-text('(exact)')", timeout=60_000)  # polled, reloaded by itself
    text = page.locator("#stop-rule").inner_text()
    check.refresh_from_db()
    assert f"{check.result['p']:.3f} (exact)" in text
    # Issue 39: the rule in plain words, on the card
    assert "all 2 candidates ranked highest are truly among the 2 strongest" in page.inner_text("#stop-rule .explain")
    assert f"made at {judged} judgements (0 since)" in text
    assert page.locator("#stop-rule .exact-computing").count() == 0
    assert Job.objects.filter(kind=STOP_JOB, params__batch_id=batch.pk).count() == 1  # nothing queued again
