#!/usr/bin/env bash
# Start the web server and a real Celery worker on the embedded defaults (SQLite + filesystem broker).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
export DJANGO_SETTINGS_MODULE=${DJANGO_SETTINGS_MODULE:-config.settings.local}
PORT=${PORT:-8000}
mkdir -p var
.venv/bin/celery -A config worker -Q cpu,gpu --concurrency "${WORKER_CONCURRENCY:-2}" -n "local@%h" -l info \
  > var/worker.log 2>&1 &
WORKER=$!
trap 'kill $WORKER 2>/dev/null; wait $WORKER 2>/dev/null' EXIT INT TERM
echo "Worker started (pid $WORKER, log var/worker.log)."
echo "Similia: http://127.0.0.1:${PORT}/  (log in with a demo user printed above; Ctrl-C stops both)"
$PY manage.py runserver "0.0.0.0:${PORT}"
