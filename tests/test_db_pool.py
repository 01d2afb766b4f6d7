"""Production's PostgreSQL connection pool (advisor.db_pool): a gunicorn worker opens one
connection per thread before it answers anyone, and the preloading master hands none over."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.test_deployment import REPO, production_env

POOL_PROBE = """
from django.db import connections
from django.conf import settings
import django
django.setup()
from advisor.db_pool import close_pools, fill_pools
db = settings.DATABASES["default"]
print(db["CONN_MAX_AGE"], db["OPTIONS"]["pool"]["max_size"])
print(fill_pools(3))
pool = connections["default"].pool
stats = pool.get_stats()
print(stats["pool_size"], stats["pool_available"])
with connections["default"].cursor() as cursor:  # a request's query takes a pooled one
    cursor.execute("SELECT 1")
print(pool.get_stats()["connections_num"])
close_pools()
print("default" in type(connections["default"])._connection_pools)
from advisor.celery import _plain_database_connections  # a Celery worker's start
_plain_database_connections()
with connections["default"].cursor() as cursor:
    cursor.execute("SELECT 1")
print(connections["default"].pool is None, connections["default"].settings_dict["CONN_MAX_AGE"])
"""


@pytest.mark.services
def test_production_pools_connections_and_a_worker_fills_its_pool_before_serving() -> None:
    result = subprocess.run(
        [sys.executable, "-c", POOL_PROBE],
        cwd=REPO,
        env=production_env(DJANGO_SETTINGS_MODULE="advisor.settings"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.split("\n")
    assert lines[0] == "0 8"  # pooled, so not kept per thread (Django refuses both)
    assert lines[1] == "3"  # three opened and given back: three idle, ready for three threads
    assert lines[2] == "3 3"
    assert lines[3] == "3"  # the query used one of them, opened no fourth
    assert lines[4] == "False"  # closed, and forgotten: a forked child opens its own
    assert lines[5] == "True 60"  # a Celery worker: plain connections, kept 60 s


def test_the_pool_can_be_turned_off() -> None:
    code = (
        "from django.conf import settings as s; d = s.DATABASES['default'];"
        "print(d['CONN_MAX_AGE'], 'pool' in d.get('OPTIONS', {}))"
    )
    env = production_env(
        DATABASE_POOL="false", DATABASE_URL="postgresql://x@127.0.0.1/x", REDIS_URL=""
    )
    env["DJANGO_SETTINGS_MODULE"] = "advisor.settings"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["60", "False"]
