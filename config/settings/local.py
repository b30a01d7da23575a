"""Embedded defaults for a newcomer's machine: SQLite, the filesystem broker, DEBUG on."""
from config.env import env_bool, env_db, env_str

from .base import *  # noqa: F403
from .base import VAR_DIR

DEBUG = env_bool("DJANGO_DEBUG", True)
# `load_demo` queues a few benchmark runs for the worker, so the leaderboards have rows on a first visit.
SIMILIA_DEMO_RUNS = env_bool("SIMILIA_DEMO_RUNS", True)
SECRET_KEY = env_str("DJANGO_SECRET_KEY", "local-development-only-not-secret")
DATABASES = {"default": env_db("DATABASE_URL", f"sqlite:///{VAR_DIR / 'similia.sqlite3'}")}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
