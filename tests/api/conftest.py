"""Personas for the API: two API clients, an anonymous caller, a staff user in a browser."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from advisor.scenarios.models import ScenarioRun
from api.models import ApiClient
from api.services import api_client_create

TWO_SERVER_TRAINING: dict[str, Any] = {
    "workload": "training",
    "model": "llama3-8b",
    "gpu": "h100-sxm",
    "gpus": 16,
    "gpus_per_node": 8,
    "training": {"global_batch_sequences": 256, "total_tokens": 1e10},
}


@dataclass
class Caller:
    """Someone calling the API: `http` is their HTTP client, with their credentials."""

    name: str
    http: APIClient
    user: Any = None
    api_client: ApiClient | None = None
    key: str = ""


def token_caller(name: str) -> Caller:
    issued = api_client_create(name=name)
    http = APIClient()
    http.credentials(HTTP_AUTHORIZATION=f"Token {issued.key}")
    return Caller(
        name=name, http=http, user=issued.client.user, api_client=issued.client, key=issued.key
    )


@pytest.fixture
def client_a(db: None) -> Caller:
    """A quoting system with its own token."""
    return token_caller("quotes-a")


@pytest.fixture
def client_b(db: None) -> Caller:
    """A second quoting system: must never see the first one's scenarios."""
    return token_caller("quotes-b")


@pytest.fixture
def anonymous() -> Caller:
    return Caller(name="anonymous", http=APIClient())


@pytest.fixture
def staff(db: None) -> Caller:
    """A sales engineer signed in to the web app: sees every scenario."""
    user = get_user_model().objects.create_user(
        username="sally", password="unused-in-tests-1", is_staff=True
    )
    http = APIClient()
    http.force_login(user)
    return Caller(name="staff", http=http, user=user)


@pytest.fixture
def customer_user(db: None) -> Caller:
    """A signed-in browser user who is not staff and has no token."""
    user = get_user_model().objects.create_user(username="casey", password="unused-in-tests-1")
    http = APIClient()
    http.force_login(user)
    return Caller(name="customer", http=http, user=user)


@pytest.fixture(autouse=True)
def _fresh_throttle_counters(settings: Any) -> None:
    """Each test starts with empty rate-limit counters (memory, never the shared Redis)."""
    settings.CACHES = {
        **settings.CACHES,
        settings.API_THROTTLE_CACHE: {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": f"throttle-{uuid.uuid4()}",
        },
    }


@pytest.fixture
def run_tasks(
    django_capture_on_commit_callbacks: Callable[..., AbstractContextManager[Any]],
) -> Callable[[], AbstractContextManager[Any]]:
    """`with run_tasks():` runs what would be enqueued on commit, in-process (eager)."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def submitted(client_a: Caller, run_tasks: Callable[[], Any]) -> Callable[..., dict[str, Any]]:
    """Submit a scenario through the API and (by default) let its run finish."""

    def submit(
        caller: Caller | None = None, *, finish: bool = True, **overrides: Any
    ) -> dict[str, Any]:
        caller = caller or client_a
        body = {"name": "Two-server training", "inputs": TWO_SERVER_TRAINING, **overrides}
        if finish:
            with run_tasks():
                response = caller.http.post("/api/v1/scenarios/", body, format="json")
        else:
            response = caller.http.post("/api/v1/scenarios/", body, format="json")
        assert response.status_code == 202, response.json()
        return dict(response.json())

    return submit


def latest_run(scenario_id: str) -> ScenarioRun:
    return ScenarioRun.objects.filter(scenario_id=scenario_id).order_by("-created_at").first()


@pytest.fixture
def no_network_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Record webhook POSTs instead of making them."""
    calls: list[Any] = []
    monkeypatch.setattr("api.webhooks.post", lambda *a, **k: calls.append((a, k)) or 204)
    yield calls
