"""A user sees and renews their API token on a page (issues 27 and 40), in a real browser: the name in the header
leads there, the page shows only the first characters of the key (only its digest is stored); "Replace" shows the
new key once, the API accepts it and refuses the old one, and a reload no longer shows it."""
import json
import urllib.error
import urllib.request

import pytest

from tests.conftest import api_key

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _me(base, key):
    """(status, body) of /api/v1/me/ for a script holding `key` (no browser session: the token alone)."""
    request = urllib.request.Request(f"{base}/api/v1/me/", headers={"Authorization": f"Token {key}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, None


def test_a_user_sees_and_renews_their_token(live_server, page, make_user):
    user = make_user("scripter", "researcher")
    old = api_key(user)
    base = live_server.url
    login(page, base, "scripter", "pw-scripter")
    page.click("header a.who")
    page.wait_for_url(f"{base}/account/token/")
    assert page.inner_text("#api-token-hint").strip() == old[:6] and page.locator("#api-token").count() == 0
    assert old not in page.content()
    assert _me(base, old) == (200, {"username": "scripter", "roles": ["researcher"], "is_staff": False})
    page.click("#renew-token")
    page.wait_for_selector(".messages")
    new = page.inner_text("#api-token").strip()
    assert new != old and "not shown again" in page.inner_text("#api-token-once")
    assert _me(base, new)[0] == 200
    assert _me(base, old)[0] in (401, 403)  # refused (403: session authentication comes first in DRF's list)
    assert "no longer works" in page.inner_text(".messages")
    page.goto(f"{base}/account/token/")
    assert page.inner_text("#api-token-hint").strip() == new[:6] and new not in page.content()
