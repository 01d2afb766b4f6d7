"""OpenAPI generation: component names, the token scheme, and the errors every call can get."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from rest_framework import serializers

from api.authentication import KEYWORD
from api.serializers import ErrorSerializer

ERROR_DESCRIPTIONS = {
    400: "Invalid request: `fields` names each field (dotted path) and the rule it breaks.",
    401: "Missing, malformed or revoked token.",
    403: "Authenticated, but not allowed to use the API.",
    404: "No such object, or it belongs to someone else.",
    409: "Conflicts with the current state (see `code`).",
    413: "Too large: the body, or the work for a synchronous evaluation.",
    415: "The body is not JSON.",
    429: "Too many requests; retry after the `Retry-After` header's seconds.",
    503: "The evaluation took longer than a request allows; submit it and poll instead.",
}


def error_responses(*statuses: int) -> dict[int, Any]:
    """Responses for extend_schema: each status answers the one error shape."""
    from drf_spectacular.utils import OpenApiResponse

    return {
        code: OpenApiResponse(ErrorSerializer, description=ERROR_DESCRIPTIONS.get(code, ""))
        for code in statuses
    }


class ApiAutoSchema(AutoSchema):
    """drf-spectacular's AutoSchema with our naming and the errors every operation can get."""

    def get_serializer_name(self, serializer: serializers.Serializer[Any], direction: str) -> str:
        # Nested "ScenarioCreateApi.OutputSerializer" -> "ScenarioCreateOutput": unique names
        # for the conventional InputSerializer/OutputSerializer of every API class.
        # A request body is named after its API: "ScenarioCreateApi.InputSerializer" ->
        # "ScenarioCreate" (+ "Request", added by COMPONENT_SPLIT_REQUEST).
        parts = type(serializer).__qualname__.split(".")
        cleaned = [p.removesuffix("Serializer").removesuffix("Api") for p in parts]
        if len(cleaned) > 1 and cleaned[-1] == "Input":
            cleaned.pop()
        return "".join(cleaned)

    def _get_response_bodies(self, direction: Any = "response") -> Any:
        # @extend_schema replaces get_response_serializers, so the errors every operation can
        # answer are added here, after it (as drf-standardized-errors does).
        responses = super()._get_response_bodies(direction)
        # 400: every operation refuses a query parameter it does not read and a control
        # character in any value (api.apis.base.ApiView, advisor.text_guard).
        common = [400, 429]
        if self.get_auth():
            common += [401, 403]
        if self.method in ("POST", "PUT", "PATCH"):
            common += [413, 415]
        for code, response in error_responses(*common).items():
            if str(code) not in responses:
                responses[str(code)] = self._get_response_for_code(  # type: ignore[no-untyped-call]
                    response, str(code), direction=direction
                )
        return responses


class ApiTokenScheme(OpenApiAuthenticationExtension):  # type: ignore[no-untyped-call]
    target_class = "api.authentication.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema: AutoSchema) -> dict[str, Any]:
        definition: dict[str, Any] = build_bearer_security_scheme_object(
            header_name="Authorization", token_prefix=KEYWORD
        )
        definition["description"] = (
            "`Authorization: Token <key>`; keys come from `manage.py create_api_client NAME`."
        )
        return definition
