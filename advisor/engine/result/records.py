"""The engine's answer as frozen dataclasses: what :func:`advisor.engine.evaluate_typed`
returns and what the pages, the PDF, the CSV and the API read (docs/ENGINE_API.md, "Typed
result").

The engine builds these records directly (:func:`advisor.engine.evaluate_typed`). One pair
converts at the boundary where results are stored and served: :meth:`EngineResult.to_dict`
(typed -> the JSON dict the API serves and :func:`advisor.engine.evaluate` returns; its shape
is the contract of docs/ENGINE_API.md "Result (output)") and :meth:`EngineResult.from_dict`
(a stored JSON dict -> typed).

Rules of the conversion (the same for every class here):

- A key missing from the dict takes the field's default, so results stored by older engine
  versions still load. Fields marked ``_ABSENT`` (default ``None``) are left out of
  ``to_dict`` when ``None``: the engine omits those keys (training results have no
  ``ms_per_token``, a scenario without a ``design`` has no ``design_evaluation``).
- A key this module does not know is kept in ``extra`` and written back by ``to_dict``, so a
  key a newer engine adds reaches the API unchanged before a field is declared for it.
- Values are not coerced: an ``int`` stays an ``int`` where the field says ``float`` (the
  JSON the API serves keeps ``400``, not ``400.0``). Lists become tuples and back.
- A number, text or flag of the wrong JSON type (``"lots"`` where a price goes) raises
  :class:`ResultFormatError` naming its path: a damaged stored result is refused where it is
  read, not deep inside a page.

For every current result ``EngineResult.from_dict(d).to_dict() == d`` and for every typed
result ``EngineResult.from_dict(r.to_dict()) == r`` (tests/engine/test_result.py).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, Union

from advisor.engine.facts.constants import (
    DEFAULT_AMORTIZATION_YEARS,
    DEFAULT_ELECTRICITY_USD_PER_KWH,
    DEFAULT_GPU_HOUR_USD,
    DEFAULT_GPU_PRICING,
    DEFAULT_PREFER,
    DEFAULT_PUE,
    DEFAULT_TEAM_SKILLS,
    DEFAULT_UTILIZATION,
)

__all__ = [
    "Assumption",
    "Band",
    "BomLine",
    "BreakEven",
    "Budget",
    "BudgetBuys",
    "CalibrationApplied",
    "CalibrationComparison",
    "CalibrationSummary",
    "Communicator",
    "Constraints",
    "Cost",
    "CustomModel",
    "Decision",
    "DesignEvaluation",
    "DesignInput",
    "EngineResult",
    "InferenceInput",
    "JobShare",
    "LifeCost",
    "Memory",
    "Metrics",
    "ModelInfo",
    "Option",
    "Plan",
    "Pruned",
    "RagAnswer",
    "RagFlow",
    "RagInput",
    "RagNetwork",
    "RagTier",
    "Recommendation",
    "ReferenceDesign",
    "ResultFormatError",
    "ScalingPoint",
    "ScenarioEcho",
    "ServingPlan",
    "ServingPool",
    "ServingPools",
    "Storage",
    "Topology",
    "Traffic",
    "TrainingInput",
    "Uncertainty",
    "ValidationReport",
    "ValidationRow",
    "ValidationSummary",
    "WorkloadInfo",
]

_OMIT = "omit_when_none"
EXTRA = "extra"


class ResultFormatError(ValueError):
    """A stored result whose shape this module cannot read (names the path)."""


_ABSENT = {_OMIT: True}
"""Metadata of a field whose key the engine leaves out when there is no value (``None``)."""


T = TypeVar("T", bound="_Record")


class _Record:
    """Base of every result dataclass: ``from_dict`` / ``to_dict`` by the field types."""

    @classmethod
    def from_dict(cls: type[T], data: Mapping[str, Any] | None) -> T:
        return typing.cast(T, _load(cls, data if data is not None else {}, cls.__name__))

    def to_dict(self) -> dict[str, Any]:
        return typing.cast(dict[str, Any], _dump(self))


# --------------------------------------------------------------------------------- scenario


@dataclass(frozen=True)
class Constraints(_Record):
    """The scenario's constraints with the engine's defaults (one default each: a result
    stored before a key existed reads the default the engine used)."""

    gpu_pricing: str = DEFAULT_GPU_PRICING
    gpu_hour_usd: float = DEFAULT_GPU_HOUR_USD
    electricity_usd_per_kwh: float = DEFAULT_ELECTRICITY_USD_PER_KWH
    pue: float = DEFAULT_PUE
    amortization_years: float = DEFAULT_AMORTIZATION_YEARS
    network_budget_usd: float | None = None
    team_skills: str = DEFAULT_TEAM_SKILLS
    prefer: str = DEFAULT_PREFER
    utilization: float = DEFAULT_UTILIZATION
    allow_oversubscription: bool = False
    storage_write_gbytes_per_s: float | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class TrainingInput(_Record):
    global_batch_sequences: int = 0
    global_batch_tokens: int = 0
    total_tokens: float = 0.0
    sharding: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class InferenceInput(_Record):
    independent_replicas: bool | None = None
    concurrent_requests: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    target_ms_per_token: float = 0.0
    deployment: str | None = field(default=None, metadata=_ABSENT)
    requests_per_s: float | None = field(default=None, metadata=_ABSENT)
    target_ttft_ms: float = 0.0
    prefix_cache_hit_rate: float = 0.0
    mtp: float | None = field(default=None, metadata=_ABSENT)
    pools: Mapping[str, Mapping[str, int]] | None = field(default=None, metadata=_ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class RagInput(_Record):
    """A retrieval pipeline as given, defaults filled (``scenario.rag``)."""

    top_k: int = 0
    chunk_tokens: int = 0
    embedding_dims: int = 0
    corpus_chunks: int = 0
    embedding_servers: int | None = field(default=None, metadata=_ABSENT)
    vector_search_servers: int | None = field(default=None, metadata=_ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class DesignInput(_Record):
    """A network design as given (``scenario.design``, ``design_evaluation.design``)."""

    fabric: str = ""
    nic_gbps: float = 0.0
    nics_per_node: int = 0
    oversubscription: float = 1.0
    adaptive_routing: bool | None = None
    in_network_reduction: bool = False
    switch_radix: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class CustomModel(_Record):
    """A model given by its shape instead of a preset id (``scenario.model``)."""

    params_b: float = 0.0
    layers: int = 0
    hidden: int = 0
    heads: int = 0
    kv_heads: int = 0
    vocab: int = 0
    ffn_hidden: int = 0
    moe_experts: int = 0
    moe_top_k: int = 0
    active_params_b: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class ScenarioEcho(_Record):
    """The normalised scenario v1 with every default filled in (``result.scenario``)."""

    workload: str = ""
    model: str | CustomModel = ""
    """A preset model id, or the custom model's shape."""
    gpu: str = ""
    gpus: int = 0
    gpus_per_node: int = 0
    precision: str = ""
    sequence_length: int = 0
    parallelism: Mapping[str, Any] = field(default_factory=dict)
    constraints: Constraints = field(default_factory=Constraints)
    training: TrainingInput | None = field(default=None, metadata=_ABSENT)
    inference: InferenceInput | None = field(default=None, metadata=_ABSENT)
    design: DesignInput | None = field(default=None, metadata=_ABSENT)
    rag: RagInput | None = field(default=None, metadata=_ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


# --------------------------------------------------------------------------------- workload


@dataclass(frozen=True)
class ModelInfo(_Record):
    id: str = ""
    name: str = ""
    params_b: float = 0.0
    layers: int = 0
    hidden: int = 0
    heads: int = 0
    kv_heads: int = 0
    vocab: int = 0
    ffn_hidden: int = 0
    moe_experts: int = 0
    moe_top_k: int = 0
    moe_layers: int = 0
    active_params_b: float = 0.0
    kv_dim_per_layer: int = 0
    tied_embeddings: bool = False
    source: str = ""
    mtp_layers: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Memory(_Record):
    weights_gb: float = 0.0
    gradients_gb: float = 0.0
    optimizer_gb: float = 0.0
    activations_gb: float = 0.0
    kv_cache_gb: float = 0.0
    total_gb: float = 0.0
    capacity_gb: float = 0.0
    usable_gb: float = 0.0
    fits: bool = True
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Plan(_Record):
    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    micro_batch: int = 1
    virtual_stages: int = 1
    sharding: str = ""
    recompute: str = ""
    source: str = ""
    cp: int = 1
    first_stage_layers: int = 0
    last_stage_layers: int = 0
    tp_comm_overlap: bool = False
    ep_overlap: str = ""
    moe_dispatcher: str = ""
    gpus_used: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Communicator(_Record):
    kind: str = ""
    pattern: str = ""
    size: int = 0
    stride_gpus: int = 0
    scaleup_domains_per_group: int = 0
    ranks_per_domain: int = 0
    wire_bytes_per_gpu: float = 0.0
    inter_server_bytes_per_gpu: float = 0.0
    crosses_network: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Traffic(_Record):
    unit: str = ""
    tokens_per_step: int | None = field(default=None, metadata=_ABSENT)
    microbatches: int | None = field(default=None, metadata=_ABSENT)
    tensor_parallel_bytes: float = 0.0
    tensor_parallel_collectives: int = 0
    tensor_parallel_crosses_network: bool = False
    pipeline_bytes: float = 0.0
    pipeline_crosses_network: bool = False
    data_parallel_bytes: float | None = field(default=None, metadata=_ABSENT)
    data_parallel_crosses_network: bool | None = field(default=None, metadata=_ABSENT)
    expert_all_to_all_bytes: float = 0.0
    expert_crosses_network: bool = False
    placement: str = ""
    communicators: tuple[Communicator, ...] = ()
    inter_server_bytes_per_gpu: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class ServingPool(_Record):
    role: str = ""
    servers: int = 0
    gpus: int = 0
    tp: int = 1
    pp: int = 1
    ep: int = 1
    instances: int = 0
    gpus_per_instance: int = 0
    experts_per_gpu: int = 0
    redundant_experts: int = 0
    weights_gb_per_gpu: float = 0.0
    kv_gb_per_request: float = 0.0
    max_batch_per_instance: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class ServingPools(_Record):
    """``prefill`` and ``decode`` (disaggregated), or ``serve`` when they share GPUs."""

    prefill: ServingPool | None = field(default=None, metadata=_ABSENT)
    decode: ServingPool | None = field(default=None, metadata=_ABSENT)
    serve: ServingPool | None = field(default=None, metadata=_ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class ServingPlan(_Record):
    deployment: str = ""
    servers: int = 0
    pools: ServingPools = field(default_factory=ServingPools)
    kv_bytes_per_token: float = 0.0
    kv_bytes_per_request: float = 0.0
    computed_prompt_tokens: float = 0.0
    tokens_per_step: float = 0.0
    requests_per_s: float | None = None
    concurrent_requests: int = 0
    kv_inside_domain: bool = False
    """Disaggregated pools inside every server: the KV cache stays on NVLink."""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class WorkloadInfo(_Record):
    model: ModelInfo = field(default_factory=ModelInfo)
    memory: Memory = field(default_factory=Memory)
    plan: Plan = field(default_factory=Plan)
    nodes: int = 0
    gpus_per_node: int = 0
    scaleup_domain_gpus: int | None = field(default=None, metadata=_ABSENT)
    spans_servers: bool = False
    needs_compute_fabric: bool | None = field(default=None, metadata=_ABSENT)
    traffic: Traffic = field(default_factory=Traffic)
    notes: tuple[str, ...] = ()
    serving: ServingPlan | None = field(default=None, metadata=_ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


# ---------------------------------------------------------------------------------- metrics


@dataclass(frozen=True)
class Metrics(_Record):
    """A design's metrics: training keys or inference keys (docs/ENGINE_API.md); a key the
    engine did not report is ``None`` here and absent from ``to_dict``."""

    # inference
    ms_per_token: float | None = field(default=None, metadata=_ABSENT)
    ms_per_token_low: float | None = field(default=None, metadata=_ABSENT)
    ms_per_token_high: float | None = field(default=None, metadata=_ABSENT)
    ttft_ms: float | None = field(default=None, metadata=_ABSENT)
    tokens_per_s_per_server: float | None = field(default=None, metadata=_ABSENT)
    tokens_per_s: float | None = field(default=None, metadata=_ABSENT)
    comm_ms_per_token: float | None = field(default=None, metadata=_ABSENT)
    network_ms_per_token: float | None = field(default=None, metadata=_ABSENT)
    compute_ms_per_token: float | None = field(default=None, metadata=_ABSENT)
    gpu_idle_fraction: float | None = field(default=None, metadata=_ABSENT)
    meets_target: bool | None = field(default=None, metadata=_ABSENT)
    decode_tokens_per_s_per_server: float | None = field(default=None, metadata=_ABSENT)
    prefill_servers: float | None = field(default=None, metadata=_ABSENT)
    decode_servers: float | None = field(default=None, metadata=_ABSENT)
    kv_bytes_per_request: float | None = field(default=None, metadata=_ABSENT)
    prefill_tokens_per_s_per_server: float | None = field(default=None, metadata=_ABSENT)
    ttft_ms_p50: float | None = field(default=None, metadata=_ABSENT)
    ttft_ms_p95: float | None = field(default=None, metadata=_ABSENT)
    ttft_ms_p95_high: float | None = field(default=None, metadata=_ABSENT)
    ms_per_token_p50: float | None = field(default=None, metadata=_ABSENT)
    ms_per_token_p95: float | None = field(default=None, metadata=_ABSENT)
    requests_per_s: float | None = field(default=None, metadata=_ABSENT)
    serving_tokens_per_s_per_server: float | None = field(default=None, metadata=_ABSENT)
    decode_batch_per_instance: float | None = field(default=None, metadata=_ABSENT)
    kv_transfer_ms: float | None = field(default=None, metadata=_ABSENT)
    kv_transfer_share_of_ttft: float | None = field(default=None, metadata=_ABSENT)
    max_requests_per_s_at_target: float | None = field(default=None, metadata=_ABSENT)
    tokens_per_s_per_gpu_at_target: float | None = field(default=None, metadata=_ABSENT)
    capacity_requests_per_s: float | None = field(default=None, metadata=_ABSENT)
    load_saturated: bool | None = field(default=None, metadata=_ABSENT)
    meets_latency_targets: bool | None = field(default=None, metadata=_ABSENT)
    # placement (every design)
    inter_server_bytes_per_gpu: float | None = field(default=None, metadata=_ABSENT)
    inter_leaf_bytes_per_gpu: float | None = field(default=None, metadata=_ABSENT)
    inter_pod_bytes_per_gpu: float | None = field(default=None, metadata=_ABSENT)
    # training
    step_time_s: float | None = field(default=None, metadata=_ABSENT)
    step_time_s_low: float | None = field(default=None, metadata=_ABSENT)
    step_time_s_high: float | None = field(default=None, metadata=_ABSENT)
    compute_s: float | None = field(default=None, metadata=_ABSENT)
    exposed_comm_s: float | None = field(default=None, metadata=_ABSENT)
    exposed_network_s: float | None = field(default=None, metadata=_ABSENT)
    network_comm_s: float | None = field(default=None, metadata=_ABSENT)
    bubble_s: float | None = field(default=None, metadata=_ABSENT)
    straggler_s: float | None = field(default=None, metadata=_ABSENT)
    tflops_per_gpu: float | None = field(default=None, metadata=_ABSENT)
    model_tflops_per_gpu: float | None = field(default=None, metadata=_ABSENT)
    mfu: float | None = field(default=None, metadata=_ABSENT)
    scaling_efficiency: float | None = field(default=None, metadata=_ABSENT)
    run_time_s: float | None = field(default=None, metadata=_ABSENT)
    run_time_s_low: float | None = field(default=None, metadata=_ABSENT)
    run_time_s_high: float | None = field(default=None, metadata=_ABSENT)
    gpu_hours: float | None = field(default=None, metadata=_ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def speed(self, inference: bool) -> float:
        """The speed figure of the workload: ms per token (inference) or step time (s)."""
        value = self.ms_per_token if inference else self.step_time_s
        return float(value) if value is not None else 0.0


# ------------------------------------------------------------------------------------- cost


@dataclass(frozen=True)
class LifeCost(_Record):
    """The network over the cluster's amortization life (the decision figure)."""

    years: float = 0.0
    utilization: float = 0.0
    network_capex_usd: float = 0.0
    network_power_usd: float = 0.0
    gpu_time_wasted_usd: float = 0.0
    gpu_hours_wasted: float = 0.0
    operations_usd: float = 0.0
    total_usd: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class JobShare(_Record):
    """What this job (training run, or the serving period) is charged."""

    network_capex_usd: float = 0.0
    network_capex_share_usd: float = 0.0
    network_power_w: float = 0.0
    network_power_cost_usd: float = 0.0
    gpu_cost_usd: float = 0.0
    idle_cost_usd: float = 0.0
    operations_cost_usd: float = 0.0
    work: str = ""
    gpu_hours: float = 0.0
    work_hours: float = 0.0
    total_usd: float = 0.0
    note: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Cost(_Record):
    network_capex_usd: float = 0.0
    network_capex_share_usd: float | None = field(default=None, metadata=_ABSENT)
    network_power_w: float = 0.0
    network_power_cost_usd: float = 0.0
    gpu_cost_usd: float = 0.0
    idle_cost_usd: float = 0.0
    operations_cost_usd: float = 0.0
    total_cost_usd: float = 0.0
    work: str = ""
    gpu_hours: float = 0.0
    work_hours: float = 0.0
    decision_cost_usd: float | None = field(default=None, metadata=_ABSENT)
    decision_basis: str | None = field(default=None, metadata=_ABSENT)
    life: LifeCost | None = field(default=None, metadata=_ABSENT)
    job_share: JobShare | None = field(default=None, metadata=_ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def job_total_usd(self) -> float:
        """The share charged to this job (``total_cost_usd`` in results before job_share)."""
        return self.job_share.total_usd if self.job_share is not None else self.total_cost_usd


# ---------------------------------------------------------------------------- recommendation


@dataclass(frozen=True)
class TierCliff(_Record):
    """The pick sits just above a tier boundary: the nearest size with one tier fewer."""

    servers: int = 0
    tiers: int = 0
    nearest_servers: int = 0
    nearest_gpus: int = 0
    nearest_tiers: int = 0
    fabric_usd_per_gpu: float = 0.0
    nearest_fabric_usd_per_gpu: float = 0.0
    extra_tier_usd: float = 0.0
    extra_pct: float = 0.0
    statement: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Topology(_Record):
    kind: str = ""
    tiers: int = 0
    leaf_switches: int = 0
    spine_switches: int = 0
    core_switches: int = 0
    superspine_switches: int = 0
    oversubscription: float = 1.0
    rail_optimized: bool = False
    switch_model: str = ""
    planes: int | None = field(default=None, metadata=_ABSENT)
    leaf_downlinks: int | None = field(default=None, metadata=_ABSENT)
    leaf_uplinks: int | None = field(default=None, metadata=_ABSENT)
    links_per_leaf_spine: int | None = field(default=None, metadata=_ABSENT)
    tier_cliff: TierCliff | None = field(default=None, metadata=_ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class BudgetBuys(_Record):
    """The fastest design the network budget buys when the recommendation exceeds it."""

    design: str | Mapping[str, Any] = ""
    capex_usd: float = 0.0
    perf: float = 0.0
    slowdown: float = 0.0
    slowdown_text: str = ""
    violations: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Budget(_Record):
    network_budget_usd: float = 0.0
    within_budget: bool = True
    recommended_capex_usd: float = 0.0
    north_south_capex_usd: float = 0.0
    budget_buys: BudgetBuys | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class ReferenceDesign(_Record):
    name: str = ""
    matches: bool = True
    departures: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    statement: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Premium(_Record):
    """What the pick costs beyond a cheaper design it was chosen over."""

    design: str = ""
    capex_usd: float = 0.0
    capex_pct: float = 0.0
    life_usd: float = 0.0
    life_pct: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Decision(_Record):
    mode: str = ""
    basis: str = ""
    tie_band: float = 0.0
    tie_break_order: tuple[str, ...] = ()
    tied_with: tuple[str, ...] = ()
    premium_over: tuple[Premium, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Storage(_Record):
    adapter_sku: str = ""
    adapters_per_server: int = 0
    ports_per_server: int = 0
    storage_ports_per_server: int = 0
    port_gbps: float = 0.0
    storage_gbytes_per_s_per_server: float = 0.0
    cluster_storage_gbytes_per_s: float = 0.0
    network_storage_gbytes_per_s: float = 0.0
    storage_write_gbytes_per_s: float | None = None
    checkpoint_bytes: float = 0.0
    checkpoint_write_s: float = 0.0
    statement: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Recommendation(_Record):
    fabric: str = ""
    needs_compute_fabric: bool = True
    nic_gbps: float = 0.0
    nics_per_node: int = 0
    nic_sku: str = ""
    topology: Topology = field(default_factory=Topology)
    headline: str = ""
    rationale: tuple[str, ...] = ()
    within_budget: bool = True
    budget: Budget | None = None
    field_practice: bool = False
    departures: tuple[str, ...] = ()
    reference_design: ReferenceDesign | None = field(default=None, metadata=_ABSENT)
    decision: Decision | None = field(default=None, metadata=_ABSENT)
    storage: Storage | None = field(default=None, metadata=_ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


# ------------------------------------------------------------------------ options and the rest


@dataclass(frozen=True)
class BomLine(_Record):
    """One bill-of-materials line (the JSON of :class:`advisor.engine.decision.bom.BomLine`)."""

    sku: str = ""
    """The catalog's id of the item (for machines; customers see part_number)."""
    part_number: str = ""
    """The vendor's orderable part number; "" for a class of products."""
    description: str = ""
    category: str = ""
    quantity: int = 0
    unit_price_usd: float = 0.0
    extended_price_usd: float = 0.0
    source: str = ""
    network: str = "compute"
    power_w: float = 0.0
    role: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Option(_Record):
    """One priced candidate design (``result.options``, by rank)."""

    rank: int = 0
    fabric: str = ""
    nic_gbps: float = 0.0
    nics_per_node: int = 0
    oversubscription: float = 1.0
    switch_model: str = ""
    nic_sku: str = ""
    feasible: bool = True
    recommended: bool = False
    field_practice: bool = False
    departures: tuple[str, ...] = ()
    spine_switches: int = 0
    tiers: int = 0
    planes: int = 1
    metrics: Metrics = field(default_factory=Metrics)
    cost: Cost = field(default_factory=Cost)
    why_not: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Pruned(_Record):
    """A design left out before pricing, with the reason (its design keys vary)."""

    design: Mapping[str, Any] = field(default_factory=dict)
    reason: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class BreakEven(_Record):
    statement: str = ""
    parameter: str = ""
    value: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Band(_Record):
    low: float = 0.0
    high: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Uncertainty(_Record):
    """Low and high bounds of the speed and the costs (docs/MODEL.md section 9)."""

    ms_per_token: Band | None = field(default=None, metadata=_ABSENT)
    step_time_s: Band | None = field(default=None, metadata=_ABSENT)
    total_cost_usd: Band | None = field(default=None, metadata=_ABSENT)
    decision_cost_usd: Band | None = field(default=None, metadata=_ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def bands(self) -> Iterator[tuple[str, Band]]:
        """(key, band) of each bound present: speed first, then the job's and life costs."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Band):
                yield f.name, value
        for key, value in self.extra.items():
            if isinstance(value, Mapping):
                yield key, Band.from_dict(value)


@dataclass(frozen=True)
class ScalingPoint(_Record):
    fabric: str = ""
    nodes: int = 0
    scaling_efficiency: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Assumption(_Record):
    name: str = ""
    value: Any = None
    unit: str = ""
    source: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class DesignEvaluation(_Record):
    """The design the scenario gave, priced (only when ``scenario.design`` is given)."""

    design: DesignInput = field(default_factory=DesignInput)
    metrics: Metrics = field(default_factory=Metrics)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class CalibrationApplied(_Record):
    """The calibration a customer's measurement sets (``Calibration.to_dict``)."""

    net_bandwidth_scale: float = 1.0
    net_latency_delta_us: float = 0.0
    scaleup_bandwidth_scale: float = 1.0
    source: str = ""
    fabric: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class CalibrationSummary(_Record):
    """One side of the comparison: the recommendation without or with the measurement."""

    fabric: str | None = None
    nic_gbps: float | None = None
    nics_per_node: int | None = None
    topology: str | None = None
    oversubscription: float | None = None
    headline: str | None = None
    step_time_s: float | None = None
    ms_per_token: float | None = None
    total_cost_usd: float | None = None
    design_metrics: Metrics | None = None
    """The given design's metrics (None without a ``design``)."""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class CalibrationComparison(_Record):
    """Default vs calibrated recommendation with a customer's measurement (section 16)."""

    calibration: CalibrationApplied = field(default_factory=CalibrationApplied)
    fit_warnings: tuple[str, ...] = ()
    default: CalibrationSummary = field(default_factory=CalibrationSummary)
    calibrated: CalibrationSummary = field(default_factory=CalibrationSummary)
    recommendation_changed: bool = False
    why: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class RagTier(_Record):
    """One tier of a retrieval pipeline (``rag.tiers``)."""

    role: str = ""
    label: str = ""
    servers: int = 0
    sized_by: str = ""
    gbits_per_s_per_server: float = 0.0
    needed_servers: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class RagFlow(_Record):
    """What one question moves between two tiers (``rag.flows``)."""

    name: str = ""
    source: str = ""
    target: str = ""
    bytes_per_query: float = 0.0
    gbits_per_s: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class RagNetwork(_Record):
    """The retrieval tiers' Ethernet (``rag.network``; its parts are the ``retrieval`` BOM)."""

    nic_sku: str = ""
    nic_part_number: str = ""
    nic_name: str = ""
    port_gbps: int = 0
    ports_per_server: int = 0
    servers: int = 0
    switch_sku: str = ""
    switch_part_number: str = ""
    switch_name: str = ""
    switches: int = 0
    capex_usd: float = 0.0
    busiest_gbits_per_s: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class RagAnswer(_Record):
    """A retrieval pipeline's own answer (``rag``, docs/MODEL.md section 21)."""

    queries_per_s: float = 0.0
    rate_basis: str = ""
    question_tokens: int = 0
    context_tokens: int = 0
    index_bytes: float = 0.0
    tiers: tuple[RagTier, ...] = ()
    flows: tuple[RagFlow, ...] = ()
    network: RagNetwork = field(default_factory=RagNetwork)
    network_ms: float = 0.0
    retrieval_ms: float = 0.0
    generation_ttft_ms: float | None = None
    first_token_ms: float | None = None
    target_ttft_ms: float = 0.0
    meets_target: bool = False
    compute_fabric: bool = False
    statements: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class EngineResult(_Record):
    """The whole answer of ``evaluate`` (docs/ENGINE_API.md "Result (output)")."""

    engine_version: str = ""
    constants_version: str | None = field(default=None, metadata=_ABSENT)
    catalog_version: str = ""
    scenario: ScenarioEcho = field(default_factory=ScenarioEcho)
    workload: WorkloadInfo = field(default_factory=WorkloadInfo)
    design_evaluation: DesignEvaluation | None = field(default=None, metadata=_ABSENT)
    recommendation: Recommendation = field(default_factory=Recommendation)
    metrics: Metrics = field(default_factory=Metrics)
    bom: tuple[BomLine, ...] = ()
    cost: Cost = field(default_factory=Cost)
    options: tuple[Option, ...] = ()
    pruned: tuple[Pruned, ...] = ()
    break_even: tuple[BreakEven, ...] = ()
    uncertainty: Uncertainty = field(default_factory=Uncertainty)
    monitoring: tuple[str, ...] = ()
    scaling: tuple[ScalingPoint, ...] = ()
    rag: RagAnswer | None = field(default=None, metadata=_ABSENT)
    """A retrieval pipeline's answer (only when ``scenario.rag`` is given)."""
    assumptions: tuple[Assumption, ...] = ()
    cloud_fabric: Mapping[str, Any] | None = field(default=None, metadata=_ABSENT)
    """The rented instance's fabric as a reference (``constraints.cloud``, MODEL.md 20.8)."""
    warnings: tuple[str, ...] | None = field(default=None, metadata=_ABSENT)
    calibration: CalibrationComparison | None = field(default=None, metadata=_ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def is_inference(self) -> bool:
        """A serving scenario (by its workload; by its metrics in results without one)."""
        if self.scenario.workload:
            return self.scenario.workload == "inference"
        return self.metrics.ms_per_token is not None and self.metrics.step_time_s is None

    @property
    def recommended_option(self) -> Option | None:
        return next((o for o in self.options if o.recommended), None)


# ------------------------------------------------------------------------- validation report


@dataclass(frozen=True)
class ValidationRow(_Record):
    """One published measurement against the model (``validation_report()["rows"]``)."""

    id: str = ""
    kind: str = ""
    source: str = ""
    confidence: str = ""
    metric: str = ""
    predicted: float = 0.0
    measured: float = 0.0
    error_pct: float = 0.0
    tolerance_pct: float = 0.0
    passed: bool = False
    use: str = ""
    """fitted / development / held_out / arithmetic (docs/VALIDATION_SOURCES.md)."""
    fitted: tuple[str, ...] = ()
    """Constants set on this row (``use == "fitted"``)."""
    looked_at: tuple[str, ...] = ()
    """Changes aimed at this held-out row or made after its prediction was seen (with commit)."""
    loo_low: float | None = None
    """The engine's range for this line computed without the row (leave-one-out)."""
    loo_high: float | None = None
    loo_inside: bool | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class ValidationSummary(_Record):
    """MAE per use and kind, held-out MAE and leave-one-out coverage (docs/MODEL.md 9)."""

    held_out_mae_pct: float | None = None
    held_out_lines: int = 0
    held_out_rows: int = 0
    held_out_within_tolerance: int = 0
    held_out_loo_inside: int = 0
    held_out_loo_coverage: float | None = None
    held_out_unseen_mae_pct: float | None = None  # held-out rows without ``looked_at``
    held_out_unseen_lines: int = 0
    held_out_unseen_rows: int = 0
    held_out_unseen_loo_inside: int = 0
    held_out_unseen_loo_coverage: float | None = None
    held_out_unseen_mae_by_kind: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    held_out_looked_at_rows: int = 0
    held_out_baseline_mae_pct: float | None = None
    held_out_regression_ok: bool | None = field(default=None, metadata=_ABSENT)
    mae_by_use: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """use -> {"mae_pct", "lines", "rows"}."""
    mae_by_kind: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """kind -> {"mae_pct", "lines"}."""
    arithmetic_checks: Mapping[str, Any] = field(default_factory=dict)
    """{"passed", "total"} of the exact topology rows."""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class ValidationReport(_Record):
    """:func:`advisor.engine.tools.validation.validation_report`, typed (the accuracy page)."""

    rows: tuple[ValidationRow, ...] = ()
    summary: ValidationSummary = field(default_factory=ValidationSummary)
    passed: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


# ------------------------------------------------------------------------------ conversion

_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = typing.get_type_hints(cls)
        _HINTS[cls] = hints
    return hints


def _load(cls: type, data: Any, path: str) -> Any:
    if not isinstance(data, Mapping):
        raise ResultFormatError(f"{path}: expected an object, got {type(data).__name__}")
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    names = set()
    for f in dataclasses.fields(cls):
        if f.name == EXTRA:
            continue
        names.add(f.name)
        if f.name in data:
            kwargs[f.name] = _convert(hints[f.name], data[f.name], f"{path}.{f.name}")
    kwargs[EXTRA] = {k: v for k, v in data.items() if k not in names}
    return cls(**kwargs)


def _convert(tp: Any, value: Any, path: str) -> Any:
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        if value is None:
            return None
        arms = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(arms) == 1:
            return _convert(arms[0], value, path)
        for arm in arms:  # str | Mapping[...]: the arm the value's JSON type matches
            if _matches(arm, value):
                return _convert(arm, value, path)
        return value
    if isinstance(tp, type) and issubclass(tp, _Record):
        return _load(tp, value, path)
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ResultFormatError(f"{path}: expected a list, got {type(value).__name__}")
        item = typing.get_args(tp)[0]
        return tuple(_convert(item, v, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is Mapping:
        if not isinstance(value, Mapping):
            raise ResultFormatError(f"{path}: expected an object, got {type(value).__name__}")
        item = typing.get_args(tp)[1]
        return {str(k): _convert(item, v, f"{path}.{k}") for k, v in value.items()}
    if tp is bool and type(value) in (int, float) and value in (0, 1):
        return bool(value)  # results stored before the engine's flags were JSON booleans
    _check_scalar(tp, value, path)
    return value


def _check_scalar(tp: Any, value: Any, path: str) -> None:
    """A stored number, text or flag of the wrong JSON type is refused naming its path (the
    pages would otherwise fail on it far from here); values are still not coerced."""
    if tp is bool:
        ok = isinstance(value, bool)
    elif tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif tp is int:
        ok = (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    elif tp is str:
        ok = isinstance(value, str)
    else:
        return
    if not ok:
        raise ResultFormatError(
            f"{path}: expected {tp.__name__}, got {type(value).__name__} {value!r:.40}"
        )


def _matches(tp: Any, value: Any) -> bool:
    origin = typing.get_origin(tp)
    if origin is Mapping or (isinstance(tp, type) and issubclass(tp, _Record)):
        return isinstance(value, Mapping)
    if origin is tuple:
        return isinstance(value, list | tuple)
    return isinstance(tp, type) and isinstance(value, tp)


def _dump(value: Any) -> Any:
    if isinstance(value, _Record):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):  # type: ignore[arg-type]
            if f.name == EXTRA:
                continue
            item = getattr(value, f.name)
            if item is None and f.metadata.get(_OMIT):
                continue
            out[f.name] = _dump(item)
        out.update({k: _dump(v) for k, v in getattr(value, EXTRA).items()})
        return out
    if isinstance(value, tuple | list):
        return [_dump(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _dump(v) for k, v in value.items()}
    return value
