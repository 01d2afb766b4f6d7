#!/usr/bin/env bash
# `make run`: migrate, load fixtures and serve at http://127.0.0.1:8000.
# Embedded mode (nothing set): SQLite and in-process tasks.
# Services mode (DATABASE_URL and REDIS_URL set): PostgreSQL, Redis and a Celery worker.
set -euo pipefail
PY=.venv/bin/python
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}

if [ -n "${DATABASE_URL:-}" ] && [ -n "${REDIS_URL:-}" ]; then
  mode=services
elif [ -n "${DATABASE_URL:-}${REDIS_URL:-}" ]; then
  echo "Set both DATABASE_URL and REDIS_URL for services mode, or neither for embedded mode." >&2
  exit 2
else
  mode=embedded
fi

$PY manage.py migrate --noinput -v 0
$PY manage.py seed_demo
$PY manage.py collectstatic --noinput -v 0

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

if [ "$mode" = services ]; then
  echo "Mode: services (PostgreSQL at ${DATABASE_URL#*@}, Redis at ${REDIS_URL#*://}, Celery worker started)"
  .venv/bin/celery -A advisor.celery worker --loglevel=WARNING --concurrency=2 &
  pids+=($!)
  .venv/bin/celery -A advisor.celery beat --loglevel=WARNING -s .venv/celerybeat-schedule &
  pids+=($!)
else
  echo "Mode: embedded (SQLite at ${SQLITE_PATH:-db.sqlite3}, tasks run in-process; set DATABASE_URL and REDIS_URL for services)"
  # Webhooks are delivered by a process of their own, never inside a web request.
  $PY manage.py deliver_webhooks --loop &
  pids+=($!)
fi
echo "Serving Fabric Advisor at http://$HOST:$PORT/"
$PY manage.py runserver "$HOST:$PORT" --noreload
