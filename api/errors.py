"""One error shape for every failure of the API.

    {"error": {"code": "validation_error", "message": "...", "fields": {"inputs.gpus": [...]}}}

Views and services raise `ApplicationError` (or a DRF exception); `exception_handler`
turns everything, including bugs, into that shape. Stack traces never leave the server.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response

from advisor.scenarios.engine_calls import InvalidScenario
from advisor.scenarios.results import UNREADABLE_MESSAGE, UnreadableResult

logger = logging.getLogger(__name__)

FieldErrors = dict[str, list[str]]


class ApplicationError(Exception):
    """An expected failure with an HTTP status, a stable code and per-field messages."""

    def __init__(
        self,
        message: str,
        *,
        code: str = "invalid_request",
        status_code: int = status.HTTP_400_BAD_REQUEST,
        fields: FieldErrors | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status_code = status_code
        self.fields: FieldErrors = fields or {}


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is larger than the limit."
    default_code = "payload_too_large"

    @classmethod
    def over_limit(cls) -> PayloadTooLarge:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return cls(f"The request body is larger than the limit of {limit} bytes.")


# DRF's codes for its own exceptions, renamed where ours say more.
_DRF_CODES = {
    exceptions.ValidationError: "validation_error",
    exceptions.ParseError: "parse_error",
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "authentication_failed",
    exceptions.PermissionDenied: "permission_denied",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "throttled",
}


def error_body(
    code: str, message: str, fields: Mapping[str, list[str]] | None = None
) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "fields": dict(fields or {})}}


def flatten_errors(detail: Any, prefix: str = "") -> FieldErrors:
    """DRF's nested error detail -> {"dotted.path": ["message", ...]}."""
    flat: FieldErrors = {}
    if isinstance(detail, Mapping):
        for key, value in detail.items():
            name = str(key)
            path = name if not prefix else f"{prefix}.{name}"
            if name in ("non_field_errors", "__all__") and prefix:
                path = prefix
            for sub, messages in flatten_errors(value, path).items():
                flat.setdefault(sub, []).extend(messages)
    elif isinstance(detail, list | tuple):
        if all(not isinstance(item, Mapping | list | tuple) for item in detail):
            flat[prefix or "non_field_errors"] = [str(item) for item in detail]
        else:
            for index, item in enumerate(detail):
                path = f"{prefix}.{index}" if prefix else str(index)
                for sub, messages in flatten_errors(item, path).items():
                    flat.setdefault(sub, []).extend(messages)
    else:
        flat[prefix or "non_field_errors"] = [str(detail)]
    return flat


def inputs_field_errors(exc: InvalidScenario) -> FieldErrors:
    """The engine's dotted paths, as seen from the request body (under "inputs")."""
    return {
        ("inputs" if path == "inputs" else f"inputs.{path}"): list(messages)
        for path, messages in exc.field_errors.items()
    }


def _validation_message(fields: FieldErrors) -> str:
    names = ", ".join(sorted(fields))
    return f"The request is invalid: check {names}." if names else "The request is invalid."


def _drf_code(exc: exceptions.APIException) -> str:
    for cls in type(exc).__mro__:
        if cls in _DRF_CODES:
            return _DRF_CODES[cls]
    codes = exc.get_codes()
    return codes if isinstance(codes, str) else "error"


def _response(
    status_code: int, body: dict[str, Any], headers: Mapping[str, str] | None = None
) -> Response:
    response = Response(body, status=status_code)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def exception_handler(exc: Exception, context: Mapping[str, Any]) -> Response:
    """DRF's EXCEPTION_HANDLER: every exception becomes the one error shape."""
    if isinstance(exc, ApplicationError):
        return _response(exc.status_code, error_body(exc.code, exc.message, exc.fields))
    if isinstance(exc, UnreadableResult):
        logger.warning("run %s: stored result cannot be read", exc.run_id, exc_info=exc)
        return _response(409, error_body("result_unreadable", UNREADABLE_MESSAGE))
    if isinstance(exc, InvalidScenario):
        fields = inputs_field_errors(exc)
        return _response(400, error_body("validation_error", _validation_message(fields), fields))
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, RequestDataTooBig):
        exc = PayloadTooLarge.over_limit()
    elif isinstance(exc, SuspiciousOperation):
        exc = exceptions.ParseError("The request was refused as malformed.")

    if isinstance(exc, exceptions.APIException):
        headers: dict[str, str] = {}
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = str(exc.auth_header)  # type: ignore[attr-defined]
        if getattr(exc, "wait", None) is not None:
            headers["Retry-After"] = str(int(exc.wait))  # type: ignore[attr-defined]
        if isinstance(exc, exceptions.ValidationError):
            fields = flatten_errors(exc.detail)
            body = error_body("validation_error", _validation_message(fields), fields)
        else:
            body = error_body(_drf_code(exc), str(exc.detail))
        return _response(exc.status_code, body, headers)

    # A bug. Log it with its traceback here; the caller gets no detail of our internals.
    request = context.get("request")
    logger.exception(
        "unhandled error in %s %s",
        getattr(request, "method", "?"),
        getattr(request, "path", "?"),
        exc_info=exc,
    )
    return _response(
        500, error_body("server_error", "Something went wrong on our side; it has been logged.")
    )


@csrf_exempt  # changes nothing; a POST to a wrong URL must get this 404, not a CSRF page
def not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    """Unknown URLs under /api/v1/ answer in the same shape, and hint at a missing slash."""
    from django.urls import Resolver404, resolve

    message = "No such endpoint."
    if not request.path.endswith("/"):
        try:
            match = resolve(request.path + "/")
        except Resolver404:
            match = None
        if match is not None and match.func is not not_found:
            message = f"No such endpoint; did you mean {request.path}/ ?"
    return JsonResponse(error_body("not_found", message), status=404)
