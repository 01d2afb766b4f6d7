"""Quick answers: a synchronous evaluation, and the hardware catalog with prices."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import Catalog
from advisor.engine.facts.limits import LIMITS, is_number
from advisor.engine.input.scenario import parse_scenario
from advisor.reports.presenters import family_accuracy_figures
from advisor.scenarios.catalog_store import catalog_current
from advisor.scenarios.engine_calls import evaluate_inputs
from advisor.scenarios.results import result_json
from advisor.scenarios.timelimit import EvaluationTimeout, wall_time_limit
from api.apis.base import ApiView
from api.errors import ApplicationError
from api.schema import error_responses
from api.serializers import (
    AccuracySerializer,
    BodySerializer,
    EngineResultField,
    ScenarioInputsField,
)


def _too_large_for_sync(inputs: dict[str, Any]) -> bool:
    gpus = inputs.get("gpus")
    if gpus is None or not is_number(gpus):
        return False
    # A number above the engine's own limit is a 400 from validation, naming that limit.
    return bool(settings.API_SYNC_EVALUATE_MAX_GPUS < gpus <= LIMITS["gpus"].high)


def _parses(inputs: dict[str, Any]) -> bool:
    try:
        parse_scenario(inputs, catalog_current())
    except ScenarioError:
        return False
    return True


class EvaluateApi(ApiView):
    """POST /api/v1/evaluate/: evaluate in the request, for quick quotes of small clusters."""

    class InputSerializer(BodySerializer):
        inputs = ScenarioInputsField()

    class OutputSerializer(serializers.Serializer[Any]):
        result = EngineResultField()
        accuracy = AccuracySerializer(
            allow_null=True,
            help_text=(
                "How the answer's family of predictions reads on held-out published "
                "measurements, as GET /api/v1/scenarios/{id}/ and the result page give it."
            ),
        )

    @extend_schema(
        operation_id="evaluate_create",
        summary="Evaluate a scenario synchronously",
        description=(
            "Returns the engine's result in the response, saving nothing. Scenarios with more "
            "than API_SYNC_EVALUATE_MAX_GPUS GPUs get a 413: submit those with "
            "POST /api/v1/scenarios/ and poll. An evaluation that takes longer than "
            "ENGINE_IN_REQUEST_TIME_LIMIT_S seconds gets a 503 (evaluation_timeout)."
        ),
        tags=["evaluate"],
        request=InputSerializer,
        responses={200: OutputSerializer, **error_responses(413, 503)},
    )
    def post(self, request: Request) -> Response:
        raw = request.data.get("inputs") if isinstance(request.data, dict) else None
        # The size check comes before validation, which plans the workload (bad inputs are
        # still a 400 first: parsing alone is cheap).
        if isinstance(raw, dict) and _too_large_for_sync(raw) and _parses(raw):
            limit = settings.API_SYNC_EVALUATE_MAX_GPUS
            raise ApplicationError(
                f"Scenarios with more than {limit} GPUs are evaluated asynchronously: "
                "submit them with POST /api/v1/scenarios/ and poll the returned url.",
                code="too_large_for_sync",
                status_code=413,
                fields={"inputs.gpus": [f"must be at most {limit} for POST /api/v1/evaluate/"]},
            )
        serializer = EvaluateApi.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        inputs = serializer.validated_data["inputs"]
        limit_s = settings.ENGINE_IN_REQUEST_TIME_LIMIT_S
        try:
            with wall_time_limit(limit_s) as deadline:
                result = evaluate_inputs(
                    inputs, catalog=catalog_current(), progress=deadline.progress(None)
                )
        except EvaluationTimeout as exc:
            raise ApplicationError(
                f"The evaluation took longer than the {limit_s} s allowed in a request: "
                "submit the scenario with POST /api/v1/scenarios/ and poll the returned url.",
                code="evaluation_timeout",
                status_code=503,
            ) from exc
        body = {"result": result_json(result), "accuracy": family_accuracy_figures(result)}
        return Response(EvaluateApi.OutputSerializer(body).data)


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
        return Response(catalog_served(catalog_current()))


# The catalog as served, per catalog object (catalogs are immutable and the store keeps one
# object per stored version): written once per process instead of on every request.
_CATALOG_SERVED: dict[str, tuple[Catalog, Any]] = {}


def catalog_served(catalog: Catalog) -> Any:
    kept = _CATALOG_SERVED.get(catalog.version)
    if kept is None or kept[0] is not catalog:
        kept = (catalog, CatalogApi.OutputSerializer(catalog.to_dict()).data)
        if len(_CATALOG_SERVED) >= 8:
            _CATALOG_SERVED.clear()
        _CATALOG_SERVED[catalog.version] = kept
    return kept[1]
