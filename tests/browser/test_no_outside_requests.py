"""No page loads anything from outside this host (issue 27): a real browser opens the pages a newcomer meets
first, the API's Swagger UI and ReDoc among them (ReDoc's template asked fonts.googleapis.com for its fonts),
and every request it sends goes to the server under test. ReDoc's bundle always asks cdn.redoc.ly for its logo:
the page's Content-Security-Policy stops that one in the browser (the failure Playwright reports as "csp": never sent; the image
hides itself), which is what this checks for it, not a network failure (this machine has no outside network)."""
from urllib.parse import urlsplit

import pytest

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGES = ("/", "/projects/", "/benchmarks/", "/workbench/", "/jobs/", "/api/docs/", "/api/redoc/")


def test_pages_request_only_this_host(live_server, page, make_user):
    make_user("newcomer", "lead", "researcher")
    host = urlsplit(live_server.url).netloc
    requests, blocked = [], []
    page.on("request", lambda request: requests.append(request.url))
    page.on("requestfailed", lambda request: blocked.append(request.url)
            if request.failure in ("csp", "net::ERR_BLOCKED_BY_CSP") else None)
    login(page, live_server.url, "newcomer", "pw-newcomer")
    for path in PAGES:
        response = page.goto(live_server.url + path)
        assert response.status == 200, path
        page.wait_for_load_state("networkidle")
    from django.conf import settings

    page.wait_for_selector(".api-content h1")  # the last page, ReDoc, rendered the schema under its policy
    assert settings.SPECTACULAR_SETTINGS["TITLE"] in page.locator(".api-content h1").first.inner_text()
    fetched = [url for url in requests if urlsplit(url).scheme in ("http", "https")]
    assert len(fetched) > len(PAGES)  # the pages, their scripts, styles, fonts and the schema
    assert [url for url in fetched if urlsplit(url).netloc != host and url not in blocked] == []
