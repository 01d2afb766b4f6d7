"""Serializers shared by several API classes: errors, scenario v1 inputs, runs, results.

The scenario v1 serializers below only *document* the engine's input (docs/ENGINE_API.md);
the engine validates it (advisor.scenarios.engine_calls.validate_inputs), so there is one
source of truth for the rules and their messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers

from advisor.engine.facts.limits import LIMITS
from advisor.engine.facts.vocabulary import FABRIC_CHOICES, TEAM_SKILLS
from advisor.engine.input.scenario import (
    EP_OVERLAP_MODES,
    MOE_DISPATCHERS,
    RECOMPUTE_MODES,
    ZERO_STAGES,
)
from advisor.scenarios.catalog_store import catalog_current
from advisor.scenarios.engine_calls import InvalidScenario, validate_inputs
from advisor.scenarios.models import RunStatus

# --- Errors ---------------------------------------------------------------------------------


class ErrorSerializer(serializers.Serializer[Any]):
    # inline_serializer: a declared field named "fields" would shadow Serializer.fields.
    error = inline_serializer(
        name="ErrorDetail",
        fields={
            "code": serializers.CharField(
                help_text="Stable machine-readable code, e.g. validation_error."
            ),
            "message": serializers.CharField(help_text="What went wrong, for a person."),
            "fields": serializers.DictField(
                child=serializers.ListField(child=serializers.CharField()),
                help_text='Per-field messages keyed by dotted path, e.g. "inputs.gpus".',
            ),
        },
    )


# --- Request bodies --------------------------------------------------------------------------


class BodySerializer(serializers.Serializer[Any]):
    """A request body. A field it does not know is refused, naming it, as the engine refuses
    unknown scenario inputs: DRF would silently drop it, so a misspelt field (`measurment`)
    would quietly do something other than what the caller asked."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            known = ", ".join(self.fields)
            unknown = {
                str(name): [f"is not a field of this request (the fields are: {known})"]
                for name in data
                if name not in self.fields
            }
            if unknown:
                raise serializers.ValidationError(unknown)
        return super().to_internal_value(data)


class StrictUUIDField(serializers.UUIDField):
    """An id given as text only: DRF's UUIDField also reads a number (1 became
    00000000-0000-0000-0000-000000000001)."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str):
            self.fail("invalid", value=data)
        return super().to_internal_value(data)


# --- Query parameters ----------------------------------------------------------------------


class QueryParamsSerializer(serializers.Serializer[Any]):
    """Filters from the query string. A parameter given empty is an error, not "no filter":
    DRF would silently ignore it, while the schema (and a client's generated code) says a
    value is required whenever the parameter is present."""

    def to_internal_value(self, data: Any) -> Any:
        blank: dict[str, list[str]] = {
            name: ["may not be blank; leave the parameter out instead"]
            for name, _field in self.fields.items()
            if name in data and str(data.get(name, "")).strip() == ""
        }
        if blank:
            raise serializers.ValidationError(blank)
        return super().to_internal_value(data)


# --- Scenario v1 (documentation of the engine's input) ---------------------------------------


def _bounds(path: str) -> dict[str, Any]:
    """JSON-schema bounds of a scenario field, from the engine's one set of limits."""
    limit = LIMITS[path]
    return {
        "type": "integer" if limit.integer else "number",
        "minimum": limit.low,
        "maximum": limit.high,
    }


def _int(path: str, **kwargs: Any) -> serializers.IntegerField:
    limit = LIMITS[path]
    return serializers.IntegerField(min_value=int(limit.low), max_value=int(limit.high), **kwargs)


def _float(path: str, **kwargs: Any) -> serializers.FloatField:
    limit = LIMITS[path]
    return serializers.FloatField(min_value=limit.low, max_value=limit.high, **kwargs)


_CUSTOM_MODEL_SCHEMA = {
    "type": "object",
    "description": "A custom model (no preset).",
    "required": ["params_b", "layers", "hidden", "heads"],
    "properties": {
        "params_b": {**_bounds("model.params_b"), "description": "Parameters, billions."},
        "layers": _bounds("model.layers"),
        "hidden": _bounds("model.hidden"),
        "heads": _bounds("model.heads"),
        "kv_heads": {**_bounds("model.kv_heads"), "nullable": True},
        "vocab": {**_bounds("model.vocab"), "nullable": True},
        "ffn_hidden": {**_bounds("model.ffn_hidden"), "nullable": True},
        "moe_experts": _bounds("model.moe_experts"),
        "moe_top_k": _bounds("model.moe_top_k"),
        "active_params_b": {**_bounds("model.active_params_b"), "nullable": True},
        "name": {"type": "string"},
        "tied_embeddings": {"type": "boolean"},
    },
}


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "description": "A model preset id, e.g. llama3-70b."},
            _CUSTOM_MODEL_SCHEMA,
        ]
    }
)
class ModelField(serializers.JSONField):
    pass


