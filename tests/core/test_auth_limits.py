"""Password guessing is throttled (login page: 15 wrong, token endpoint: 25 wrong, then 429); API tokens
can be given a lifetime (off by default; an expired token gets 401 and the endpoint issues a new one)."""
import datetime as dt

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token

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


def test_tokens_do_not_expire_by_default(client_for, users):
    Token.objects.filter(user=users["lead"]).update(created=dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc))
    assert client_for("lead").get("/api/v1/me/").status_code == 200


def test_an_expired_token_gets_401_and_the_endpoint_issues_a_new_one(settings, client_for, api_client, users):
    settings.SIMILIA_TOKEN_TTL_HOURS = 24
    fresh = client_for("lead")
    assert fresh.get("/api/v1/me/").status_code == 200
    old_key = Token.objects.get(user=users["lead"]).key
    Token.objects.filter(user=users["lead"]).update(
        created=dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=25))
    expired = fresh.get("/api/v1/me/")
    assert expired.status_code == 401 and "Token expired" in expired.json()["detail"]
    response = api_client.post("/api/v1/auth/token/", {"username": "lea", "password": "pw-lea"})
    assert response.status_code == 200 and response.json()["token"] != old_key
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    assert api_client.get("/api/v1/me/").status_code == 200
