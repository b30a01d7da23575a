"""Backups of the database and their restore: `manage.py backup` / `manage.py restore`.

PostgreSQL: `pg_dump --format=custom` (a consistent snapshot while the site runs) and `pg_restore --clean
--if-exists --no-owner --single-transaction` (all or nothing). SQLite: its online backup API, page by page while
other connections read and write, and the same API to copy a backup back. The password reaches pg_dump through
its environment (PGPASSWORD), never the command line. Uploaded media and trained models live under VAR_DIR:
back that folder up with the files of your host (docs/reliability_and_security.md). A backup holds every account's
password hash and API token digest: its file is created readable by its owner only (0600), in a 0700 folder.
"""
from __future__ import annotations

import datetime as dt
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

from django.conf import settings
from django.db import connections

SQLITE_SUFFIX = ".sqlite3"
POSTGRES_SUFFIX = ".pgdump"


class BackupError(RuntimeError):
    """A backup or restore that could not be made; the message says why."""


def _engine(alias: str) -> str:
    engine = connections[alias].settings_dict["ENGINE"]
    if engine.endswith("sqlite3"):
        return "sqlite"
    if engine.endswith("postgresql"):
        return "postgres"
    raise BackupError(f"backups support SQLite and PostgreSQL, not {engine}")


def default_path(alias: str = "default") -> Path:
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    suffix = SQLITE_SUFFIX if _engine(alias) == "sqlite" else POSTGRES_SUFFIX
    return Path(settings.VAR_DIR) / "backups" / f"similia-{stamp}{suffix}"


def _pg_env_and_args(alias: str) -> tuple[dict, list[str]]:
    cfg = connections[alias].settings_dict
    env = dict(os.environ)
    if cfg.get("PASSWORD"):
        env["PGPASSWORD"] = str(cfg["PASSWORD"])
    args = []
    for flag, key in (("--host", "HOST"), ("--port", "PORT"), ("--username", "USER")):
        if cfg.get(key):
            args += [flag, str(cfg[key])]
    return env, [*args, "--dbname", cfg["NAME"]]


def _run(command: list[str], env: dict) -> None:
    tool = command[0]
    if shutil.which(tool) is None:
        raise BackupError(f"{tool} is not installed here (PostgreSQL's client tools; apt install postgresql-client)")
    proc = subprocess.run(command, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BackupError(f"{tool} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")


def backup(path: Path | None = None, *, alias: str = "default") -> Path:
    """Write a backup of the database to `path` (default: VAR_DIR/backups/similia-<UTC time>.<suffix>)."""
    path = Path(path) if path else default_path(alias)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))  # before a byte is written
    os.chmod(partial, 0o600)  # a stale partial file of another mode
    if _engine(alias) == "sqlite":
        source = sqlite3.connect(connections[alias].settings_dict["NAME"])
        target = sqlite3.connect(partial)
        try:
            with target:
                source.backup(target, pages=1024)
        finally:
            target.close()
            source.close()
    else:
        env, args = _pg_env_and_args(alias)
        _run(["pg_dump", "--format=custom", "--no-owner", "--file", str(partial), *args], env)
    os.replace(partial, path)  # a backup file is either whole or absent
    return path


def restore(path: Path, *, alias: str = "default") -> None:
    """Replace the database's contents with the backup at `path` (made by `backup` for the same engine)."""
    path = Path(path)
    if not path.is_file():
        raise BackupError(f"no backup file at {path}")
    engine = _engine(alias)
    if engine == "sqlite":
        if not path.read_bytes()[:16].startswith(b"SQLite format 3"):
            raise BackupError(f"{path} is not an SQLite backup (made on PostgreSQL? restore it there)")
        connections[alias].close()
        source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        target = sqlite3.connect(connections[alias].settings_dict["NAME"])
        try:
            source.backup(target)
        finally:
            target.close()
            source.close()
    else:
        if path.read_bytes()[:5] != b"PGDMP":
            raise BackupError(f"{path} is not a pg_dump custom-format backup")
        connections[alias].close()
        env, args = _pg_env_and_args(alias)
        _run(["pg_restore", "--clean", "--if-exists", "--no-owner", "--single-transaction", *args, str(path)], env)
