"""Test settings: the database and broker come from the environment when set (CI: PostgreSQL and
Redis), otherwise a SQLite file and the filesystem broker under a temporary folder."""
import os
import tempfile
from pathlib import Path

from config.env import env_bool, env_db, env_str

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("SIMILIA_VAR_DIR", str(Path(tempfile.gettempdir()) / f"similia-test-{os.getpid()}"))

from .base import *  # noqa: E402,F403
from .base import VAR_DIR  # noqa: E402

SECRET_KEY = env_str("DJANGO_SECRET_KEY", "test-only-not-secret")
DEBUG = False
DATABASES = {"default": env_db("DATABASE_URL", f"sqlite:///{VAR_DIR / 'test.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not memory, so a real worker subprocess sees the same test database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-db.sqlite3")}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", True)  # real workers in tests set false
JOB_HEARTBEAT_INTERVAL = 1
JOB_HEARTBEAT_TIMEOUT = 4
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405  (WhiteNoise warns about a missing folder)
