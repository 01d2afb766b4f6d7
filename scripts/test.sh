#!/usr/bin/env bash
# The whole suite, inside scripts/with_services.sh (real PostgreSQL and Redis are up).
# Celery workers are started by the tests themselves (tests/conftest.py) against the test
# database, so the integration and fault tests can kill and restart them.
set -euo pipefail
export DJANGO_ENV=test
export FABRIC_REQUIRE_SERVICES=1
export PLAYWRIGHT_BROWSERS_PATH=0
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
mkdir -p test-output
.venv/bin/python manage.py check
.venv/bin/python manage.py makemigrations --check --dry-run >/dev/null \
  || { echo "models changed without a migration: run manage.py makemigrations"; exit 1; }
.venv/bin/python manage.py collectstatic --noinput -v 0
.venv/bin/pytest -p no:cacheprovider --junitxml=test-output/junit.xml "$@"
