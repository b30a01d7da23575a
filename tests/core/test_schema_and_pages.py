"""OpenAPI schema, docs page, login and role navigation."""
import pytest
import yaml


@pytest.mark.django_db
def test_openapi_schema_lists_the_api(client, capfd):
    response = client.get("/api/schema/")
    assert response.status_code == 200
    assert "Warning" not in capfd.readouterr().err  # /api/docs/ loads it: drf-spectacular printed 8 into make run
    schema = yaml.safe_load(response.content)
    assert schema["openapi"].startswith("3.")
    assert "/api/v1/jobs/{id}/cancel/" in schema["paths"] or "/api/v1/jobs/{pk}/cancel/" in schema["paths"]


@pytest.mark.django_db
def test_docs_page_uses_bundled_assets(client):
    html = client.get("/api/docs/").content.decode()
    assert "swagger" in html.lower()
    assert "cdn" not in html.lower() and "unpkg" not in html.lower()


@pytest.mark.django_db
def test_home_requires_login(client):
    response = client.get("/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


@pytest.mark.django_db
@pytest.mark.parametrize("role, visible, hidden", [
    ("annotator", ['data-role="annotator"'], ['data-role="lead"', 'data-role="researcher"', "/admin/"]),
    ("lead", ['data-role="lead"'], ['data-role="annotator"', "/admin/"]),
    ("researcher", ['data-role="researcher"'], ['data-role="lead"', "/admin/"]),
    ("staff", ['data-role="lead"', 'data-role="researcher"', "/admin/"], []),
])
def test_navigation_follows_roles(client, users, role, visible, hidden):
    client.force_login(users[role])
    html = client.get("/").content.decode()
    for marker in visible:
        assert marker in html
    for marker in hidden:
        assert marker not in html


@pytest.mark.django_db
def test_login_with_demo_user(client):
    from django.core.management import call_command

    call_command("load_demo_users")
    response = client.post("/login/", {"username": "lead", "password": "lead-demo-pass"})
    assert response.status_code == 302
    assert "Welcome, lead" in client.get("/").content.decode()


@pytest.mark.django_db
def test_healthz(client):
    assert client.get("/healthz").json() == {"status": "ok"}


def test_web_process_never_imports_torch():
    """Torch and friends are imported only inside the worker code that needs them."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import django, sys; django.setup(); import config.urls; from django.test import Client; "
            "Client().get('/login/'); print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers', "
            "'gensim') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2], capture_output=True,
                          text=True, timeout=120, env={**__import__("os").environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"
