"""Scenarios: submit, list, read, bill of materials, re-run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from advisor.engine.result.records import EngineResult
from advisor.engine.tools.whatif import ANSWER, FIXED, WHATIF_FABRIC_CHOICES
from advisor.reports.presenters import family_accuracy_figures
from advisor.scenarios import whatif
from advisor.scenarios.claims import tasks_run_in_process
from advisor.scenarios.engine_calls import InvalidScenario
from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun
from advisor.scenarios.reports import pdf_filename, report_pdf
from advisor.scenarios.results import served_result, stored_result
from advisor.scenarios.selectors import run_catalog, run_quoted
from advisor.scenarios.timelimit import EvaluationTimeout
from api import webhooks
from api.apis.base import ApiView, visible_scenario_or_404
from api.apis.measurements import calibrated_rerun
from api.bom import BomUnavailable, bom_for
from api.errors import ApplicationError
from api.pagination import ApiPagination, page_of
from api.permissions import api_client_of
from api.schema import error_responses
from api.selectors import scenario_list_visible
from api.serializers import (
    AbsoluteUrlField,
    AccuracySerializer,
    BodySerializer,
    EngineResultField,
    QueryParamsSerializer,
    RunSummarySerializer,
    ScenarioInputsField,
    StrictUUIDField,
)
from api.services import scenario_rerun, scenario_submit_api

IDEMPOTENCY_HEADER = "Idempotency-Key"
IDEMPOTENCY_KEY_MAX = 255


def quoted_run_succeeded_or_409(scenario: Scenario, what: str) -> tuple[ScenarioRun, EngineResult]:
    """The run the scenario quotes and its result, when it succeeded: `what` (a BOM, a
    report) is read from that result."""
    run = run_quoted(scenario=scenario)  # a calibrated run only once someone chose it
    result = stored_result(run) if run is not None and run.status == RunStatus.SUCCEEDED else None
    if run is None or result is None:
        state = run.status if run else "missing"
        raise ApplicationError(
            f"The quoted run is {state}; {what} exists once it succeeded.",
            code="result_not_ready",
            status_code=409,
        )
    return run, result


def idempotency_key_of(request: Request) -> str:
    key = request.headers.get(IDEMPOTENCY_HEADER, "").strip()
    if len(key) > IDEMPOTENCY_KEY_MAX or not key.isprintable():
        raise ApplicationError(
            "The Idempotency-Key header is invalid.",
            code="validation_error",
            fields={IDEMPOTENCY_HEADER: [f"must be 1-{IDEMPOTENCY_KEY_MAX} printable characters"]},
        )
    return key


class ScenarioCreateApi(ApiView):
    """POST /api/v1/scenarios/: save a scenario and queue its evaluation."""

    class InputSerializer(BodySerializer):
        name = serializers.CharField(max_length=200)
        inputs = ScenarioInputsField()
        customer = serializers.CharField(
            max_length=200, required=False, allow_blank=True, default=""
        )
        callback_url = serializers.URLField(
            max_length=2000,
            required=False,
            allow_blank=True,
            default="",
            help_text="POSTed the outcome when a run finishes, signed with X-Fabric-Signature.",
        )

        def validate_callback_url(self, value: str) -> str:
            if not value:
                return value
            try:
                webhooks.check_url_syntax(value)
            except webhooks.UnsafeWebhookUrl as exc:
                raise serializers.ValidationError(str(exc)) from exc
            if api_client_of(self.context["request"]) is None:
                raise serializers.ValidationError(
                    "needs an API client: webhooks are signed with the client's secret"
                )
            return value

    class OutputSerializer(serializers.Serializer[Any]):
        id = serializers.UUIDField(source="scenario.pk")
        status = serializers.ChoiceField(choices=RunStatus.choices, source="run.status")
        run = RunSummarySerializer()
        url = serializers.SerializerMethodField()

        def get_url(self, submission: Any) -> str:
            path = reverse("api:scenario-detail", args=[submission.scenario.pk])
            return str(self.context["request"].build_absolute_uri(path))

    @extend_schema(
        operation_id="scenarios_create",
        summary="Submit a scenario",
        description=(
            "Saves the scenario and queues its evaluation; poll `url` until `status` is "
            "`succeeded` or `failed`. With an `Idempotency-Key` header the same key and body "
            "return the same scenario (never a second one); the same key with another body "
            "is a 409."
        ),
        tags=["scenarios"],
        request=InputSerializer,
        parameters=[
            OpenApiParameter(
                IDEMPOTENCY_HEADER,
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                required=False,
                description="Any unique string (e.g. a UUID) per intended scenario.",
            )
        ],
        responses={202: OutputSerializer, **error_responses(409)},
    )
    def post(self, request: Request) -> Response:
        key = idempotency_key_of(request)
        serializer = ScenarioCreateApi.InputSerializer(
            data=request.data, context={"request": request}
        )
        serializer.is_valid(raise_exception=True)
        submission = scenario_submit_api(
            owner=request.user, idempotency_key=key, **serializer.validated_data
        )
        if tasks_run_in_process():  # eager mode has already run it: show how it ended
            submission.run.refresh_from_db()
        body = ScenarioCreateApi.OutputSerializer(submission, context={"request": request}).data
        response = Response(body, status=status.HTTP_202_ACCEPTED)
        response["Location"] = body["url"]
        if submission.replayed:
            response["Idempotent-Replayed"] = "true"
        return response


class ScenarioListApi(ApiView):
    """GET /api/v1/scenarios/: the caller's scenarios, newest first, a page at a time."""

    class FilterSerializer(QueryParamsSerializer):
        customer = serializers.CharField(required=False, max_length=200)
        status = serializers.ChoiceField(
            choices=RunStatus.choices, required=False, help_text="Status of the latest run."
        )
        created_after = serializers.DateTimeField(required=False, help_text="Inclusive.")
        created_before = serializers.DateTimeField(required=False, help_text="Exclusive.")
        limit = serializers.IntegerField(
            required=False, min_value=1, max_value=ApiPagination.max_limit, help_text="Page size."
        )
        offset = serializers.IntegerField(required=False, min_value=0, help_text="Items to skip.")

    class OutputSerializer(serializers.Serializer[Any]):
        id = serializers.UUIDField()
        name = serializers.CharField()
        customer = serializers.CharField()
        created_at = serializers.DateTimeField()
        status = serializers.ChoiceField(
            choices=RunStatus.choices,
            source="latest_run_status",
            allow_null=True,
            help_text="Status of the latest run.",
        )
        progress = serializers.IntegerField(source="latest_run_progress", allow_null=True)
        url = AbsoluteUrlField("api:scenario-detail")

    @extend_schema(
        operation_id="scenarios_list",
        summary="List scenarios",
        description=(
            "The caller's scenarios (staff: everyone's), newest first, with the status and "
            "progress of each one's latest run. Filter by customer, latest run status and "
            "creation time."
        ),
        tags=["scenarios"],
        parameters=[FilterSerializer],
        responses={200: page_of(OutputSerializer), **error_responses(400)},
    )
    def get(self, request: Request) -> Response:
        filters = ScenarioListApi.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        criteria = {k: v for k, v in filters.validated_data.items() if k not in ("limit", "offset")}
        qs = scenario_list_visible(user=request.user, **criteria)
        paginator = ApiPagination()
        page = paginator.paginate_queryset(qs, request, view=self)
        data = ScenarioListApi.OutputSerializer(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)