class TrainingSerializer(serializers.Serializer[Any]):
    global_batch_sequences = _int(
        "training.global_batch_sequences", required=False, allow_null=True
    )
    global_batch_tokens = _int("training.global_batch_tokens", required=False, allow_null=True)
    total_tokens = _float("training.total_tokens", required=False, allow_null=True)
    sharding = serializers.ChoiceField(
        choices=["none", "zero1", "zero3"], required=False, allow_null=True
    )


class PrefillPoolSerializer(serializers.Serializer[Any]):
    servers = _int("inference.pools.prefill.servers", required=False, allow_null=True)
    tp = _int("inference.pools.prefill.tp", required=False, allow_null=True)
    ep = _int("inference.pools.prefill.ep", required=False, allow_null=True)


class DecodePoolSerializer(serializers.Serializer[Any]):
    servers = _int("inference.pools.decode.servers", required=False, allow_null=True)
    tp = _int("inference.pools.decode.tp", required=False, allow_null=True)
    ep = _int("inference.pools.decode.ep", required=False, allow_null=True)


class PoolsSerializer(serializers.Serializer[Any]):
    """Servers and parallelism of each pool of a disaggregated deployment."""

    prefill = PrefillPoolSerializer(required=False, allow_null=True)
    decode = DecodePoolSerializer(required=False, allow_null=True)


class InferenceSerializer(serializers.Serializer[Any]):
    independent_replicas = serializers.BooleanField(required=False, allow_null=True)
    concurrent_requests = _int("inference.concurrent_requests", required=False, allow_null=True)
    prompt_tokens = _int("inference.prompt_tokens", required=False, allow_null=True)
    output_tokens = _int("inference.output_tokens", required=False, allow_null=True)
    target_ms_per_token = _float("inference.target_ms_per_token", required=False, allow_null=True)
    deployment = serializers.ChoiceField(
        choices=["replicas", "split", "disaggregated"],
        required=False,
        allow_null=True,
        help_text="Serving deployment; null lets the engine choose.",
    )
    requests_per_s = _float(
        "inference.requests_per_s",
        required=False,
        allow_null=True,
        help_text="Poisson arrival rate; null means a closed loop of concurrent_requests users.",
    )
    target_ttft_ms = _float(
        "inference.target_ttft_ms",
        required=False,
        allow_null=True,
        help_text="p95 time-to-first-token target (default 2000 ms).",
    )
    prefix_cache_hit_rate = _float(
        "inference.prefix_cache_hit_rate",
        required=False,
        allow_null=True,
        help_text="Share of prompt tokens served from a prefix cache (0 to below 1).",
    )
    mtp = _float(
        "inference.mtp",
        required=False,
        allow_null=True,
        help_text="Speculative decoding (MTP, one draft token): its acceptance rate.",
    )
    pools = PoolsSerializer(required=False, allow_null=True)


class ParallelismSerializer(serializers.Serializer[Any]):
    tp = _int("parallelism.tp", required=False, allow_null=True)
    pp = _int("parallelism.pp", required=False, allow_null=True)
    dp = _int("parallelism.dp", required=False, allow_null=True)
    ep = _int("parallelism.ep", required=False, allow_null=True)
    cp = _int("parallelism.cp", required=False, allow_null=True)
    micro_batch = _int("parallelism.micro_batch", required=False, allow_null=True)
    virtual_stages = _int("parallelism.virtual_stages", required=False, allow_null=True)
    recompute = serializers.ChoiceField(
        choices=list(RECOMPUTE_MODES), required=False, allow_null=True
    )
    zero = serializers.ChoiceField(
        choices=sorted(ZERO_STAGES),
        required=False,
        allow_null=True,
        help_text="ZeRO stage 0, 1 or 3; overrides training.sharding.",
    )
    first_stage_layers = _int("parallelism.first_stage_layers", required=False, allow_null=True)
    last_stage_layers = _int("parallelism.last_stage_layers", required=False, allow_null=True)
    tp_comm_overlap = serializers.BooleanField(
        required=False,
        allow_null=True,
        help_text="Transformer Engine comm-GEMM overlap; default on for Hopper and Blackwell.",
    )
    ep_overlap = serializers.ChoiceField(
        choices=list(EP_OVERLAP_MODES), required=False, allow_null=True
    )
    moe_dispatcher = serializers.ChoiceField(
        choices=list(MOE_DISPATCHERS),
        required=False,
        allow_null=True,
        help_text="Expert dispatch in training: alltoall (default, NCCL all-to-all of every "
        "token copy) or deepep (DeepEP/HybridEP: a token crosses the network once per server).",
    )
    flash_attention = serializers.BooleanField(required=False, allow_null=True)
    sequence_parallel = serializers.BooleanField(required=False, allow_null=True)


