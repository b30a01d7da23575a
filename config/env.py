"""Reading settings from the environment, with errors that name the variable.

Every setting of Similia comes from an environment variable; a value that is
missing where it is required, or that cannot be parsed, stops start-up with an
``ImproperlyConfigured`` error naming the variable and what was expected.
"""
from __future__ import annotations

import os
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

_env = environ.Env()

_MISSING = object()


def _raw(name: str, default):
    value = os.environ.get(name)
    if value is None or value == "":
        if default is _MISSING:
            raise ImproperlyConfigured(f"Set the {name} environment variable (it is required and has no default).")
        return None
    return value


def env_str(name: str, default=_MISSING) -> str:
    value = _raw(name, default)
    return default if value is None else value


def env_bool(name: str, default=_MISSING) -> bool:
    value = _raw(name, default)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean; use true/false, 1/0, yes/no or on/off.")


def env_int(name: str, default=_MISSING, *, minimum: int | None = None) -> int:
    value = _raw(name, default)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer.") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} must be at least {minimum}.")
    return number


def env_list(name: str, default=_MISSING) -> list[str]:
    value = _raw(name, default)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def env_db(name: str = "DATABASE_URL", default=_MISSING) -> dict:
    value = _raw(name, default)
    if value is None:
        value = default
    try:
        config = _env.db_url_config(value)
    except Exception as exc:  # django-environ raises several types for bad URLs
        raise ImproperlyConfigured(f"{name}={value!r} is not a database URL ({exc}).") from None
    engine = config.get("ENGINE", "")
    if engine not in {"django.db.backends.sqlite3", "django.db.backends.postgresql"}:
        raise ImproperlyConfigured(
            f"{name}={value!r}: only sqlite:/// and postgres:// URLs are supported (got engine {engine or 'none'})."
        )
    if engine == "django.db.backends.sqlite3":
        # Concurrent web + worker writers: wait for locks instead of failing, WAL for readers.
        config.setdefault("OPTIONS", {}).update(
            {"timeout": 30, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
        )
    if engine == "django.db.backends.postgresql":
        # A database host that does not answer costs a request seconds, never a hang (then a 503: core.server_errors).
        config.setdefault("OPTIONS", {}).setdefault("connect_timeout", env_int("DATABASE_CONNECT_TIMEOUT", 5, minimum=1))
        # A persistent connection (CONN_MAX_AGE) broken by a database restart is checked and replaced at the next
        # request's start, instead of failing that request.
        config.setdefault("CONN_HEALTH_CHECKS", True)
    return config


def env_broker(name: str = "CELERY_BROKER_URL", default=_MISSING) -> str:
    value = env_str(name, default)
    scheme = value.split("://", 1)[0] if "://" in value else ""
    if scheme not in {"redis", "rediss", "filesystem", "memory"}:
        raise ImproperlyConfigured(
            f"{name}={value!r}: use redis://HOST:PORT/DB, or filesystem:// for the embedded broker."
        )
    return value