# Each method names its own class's serializers (ScenarioCreateApi.OutputSerializer...), so
# the shadowed nested names of the combined class are never used.
class ScenarioCollectionApi(ScenarioListApi, ScenarioCreateApi):  # type: ignore[misc]
    """/api/v1/scenarios/ answers two operations; each keeps its own API class above."""


class RunOutputSerializer(serializers.Serializer[Any]):
    """A run as the scenario and run endpoints show it."""

    id = serializers.UUIDField()
    scenario_id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=RunStatus.choices)
    progress = serializers.IntegerField(min_value=0, max_value=100)
    attempts = serializers.IntegerField(min_value=0)
    engine_version = serializers.CharField()
    catalog_version = serializers.CharField()
    error = serializers.CharField(help_text="Why the run failed (empty otherwise).")
    error_fields = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        allow_null=True,
        help_text="Per-field messages when the inputs were refused by the engine.",
    )
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    url = AbsoluteUrlField("api:run-detail")


def result_of(run: ScenarioRun | None) -> dict[str, Any] | None:
    """The result the API serves: the stored JSON read through the typed result."""
    if run is None or run.status != RunStatus.SUCCEEDED:
        return None
    return served_result(run)


@extend_schema_field({"type": "object", "additionalProperties": True})
class _ObjectField(serializers.JSONField):
    pass


