#!/usr/bin/env bash
# `make load`: inside scripts/with_services.sh (throwaway PostgreSQL and Redis on loopback),
# serve the app as production would (gunicorn with gunicorn.conf.py, a Celery worker, celery
# beat; DEBUG off) and drive it with bench/load_test.py for LOAD_DURATION_S seconds (60) with
# LOAD_USERS (50) concurrent users, each pausing LOAD_THINK_S (0.5,1.5: min,max seconds)
# between actions.
# Figures go to LOAD_OUT (bench/load.json); logs to test-output/load/.
set -euo pipefail
PY=.venv/bin/python
USERS=${LOAD_USERS:-50}
DURATION=${LOAD_DURATION_S:-60}
GUNICORN_WORKERS=${LOAD_GUNICORN_WORKERS:-3}
GUNICORN_THREADS=${LOAD_GUNICORN_THREADS:-4}
CELERY_CONCURRENCY=${LOAD_CELERY_CONCURRENCY:-2}
# The worker runs at a lower CPU priority than the web (nice 10, as the README advises
# where both share a machine): a page read waits behind no engine evaluation; the worker takes
# every cycle the web leaves idle. LOAD_WORKER_NICE=0 measures them as equals.
WORKER_NICE=${LOAD_WORKER_NICE:-10}
THINK=${LOAD_THINK_S:-0.5,1.5}
OUT=${LOAD_OUT:-bench/load.json}
LOGS=test-output/load
mkdir -p "$LOGS" bench

# Production settings, as deployed, except plain HTTP on loopback (no TLS terminator here).
export DJANGO_ENV=production
SECRET_KEY=$($PY -c 'import secrets; print(secrets.token_urlsafe(64))')
export SECRET_KEY
export ALLOWED_HOSTS=127.0.0.1,localhost
export API_PUBLIC_BASE_URL=${API_PUBLIC_BASE_URL:-http://127.0.0.1:8000}
export SECURE_SSL_REDIRECT=false
export LOG_LEVEL=WARNING

$PY manage.py migrate --noinput -v 0
$PY manage.py seed_demo >/dev/null
$PY manage.py collectstatic --noinput -v 0

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

.venv/bin/gunicorn advisor.wsgi:application -c gunicorn.conf.py --bind "127.0.0.1:$PORT" \
  --workers "$GUNICORN_WORKERS" --threads "$GUNICORN_THREADS" --worker-class gthread \
  --keep-alive 5 --log-level warning >"$LOGS/gunicorn.log" 2>&1 &
pids+=($!)
nice -n "$WORKER_NICE" .venv/bin/celery -A advisor.celery worker --loglevel=WARNING \
  --concurrency="$CELERY_CONCURRENCY" --hostname="load@%h" >"$LOGS/worker.log" 2>&1 &
pids+=($!)
.venv/bin/celery -A advisor.celery beat --loglevel=WARNING -s "$SERVICES_DIR/celerybeat-schedule" \
  >"$LOGS/beat.log" 2>&1 &
pids+=($!)

for _ in $(seq 300); do
  curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null || { echo "the web did not come up"; cat "$LOGS/gunicorn.log"; exit 1; }

SETUP="gunicorn ${GUNICORN_WORKERS} workers x ${GUNICORN_THREADS} threads (gthread, app preloaded warm), Celery worker concurrency ${CELERY_CONCURRENCY} at nice ${WORKER_NICE} + beat, PostgreSQL + Redis, DJANGO_ENV=production, all on one machine"
echo "load: $USERS users for $DURATION s against http://127.0.0.1:$PORT ($SETUP)"
$PY bench/load_test.py --base-url "http://127.0.0.1:$PORT" --users "$USERS" --duration "$DURATION" \
  --think "$THINK" --out "$OUT" --setup "$SETUP"
