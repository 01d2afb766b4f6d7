"""The reliability settings come from the environment and refuse nonsense loudly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PRINT = (
    "from django.conf import settings as s; "
    "print(s.RUN_STALE_AFTER_S, s.RUN_HEARTBEAT_EVERY_S, "
    "s.CELERY_BROKER_TRANSPORT_OPTIONS['visibility_timeout'])"
)


def settings_run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("RUN_", "FABRIC_TEST"))}
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        env={**clean, "DJANGO_SETTINGS_MODULE": "advisor.settings", **env},
        capture_output=True,
        text=True,
    )


def production(**env: str) -> dict[str, str]:
    return {
        "DJANGO_ENV": "production",
        "SECRET_KEY": "x" * 20 + "-production-key-from-the-environment-0123456789",
        "ALLOWED_HOSTS": "advisor.example.com",
        "API_PUBLIC_BASE_URL": "https://advisor.example.com",
        **env,
    }


def test_staleness_heartbeat_and_visibility_timeout_are_read_from_the_environment() -> None:
    result = settings_run(PRINT, RUN_STALE_AFTER_S="6", CELERY_VISIBILITY_TIMEOUT_S="9")

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["6", "1", "9"]


def test_a_heartbeat_slower_than_half_the_staleness_is_refused() -> None:
    result = settings_run(PRINT, RUN_STALE_AFTER_S="10", RUN_HEARTBEAT_EVERY_S="6")

    assert result.returncode != 0
    assert "RUN_HEARTBEAT_EVERY_S must be at most half of RUN_STALE_AFTER_S" in result.stderr


def test_the_evaluation_delay_test_hook_is_refused_in_production() -> None:
    result = settings_run(PRINT, **production(FABRIC_TEST_EVAL_DELAY_S="5"))

    assert result.returncode != 0
    assert "FABRIC_TEST_EVAL_DELAY_S is a test hook; unset it in production" in result.stderr


def test_production_without_the_test_hook_starts() -> None:
    result = settings_run(PRINT, **production())

    assert result.returncode == 0, result.stderr


def test_the_defaults_recover_a_killed_worker_and_a_lost_message_within_a_minute() -> None:
    code = (
        "from django.conf import settings as s; "
        "print(s.RUN_STALE_AFTER_S, s.RUN_HEARTBEAT_EVERY_S, s.RUN_QUEUED_LOST_AFTER_S, "
        "s.RUN_RECONCILE_EVERY_S)"
    )
    result = settings_run(code)

    assert result.returncode == 0, result.stderr
    stale, heartbeat, lost, tick = (int(v) for v in result.stdout.split())
    assert (stale, heartbeat, lost, tick) == (30, 7, 45, 10)
    # Worst cases: the last heartbeat just before the kill, the tick just before staleness.
    assert stale + tick < 60
    assert lost + tick < 60