class ScenarioDetailApi(ApiView):
    """GET /api/v1/scenarios/{id}/: inputs, the run it quotes and, once it succeeded, its result."""

    class OutputSerializer(serializers.Serializer[Any]):
        id = serializers.UUIDField()
        name = serializers.CharField()
        customer = serializers.CharField()
        callback_url = serializers.CharField()
        inputs = _ObjectField(help_text="The scenario v1 inputs as submitted.")
        created_at = serializers.DateTimeField()
        updated_at = serializers.DateTimeField()
        status = serializers.SerializerMethodField(help_text="Status of the quoted run.")
        progress = serializers.SerializerMethodField()
        run = serializers.SerializerMethodField(
            help_text=(
                "The run the scenario quotes (its PDF, BOM and page): the newest default run, "
                "or a calibrated run once chosen (POST quoted-run/)."
            )
        )
        result = serializers.SerializerMethodField(
            help_text=(
                "The quoted run's result (docs/ENGINE_API.md); null until it succeeded. "
                "Costs, labelled as on the page and the PDF: `cost.network_capex_usd` is the "
                "network capex (buying NICs, switches, optics, cables); `cost.life.total_usd` "
                "the network's cost over the cluster's life; `cost.job_share.total_usd` the share "
                "charged to this job (its GPU time, power, ramp-up and the network's time "
                "share: it can be far below the capex)."
            )
        )
        accuracy = serializers.SerializerMethodField(
            help_text=(
                "How the answer's family of predictions reads on held-out published "
                "measurements (the accuracy page's figures); null until the run succeeded."
            )
        )
        url = AbsoluteUrlField("api:scenario-detail")
        bom_url = AbsoluteUrlField("api:scenario-bom")

        def _run(self, scenario: Scenario) -> ScenarioRun | None:
            run: ScenarioRun | None = self.context["quoted_run"]
            return run

        @extend_schema_field(serializers.ChoiceField(choices=RunStatus.choices, allow_null=True))
        def get_status(self, scenario: Scenario) -> str | None:
            run = self._run(scenario)
            return run.status if run else None

        @extend_schema_field(serializers.IntegerField(allow_null=True))
        def get_progress(self, scenario: Scenario) -> int | None:
            run = self._run(scenario)
            return run.progress if run else None

        @extend_schema_field(RunOutputSerializer(allow_null=True))
        def get_run(self, scenario: Scenario) -> dict[str, Any] | None:
            run = self._run(scenario)
            return RunOutputSerializer(run, context=self.context).data if run else None

        @extend_schema_field(EngineResultField(allow_null=True))
        def get_result(self, scenario: Scenario) -> dict[str, Any] | None:
            return result_of(self._run(scenario))

        @extend_schema_field(AccuracySerializer(allow_null=True))
        def get_accuracy(self, scenario: Scenario) -> dict[str, Any] | None:
            run = self._run(scenario)
            if run is None or run.status != RunStatus.SUCCEEDED:
                return None
            result = stored_result(run)
            return family_accuracy_figures(result) if result is not None else None

    @extend_schema(
        operation_id="scenarios_retrieve",
        summary="Read a scenario and the run it quotes",
        tags=["scenarios"],
        responses={200: OutputSerializer, **error_responses(404)},
    )
    def get(self, request: Request, scenario_id: Any) -> Response:
        scenario = visible_scenario_or_404(request, scenario_id)
        # the run the scenario quotes (its PDF, BOM and page): a calibrated side run only once
        # someone chose it, never merely because it is newer
        context = {"request": request, "quoted_run": run_quoted(scenario=scenario)}
        return Response(ScenarioDetailApi.OutputSerializer(scenario, context=context).data)


