"""During an outage the API answers 503 with Retry-After and pages a clear 503, never a stack trace: a real
refused connection (a PostgreSQL URL on a port where nothing listens), in a process of its own."""
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the block ends: connections are refused


def test_a_refused_database_connection_is_a_503_with_retry_after_on_api_and_pages():
    pytest.importorskip("psycopg")
    code = (
        "import django; django.setup()\n"
        "from django.test import Client\n"
        "c = Client(raise_request_exception=False)\n"
        "for path, extra in [('/api/v1/me/', {'HTTP_AUTHORIZATION': 'Token abc'}),\n"
        "                    ('/api/v1/projects/', {'HTTP_AUTHORIZATION': 'Token abc'}),\n"
        "                    ('/projects/', {'HTTP_COOKIE': 'sessionid=abcdefghijklmnopqrstuvwxyz012345'})]:\n"
        "    r = c.get(path, HTTP_HOST='localhost', **extra)\n"
        "    print(path, r.status_code, r.get('Retry-After'), r['Content-Type'].split(';')[0], '|',\n"
        "          r.content.decode().replace(chr(10), ' ')[:1200])\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.test",
               DATABASE_URL=f"postgres://nobody:x@127.0.0.1:{_closed_port()}/similia")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 3, proc.stdout
    for line in lines:
        head, body = line.split(" | ", 1)
        path, status, retry_after, content_type = head.split()
        assert status == "503" and int(retry_after) > 0, line
        assert "Traceback" not in body and "psycopg" not in body and "File \"" not in body
        assert "cannot reach its database" in body and "Nothing you saved is lost" in body
        assert content_type == ("application/json" if path.startswith("/api/") else "text/html")


def test_a_full_disk_is_an_outage_not_a_bug():
    """A write to the var directory on a full volume is a 503 with Retry-After (perf/chaos.py's disk_full fault fills
    the volume of the database and the var directory for real; there DiskFull is an OperationalError)."""
    import errno

    from core.server_errors import is_outage

    assert is_outage(OSError(errno.ENOSPC, "No space left on device"))
    assert not is_outage(OSError(errno.ENOENT, "No such file or directory"))
