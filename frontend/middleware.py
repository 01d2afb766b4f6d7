"""A page whose stored result cannot be read says so and offers to compute it again."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from advisor.scenarios.results import UNREADABLE_MESSAGE, UnreadableResult

logger = logging.getLogger(__name__)


def unreadable_result_page(request: HttpRequest, exc: UnreadableResult) -> HttpResponse:
    """409: "this result cannot be read; compute it again", with the button that does."""
    logger.warning("run %s: stored result cannot be read", exc.run_id, exc_info=exc)
    context = {"message": UNREADABLE_MESSAGE, "scenario_id": exc.scenario_id, "nav": "list"}
    return render(request, "frontend/result_unreadable.html", context, status=409)


class UnreadableResultMiddleware:
    """Every web page (results, exports, comparison, acceptance) answers a damaged stored
    result with that page instead of a 500; the API answers it in its own error shape."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, UnreadableResult) and not request.path.startswith("/api/"):
            return unreadable_result_page(request, exception)
        return None
