"""Embedded defaults for a newcomer's machine: SQLite, the filesystem broker, DEBUG on. The working folder (the
database, the broker's messages, the logs) is created readable by its owner only (0700, the SQLite file 0600)."""
import os

from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_db, env_str

from .base import *  # noqa: F403
from .base import VAR_DIR

DEBUG = env_bool("DJANGO_DEBUG", True)
# `load_demo` queues a few benchmark runs for the worker, so the leaderboards have rows on a first visit.
SIMILIA_DEMO_RUNS = env_bool("SIMILIA_DEMO_RUNS", True)
SECRET_KEY = env_str("DJANGO_SECRET_KEY", "local-development-only-not-secret")
# DEBUG off looks like a site others reach: with the secret everyone knows (sessions and the demo's API tokens are
# derived from it) only when SIMILIA_DEMO=true says it is a local demo.
SIMILIA_DEMO = env_bool("SIMILIA_DEMO", False)
if not DEBUG and SECRET_KEY == "local-development-only-not-secret" and not SIMILIA_DEMO:
    raise ImproperlyConfigured("DJANGO_DEBUG=false with the default DJANGO_SECRET_KEY: set DJANGO_SECRET_KEY to a "
                               "secret of your own (python3 -c 'import secrets; print(secrets.token_urlsafe(50))'), "
                               "or SIMILIA_DEMO=true for a local demo.")
DATABASES = {"default": env_db("DATABASE_URL", f"sqlite:///{VAR_DIR / 'similia.sqlite3'}")}
VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # SQLite creates its journal files alike
    os.close(os.open(DATABASES["default"]["NAME"], os.O_CREAT | os.O_WRONLY, 0o600))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