class ScenarioBomApi(ApiView):
    """GET /api/v1/scenarios/{id}/bom/: the bill of materials of the latest successful run."""

    class FilterSerializer(QueryParamsSerializer):
        option = serializers.IntegerField(
            required=False,
            min_value=1,
            help_text="Rank of an alternative in result.options (1 = the recommended design).",
        )

    class OutputSerializer(serializers.Serializer[Any]):
        class LineSerializer(serializers.Serializer[Any]):
            sku = serializers.CharField(help_text="The catalog's id of the part (for machines).")
            part_number = serializers.CharField(
                help_text="The vendor's orderable part number; empty for a class of products."
            )
            description = serializers.CharField()
            category = serializers.CharField()
            quantity = serializers.IntegerField(min_value=0)
            unit_price_usd = serializers.FloatField()
            extended_price_usd = serializers.FloatField()
            network = serializers.CharField(
                help_text="compute, storage, retrieval (a RAG pipeline's tiers), management or "
                "frontend."
            )
            source = serializers.CharField()  # type: ignore[assignment]  # a BOM key, not Field.source

        scenario_id = serializers.UUIDField()
        run_id = serializers.UUIDField()
        option = serializers.IntegerField(help_text="Rank of the design in result.options.")
        design = serializers.DictField(
            help_text="fabric, nic_gbps, nics_per_node, oversubscription, switch_model, nic_sku."
        )
        currency = serializers.ChoiceField(choices=["USD"])
        lines = LineSerializer(many=True)
        total_usd = serializers.FloatField()

    @extend_schema(
        operation_id="scenarios_bom_retrieve",
        summary="Bill of materials",
        description=(
            "The recommended design's bill of materials, or with `?option=N` the "
            "alternative ranked N in `result.options`. 409 while the latest run has not "
            "succeeded."
        ),
        tags=["scenarios"],
        parameters=[FilterSerializer],
        responses={200: OutputSerializer, **error_responses(400, 404, 409)},
    )
    def get(self, request: Request, scenario_id: Any) -> Response:
        filters = ScenarioBomApi.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        scenario = visible_scenario_or_404(request, scenario_id)
        run, result = quoted_run_succeeded_or_409(scenario, "the bill of materials")
        try:
            bom = bom_for(
                result=result,
                option=filters.validated_data.get("option"),
                catalog=run_catalog(run=run),
            )
        except BomUnavailable as exc:
            raise ApplicationError(
                str(exc), code="validation_error", fields={"option": [str(exc)]}
            ) from exc
        body = {"scenario_id": scenario.pk, "run_id": run.pk, **bom}
        return Response(ScenarioBomApi.OutputSerializer(body).data)


