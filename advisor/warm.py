"""How a web process runs its warm-up steps before it forks (advisor/wsgi.py): the API's
(api.warm) and the pages' (frontend.warm) alike; and how a forked worker serves one request of
each before it accepts anyone (:func:`serve_once`, gunicorn.conf.py's post_fork)."""

from __future__ import annotations

import functools
import logging
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from django.db import connections

from advisor.db_pool import close_pools

WsgiApp = Callable[[dict[str, Any], Callable[..., object]], Iterable[bytes]]
"""A WSGI application (PEP 3333): environ and start_response in, the body's chunks out."""


def run_steps(
    steps: Mapping[str, Callable[[], None]],
    what: str,
    logger: logging.Logger,
    *,
    close_pools_after: bool = True,
) -> dict[str, float]:
    """Run every step; returns each step's seconds. A failed step is logged ("<what> warm-up
    step '<name>' failed") and skipped: a warm-up never stops a server from starting. The
    database connections are closed after: no connection (nor connection pool,
    advisor.db_pool) is shared by processes forked later. A forked worker warming itself
    (``close_pools_after=False``) keeps its pool and only gives its connections back."""
    took: dict[str, float] = {}
    for name, step in steps.items():
        started = time.perf_counter()
        try:
            step()
        except Exception:  # a warm-up never stops a server from starting
            logger.exception("%s warm-up step %r failed", what, name)
        took[name] = time.perf_counter() - started
    if close_pools_after:
        close_pools()
    else:
        connections.close_all()  # with a pool: back to it
    return took


def _start_response(
    status: list[str], line: str, headers: object, exc_info: object = None
) -> Callable[[bytes], object]:
    status.append(line)
    return _discard


def _discard(_data: bytes) -> None:
    """The WSGI write() callable of a warm-up request: its body is not kept."""


def _host() -> str:
    """A host this site answers to (settings.ALLOWED_HOSTS' first; a pattern as a name)."""
    from django.conf import settings

    for host in settings.ALLOWED_HOSTS:
        name = host.lstrip(".")
        if name and name != "*":
            return name
    return "localhost"


def serve_once(
    application: WsgiApp, paths: Sequence[str], what: str, logger: logging.Logger
) -> dict[str, int]:
    """Serve one GET of each path (``path?query``) through this process's WSGI application
    (``application``: gunicorn hands post_fork the app it preloaded; this module never imports
    advisor.wsgi, which imports the API's and the pages' warm-ups, layers that must not meet)
    before the process accepts anyone: a forked gunicorn worker (gunicorn.conf.py, post_fork)
    then answers its first visitors as it answers the later ones. Returns each path's HTTP
    status (0: the request failed).

    A worker forked from the warm master still paid 2-4 times a request's later CPU on its
    first request of each page (a 50-user load run, gunicorn hooks reading each request's
    thread CPU and minor page faults: GET / 25 ms and 1,092 faults, then 6 ms and ~0; the API's
    scenario list 27-45 ms and 630-1,511, then 10-12 ms and ~20): the copy-on-write copies of
    every memory page the request's code and data touch (CPython writes reference counts into
    the objects it reads, so a read copies the page), and what a first request still sets up.
    Each of the three workers paid it in the 50 users' first second. A request served here
    touches the same pages, in the worker, before it accepts. Measured the same way with it:
    the first 50 requests' GET / 7.2 ms, GET /start/ 3.6 ms, the scenario list 13.6 ms mean
    (11.8, 6.6 and 17.4 without).

    Requests are anonymous GETs over HTTPS to a host this site answers to, of pages that write
    nothing on a GET (not the API: an anonymous read counts a rate limit; api.warm runs its
    steps again instead). A failure or an error status is logged, never raised."""
    from io import BytesIO

    host = _host()
    answered: dict[str, int] = {}
    for path in paths:
        route, _, query = path.partition("?")
        environ = {
            "REQUEST_METHOD": "GET",
            "SCRIPT_NAME": "",
            "PATH_INFO": route,
            "QUERY_STRING": query,
            "SERVER_NAME": host,
            "SERVER_PORT": "443",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": host,
            "HTTP_X_FORWARDED_PROTO": "https",  # as behind the TLS terminator
            "REMOTE_ADDR": "127.0.0.1",
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "https",
            "wsgi.input": BytesIO(),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
        }
        status: list[str] = []
        started = time.perf_counter()
        try:
            response = application(environ, functools.partial(_start_response, status))
            try:
                for _chunk in response:
                    pass
            finally:
                close = getattr(response, "close", None)
                if close is not None:
                    close()  # request_finished: the request's connection goes back
        except Exception:  # a warm-up never stops a server from starting
            logger.exception("%s warm-up request %s failed", what, path)
        code = int(status[0].split()[0]) if status else 0
        if code >= 500 or code == 0:
            logger.warning("%s warm-up request %s answered %s", what, path, code)
        logger.info(
            "%s warm-up request %s: %s in %.0f ms",
            what,
            path,
            code,
            (time.perf_counter() - started) * 1000,
        )
        answered[path] = code
    return answered
