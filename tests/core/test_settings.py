"""Start-up configuration errors name the variable at fault."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


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
    proc = _setup("config.settings.production", DJANGO_SECRET_KEY="s" * 50)
    assert proc.returncode != 0
    assert "DATABASE_URL" in proc.stderr


def test_production_starts_with_required_settings():
    proc = _setup("config.settings.production", DJANGO_SECRET_KEY="s" * 50, DATABASE_URL="sqlite:////tmp/x.sqlite3")
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


def test_local_defaults_need_nothing():
    proc = _setup("config.settings.local")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True"