class ScenarioRunCreateApi(ApiView):
    """POST /api/v1/scenarios/{id}/runs/: evaluate again with the current catalog."""

    class InputSerializer(BodySerializer):
        measurement = StrictUUIDField(
            required=False,
            allow_null=True,
            help_text="Evaluate calibrated with this measurement's fit (default vs calibrated "
            "side by side in result.calibration).",
        )

    class OutputSerializer(serializers.Serializer[Any]):
        id = serializers.UUIDField()
        scenario_id = serializers.UUIDField()
        status = serializers.ChoiceField(choices=RunStatus.choices)
        progress = serializers.IntegerField(min_value=0, max_value=100)
        url = AbsoluteUrlField("api:run-detail")

    @extend_schema(
        operation_id="scenarios_runs_create",
        summary="Re-run a scenario with the current catalog",
        tags=["scenarios"],
        request=InputSerializer,
        responses={202: OutputSerializer, **error_responses(400, 404, 409)},
    )
    def post(self, request: Request, scenario_id: Any) -> Response:
        scenario = visible_scenario_or_404(request, scenario_id)
        serializer = ScenarioRunCreateApi.InputSerializer(data=request.data or {})
        serializer.is_valid(raise_exception=True)
        measurement_id = serializer.validated_data.get("measurement")
        if measurement_id is not None:
            run = calibrated_rerun(request, scenario, measurement_id)
        else:
            run = scenario_rerun(scenario=scenario)
        run.refresh_from_db()
        body = ScenarioRunCreateApi.OutputSerializer(run, context={"request": request}).data
        response = Response(body, status=status.HTTP_202_ACCEPTED)
        response["Location"] = body["url"]
        return response


class PdfRenderer(BaseRenderer):
    """application/pdf for the report; an error body is still the API's JSON error."""

    media_type = "application/pdf"
    format = "pdf"
    charset = None
    render_style = "binary"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if isinstance(data, bytes):
            return data
        response = (renderer_context or {}).get("response")
        if response is not None:
            response["Content-Type"] = "application/json"
        return JSONRenderer().render(data)


class ScenarioReportApi(ApiView):
    """GET /api/v1/scenarios/{id}/report.pdf: the quote-ready PDF of the latest success."""

    renderer_classes = [PdfRenderer, JSONRenderer]

    @extend_schema(
        operation_id="scenarios_report_retrieve",
        summary="PDF report",
        description=(
            "The same quote-ready PDF report as the web page's: a cover with customer, "
            "scenario, quote reference, preparer, date and validity; the inputs in plain "
            "words; the answer and its reasons; the bill of materials by network with "
            "subtotals; alternatives; assumptions. Costs are labelled as on the page: "
            "network capex, the network's cost over the cluster's life, and the share charged "
            "to this job. 409 while the latest run has not succeeded."
        ),
        tags=["scenarios"],
        responses={
            (200, "application/pdf"): OpenApiTypes.BINARY,
            **error_responses(404, 409),
        },
    )
    def get(self, request: Request, scenario_id: Any) -> HttpResponse:
        scenario = visible_scenario_or_404(request, scenario_id)
        run, _ = quoted_run_succeeded_or_409(scenario, "the report")
        client = api_client_of(request)
        pdf = report_pdf(
            scenario,
            run,
            prepared_by=client.name if client else request.user.get_username(),
            contact="",
            link=request.build_absolute_uri(f"/s/{scenario.pk}/"),
        )
        response = HttpResponse(pdf, content_type="application/pdf")
        response["Content-Disposition"] = f'attachment; filename="{pdf_filename(scenario)}"'
        return response