class DesignSerializer(serializers.Serializer[Any]):
    fabric = serializers.ChoiceField(choices=FABRIC_CHOICES)
    nic_gbps = _float("design.nic_gbps", required=False, allow_null=True)
    nics_per_node = _int("design.nics_per_node", required=False, allow_null=True)
    oversubscription = _float("design.oversubscription", required=False, allow_null=True)
    adaptive_routing = serializers.BooleanField(required=False, allow_null=True)
    in_network_reduction = serializers.BooleanField(required=False)


class ConstraintsSerializer(serializers.Serializer[Any]):
    gpu_pricing = serializers.ChoiceField(
        choices=["owned", "cloud"], required=False, allow_null=True
    )
    gpu_hour_usd = _float("constraints.gpu_hour_usd", required=False, allow_null=True)
    electricity_usd_per_kwh = _float(
        "constraints.electricity_usd_per_kwh", required=False, allow_null=True
    )
    pue = _float("constraints.pue", required=False, allow_null=True)
    amortization_years = _float("constraints.amortization_years", required=False, allow_null=True)
    network_budget_usd = _float("constraints.network_budget_usd", required=False, allow_null=True)
    storage_write_gbytes_per_s = _float(
        "constraints.storage_write_gbytes_per_s",
        required=False,
        allow_null=True,
        help_text="The storage system's sustained write rate for the whole cluster, GB/s "
        "(checkpoint time uses the slower of it and the storage network).",
    )
    team_skills = serializers.ChoiceField(
        choices=list(TEAM_SKILLS), required=False, allow_null=True
    )
    prefer = serializers.ChoiceField(
        choices=["cost", "balanced", "performance"], required=False, allow_null=True
    )
    allow_oversubscription = serializers.BooleanField(
        required=False,
        allow_null=True,
        help_text="With prefer=cost, oversubscribed or fewer-NIC designs may be recommended.",
    )


class ScenarioV1Serializer(serializers.Serializer[Any]):
    """Scenario v1 (docs/ENGINE_API.md). Only workload, model, gpu and gpus are required."""

    workload = serializers.ChoiceField(choices=["training", "fine_tuning", "inference"])
    model = ModelField(help_text="A preset id (see GET /api/v1/catalog/) or a custom model.")
    gpu = serializers.CharField(help_text="A GPU id from GET /api/v1/catalog/, e.g. h100-sxm.")
    gpus = _int("gpus", help_text="GPUs in the job (whole servers).")
    gpus_per_node = _int("gpus_per_node", required=False, allow_null=True)
    precision = serializers.ChoiceField(
        choices=["bf16", "fp8", "fp16"], required=False, allow_null=True
    )
    sequence_length = _int("sequence_length", required=False, allow_null=True)
    training = TrainingSerializer(required=False, allow_null=True)
    inference = InferenceSerializer(required=False, allow_null=True)
    parallelism = ParallelismSerializer(required=False, allow_null=True)
    design = DesignSerializer(required=False, allow_null=True)
    constraints = ConstraintsSerializer(required=False, allow_null=True)
    name = serializers.CharField(required=False)
    description = serializers.CharField(required=False)
    version = serializers.IntegerField(required=False)


@extend_schema_field(ScenarioV1Serializer)
class ScenarioInputsField(serializers.JSONField):
    """Scenario v1 inputs, checked by the engine; its messages come back per dotted path."""

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        try:
            validate_inputs(value, catalog=catalog_current())
        except InvalidScenario as exc:
            own = exc.field_errors.pop("inputs", None)
            if own and not exc.field_errors:
                raise serializers.ValidationError(own) from exc
            raise serializers.ValidationError(exc.field_errors) from exc
        return value


# --- Runs and results -----------------------------------------------------------------------


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": True,
        "description": (
            "The engine's result (docs/ENGINE_API.md, 'Result'): recommendation, metrics, "
            "bom, cost, options, break_even, uncertainty, monitoring, assumptions, scaling."
        ),
    }
)
class EngineResultField(serializers.JSONField):
    pass


class RunSummarySerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=RunStatus.choices)
    progress = serializers.IntegerField(min_value=0, max_value=100)


@extend_schema_field(OpenApiTypes.URI)
class AbsoluteUrlField(serializers.Field[Any, Any, str, Any]):
    """An absolute URL of the object, built from the request by the owning serializer."""

    def __init__(self, view_name: str, **kwargs: Any) -> None:
        self.view_name = view_name
        kwargs["source"] = "*"
        kwargs["read_only"] = True
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> str:
        from django.urls import reverse

        path = reverse(self.view_name, args=[value.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path
