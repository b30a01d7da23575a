"""Password guessing is throttled (login page and admin login: 15 wrong, token endpoint: 25 wrong, then 429);
API tokens have a lifetime (30 days by default; an expired token gets 401 and the endpoint issues a new one),
a client revokes its own token with DELETE, and a password change revokes the user's token."""
import datetime as dt

import pytest
from django.test import Client

from core.models import ApiToken
from tests.conftest import api_key

pytestmark = pytest.mark.django_db


def test_the_16th_wrong_login_gets_429_even_with_the_right_password(users):
    client = Client()
    for attempt in range(15):
        response = client.post("/login/", {"username": "lea", "password": f"guess-{attempt}"})
        assert response.status_code == 200 and "didn't match" in response.content.decode()
    blocked = client.post("/login/", {"username": "lea", "password": "guess-16"})
    assert blocked.status_code == 429
    assert "Too many failed logins" in blocked.content.decode() and int(blocked["Retry-After"]) > 0
    assert client.post("/login/", {"username": "lea", "password": "pw-lea"}).status_code == 429
    # another address is not affected
    other = Client(REMOTE_ADDR="10.0.0.9")
    assert other.post("/login/", {"username": "lea", "password": "pw-lea"}).status_code == 302


def test_right_logins_do_not_count(users):
    client = Client()
    for _ in range(20):
        assert client.post("/login/", {"username": "lea", "password": "pw-lea"}).status_code == 302
        client.logout()


def test_the_26th_wrong_token_request_gets_429(api_client, users):
    for attempt in range(25):
        response = api_client.post("/api/v1/auth/token/", {"username": "lea", "password": f"guess-{attempt}"})
        assert response.status_code == 400
    blocked = api_client.post("/api/v1/auth/token/", {"username": "lea", "password": "guess-26"})
    assert blocked.status_code == 429 and "Retry-After" in blocked
    assert api_client.post("/api/v1/auth/token/", {"username": "lea", "password": "pw-lea"}).status_code == 429


def test_incomplete_token_requests_are_400_and_do_not_count(api_client, users):
    for _ in range(30):
        assert api_client.post("/api/v1/auth/token/", {"username": "lea"}).status_code == 400
    assert api_client.post("/api/v1/auth/token/", {"username": "lea", "password": "pw-lea"}).status_code == 200


def test_tokens_expire_after_30_days_by_default(client_for, users):
    from django.conf import settings

    assert settings.SIMILIA_TOKEN_TTL_HOURS == 30 * 24
    age = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=29)
    ApiToken.objects.filter(user=users["lead"]).update(created=age)
    assert client_for("lead").get("/api/v1/me/").status_code == 200
    ApiToken.objects.filter(user=users["lead"]).update(created=age - dt.timedelta(days=2))
    assert client_for("lead").get("/api/v1/me/").status_code == 401


def test_tokens_never_expire_only_when_the_operator_says_so(settings, client_for, users):
    settings.SIMILIA_TOKEN_TTL_HOURS = 0
    ApiToken.objects.filter(user=users["lead"]).update(created=dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc))
    assert client_for("lead").get("/api/v1/me/").status_code == 200


def test_the_production_example_gives_tokens_a_lifetime():
    from pathlib import Path

    example = (Path(__file__).resolve().parents[2] / "docker" / "env.example").read_text()
    assert "\nSIMILIA_TOKEN_TTL_HOURS=720\n" in example


def test_delete_revokes_ones_own_token_only(client_for, users):
    lead, other = client_for("lead"), client_for("researcher")
    assert lead.delete("/api/v1/auth/token/").status_code == 204
    assert not ApiToken.objects.filter(user=users["lead"]).exists()
    refused = lead.get("/api/v1/me/")  # DRF answers 403 for a bad token behind session authentication
    assert refused.status_code in (401, 403) and refused.json()["detail"] == "Invalid token."
    assert other.get("/api/v1/me/").status_code == 200  # another user's token is untouched
    anonymous = client_for(None).delete("/api/v1/auth/token/")
    assert anonymous.status_code in (401, 403) and "revoke" in anonymous.json()["detail"]


def test_a_password_change_revokes_the_old_token(client_for, api_client, users):
    lead = client_for("lead")
    old_key = api_key(users["lead"])
    user = users["lead"]
    user.last_login = dt.datetime.now(dt.timezone.utc)
    user.save(update_fields=["last_login"])  # an unrelated save keeps the token
    assert lead.get("/api/v1/me/").status_code == 200
    user.set_password("a-new-password-77")
    user.save()
    refused = lead.get("/api/v1/me/")
    assert refused.status_code in (401, 403) and refused.json()["detail"] == "Invalid token."
    response = api_client.post("/api/v1/auth/token/", {"username": "lea", "password": "a-new-password-77"})
    assert response.status_code == 200 and response.json()["token"] != old_key


def test_admin_login_is_throttled_with_the_login_page(users):
    client = Client()
    for attempt in range(15):
        response = client.post("/admin/login/", {"username": "staff", "password": f"guess-{attempt}"})
        assert response.status_code == 200
    blocked = client.post("/admin/login/", {"username": "staff", "password": "pw-staff"})
    assert blocked.status_code == 429 and int(blocked["Retry-After"]) > 0
    assert "Too many failed logins" in blocked.content.decode()
    # one count for every login path: the login page is closed to this address too
    assert client.post("/login/", {"username": "staff", "password": "pw-staff"}).status_code == 429
    assert Client(REMOTE_ADDR="10.0.0.9").post(
        "/admin/login/", {"username": "staff", "password": "pw-staff"}).status_code == 302


def test_a_lockout_at_the_login_page_closes_the_admin_login(users):
    client = Client()
    for attempt in range(15):
        client.post("/login/", {"username": "staff", "password": f"guess-{attempt}"})
    assert client.post("/admin/login/", {"username": "staff", "password": "pw-staff"}).status_code == 429


def test_an_expired_token_gets_401_and_the_endpoint_issues_a_new_one(settings, client_for, api_client, users):
    settings.SIMILIA_TOKEN_TTL_HOURS = 24
    fresh = client_for("lead")
    assert fresh.get("/api/v1/me/").status_code == 200
    old_key = api_key(users["lead"])
    ApiToken.objects.filter(user=users["lead"]).update(
        created=dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=25))
    expired = fresh.get("/api/v1/me/")
    assert expired.status_code == 401 and "Token expired" in expired.json()["detail"]
    response = api_client.post("/api/v1/auth/token/", {"username": "lea", "password": "pw-lea"})
    assert response.status_code == 200 and response.json()["token"] != old_key
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    assert api_client.get("/api/v1/me/").status_code == 200