class ScenarioWhatIfApi(ApiView):
    """POST /api/v1/scenarios/{id}/whatif/: one changed design or load, priced in the request."""

    class InputSerializer(serializers.Serializer[Any]):
        servers = serializers.IntegerField(required=False, min_value=1)
        precision = serializers.CharField(
            required=False,
            help_text="The number format (bf16, fp8, fp16, fp4, mxfp4): one the scenario's "
            "model, GPU and workload take; a changed one is priced as the engine answers it.",
        )
        fabric = serializers.ChoiceField(
            choices=WHATIF_FABRIC_CHOICES,
            required=False,
            help_text="A fabric fixes that design; 'none' (offered when the answer needs no "
            "compute fabric) keeps the answer's own.",
        )
        nic_gbps = serializers.FloatField(required=False)
        nics_per_node = serializers.IntegerField(required=False)
        oversubscription = serializers.FloatField(required=False)
        global_batch_sequences = serializers.IntegerField(
            required=False, help_text="Training and fine-tuning only."
        )
        requests_per_s = serializers.FloatField(
            required=False,
            allow_null=True,
            help_text="Serving only; null: the scenario's closed loop of concurrent requests.",
        )
        concurrent_requests = serializers.IntegerField(
            required=False,
            min_value=1,
            help_text="Serving only: the closed loop's users (each sends its next request when "
            "the last is answered), the load when requests_per_s is null.",
        )
        deployment = serializers.ChoiceField(
            choices=whatif.DEPLOYMENT_CHOICES,
            required=False,
            help_text="Serving only: auto (the engine's choice) or a deployment; a changed one "
            "takes the engine's shape for it (the scenario's parallelism, pools and "
            "independent_replicas give way). The point's deployment_label says what runs.",
        )

    class OutputSerializer(serializers.Serializer[Any]):
        scenario_id = serializers.UUIDField()
        run_id = serializers.UUIDField()
        change = serializers.DictField(help_text="The what-if priced, every field set.")
        baseline = serializers.DictField(
            help_text="The what-if of nothing changed: the recommended design."
        )
        priced_as = serializers.ChoiceField(
            choices=(ANSWER, FIXED),
            help_text="answer: no design field changed, so the point is the engine's answer "
            "for the changed size and load (nothing changed: the answer itself); fixed: the "
            "design given, priced as a sweep prices a design point.",
        )
        point = serializers.DictField(
            help_text="A sweep row: feasible, reason, the metrics of the workload's kind, "
            "network_capex_usd, decision_cost_usd (the network's life cost), total_cost_usd, "
            "fabric_label (the fabric it names; 'No compute fabric' for none) and, serving, "
            "deployment_label and ttft_label (the deployment and the first token in the "
            "answer's words)."
        )
        inputs = serializers.DictField(help_text="Scenario v1 inputs with the change applied.")
        engine_ms = serializers.FloatField()

    @extend_schema(
        operation_id="scenarios_whatif_create",
        summary="What if: price one changed design or load",
        description=(
            "Change the servers, the number format, the fabric, the NIC speed or count, the "
            "oversubscription, the training batch or the serving load (request rate or "
            "users) and deployment; "
            "fields left out keep the recommended design's value. The answer's own design (no "
            "design field changed) is priced as the engine answers the changed scenario "
            "(nothing changed: the "
            "answer's own figures); a changed design as a sweep prices a design point, within "
            "ENGINE_IN_REQUEST_TIME_LIMIT_S seconds (503 evaluation_timeout). A design the "
            "catalog cannot build answers feasible false with the reason. 409 until the "
            "latest run succeeded."
        ),
        tags=["scenarios"],
        request=InputSerializer,
        responses={200: OutputSerializer, **error_responses(400, 404, 409, 503)},
    )
    def post(self, request: Request, scenario_id: Any) -> Response:
        scenario = visible_scenario_or_404(request, scenario_id)
        run, result = quoted_run_succeeded_or_409(scenario, "a what-if")
        catalog = run_catalog(run=run)
        try:
            answer = whatif.answer(
                inputs=scenario.inputs,
                result=result,
                raw=request.data,
                catalog=catalog,
                calibration=whatif.calibration_of(run=run, result=result, catalog=catalog),
                run_id=run.pk,
            )
        except InvalidScenario as exc:
            fields = dict(exc.field_errors)
            raise ApplicationError(
                f"The what-if is invalid: check {', '.join(sorted(fields))}.",
                code="validation_error",
                fields=fields,
            ) from exc
        except EvaluationTimeout as exc:
            raise ApplicationError(
                f"The what-if took longer than the {exc.limit_s:g} s allowed in a request.",
                code="evaluation_timeout",
                status_code=503,
            ) from exc
        body = {"scenario_id": scenario.pk, "run_id": run.pk, **answer}
        return Response(ScenarioWhatIfApi.OutputSerializer(body).data)
