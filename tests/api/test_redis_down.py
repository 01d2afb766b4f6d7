"""With Redis unreachable the site reads and accepts work: the throttles' counters fail open
and a submission is stored, marked unsent, for the reconciler to send once Redis is back.

Redis is "down" here by pointing the throttle cache at a closed port and making the broker
publish raise what kombu raises after its retries; tests/faults repeats this against a real
redis-server that is stopped and started again, with real workers.
"""

from __future__ import annotations

import socket
import uuid
from typing import Any

import pytest
from django.test import Client
from kombu.exceptions import OperationalError as KombuOperationalError
from rest_framework.test import APIClient

from advisor.scenarios import services
from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun
from advisor.scenarios.services import runs_reconcile
from frontend.models import QuestionnaireDraft
from tests.api.conftest import TWO_SERVER_TRAINING, Caller

pytestmark = pytest.mark.django_db


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def redis_down(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    settings.CACHES = {
        **settings.CACHES,
        settings.API_THROTTLE_CACHE: {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{closed_port()}/0",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        },
    }

    def broker_down(name: str, *args: Any) -> None:
        raise KombuOperationalError("Error 111 connecting to 127.0.0.1. Connection refused.")

    monkeypatch.setattr(services, "send_task_by_name", broker_down)


def test_api_reads_answer_while_redis_is_down(client_a: Caller, redis_down: None) -> None:
    Scenario.objects.create(name="Seen before the outage", inputs=TWO_SERVER_TRAINING)

    assert client_a.http.get("/api/v1/scenarios/").status_code == 200
    assert client_a.http.get("/api/v1/catalog/").status_code == 200


def test_an_anonymous_caller_is_answered_not_failed_while_redis_is_down(redis_down: None) -> None:
    response = APIClient().get("/api/v1/scenarios/")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def test_an_api_submission_while_redis_is_down_is_stored_and_sent_by_the_next_tick(
    client_a: Caller,
    redis_down: None,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = client_a.http.post(
            "/api/v1/scenarios/",
            {"name": "Submitted during the outage", "inputs": TWO_SERVER_TRAINING},
            format="json",
        )

    assert response.status_code == 202, response.content
    run = ScenarioRun.objects.get(scenario__name="Submitted during the outage")
    assert (run.status, run.enqueued_at) == (RunStatus.QUEUED, None)  # stored, marked unsent

    sent: list[uuid.UUID] = []
    monkeypatch.setattr(services, "_run_publish", lambda run_id: sent.append(run_id) or True)
    with django_capture_on_commit_callbacks(execute=True):
        report = runs_reconcile()

    assert report["resent"] == 1
    assert sent == [run.pk]


def test_anonymous_web_actions_work_while_redis_is_down(
    redis_down: None, django_capture_on_commit_callbacks: Any
) -> None:
    visitor = Client()
    scenario = Scenario.objects.create(name="Made anonymously", inputs=TWO_SERVER_TRAINING)

    started = visitor.post("/start/")
    with django_capture_on_commit_callbacks(execute=True):
        rerun = visitor.post(f"/s/{scenario.pk}/rerun")

    assert started.status_code == 302
    assert QuestionnaireDraft.objects.count() == 1
    assert rerun.status_code == 302
    run = ScenarioRun.objects.get(scenario=scenario)
    assert (run.status, run.enqueued_at) == (RunStatus.QUEUED, None)
    assert visitor.get(f"/s/{scenario.pk}/").status_code == 200


def test_sign_up_is_refused_for_a_moment_while_its_limit_cannot_be_counted(
    redis_down: None,
) -> None:
    """Sign-up says whether a username is taken; its limit is what bounds guessing, so it
    does not fail open: 503 with Retry-After, and no account is made."""
    from django.contrib.auth.models import User

    response = Client().post(
        "/accounts/signup/",
        {
            "username": "newcomer",
            "password1": "Str0ng-pass-phrase!",
            "password2": "Str0ng-pass-phrase!",
        },
    )

    assert response.status_code == 503
    assert int(response["Retry-After"]) > 0
    assert not User.objects.filter(username="newcomer").exists()
