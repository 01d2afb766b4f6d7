"""A web process warms the pages' one-off costs before its first request (frontend.warm)."""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest
from django.core.cache import cache
from django.core.handlers.wsgi import WSGIHandler
from django.db import connection

from advisor.engine import ENGINE_VERSION
from frontend import example, warm
from frontend.views import _accuracy_context
from tests.support.db import ConnectionCloses

pytestmark = pytest.mark.django_db(transaction=True)


def test_every_step_fills_what_the_first_request_reads(
    monkeypatch: pytest.MonkeyPatch, connection_closes: ConnectionCloses
) -> None:
    cache.clear()
    _accuracy_context.cache_clear()
    took = warm.warm_up()
    assert set(took) == set(warm.STEPS)
    # no database connection is left for processes forked after the warm-up
    assert connection_closes.released()

    # the home page's example (an engine evaluation) and the accuracy report (the residuals,
    # its table and figure) are kept, as the pages read them
    def computed_again() -> None:
        raise AssertionError("the home page's example was not kept by the warm-up")

    monkeypatch.setattr(example, "_compute", computed_again)
    assert example.home_example() is not None
    assert _accuracy_context.cache_info().currsize == 1
    assert _accuracy_context(ENGINE_VERSION)["total"] > 0
    # the first submission's Celery set-up: every task built, the result backend found
    from advisor.celery import app

    assert app.finalized and app._backend is not None


def test_a_failing_step_is_logged_and_the_others_still_run(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    ran: list[str] = []

    def broken() -> None:
        raise RuntimeError("catalog table missing")

    steps: dict[str, Any] = {"broken": broken, "after": lambda: ran.append("after")}
    monkeypatch.setattr(warm, "STEPS", steps)
    with caplog.at_level(logging.ERROR, logger="frontend.warm"):
        took = warm.warm_up()
    assert "web warm-up step 'broken' failed" in caplog.text
    assert ran == ["after"]
    assert set(took) == {"broken", "after"}


def test_the_accuracy_pages_content_is_rendered_before_the_first_view(client: Any) -> None:
    """The page's cached block (the report's tables and figure, ~250 KB) is rendered by the
    warm-up, in the process gunicorn forks its workers from: the first view reads it from the
    cache, and the page is the one rendered afresh in a request."""
    from django.core.cache.utils import make_template_fragment_key

    key = make_template_fragment_key("accuracy-content-v3", [ENGINE_VERSION])
    cache.clear()
    warm.warm_up()
    warmed = cache.get(key)
    assert warmed is not None and "How accurate is this?" in warmed
    # each response masks the CSRF token afresh: the only part that may differ
    csrf = re.compile(r'(CSRFToken": ")[A-Za-z0-9]+')
    page = csrf.sub(r"\1-", client.get("/accuracy/").content.decode())
    cache.clear()
    assert csrf.sub(r"\1-", client.get("/accuracy/").content.decode()) == page
    assert cache.get(key) == warmed


def test_a_forked_worker_serves_each_page_once_before_it_accepts_and_writes_nothing(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """gunicorn's post_fork (gunicorn.conf.py) has each worker serve one request of each page
    through its WSGI application: answered (200, not a redirect or a refused host) behind the
    production's TLS terminator, and nothing is written."""
    from django.contrib.sessions.models import Session
    from django.test.utils import CaptureQueriesContext

    settings.SECURE_SSL_REDIRECT = True  # as in production: plain HTTP would be redirected
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.ALLOWED_HOSTS = [".example.com", "fabric.example.com"]
    with caplog.at_level(logging.WARNING), CaptureQueriesContext(connection) as captured:
        answered = warm.warm_worker(WSGIHandler())
    assert answered == {path: 200 for path in warm.WORKER_PATHS}
    assert set(warm.WORKER_PATHS) >= {"/", "/start/", "/accuracy/"}
    assert not caplog.records
    writes = [
        q["sql"]
        for q in captured.captured_queries
        if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))
    ]
    assert writes == [] and not Session.objects.exists()


def test_a_worker_warm_up_request_that_fails_is_logged_and_the_others_still_run(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import advisor.warm

    monkeypatch.setattr(advisor.warm, "_host", lambda: "not-allowed.invalid")
    with caplog.at_level(logging.WARNING, logger="frontend.warm"):
        answered = warm.warm_worker(WSGIHandler())
    assert answered == {path: 400 for path in warm.WORKER_PATHS}  # refused host, not raised
    monkeypatch.undo()

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("the app failed")

    with caplog.at_level(logging.WARNING, logger="frontend.warm"):
        answered = warm.warm_worker(broken)
    assert answered == {path: 0 for path in warm.WORKER_PATHS}
    assert "web warm-up request / failed" in caplog.text
