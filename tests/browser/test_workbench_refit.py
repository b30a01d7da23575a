"""A run re-ranked with its owner's verdicts by an earlier version, in Debian's chromium: the card shows the stored
weights and its link lists the undecided candidates in the stored order, the database's."""
import pytest

from workbench.models import Candidate

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_stored_refit_is_read_in_the_browser(live_server, page, make_user):
    from tests.workbench.test_refit import _channels_run, store_refit

    owner = make_user("wbfit", "researcher")
    run = store_refit(_channels_run(owner))
    login(page, live_server.url, "wbfit", "pw-wbfit")
    page.goto(f"{live_server.url}/workbench/runs/{run.pk}/")
    assert page.inner_text("#refit-message") == "Gained weight: semantic."
    assert page.locator("#refit-button").count() == 0
    first = page.locator("#refit-weights tbody tr").first
    assert first.get_attribute("data-channel") == "semantic" and first.inner_text().split()[-1] == "×2.50"
    page.click("#refit-order")
    page.wait_for_url("**order=refit**")
    assert page.input_value("#order") == "refit"
    shown = [int(x) for x in page.locator("tr.cand").evaluate_all("rows => rows.map(r => r.dataset.id)")]
    expected = list(Candidate.objects.filter(run=run).order_by("-refit_score", "query_position", "rank", "id")
                    .values_list("id", flat=True))
    assert shown == expected[:50] and shown
