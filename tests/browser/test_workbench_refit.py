""""Re-rank with my verdicts" in Debian's chromium: a researcher with too few verdicts is told how many more it
needs and keeps the shipped order; with enough, the run page names the channels that gained and lost weight and
links to the undecided candidates in the new order, which is the database's."""
import pytest

from workbench.models import Candidate, DetectionRun, Verdict

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_refit_button_flow(live_server, page, make_user):
    from tests.workbench.test_refit import _channels_run, _planted_verdicts
    from workbench.services import verdict_set

    owner = make_user("wbfit", "researcher")
    run = _channels_run(owner)
    for c in Candidate.objects.filter(run=run).order_by("-score", "id")[:4]:
        verdict_set(candidate=c, user=owner, decision="cit.")
    login(page, live_server.url, "wbfit", "pw-wbfit")
    page.goto(f"{live_server.url}/workbench/runs/{run.pk}/")
    page.click("#refit-button")
    page.wait_for_url(f"**/workbench/runs/{run.pk}/")
    message = page.inner_text("#refit-message")
    assert message.startswith("All 4 of your verdicts confirm a parallel"), message
    assert page.locator("#refit-weights").count() == 0 and page.locator("#refit-order").count() == 0

    Verdict.objects.filter(user=owner).delete()
    decided = _planted_verdicts(run, owner, undecided_top=2)  # the semantic channel's top half confirmed, the rest rejected
    page.click("#refit-button")
    page.wait_for_selector("#refit-weights")
    run = DetectionRun.objects.get(pk=run.pk)
    assert run.refit["fitted"] and page.inner_text("#refit-message") == run.refit["message"]
    assert "Gained weight: semantic" in page.inner_text("#refit-message")
    first = page.locator("#refit-weights tbody tr").first
    assert first.get_attribute("data-channel") == "semantic" and first.inner_text().split()[-1].startswith("×")
    page.click("#refit-order")
    page.wait_for_url("**order=refit**")
    assert page.input_value("#order") == "refit"
    shown = [int(x) for x in page.locator("tr.cand").evaluate_all("rows => rows.map(r => r.dataset.id)")]
    undecided = Candidate.objects.filter(run=run).exclude(pk__in=[c.pk for c in decided])
    expected = list(undecided.order_by("-refit_score", "query_position", "rank", "id").values_list("id", flat=True))
    assert shown == expected[:50] and len(shown) == min(50, undecided.count()) > 0
    shipped = list(undecided.order_by("-score", "query_position", "rank", "id").values_list("id", flat=True))
    assert expected != shipped  # the verdicts re-ordered the undecided candidates
