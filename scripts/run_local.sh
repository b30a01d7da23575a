#!/usr/bin/env bash
# Start the web server and two real Celery workers on the embedded defaults (SQLite + filesystem broker): the bulk
# lane's (queues cpu and gpu, WORKER_CONCURRENCY slots) and the slot kept for the interactive lane (queue
# interactive, INTERACTIVE_CONCURRENCY slots), so a dashboard's or a small detection's job never waits behind a corpus
# build or a benchmark run. All listen on this machine only (127.0.0.1; HOST=0.0.0.0 to expose it). Ctrl-C or SIGTERM
# stops them: an idle worker leaves at once; one with a job gets STOP_GRACE seconds to finish it (warm shutdown), then
# a cold shutdown (the job goes back to the queue), then SIGKILL as a last resort.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
export DJANGO_SETTINGS_MODULE=${DJANGO_SETTINGS_MODULE:-config.settings.local}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
STOP_GRACE=${STOP_GRACE:-5}
export DJANGO_RUNSERVER_HIDE_WARNING=${DJANGO_RUNSERVER_HIDE_WARNING:-true}  # local only: it binds 127.0.0.1
# After the grace, stop running tasks at once (the default soft-shutdown wait would add to the grace).
export CELERY_WORKER_SOFT_SHUTDOWN_TIMEOUT=${CELERY_WORKER_SOFT_SHUTDOWN_TIMEOUT:-0}
LOG_DIR=${SIMILIA_VAR_DIR:-var}
mkdir -p -m 700 "$LOG_DIR"

# A HOST others reach would serve the demo users' known passwords and API tokens: asked twice, or refused.
case "$HOST" in 127.*|localhost|::1|"[::1]") ;; *)
  if [ "${SIMILIA_EXPOSE_DEMO:-}" != "yes" ] && $PY manage.py shell -c "from django.contrib.auth.models import User
from core.demo import DEMO_USERS
raise SystemExit(0 if User.objects.filter(username__in=[u[0] for u in DEMO_USERS]).exists() else 1)"; then
    echo "Refused: HOST=$HOST serves the demo users' known passwords and API tokens to the network. Delete the demo" \
      "users (/admin/auth/user/), or start again with SIMILIA_EXPOSE_DEMO=yes to expose them anyway." >&2
    exit 2
  fi ;;
esac

# Each child in its own session, so a terminal's Ctrl-C reaches only this script, which stops them in order.
# A worker's name carries this script's pid: two `make run`s on one host are two workers, never one name.
setsid .venv/bin/celery -A config worker -Q cpu,gpu --concurrency "${WORKER_CONCURRENCY:-2}" -n "local-$$@%h" -l info \
  > "$LOG_DIR/worker.log" 2>&1 &
WORKERS=$!
setsid .venv/bin/celery -A config worker -Q interactive --concurrency "${INTERACTIVE_CONCURRENCY:-1}" \
  -n "interactive-$$@%h" -l info > "$LOG_DIR/worker-interactive.log" 2>&1 &
WORKERS="$WORKERS $!"
setsid $PY manage.py runserver "${HOST}:${PORT}" &
WEB=$!

alive() { kill -0 "$1" 2>/dev/null; }

wait_gone() {  # pid seconds
  local deadline=$((SECONDS + $2))
  while alive "$1" && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
  ! alive "$1"
}

STOPPED=0
stop() {
  [ "$STOPPED" = 1 ] && return
  STOPPED=1
  trap '' INT TERM
  echo "Stopping the web server and the workers..."
  kill -TERM -- "-$WEB" 2>/dev/null || true
  for WORKER in $WORKERS; do kill -TERM "$WORKER" 2>/dev/null || true; done
  for WORKER in $WORKERS; do
    wait_gone "$WORKER" "$STOP_GRACE" && continue
    # An idle worker has left at once (jobs.signals.exit_at_once_when_idle): this one is running a job.
    echo "Worker still running a job after ${STOP_GRACE} s: cold shutdown (the job goes back to the queue)."
    kill -QUIT "$WORKER" 2>/dev/null || true
    # Bounded whatever the load: SIGKILL for the worker's whole session after 10 s more.
    wait_gone "$WORKER" 10 || { echo "Worker still alive: killed."; kill -KILL -- "-$WORKER" 2>/dev/null || true; }
  done
  for WORKER in $WORKERS; do kill -KILL -- "-$WORKER" 2>/dev/null || true; done  # any pool child left behind
  wait_gone "$WEB" 5 || kill -KILL -- "-$WEB" 2>/dev/null || true
  echo "Stopped."
}
trap 'stop; exit 0' INT TERM
trap 'stop' EXIT

echo "Workers started (bulk lane and interactive lane: pids $WORKERS, logs $LOG_DIR/worker*.log)."
echo "Web server started (pid $WEB)."
echo "Similia: http://${HOST}:${PORT}/  (log in with a demo user printed above; Ctrl-C stops both)"
wait "$WEB" || true
