"""Personas for the API: two API clients, an anonymous caller, a staff user in a browser."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from rest_framework.test import APIClient

from advisor.scenarios.models import ScenarioRun
from api.models import ApiClient
from api.services import api_client_create, webhook_deliver_due

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


def deliver_webhooks() -> int:
    """What embedded mode's deliverer process (manage.py deliver_webhooks) does, until nothing
    is due; retries are made at once instead of after their backoff."""
    far_future = timezone.now() + timedelta(days=30)
    made = 0
    for _ in range(100):
        tick = webhook_deliver_due(now=far_future)
        if not tick:
            break
        made += tick
    return made


@pytest.fixture
def run_tasks(
    django_capture_on_commit_callbacks: Callable[..., AbstractContextManager[Any]],
) -> Callable[[], AbstractContextManager[Any]]:
    """`with run_tasks():` runs what would be enqueued on commit, in-process (eager), then
    what the embedded webhook deliverer would post (never inside the request itself)."""

    @contextmanager
    def run() -> Iterator[Any]:
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            yield callbacks
        deliver_webhooks()

    return run


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


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    """A quoting system's webhook endpoint: an HTTP server on 127.0.0.1 in a thread."""

    url: str
    received: list[Received] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)


@pytest.fixture
def receiver(settings: Any) -> Iterator[Receiver]:
    settings.WEBHOOK_ALLOW_PRIVATE = True
    state = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = self.rfile.read(length)
            state.received.append(Received(self.path, dict(self.headers.items()), body))
            status = state.answers.pop(0) if state.answers else 204
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/fabric"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
    thread.join(timeout=10)
