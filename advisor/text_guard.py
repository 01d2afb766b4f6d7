"""Control characters are refused at the door, naming the field (one place for the whole site).

PostgreSQL cannot store NUL in text or jsonb and psycopg cannot encode a lone surrogate, so
such a value reaching the database was a 500. Nothing a person types needs C0 control
characters other than tab, line feed and carriage return, or DEL, or half a surrogate pair:
a form value, query parameter or JSON string carrying one is refused with 400 and the field's
name (ControlCharacterMiddleware for query strings and form bodies, api.parsers for JSON).
Uploaded files are read by their service, which applies `control_character_error` itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.template.loader import render_to_string

# C0 controls except \t \n \r, DEL, and UTF-16 surrogates (never valid alone in UTF-8).
CONTROL_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")

FORM_CONTENT_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def control_character_error(value: str) -> str | None:
    """A message naming the first refused character of `value`, or None when it is clean."""
    found = CONTROL_CHARACTERS.search(value)
    if found is None:
        return None
    return f"must not contain control characters (found U+{ord(found.group()):04X})"


def first_control_character(items: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """(field name, message) of the first name or value carrying a refused character."""
    for name, value in items:
        shown = name.encode("unicode_escape", "backslashreplace").decode("ascii")
        message = control_character_error(name)
        if message is not None:
            return shown, f"the parameter's name {message}"
        message = control_character_error(value)
        if message is not None:
            return shown, message
    return None


def json_strings(data: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(dotted path, string) of every key and string value in parsed JSON (iteratively)."""
    stack: list[tuple[str, Any]] = [(path, data)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                child = f"{where}.{key}" if where else str(key)
                yield child, str(key)
                stack.append((child, value))
        elif isinstance(node, list):
            stack.extend((f"{where}.{i}" if where else str(i), v) for i, v in enumerate(node))
        elif isinstance(node, str):
            yield where or "non_field_errors", node


def _query_and_form_items(request: HttpRequest) -> Iterator[tuple[str, str]]:
    for name, values in request.GET.lists():
        for value in values:
            yield name, value
    if request.method == "POST" and request.content_type in FORM_CONTENT_TYPES:
        for name, values in request.POST.lists():
            for value in values:
                yield name, value


def refusal(request: HttpRequest, field: str, message: str) -> HttpResponse:
    """400 naming the field: the API's error shape under /api/, a page elsewhere."""
    if request.path.startswith("/api/"):
        # The shape of api.errors.error_body (this module sits below the api package).
        body = {
            "error": {
                "code": "validation_error",
                "message": f"The request is invalid: check {field}.",
                "fields": {field: [message]},
            }
        }
        return JsonResponse(body, status=400)
    html = render_to_string(
        "bad_request.html", {"field": field, "message": message}, request=request
    )
    return HttpResponse(html, status=400)


class ControlCharacterMiddleware:
    """Refuse query parameters and form values carrying control characters, before any view."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            found = first_control_character(_query_and_form_items(request))
        except MultiPartParserError as exc:
            # a multipart body Django cannot split (no boundary, a broken part): refused in the
            # API's error shape here, not Django's HTML 400 page
            return refusal(request, "body", f"is not a readable multipart/form-data body: {exc}")
        if found is not None:
            return refusal(request, *found)
        return self.get_response(request)
