"""Start-up configuration errors name the variable at fault."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOOD_KEY = "kW3-x9Qp_Lr7Zt2Vn8Ys4Bc6Hd1Jf5Mg0Aa-e_u2Ri7Ox3Ul9Ew4Sk8Dm6Tq1"


def _setup(settings_module: str, **env) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL", "CELERY_"))}
    clean.update(env, DJANGO_SETTINGS_MODULE=settings_module)
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)"],
        cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120,
    )


def test_production_refuses_to_start_without_secret_key():
    proc = _setup("config.settings.production", DATABASE_URL="sqlite:////tmp/x.sqlite3")
    assert proc.returncode != 0
    assert "DJANGO_SECRET_KEY" in proc.stderr
    assert "ImproperlyConfigured" in proc.stderr


def test_production_requires_database_url():
    proc = _setup("config.settings.production", DJANGO_SECRET_KEY=GOOD_KEY)
    assert proc.returncode != 0
    assert "DATABASE_URL" in proc.stderr


def test_production_starts_with_required_settings():
    proc = _setup("config.settings.production", DJANGO_SECRET_KEY=GOOD_KEY, DATABASE_URL="sqlite:////tmp/x.sqlite3")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


@pytest.mark.parametrize(
    "name, value",
    [("DJANGO_DEBUG", "maybe"), ("DATABASE_URL", "mysql://u@h/db"), ("CELERY_BROKER_URL", "amqp://x"),
     ("JOB_HEARTBEAT_TIMEOUT", "soon")],
)
def test_invalid_values_name_the_variable(name, value):
    proc = _setup("config.settings.local", **{name: value})
    assert proc.returncode != 0
    assert name in proc.stderr


def test_local_defaults_need_nothing_and_keep_the_working_folder_private(tmp_path):
    proc = _setup("config.settings.local", SIMILIA_VAR_DIR=str(tmp_path / "var"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True"
    assert (tmp_path / "var").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "var" / "similia.sqlite3").stat().st_mode & 0o777 == 0o600


def test_local_settings_refuse_debug_off_with_the_default_secret_unless_the_demo_is_on(tmp_path):
    proc = _setup("config.settings.local", SIMILIA_VAR_DIR=str(tmp_path), DJANGO_DEBUG="false")
    assert proc.returncode != 0 and "DJANGO_DEBUG=false with the default DJANGO_SECRET_KEY" in proc.stderr
    for env in ({"SIMILIA_DEMO": "true"}, {"DJANGO_SECRET_KEY": GOOD_KEY}):
        proc = _setup("config.settings.local", SIMILIA_VAR_DIR=str(tmp_path), DJANGO_DEBUG="false", **env)
        assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr


@pytest.mark.parametrize("key", ["s" * 60, "change-me-to-a-long-random-string", "django-insecure-" + "abcdef" * 8])
def test_production_refuses_a_weak_secret_key(key):
    proc = _setup("config.settings.production", DJANGO_SECRET_KEY=key, DATABASE_URL="sqlite:////tmp/x.sqlite3")
    assert proc.returncode != 0
    assert "DJANGO_SECRET_KEY must be at least 50 characters" in proc.stderr


def _env_example() -> dict:
    values = {}
    for line in (ROOT / "docker" / "env.example").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, value = line.partition("=")
            values[name.strip()] = value.strip()
    return values


def test_check_deploy_is_clean_with_the_env_example_values():
    example = _env_example()
    assert example["DJANGO_SECURE_COOKIES"] == "true"
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL", "CELERY_"))}
    clean.update(example, DJANGO_SETTINGS_MODULE="config.settings.production",
                 DATABASE_URL=f"postgres://similia:{example['POSTGRES_PASSWORD']}@postgres:5432/similia",
                 CELERY_BROKER_URL="redis://redis:6379/0")
    proc = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                          cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "System check identified no issues" in proc.stdout


def test_production_sends_hsts_and_redirects_to_https_except_the_health_check():
    code = (
        "import django; django.setup()\n"
        "from django.conf import settings\n"
        "from django.test import Client\n"
        "c = Client()\n"
        "r = c.get('/api/v1/me/', HTTP_HOST='localhost')\n"
        "print(r.status_code, r['Location'])\n"
        "r = c.get('/api/v1/me/', HTTP_HOST='localhost', secure=True)\n"
        "print(r['Strict-Transport-Security'])\n"
        "print(c.get('/healthz', HTTP_HOST='localhost').status_code)\n"
        "print(settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE)\n"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL", "CELERY_"))}
    clean.update(_env_example(), DJANGO_SETTINGS_MODULE="config.settings.production",
                 DATABASE_URL="sqlite:////tmp/similia-deploy-check.sqlite3")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    redirect, hsts, health, cookies = proc.stdout.strip().splitlines()
    assert redirect == "301 https://localhost/api/v1/me/"
    assert "max-age=31536000" in hsts and "includeSubDomains" in hsts
    assert health == "200"
    assert cookies == "True True"


def _hub_state(**env) -> list[str]:
    code = ("import os, django; django.setup()\n"
            "from django.conf import settings\n"
            "from detection.methods.infrastructure import model_store\n"
            "print(settings.ALLOW_HUB_DOWNLOADS, os.environ['HF_HUB_OFFLINE'], os.environ['TRANSFORMERS_OFFLINE'])\n"
            "try:\n    print(model_store.resolve('some-org/some-model'))\n"
            "except model_store.ModelUnavailable as exc:\n    print('refused:', exc)\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(
        ("DJANGO_", "DATABASE_URL", "CELERY_", "HF_", "TRANSFORMERS_", "SIMILIA_ALLOW"))}
    clean.update(_env_example(), DJANGO_SETTINGS_MODULE="config.settings.production",
                 DATABASE_URL="sqlite:////tmp/similia-deploy-check.sqlite3", **env)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip().splitlines()


def test_hub_downloads_are_off_in_production_unless_the_operator_turns_them_on():
    """A researcher's 'org/name' model id never makes a worker download a model: production (the env example, no
    HF_HUB_OFFLINE set by anyone) sets the hub's offline switches and refuses the id, naming the setting."""
    flags, outcome = _hub_state()
    assert flags == "False 1 1"
    assert outcome.startswith("refused:") and "SIMILIA_ALLOW_HUB_DOWNLOADS" in outcome
    flags, outcome = _hub_state(SIMILIA_ALLOW_HUB_DOWNLOADS="true", HF_HUB_OFFLINE="0", TRANSFORMERS_OFFLINE="0")
    assert flags == "True 0 0" and outcome == "some-org/some-model"  # handed to the loading library


def test_compose_keeps_web_and_workers_offline_by_default():
    compose = (ROOT / "docker" / "docker-compose.yml").read_text()
    app_env = compose.split("environment: &app-env", 1)[1].split("volumes:", 1)[0]
    assert "SIMILIA_ALLOW_HUB_DOWNLOADS: ${SIMILIA_ALLOW_HUB_DOWNLOADS:-false}" in app_env
    assert "HF_HUB_OFFLINE: ${HF_HUB_OFFLINE:-1}" in app_env and "TRANSFORMERS_OFFLINE: ${TRANSFORMERS_OFFLINE:-1}" in app_env
    assert _env_example()["SIMILIA_ALLOW_HUB_DOWNLOADS"] == "false"
