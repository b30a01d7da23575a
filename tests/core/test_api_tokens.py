"""API tokens are stored hashed and shown once (issue 40): the database holds a SHA-256 digest and the first six
characters, never a key; the token API and page show a key only in the answer that issued it, with
`Cache-Control: no-store` (as every answer showing a secret: the lead's page listing invitation links, an invitation
page); the migration hashes the plain keys of DRF's old table. The demo's tokens and passwords survive a restart of
`make run` (issue 36): `load_demo_users` run twice prints the same key, which still authenticates, and a logged-in
browser stays logged in."""
import importlib
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone

from core.models import ApiToken

pytestmark = pytest.mark.django_db


def _stored_text() -> str:
    """Every value of the token table, as text."""
    return " ".join(str(value) for row in ApiToken.objects.values_list() for value in row)


def _no_store(response) -> bool:
    return "no-store" in response.get("Cache-Control", "")


def test_the_api_shows_a_new_key_once_and_stores_its_digest_only(api_client, users):
    response = api_client.post("/api/v1/auth/token/", {"username": "lea", "password": "pw-lea"})
    key = response.json()["token"]
    assert response.status_code == 200 and len(key) == 40 and _no_store(response)
    stored = ApiToken.objects.get(user=users["lead"])
    assert stored.digest == ApiToken.digest_of(key) and stored.hint == key[:6] and key not in _stored_text()
    again = api_client.post("/api/v1/auth/token/", {"username": "lea", "password": "pw-lea"}).json()["token"]
    assert again != key  # a new key replaces the old one, which stops working
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api_client.get("/api/v1/me/").status_code in (401, 403)
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {again}")
    assert api_client.get("/api/v1/me/").json()["username"] == "lea"
    refused = Client().post("/api/v1/auth/token/", {"username": "lea", "password": "wrong"})
    assert refused.status_code == 400 and _no_store(refused)


def test_the_token_page_shows_the_key_only_when_it_issues_it(page_client, users):
    client = page_client(users["researcher"])
    shown = client.get("/account/token/")
    hint = ApiToken.objects.get(user=users["researcher"]).hint
    assert shown.status_code == 200 and _no_store(shown)
    assert f'<span id="api-token-hint">{hint}</span>' in shown.content.decode() and 'id="api-token"' not in shown.content.decode()
    issued = client.post("/account/token/")
    assert issued.status_code == 200 and _no_store(issued)
    page = issued.content.decode()
    key = page.split('<span id="api-token">', 1)[1].split("</span>", 1)[0]
    assert ApiToken.objects.get(user=users["researcher"]).digest == ApiToken.digest_of(key)
    assert "it is not shown again" in page and key not in _stored_text()
    later = client.get("/account/token/").content.decode()
    assert key not in later and f'<span id="api-token-hint">{key[:6]}</span>' in later
    ApiToken.objects.filter(user=users["researcher"]).delete()
    assert 'id="api-token-none"' in client.get("/account/token/").content.decode()


@pytest.mark.django_db(transaction=True)  # SQLite's schema editor works outside a transaction only
def test_the_migration_hashes_the_plain_keys_of_the_old_table(users):
    migration = importlib.import_module("core.migrations.0001_secrets_hashed_api_tokens")
    from django.apps import apps

    ApiToken.objects.all().delete()
    lead = users["lead"]
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, created timestamp with time zone, "
                       "user_id integer)" if connection.vendor == "postgresql" else
                       "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, created datetime, user_id integer)")
        cursor.execute("INSERT INTO authtoken_token VALUES (%s, %s, %s)",
                       ["0123456789abcdef0123456789abcdef01234567", "2026-01-02 03:04:05.000006", lead.pk])
    with connection.schema_editor() as editor:
        migration.hash_plain_tokens(apps, editor)
    assert "authtoken_token" not in connection.introspection.table_names()
    token = ApiToken.objects.get(user=lead)
    assert token.hint == "012345" and token.created.isoformat() == "2026-01-02T03:04:05.000006+00:00"
    assert token.digest == ApiToken.digest_of("0123456789abcdef0123456789abcdef01234567")
    ApiToken.objects.filter(user=lead).update(created=timezone.now())  # it had expired (SIMILIA_TOKEN_TTL_HOURS)
    client = Client(HTTP_AUTHORIZATION="Token 0123456789abcdef0123456789abcdef01234567")
    assert client.get("/api/v1/me/").json()["username"] == "lea"


def _demo_tokens() -> dict[str, str]:
    out = StringIO()
    call_command("load_demo_users", stdout=out)
    return {line.split()[0]: line.rsplit("token ", 1)[1] for line in out.getvalue().splitlines()[1:]}


def test_demo_passwords_and_tokens_survive_a_restart():
    first = _demo_tokens()
    browser = Client()
    assert browser.post("/login/", {"username": "lead", "password": "lead-demo-pass"}).status_code == 302
    second = _demo_tokens()
    assert second == first and len(first["lead"]) == 40
    api = Client(HTTP_AUTHORIZATION=f"Token {second['researcher']}")
    assert api.get("/api/v1/me/").json()["username"] == "researcher"
    assert browser.get("/account/token/").status_code == 200  # still logged in: no redirect to the login page
    assert first["lead"] not in _stored_text()
    from core.services import token_issue

    token_issue(user=ApiToken.objects.get(user__username="researcher").user)  # renewed on the token page
    assert _demo_tokens()["researcher"].startswith("replaced since")


def test_pages_showing_invitation_links_are_not_stored(page_client, users):
    from annotation.services.members import invitation_create
    from annotation.services.projects import project_create

    project = project_create(owner=users["lead"], name="secretive")
    invitation = invitation_create(project=project, actor=users["lead"])
    page = page_client(users["lead"]).get(f"/projects/{project.pk}/")
    assert invitation.token in page.content.decode() and _no_store(page)
    assert _no_store(Client().get(f"/invite/{invitation.token}/"))


def test_a_key_reaches_the_database_only_as_its_digest(api_client, users):
    """So a NUL or a long key in the header is an invalid token, not a PostgreSQL error (issue 40: it was a 500)."""
    api_client.credentials(HTTP_AUTHORIZATION="Token " + "k" * 300)
    response = api_client.get("/api/v1/me/")
    assert response.status_code == 403 and response.json() == {"detail": "Invalid token."}
    api_client.credentials(HTTP_AUTHORIZATION="Token a\x00b")  # refused before authentication (RejectNulMiddleware)
    response = api_client.get("/api/v1/me/")
    assert response.status_code == 400 and "NUL" in response.content.decode()
