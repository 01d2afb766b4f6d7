"""Sweeps: start one over a scenario, follow its progress, page through its results."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from advisor.engine.facts.vocabulary import FABRIC_CHOICES, FABRIC_IDS
from advisor.engine.tools import sweep as grid
from advisor.scenarios.models import Sweep, SweepStatus
from advisor.scenarios.sweeps.axes import InvalidSweep
from advisor.scenarios.sweeps.selectors import sweep_results
from advisor.scenarios.sweeps.services import TooManySweeps, sweep_create
from api.apis.base import ApiView
from api.errors import ApplicationError
from api.pagination import ApiPagination, page_of
from api.schema import error_responses
from api.selectors import scenario_get_visible
from api.serializers import (
    AbsoluteUrlField,
    BodySerializer,
    QueryParamsSerializer,
    StrictUUIDField,
)
from api.sweeps.selectors import sweep_get_visible, sweep_list_visible

AXIS_LIMIT = grid.MAX_VALUES_PER_AXIS


def visible_sweep_or_404(request: Request, sweep_id: Any) -> Sweep:
    sweep = sweep_get_visible(user=request.user, sweep_id=sweep_id)
    if sweep is None:
        raise ApplicationError("No such sweep.", code="not_found", status_code=404)
    return sweep


class AxesSerializer(serializers.Serializer[Any]):
    """Values of each swept dimension; an axis left out keeps the scenario's own value.

    It documents the axes (the OpenAPI schema, the output); a request's axes are checked by
    the validator the web form uses too (advisor.scenarios.sweeps.axes.normalise_axes).
    """

    servers = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=grid.MAX_SERVERS),
        required=False,
        max_length=AXIS_LIMIT,
        help_text="Numbers of servers (GPUs = servers x gpus_per_node).",
    )
    fabric = serializers.ListField(
        child=serializers.ChoiceField(choices=FABRIC_CHOICES),
        required=False,
        max_length=len(FABRIC_IDS),
    )
    nic_gbps = serializers.ListField(
        child=serializers.FloatField(min_value=1, max_value=grid.MAX_NIC_GBPS),
        required=False,
        max_length=AXIS_LIMIT,
        help_text="Line rate of one compute NIC port, Gb/s.",
    )
    nics_per_node = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=grid.MAX_NICS_PER_NODE),
        required=False,
        max_length=AXIS_LIMIT,
    )
    oversubscription = serializers.ListField(
        child=serializers.FloatField(min_value=1, max_value=grid.MAX_OVERSUBSCRIPTION),
        required=False,
        max_length=AXIS_LIMIT,
        help_text="r of r:1 at the leaf.",
    )


class SweepOutputSerializer(serializers.Serializer[Any]):
    """A sweep as every sweep endpoint shows it."""

    id = serializers.UUIDField()
    scenario_id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=SweepStatus.choices)
    progress = serializers.IntegerField(source="progress_pct", min_value=0, max_value=100)
    total_points = serializers.IntegerField(min_value=0)
    done_points = serializers.IntegerField(min_value=0)
    infeasible_points = serializers.IntegerField(
        min_value=0, help_text="Evaluated points the engine found impossible (with a reason)."
    )
    total_chunks = serializers.IntegerField(min_value=0)
    done_chunks = serializers.IntegerField(min_value=0)
    failed_chunks = serializers.IntegerField(min_value=0)
    axes = AxesSerializer()
    error = serializers.CharField(help_text="Why the sweep failed (empty otherwise).")
    engine_version = serializers.CharField()
    catalog_version = serializers.CharField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    url = AbsoluteUrlField("api-sweeps:sweep-detail")
    results_url = AbsoluteUrlField("api-sweeps:sweep-results")


class SweepCreateApi(ApiView):
    """POST /api/v1/sweeps/: start a sweep of a scenario over a grid of network designs."""

    class InputSerializer(BodySerializer):
        scenario_id = StrictUUIDField()
        axes = AxesSerializer()

    class ReadSerializer(BodySerializer):
        """What the view reads itself; the axes' rules are normalise_axes's."""

        scenario_id = StrictUUIDField()
        axes = serializers.DictField()

    @extend_schema(
        operation_id="sweeps_create",
        summary="Start a sweep",
        description=(
            "Evaluates the scenario at every combination of the given servers, fabrics, NIC "
            f"speeds, NICs per server and oversubscription ratios (at most "
            f"{grid.MAX_VALUES_PER_AXIS} values per axis and the server's point limit in "
            "total), fanned out over the workers. Poll `url` for progress; read the points "
            "from `results_url`."
        ),
        tags=["sweeps"],
        request=InputSerializer,
        responses={202: SweepOutputSerializer, **error_responses(404, 409)},
    )
    def post(self, request: Request) -> Response:
        serializer = SweepCreateApi.ReadSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        scenario = scenario_get_visible(user=request.user, scenario_id=data["scenario_id"])
        if scenario is None:
            raise ApplicationError("No such scenario.", code="not_found", status_code=404)
        try:
            sweep = sweep_create(scenario=scenario, axes=dict(data["axes"]), owner=request.user)
        except InvalidSweep as exc:
            raise ApplicationError(
                "The sweep is invalid: check " + ", ".join(sorted(exc.field_errors)) + ".",
                code="validation_error",
                fields=exc.field_errors,
            ) from exc
        except TooManySweeps as exc:
            raise ApplicationError(str(exc), code="too_many_sweeps", status_code=409) from exc
        sweep.refresh_from_db()  # eager mode may already have run it
        body = SweepOutputSerializer(sweep, context={"request": request}).data
        response = Response(body, status=status.HTTP_202_ACCEPTED)
        response["Location"] = body["url"]
        return response


class SweepListApi(ApiView):
    """GET /api/v1/sweeps/: the caller's sweeps, newest first."""

    class FilterSerializer(QueryParamsSerializer):
        scenario_id = serializers.UUIDField(required=False, help_text="Sweeps of this scenario.")
        limit = serializers.IntegerField(
            required=False, min_value=1, max_value=ApiPagination.max_limit, help_text="Page size."
        )
        offset = serializers.IntegerField(required=False, min_value=0, help_text="Items to skip.")

    @extend_schema(
        operation_id="sweeps_list",
        summary="List sweeps",
        description="The caller's sweeps (staff: everyone's), newest first.",
        tags=["sweeps"],
        parameters=[FilterSerializer],
        responses={200: page_of(SweepOutputSerializer), **error_responses(400)},
    )
    def get(self, request: Request) -> Response:
        filters = SweepListApi.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        criteria = {k: v for k, v in filters.validated_data.items() if k not in ("limit", "offset")}
        qs = sweep_list_visible(user=request.user, **criteria)
        paginator = ApiPagination()
        page = paginator.paginate_queryset(qs, request, view=self)
        data = SweepOutputSerializer(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)


