"""Quick answers: a synchronous evaluation, and the hardware catalog with prices."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from advisor.scenarios.converters import current_catalog, evaluate_inputs
from api.apis.base import ApiView
from api.errors import ApplicationError
from api.schema import error_responses
from api.serializers import EngineResultField, ScenarioInputsField


def _too_large_for_sync(inputs: dict[str, Any]) -> bool:
    gpus = inputs.get("gpus")
    return isinstance(gpus, int | float) and gpus > settings.API_SYNC_EVALUATE_MAX_GPUS


class EvaluateApi(ApiView):
    """POST /api/v1/evaluate/: evaluate in the request, for quick quotes of small clusters."""

    class InputSerializer(serializers.Serializer[Any]):
        inputs = ScenarioInputsField()

    class OutputSerializer(serializers.Serializer[Any]):
        result = EngineResultField()

    @extend_schema(
        operation_id="evaluate_create",
        summary="Evaluate a scenario synchronously",
        description=(
            "Returns the engine's result in the response, saving nothing. Scenarios with more "
            "than API_SYNC_EVALUATE_MAX_GPUS GPUs get a 413: submit those with "
            "POST /api/v1/scenarios/ and poll."
        ),
        tags=["evaluate"],
        request=InputSerializer,
        responses={200: OutputSerializer, **error_responses(413)},
    )
    def post(self, request: Request) -> Response:
        serializer = EvaluateApi.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        inputs = serializer.validated_data["inputs"]
        if _too_large_for_sync(inputs):
            limit = settings.API_SYNC_EVALUATE_MAX_GPUS
            raise ApplicationError(
                f"Scenarios with more than {limit} GPUs are evaluated asynchronously: "
                "submit them with POST /api/v1/scenarios/ and poll the returned url.",
                code="too_large_for_sync",
                status_code=413,
                fields={"inputs.gpus": [f"must be at most {limit} for POST /api/v1/evaluate/"]},
            )
        result = evaluate_inputs(inputs, catalog=current_catalog())
        return Response(EvaluateApi.OutputSerializer({"result": result}).data)


class CatalogApi(ApiView):
    """GET /api/v1/catalog/: the hardware new runs use, with prices and their sources."""

    class OutputSerializer(serializers.Serializer[Any]):
        version = serializers.CharField()
        gpus = serializers.ListField(child=serializers.DictField())
        models = serializers.ListField(child=serializers.DictField())
        nics = serializers.ListField(child=serializers.DictField())
        switches = serializers.ListField(child=serializers.DictField())
        transceivers = serializers.ListField(child=serializers.DictField())
        cables = serializers.ListField(child=serializers.DictField())

    @extend_schema(
        operation_id="catalog_retrieve",
        summary="The hardware catalog",
        tags=["catalog"],
        responses={200: OutputSerializer},
    )
    def get(self, request: Request) -> Response:
        return Response(CatalogApi.OutputSerializer(current_catalog().to_dict()).data)
