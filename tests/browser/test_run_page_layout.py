"""The run page is for its candidates: the first candidate row stands near the top on a laptop screen and on a
phone (Debian's chromium), with the filters folded, and the status, exports and cards below the list."""
import pytest

from workbench.models import Candidate

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_first_candidate_is_near_the_top(live_server, browser, make_user):
    from tests.workbench.test_refit import _channels_run, store_refit

    owner = make_user("wblay", "researcher")
    run = store_refit(_channels_run(owner))  # with a stored re-ranking card too: it goes below the list
    assert Candidate.objects.filter(run=run).exists()
    tops = {}
    for name, viewport in (("laptop", {"width": 1280, "height": 860}), ("phone", {"width": 375, "height": 812})):
        context = browser.new_context(viewport=viewport)
        page = context.new_page()
        login(page, live_server.url, "wblay", "pw-wblay")
        page.goto(f"{live_server.url}/workbench/runs/{run.pk}/")
        first = page.locator("tr.cand").first.bounding_box()
        tops[name] = first["y"]
        for below in ("#run-status", "#exports", "#refit-card"):
            assert page.locator(below).bounding_box()["y"] > first["y"], (name, below)
        assert page.locator("#filter-box").get_attribute("open") is None
        context.close()
    assert tops["laptop"] <= 400 and tops["phone"] <= 700, tops