# Each method names its own class's serializers, so the shadowed nested names are never used.
class SweepCollectionApi(SweepListApi, SweepCreateApi):
    """/api/v1/sweeps/ answers two operations; each keeps its own API class above."""


class SweepDetailApi(ApiView):
    """GET /api/v1/sweeps/{id}/: status, progress and counts."""

    @extend_schema(
        operation_id="sweeps_retrieve",
        summary="Read a sweep",
        tags=["sweeps"],
        responses={200: SweepOutputSerializer, **error_responses(404)},
    )
    def get(self, request: Request, sweep_id: Any) -> Response:
        sweep = visible_sweep_or_404(request, sweep_id)
        return Response(SweepOutputSerializer(sweep, context={"request": request}).data)


class ResultsPagination(ApiPagination):
    default_limit = 1000
    max_limit = 5000


class SweepResultsApi(ApiView):
    """GET /api/v1/sweeps/{id}/results/: the evaluated design points, in point order."""

    class PointSerializer(serializers.Serializer[Any]):
        i = serializers.IntegerField(min_value=0, help_text="Point number in the grid.")
        servers = serializers.IntegerField(min_value=1)
        gpus = serializers.IntegerField(min_value=1)
        fabric = serializers.ChoiceField(choices=FABRIC_CHOICES)
        nic_gbps = serializers.FloatField()
        nics_per_node = serializers.IntegerField(min_value=1)
        oversubscription = serializers.FloatField()
        feasible = serializers.BooleanField()
        reason = serializers.CharField(allow_null=True, help_text="Why it is infeasible.")
        step_time_s = serializers.FloatField(required=False, allow_null=True)
        compute_s = serializers.FloatField(required=False, allow_null=True)
        exposed_comm_s = serializers.FloatField(required=False, allow_null=True)
        scaling_efficiency = serializers.FloatField(required=False, allow_null=True)
        gpu_idle_fraction = serializers.FloatField(required=False, allow_null=True)
        tflops_per_gpu = serializers.FloatField(required=False, allow_null=True)
        run_time_s = serializers.FloatField(required=False, allow_null=True)
        gpu_hours = serializers.FloatField(required=False, allow_null=True)
        ms_per_token = serializers.FloatField(required=False, allow_null=True)
        ttft_ms = serializers.FloatField(required=False, allow_null=True)
        tokens_per_s_per_server = serializers.FloatField(required=False, allow_null=True)
        comm_ms_per_token = serializers.FloatField(required=False, allow_null=True)
        compute_ms_per_token = serializers.FloatField(required=False, allow_null=True)

    class PageParamsSerializer(QueryParamsSerializer):
        limit = serializers.IntegerField(
            required=False,
            min_value=1,
            max_value=ResultsPagination.max_limit,
            help_text="Points per page.",
        )
        offset = serializers.IntegerField(required=False, min_value=0, help_text="Points to skip.")

    @extend_schema(
        operation_id="sweeps_results",
        summary="Read a sweep's results",
        description=(
            "The design points evaluated so far, in point order; training sweeps carry the "
            "training metrics, inference sweeps the inference ones (docs/ENGINE_API.md)."
        ),
        tags=["sweeps"],
        parameters=[PageParamsSerializer],
        responses={200: page_of(PointSerializer), **error_responses(400, 404)},
    )
    def get(self, request: Request, sweep_id: Any) -> Response:
        SweepResultsApi.PageParamsSerializer(data=request.query_params).is_valid(
            raise_exception=True
        )
        sweep = visible_sweep_or_404(request, sweep_id)
        paginator = ResultsPagination()
        page = paginator.paginate_queryset(sweep_results(sweep), request, view=self)
        return paginator.get_paginated_response([point.to_dict() for point in page or []])
