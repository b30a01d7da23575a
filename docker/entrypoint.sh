#!/bin/sh
# Wait for PostgreSQL, apply migrations from the web container only, then run the command.
set -e
case "${DJANGO_SECRET_KEY:-}" in
  example-only-replace-me*) echo "DJANGO_SECRET_KEY is the example from docker/env.example: generate your own." >&2; exit 1 ;;
esac
python - <<'PY'
import os, sys, time
import psycopg
url = os.environ.get("DATABASE_URL")
if not url:
    sys.exit("Set the DATABASE_URL environment variable.")
for attempt in range(60):
    try:
        psycopg.connect(url.replace("postgres://", "postgresql://", 1), connect_timeout=2).close()
        break
    except psycopg.OperationalError as exc:
        print(f"waiting for the database ({exc.__class__.__name__})", flush=True)
        time.sleep(2)
else:
    sys.exit("The database did not come up in 120 s.")
PY
if [ "${SIMILIA_MIGRATE:-0}" = "1" ]; then
  python manage.py migrate --noinput
fi
exec "$@"
