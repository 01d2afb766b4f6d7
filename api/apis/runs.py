"""Runs: one evaluation of a scenario."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from advisor.scenarios.models import ScenarioRun
from api.apis.base import ApiView
from api.apis.scenarios import RunOutputSerializer, result_of
from api.errors import ApplicationError
from api.schema import error_responses
from api.selectors import run_get_visible
from api.serializers import EngineResultField


class RunDetailApi(ApiView):
    """GET /api/v1/runs/{id}/: status, progress and, once succeeded, the result."""

    class OutputSerializer(RunOutputSerializer):
        result = serializers.SerializerMethodField(help_text="Null until the run succeeded.")

        @extend_schema_field(EngineResultField(allow_null=True))
        def get_result(self, run: ScenarioRun) -> dict[str, Any] | None:
            return result_of(run)

    @extend_schema(
        operation_id="runs_retrieve",
        summary="Read a run",
        tags=["runs"],
        responses={200: OutputSerializer, **error_responses(404)},
    )
    def get(self, request: Request, run_id: Any) -> Response:
        run = run_get_visible(user=request.user, run_id=run_id)
        if run is None:
            raise ApplicationError("No such run.", code="not_found", status_code=404)
        return Response(RunDetailApi.OutputSerializer(run, context={"request": request}).data)
