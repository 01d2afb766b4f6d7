"""What a web process pays once, paid before it answers anyone (advisor/wsgi.py).

A cold process spent ~3 s of CPU in its first requests (measured with `make load`'s pages:
home 1.2 s, accuracy 0.9-2.4 s, a result page 0.8 s, then 4-26 ms each): importing every
view through the URLconf, evaluating the home page's example, building the accuracy report
and its figure, Plotly's first validators and compiling the templates. Under load that cost
fell inside the first requests of every gunicorn worker, on every thread of it at once, and
made the load test's p99. Each step here fills the same per-process cache the page reads, so
the first request finds it warm; gunicorn's `preload_app` (gunicorn.conf.py) does all of it
once, in the master, before forking the workers that inherit it.

Each step is independent and never stops a server from starting (a failure is logged); the
ones that read the database close their connections (and pool) after, so that no connection
is shared by processes forked from this one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.template import TemplateSyntaxError
from django.template.loader import get_template
from django.urls import get_resolver

from advisor.warm import WsgiApp, run_steps, serve_once

logger = logging.getLogger(__name__)


def _urlconf() -> None:
    """Every view module (Django imports the URLconf on the first request) and the reverse
    lookup tables the templates' {% url %} use."""
    resolver = get_resolver()
    resolver.url_patterns  # noqa: B018 -- imports every urls.py and the views they name
    resolver.reverse_dict  # noqa: B018 -- builds the reverse tables


def _templates() -> None:
    """Compile the project's templates into the cached loader (and import their tag
    libraries), so no first render parses them."""
    root = Path(settings.BASE_DIR) / "templates"
    for path in sorted(root.rglob("*.html")):
        name = path.relative_to(root).as_posix()
        try:
            get_template(name)
        except TemplateSyntaxError:
            # a fragment that is only valid inside another template; it is parsed there
            logger.debug("template %s not compiled alone", name)


def _home_example() -> None:
    from frontend.example import home_example

    home_example()


def _accuracy() -> None:
    from advisor.engine import ENGINE_VERSION
    from frontend.views import _accuracy_context

    _accuracy_context(ENGINE_VERSION)


def _accuracy_page() -> None:
    """Render the accuracy page's content once: the template keeps it in this process's
    memory cache (its {% cache %} block, keyed by the engine's version), which the forked
    workers inherit. Each worker rendered it inside its first view of the page: 60-80 ms of
    CPU (a forked copy of a warm process, measured), three times in `make load`'s first
    second. The block reads only the report's context, so no request is needed."""
    from django.template.loader import render_to_string

    from advisor.engine import ENGINE_VERSION
    from frontend.views import _accuracy_context

    render_to_string("frontend/accuracy.html", dict(_accuracy_context(ENGINE_VERSION)))


def _figures() -> None:
    """Plotly builds a validator per property on its first use in a process (~0.3 s for a
    result page's figures): draw one small result's figures."""
    from advisor.scenarios.figures import warm_up as warm_up_figures

    warm_up_figures()


def _task_queue() -> None:
    """What the first submission in a process built and imported (~100 ms of CPU in the
    first POST /api/v1/scenarios/ of a warm process, 10-17 ms after): Celery's app finalized
    (every task registered and built), its result backend found and the broker's transport and
    message-building modules imported. No connection is opened: each forked worker opens its own."""
    from advisor.celery import app

    app.finalize(auto=True)
    app.backend  # noqa: B018 -- the result backend (none: disabled), found by a scan of entry points
    app.amqp.router  # noqa: B018 -- the task routes (settings.CELERY_TASK_ROUTES)
    app.amqp.producer_pool  # noqa: B018 -- the producer's classes (lazy, no connection)
    app.connection_for_write().transport  # noqa: B018 -- imports kombu's Redis transport


STEPS: dict[str, Callable[[], None]] = {
    "urlconf": _urlconf,
    "templates": _templates,
    "home example": _home_example,
    "accuracy report": _accuracy,
    "accuracy page": _accuracy_page,
    "figures": _figures,
    "task queue": _task_queue,
}


def warm_up() -> dict[str, float]:
    """Run every step; returns each step's seconds (advisor.warm.run_steps)."""
    return run_steps(STEPS, "web", logger)


# The pages a forked worker serves once before it accepts anyone (advisor.warm.serve_once):
# the home page, the questionnaire's start and the accuracy page, which write nothing on a GET.
WORKER_PATHS = ("/", "/start/", "/accuracy/")


def warm_worker(application: WsgiApp) -> dict[str, int]:
    """In a forked gunicorn worker, before it accepts (gunicorn.conf.py): one request of each
    page through ``application``, the worker's WSGI app; returns each request's HTTP status."""
    return serve_once(application, WORKER_PATHS, "web", logger)
