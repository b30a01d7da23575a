"""`manage.py backup` / `restore`: a backup restored into a fresh, empty database gives byte-identical exports
(judgements and scores CSV of a judged project), on the database the suite runs on (SQLite here, PostgreSQL in CI:
pg_dump / pg_restore)."""
import os
import stat
import subprocess
import sys
import uuid
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from tests.core.test_csv_modes import judged_project  # noqa: F401  (fixture)
from tests.jobs.test_worker_integration import _database_url

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)

EXPORTS = ["/api/v1/projects/{pk}/judgements/?format=csv", "/api/v1/projects/{pk}/scores/?format=csv&n_boot=0"]
PRINT_EXPORTS = (
    "import sys, django; django.setup()\n"
    "from django.contrib.auth import get_user_model\n"
    "from django.test import Client\n"
    "c = Client(); c.force_login(get_user_model().objects.get(username='lea'))\n"
    "for url in sys.argv[1:]:\n"
    "    r = c.get(url, HTTP_HOST='localhost'); assert r.status_code == 200, (url, r.status_code)\n"
    "    sys.stdout.write(r.content.decode() + '\\n=====\\n')\n"
)


def _exports_via(database_url: str, pk: int) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL"))}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.test", DATABASE_URL=database_url)
    proc = subprocess.run([sys.executable, "-c", PRINT_EXPORTS, *[u.format(pk=pk) for u in EXPORTS]], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def _restore_via(database_url: str, backup: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL"))}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.test", DATABASE_URL=database_url)
    proc = subprocess.run([sys.executable, "manage.py", "restore", str(backup), "--yes"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]


@pytest.fixture
def fresh_database_url(tmp_path):
    """An empty database of the engine the suite runs on."""
    if connection.vendor == "sqlite":
        yield f"sqlite:///{tmp_path / 'fresh.sqlite3'}"
        return
    name = f"similia_restore_{uuid.uuid4().hex[:8]}"
    with connection.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    try:
        yield _database_url().rsplit("/", 1)[0] + f"/{name}"
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}"')


def test_a_backup_restored_into_a_fresh_database_gives_identical_exports(judged_project, tmp_path,  # noqa: F811
                                                                         fresh_database_url):
    out = StringIO()
    call_command("backup", "--output", str(tmp_path / "similia.backup"), stdout=out)
    backup = Path(out.getvalue().strip())
    assert backup.is_file() and backup.stat().st_size > 0 and not list(tmp_path.glob("*.partial"))
    before = _exports_via(_database_url(), judged_project.pk)
    assert before.count("=====") == 2 and "+ Κύριε" in before
    _restore_via(fresh_database_url, backup)
    assert _exports_via(fresh_database_url, judged_project.pk) == before


def test_a_backup_file_is_readable_by_its_owner_only(tmp_path):
    """It holds every password hash and token digest (issue 40: backups were 0644)."""
    from core.backups import backup

    stale = tmp_path / "private" / "b.backup.partial"
    stale.parent.mkdir(mode=0o755)
    stale.write_text("left by a crash")
    stale.chmod(0o644)
    umask = os.umask(0o022)
    try:
        path = backup(tmp_path / "private" / "b.backup")
        fresh = backup(tmp_path / "new" / "c.backup")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == stat.S_IMODE(fresh.stat().st_mode) == 0o600
    assert stat.S_IMODE(fresh.parent.stat().st_mode) == 0o700 and path.stat().st_size > 0


def test_restore_asks_for_confirmation_and_names_a_bad_file(tmp_path):
    with pytest.raises(CommandError, match="add --yes"):
        call_command("restore", str(tmp_path / "x"))
    with pytest.raises(CommandError, match="no backup file at"):
        call_command("restore", str(tmp_path / "missing"), "--yes")
    junk = tmp_path / "junk.backup"
    junk.write_text("not a backup")
    with pytest.raises(CommandError, match="is not an? (SQLite|pg_dump)"):
        call_command("restore", str(junk), "--yes")
