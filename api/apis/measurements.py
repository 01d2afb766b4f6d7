"""Measurements (customer nccl-tests / rccl-tests / perftest output) and acceptance plans."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from advisor.engine.calibration.acceptance import acceptance_plan, grade
from advisor.engine.calibration.nccl_tests import parse_text
from advisor.engine.facts.vocabulary import FABRIC_CHOICES
from advisor.measurements.models import Measurement
from advisor.measurements.selectors import measurement_get, measurement_list
from advisor.measurements.services import (
    MeasurementInvalid,
    NotQuotable,
    measurement_create,
    scenario_quoted_run_choose,
    scenario_run_calibrated,
)
from advisor.scenarios.results import stored_result
from advisor.scenarios.selectors import run_catalog, run_quoted, run_quoted_succeeded
from advisor.scenarios.services import RunInProgress
from api.apis.base import ApiView, visible_scenario_or_404
from api.errors import ApplicationError
from api.schema import error_responses
from api.serializers import AbsoluteUrlField, BodySerializer, StrictUUIDField


@extend_schema_field({"type": "object", "additionalProperties": True})
class _ObjectField(serializers.JSONField):
    pass


@extend_schema_field({"type": "array", "items": {"type": "object", "additionalProperties": True}})
class _ListField(serializers.JSONField):
    pass


class AcceptanceCheckSerializer(serializers.Serializer[Any]):
    scope = serializers.CharField()
    op = serializers.CharField()
    nodes = serializers.IntegerField()
    gpus = serializers.IntegerField()
    bytes = serializers.IntegerField()
    expected_busbw_GBps = _ObjectField(help_text='{"low", "high"} in GB/s')
    pass_busbw_GBps = serializers.FloatField()
    max_time_us = serializers.FloatField()
    command = serializers.CharField()


class AcceptancePlanSerializer(serializers.Serializer[Any]):
    title = serializers.CharField()
    fabric = serializers.CharField(allow_null=True)
    gpu = serializers.CharField()
    gpus_per_node = serializers.IntegerField()
    tool = serializers.CharField()
    scopes = _ListField()
    env = _ListField()
    pass_rule = serializers.CharField()
    checks = AcceptanceCheckSerializer(many=True)
    commands = _ListField()
    notes = serializers.ListField(child=serializers.CharField())


class GradedCheckSerializer(AcceptanceCheckSerializer):
    measured_busbw_GBps = serializers.FloatField(allow_null=True)
    measured_time_us = serializers.FloatField(allow_null=True)
    passed = serializers.BooleanField(allow_null=True, help_text="null: not measured")
    look_at = serializers.ListField(child=serializers.CharField())


class GradingSerializer(serializers.Serializer[Any]):
    passed = serializers.BooleanField()
    complete = serializers.BooleanField()
    summary = serializers.CharField()
    measured = serializers.IntegerField()
    failed = serializers.IntegerField()
    measurement = serializers.UUIDField()
    plan = _ObjectField()
    checks = GradedCheckSerializer(many=True)


class MeasurementOutputSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    url = AbsoluteUrlField("api:measurement-detail")
    name = serializers.CharField()
    customer = serializers.CharField()
    fabric = serializers.CharField()
    nic_gbps = serializers.FloatField(allow_null=True)
    nics_per_node = serializers.IntegerField(allow_null=True)
    runs = _ListField(help_text="Parsed runs: op, ranks, nodes, gpus_per_node, gpu, rows.")
    link_runs = _ListField(help_text="perftest ib_write_bw / ib_write_lat runs.")
    fit = _ObjectField(
        help_text="Fitted network and scale-up terms (advisor.engine.calibration.fabric_fit)."
    )
    warnings = serializers.ListField(child=serializers.CharField())
    engine_version = serializers.CharField()
    created_at = serializers.DateTimeField()


def _invalid(exc: MeasurementInvalid) -> ApplicationError:
    return ApplicationError(
        "The measurement was refused.",
        code=exc.code,
        status_code=exc.status_code,
        fields=exc.fields,
    )


def visible_measurement_or_error(
    request: Request, measurement_id: Any, *, field: str = ""
) -> Measurement:
    m = measurement_get(user=request.user, measurement_id=measurement_id)
    if m is None:
        if field:
            raise ApplicationError(
                "No such measurement.",
                code="validation_error",
                fields={field: [f"no measurement {measurement_id} visible to you"]},
            )
        raise ApplicationError("No such measurement.", code="not_found", status_code=404)
    return m


class MeasurementCollectionApi(ApiView):
    """POST /api/v1/measurements/: upload benchmark output; GET: list them."""

    query_params = ("customer",)

    class InputSerializer(BodySerializer):
        name = serializers.CharField(max_length=200)
        text = serializers.CharField(
            trim_whitespace=False,
            help_text="nccl-tests / rccl-tests / perftest output as printed (several tests "
            "in one text are fine).",
        )
        customer = serializers.CharField(
            max_length=200, required=False, allow_blank=True, default=""
        )
        fabric = serializers.ChoiceField(
            choices=[("", "not said"), *FABRIC_CHOICES], required=False, default=""
        )
        nic_gbps = serializers.FloatField(
            required=False, allow_null=True, default=None, min_value=1, max_value=3200
        )
        nics_per_node = serializers.IntegerField(
            required=False, allow_null=True, default=None, min_value=1, max_value=64
        )

    @extend_schema(
        operation_id="measurements_create",
        summary="Upload nccl-tests / rccl-tests / perftest output",
        description=(
            "Parses the text, fits the engine's network (multi-server runs) and scale-up "
            "(single-server runs) terms and stores both. Text that is not such output is a "
            "400 naming the line that could not be read. `fabric`, `nic_gbps` and "
            "`nics_per_node` describe the measured cluster (else read from the log or assumed)."
        ),
        tags=["measurements"],
        request=InputSerializer,
        responses={201: MeasurementOutputSerializer, **error_responses(400, 413)},
    )
    def post(self, request: Request) -> Response:
        serializer = MeasurementCollectionApi.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            m = measurement_create(owner=request.user, **serializer.validated_data)
        except MeasurementInvalid as exc:
            raise _invalid(exc) from exc
        body = MeasurementOutputSerializer(m, context={"request": request}).data
        response = Response(body, status=status.HTTP_201_CREATED)
        response["Location"] = body["url"]
        return response

    @extend_schema(
        operation_id="measurements_list",
        summary="List measurements",
        tags=["measurements"],
        parameters=[OpenApiParameter("customer", str, required=False)],
        responses={200: MeasurementOutputSerializer(many=True)},
    )
    def get(self, request: Request) -> Response:
        customer = str(request.query_params.get("customer", ""))[:200]
        qs = measurement_list(user=request.user, customer=customer or None)[:200]
        return Response(
            MeasurementOutputSerializer(qs, many=True, context={"request": request}).data
        )


class MeasurementDetailApi(ApiView):
    """GET /api/v1/measurements/{id}/."""

    @extend_schema(
        operation_id="measurements_retrieve",
        summary="Read a measurement",
        tags=["measurements"],
        responses={200: MeasurementOutputSerializer, **error_responses(404)},
    )
    def get(self, request: Request, measurement_id: Any) -> Response:
        m = visible_measurement_or_error(request, measurement_id)
        return Response(MeasurementOutputSerializer(m, context={"request": request}).data)


class ScenarioAcceptanceApi(ApiView):
    """GET/POST /api/v1/scenarios/{id}/acceptance/: the plan, and grading a measurement."""

    query_params = ("design",)

    class InputSerializer(BodySerializer):
        measurement = StrictUUIDField()

    @staticmethod
    def _plan(request: Request, scenario_id: Any) -> Any:
        design = request.query_params.get("design")
        if design is not None and design != "given":
            raise ApplicationError(
                "The request is invalid: check design.",
                code="validation_error",
                fields={"design": ["must be 'given' (the scenario's own design) or left out"]},
            )
        scenario = visible_scenario_or_404(request, scenario_id)
        run = run_quoted_succeeded(scenario=scenario)  # the plan of the figures it quotes
        result = stored_result(run)
        if run is None or result is None:
            raise ApplicationError(
                "The scenario has no finished evaluation yet.", code="not_ready", status_code=409
            )
        given = design == "given"
        try:
            return acceptance_plan(result, catalog=run_catalog(run=run), given_design=given)
        except ValueError as exc:
            raise ApplicationError(str(exc), code="no_design", status_code=409) from exc

    @extend_schema(
        operation_id="scenarios_acceptance_retrieve",
        summary="Acceptance test plan of the recommended design",
        description=(
            "For 2 servers, one leaf (or rail group) and the whole job: the expected busbw "
            "range of all_reduce, all_gather, reduce_scatter and alltoall at 8 B..8 GiB, the "
            "commands and pass thresholds. `?design=given` plans the scenario's own design."
        ),
        tags=["scenarios"],
        parameters=[OpenApiParameter("design", str, required=False, enum=["given"])],
        responses={200: AcceptancePlanSerializer, **error_responses(404, 409)},
    )
    def get(self, request: Request, scenario_id: Any) -> Response:
        return Response(self._plan(request, scenario_id).to_dict())

    @extend_schema(
        operation_id="scenarios_acceptance_grade",
        summary="Grade a measurement against the acceptance plan",
        tags=["scenarios"],
        request=InputSerializer,
        parameters=[OpenApiParameter("design", str, required=False, enum=["given"])],
        responses={200: GradingSerializer, **error_responses(400, 404, 409)},
    )
    def post(self, request: Request, scenario_id: Any) -> Response:
        plan = self._plan(request, scenario_id)
        serializer = ScenarioAcceptanceApi.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        m = visible_measurement_or_error(
            request, serializer.validated_data["measurement"], field="measurement"
        )
        grading = grade(plan, parse_text(m.text))
        body = grading.to_dict()
        body["measurement"] = str(m.pk)
        body["plan"] = {k: v for k, v in plan.to_dict().items() if k != "checks"}
        return Response(body)


class ScenarioQuotedRunApi(ApiView):
    """POST /api/v1/scenarios/{id}/quoted-run/: choose which run the scenario quotes."""

    class InputSerializer(BodySerializer):
        run = StrictUUIDField(
            allow_null=True,
            help_text="A finished calibrated run of this scenario to quote, or null to quote "
            "the default model's answer again.",
        )

    class OutputSerializer(serializers.Serializer[Any]):
        scenario_id = serializers.UUIDField()
        run = serializers.UUIDField(
            allow_null=True, help_text="The chosen calibrated run; null for the default."
        )
        quoted_run_id = serializers.UUIDField(
            allow_null=True,
            help_text="The run the scenario now quotes (its BOM and report).",
        )

    @extend_schema(
        operation_id="scenarios_quoted_run_create",
        summary="Choose the run the scenario quotes",
        description=(
            "A calibrated run (`POST runs/` with a measurement) is a labelled side run: the "
            "scenario's BOM and report stay the default model's until a finished "
            'calibrated run is chosen here. `{"run": null}` goes back to the default.'
        ),
        tags=["scenarios"],
        request=InputSerializer,
        responses={200: OutputSerializer, **error_responses(400, 404)},
    )
    def post(self, request: Request, scenario_id: Any) -> Response:
        scenario = visible_scenario_or_404(request, scenario_id)
        serializer = ScenarioQuotedRunApi.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            run = scenario_quoted_run_choose(
                scenario=scenario, run_id=serializer.validated_data["run"]
            )
        except NotQuotable as exc:
            raise ApplicationError(
                "The request is invalid: check run.",
                code="validation_error",
                fields={"run": [str(exc)]},
            ) from exc
        quoted = run_quoted(scenario=scenario)
        body = {
            "scenario_id": scenario.pk,
            "run": run.pk if run is not None else None,
            "quoted_run_id": quoted.pk if quoted is not None else None,
        }
        return Response(ScenarioQuotedRunApi.OutputSerializer(body).data)


def calibrated_rerun(request: Request, scenario: Any, measurement_id: Any) -> Any:
    """Queue a run of ``scenario`` with a visible measurement's fit (runs API, web)."""
    m = visible_measurement_or_error(request, measurement_id, field="measurement")
    try:
        return scenario_run_calibrated(scenario=scenario, measurement=m)
    except RunInProgress as exc:
        raise ApplicationError(str(exc), code="run_in_progress", status_code=409) from exc
