"""The engine's answer as frozen dataclasses: what :func:`advisor.engine.evaluate_typed`
returns and what the pages, the PDF, the CSV and the API read (docs/ENGINE_API.md, "Typed
result").

The engine builds these records directly (:func:`advisor.engine.evaluate_typed`). One pair
converts at the boundary where results are stored and served: :meth:`EngineResult.to_dict`
(typed -> the JSON dict the API serves and :func:`advisor.engine.evaluate` returns; its shape
is the contract of docs/ENGINE_API.md "Result (output)") and :meth:`EngineResult.from_dict`
(a stored JSON dict -> typed).

The records live in three modules: the scenario and workload echoes
(:mod:`advisor.engine.result.echo`), the answer's own parts (here) and the validation report
(:mod:`advisor.engine.result.validation_report`); their conversion rules are
:mod:`advisor.engine.result.base`'s.

For every current result ``EngineResult.from_dict(d).to_dict() == d`` and for every typed
result ``EngineResult.from_dict(r.to_dict()) == r`` (tests/engine/test_result.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from advisor.engine.result.base import ABSENT, Record, write_record_inits
from advisor.engine.result.echo import Design, ScenarioEcho, WorkloadInfo

# ---------------------------------------------------------------------------------- metrics

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
    "CloudReference",
    "Cost",
    "Decision",
    "DesignEvaluation",
    "EngineResult",
    "JobShare",
    "LifeCost",
    "Metrics",
    "Option",
    "Premium",
    "Pruned",
    "RagAnswer",
    "RagFlow",
    "RagNetwork",
    "RagTier",
    "Recommendation",
    "ReferenceDesign",
    "ScalingPoint",
    "Storage",
    "TierCliff",
    "Topology",
    "Uncertainty",
]


@dataclass(frozen=True)
class Metrics(Record):
    """A design's metrics: training keys or inference keys (docs/ENGINE_API.md); a key the
    engine did not report is ``None`` here and absent from ``to_dict``."""

    # inference
    ms_per_token: float | None = field(default=None, metadata=ABSENT)
    ms_per_token_low: float | None = field(default=None, metadata=ABSENT)
    ms_per_token_high: float | None = field(default=None, metadata=ABSENT)
    ttft_ms: float | None = field(default=None, metadata=ABSENT)
    tokens_per_s_per_server: float | None = field(default=None, metadata=ABSENT)
    tokens_per_s: float | None = field(default=None, metadata=ABSENT)
    comm_ms_per_token: float | None = field(default=None, metadata=ABSENT)
    network_ms_per_token: float | None = field(default=None, metadata=ABSENT)
    compute_ms_per_token: float | None = field(default=None, metadata=ABSENT)
    gpu_idle_fraction: float | None = field(default=None, metadata=ABSENT)
    meets_target: bool | None = field(default=None, metadata=ABSENT)
    decode_tokens_per_s_per_server: float | None = field(default=None, metadata=ABSENT)
    prefill_servers: float | None = field(default=None, metadata=ABSENT)
    decode_servers: float | None = field(default=None, metadata=ABSENT)
    kv_bytes_per_request: float | None = field(default=None, metadata=ABSENT)
    prefill_tokens_per_s_per_server: float | None = field(default=None, metadata=ABSENT)
    ttft_ms_p50: float | None = field(default=None, metadata=ABSENT)
    ttft_ms_p95: float | None = field(default=None, metadata=ABSENT)
    ttft_ms_p95_high: float | None = field(default=None, metadata=ABSENT)
    ms_per_token_p50: float | None = field(default=None, metadata=ABSENT)
    ms_per_token_p95: float | None = field(default=None, metadata=ABSENT)
    requests_per_s: float | None = field(default=None, metadata=ABSENT)
    serving_tokens_per_s_per_server: float | None = field(default=None, metadata=ABSENT)
    decode_batch_per_instance: float | None = field(default=None, metadata=ABSENT)
    kv_transfer_ms: float | None = field(default=None, metadata=ABSENT)
    kv_transfer_share_of_ttft: float | None = field(default=None, metadata=ABSENT)
    max_requests_per_s_at_target: float | None = field(default=None, metadata=ABSENT)
    tokens_per_s_per_gpu_at_target: float | None = field(default=None, metadata=ABSENT)
    decode_batch_per_gpu_at_target: float | None = field(default=None, metadata=ABSENT)
    capacity_requests_per_s: float | None = field(default=None, metadata=ABSENT)
    load_saturated: bool | None = field(default=None, metadata=ABSENT)
    meets_latency_targets: bool | None = field(default=None, metadata=ABSENT)
    # placement (every design)
    inter_server_bytes_per_gpu: float | None = field(default=None, metadata=ABSENT)
    inter_leaf_bytes_per_gpu: float | None = field(default=None, metadata=ABSENT)
    inter_pod_bytes_per_gpu: float | None = field(default=None, metadata=ABSENT)
    # training
    step_time_s: float | None = field(default=None, metadata=ABSENT)
    step_time_s_low: float | None = field(default=None, metadata=ABSENT)
    step_time_s_high: float | None = field(default=None, metadata=ABSENT)
    compute_s: float | None = field(default=None, metadata=ABSENT)
    exposed_comm_s: float | None = field(default=None, metadata=ABSENT)
    exposed_network_s: float | None = field(default=None, metadata=ABSENT)
    network_comm_s: float | None = field(default=None, metadata=ABSENT)
    bubble_s: float | None = field(default=None, metadata=ABSENT)
    straggler_s: float | None = field(default=None, metadata=ABSENT)
    tflops_per_gpu: float | None = field(default=None, metadata=ABSENT)
    model_tflops_per_gpu: float | None = field(default=None, metadata=ABSENT)
    mfu: float | None = field(default=None, metadata=ABSENT)
    scaling_efficiency: float | None = field(default=None, metadata=ABSENT)
    run_time_s: float | None = field(default=None, metadata=ABSENT)
    run_time_s_low: float | None = field(default=None, metadata=ABSENT)
    run_time_s_high: float | None = field(default=None, metadata=ABSENT)
    gpu_hours: float | None = field(default=None, metadata=ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def speed(self, inference: bool) -> float:
        """The speed figure of the workload: ms per token (inference) or step time (s)."""
        value = self.ms_per_token if inference else self.step_time_s
        return float(value) if value is not None else 0.0


# ------------------------------------------------------------------------------------- cost


@dataclass(frozen=True)
class LifeCost(Record):
    """The network over the cluster's amortization life (the decision figure): the decision
    ranks designs by it unrounded (:func:`advisor.engine.decision.pricing.life_cost`), the
    result carries it rounded to cents."""

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
class JobShare(Record):
    """What this job (training run, or the serving period) is charged: the decision builds it
    unrounded (:func:`advisor.engine.decision.cost.work_cost`), the result carries it rounded
    to cents with its ``note``."""

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
class Cost(Record):
    network_capex_usd: float = 0.0
    network_capex_share_usd: float | None = field(default=None, metadata=ABSENT)
    network_power_w: float = 0.0
    network_power_cost_usd: float = 0.0
    gpu_cost_usd: float = 0.0
    idle_cost_usd: float = 0.0
    operations_cost_usd: float = 0.0
    total_cost_usd: float = 0.0
    work: str = ""
    gpu_hours: float = 0.0
    work_hours: float = 0.0
    decision_cost_usd: float | None = field(default=None, metadata=ABSENT)
    decision_basis: str | None = field(default=None, metadata=ABSENT)
    life: LifeCost | None = field(default=None, metadata=ABSENT)
    job_share: JobShare | None = field(default=None, metadata=ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def job_total_usd(self) -> float:
        """The share charged to this job (``total_cost_usd`` in results before job_share)."""
        return self.job_share.total_usd if self.job_share is not None else self.total_cost_usd


# ---------------------------------------------------------------------------- recommendation


@dataclass(frozen=True)
class TierCliff(Record):
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
class Topology(Record):
    kind: str = ""
    tiers: int = 0
    leaf_switches: int = 0
    spine_switches: int = 0
    core_switches: int = 0
    superspine_switches: int = 0
    oversubscription: float = 1.0
    rail_optimized: bool = False
    switch_model: str = ""
    planes: int | None = field(default=None, metadata=ABSENT)
    leaf_downlinks: int | None = field(default=None, metadata=ABSENT)
    leaf_uplinks: int | None = field(default=None, metadata=ABSENT)
    links_per_leaf_spine: int | None = field(default=None, metadata=ABSENT)
    tier_cliff: TierCliff | None = field(default=None, metadata=ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class BudgetBuys(Record):
    """The fastest design the network budget buys when the recommendation exceeds it."""

    design: str | Mapping[str, Any] = ""
    capex_usd: float = 0.0
    perf: float = 0.0
    slowdown: float = 0.0
    slowdown_text: str = ""
    violations: tuple[str, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Budget(Record):
    network_budget_usd: float = 0.0
    within_budget: bool = True
    recommended_capex_usd: float = 0.0
    north_south_capex_usd: float = 0.0
    budget_buys: BudgetBuys | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class ReferenceDesign(Record):
    name: str = ""
    matches: bool = True
    departures: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    statement: str = ""
    sized_for_serving: bool = False
    """A serving fabric sized by its traffic (KV caches or pipeline activations), with fewer or
    slower NICs than the (training) reference: no departure, but no match either."""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Premium(Record):
    """What the pick costs beyond a cheaper design it was chosen over."""

    design: str = ""
    capex_usd: float = 0.0
    capex_pct: float = 0.0
    life_usd: float = 0.0
    life_pct: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Decision(Record):
    mode: str = ""
    basis: str = ""
    tie_band: float = 0.0
    tie_break_order: tuple[str, ...] = ()
    tied_with: tuple[str, ...] = ()
    premium_over: tuple[Premium, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Storage(Record):
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
class Recommendation(Record):
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
    reference_design: ReferenceDesign | None = field(default=None, metadata=ABSENT)
    decision: Decision | None = field(default=None, metadata=ABSENT)
    storage: Storage | None = field(default=None, metadata=ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


# ------------------------------------------------------------------------ options and the rest


@dataclass(frozen=True)
class BomLine(Record):
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
class Option(Record):
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
class Pruned(Record):
    """A design left out before pricing, with the reason (its design keys vary)."""

    design: Mapping[str, Any] = field(default_factory=dict)
    reason: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class BreakEven(Record):
    statement: str = ""
    parameter: str = ""
    value: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Band(Record):
    low: float = 0.0
    high: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Uncertainty(Record):
    """Low and high bounds of the speed and the costs (docs/MODEL.md section 9)."""

    ms_per_token: Band | None = field(default=None, metadata=ABSENT)
    step_time_s: Band | None = field(default=None, metadata=ABSENT)
    total_cost_usd: Band | None = field(default=None, metadata=ABSENT)
    decision_cost_usd: Band | None = field(default=None, metadata=ABSENT)
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
class ScalingPoint(Record):
    fabric: str = ""
    nodes: int = 0
    scaling_efficiency: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Assumption(Record):
    name: str = ""
    value: Any = None
    unit: str = ""
    source: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class DesignEvaluation(Record):
    """The design the scenario gave, priced (only when ``scenario.design`` is given)."""

    design: Design = field(default_factory=Design)
    metrics: Metrics = field(default_factory=Metrics)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class CalibrationApplied(Record):
    """The calibration a customer's measurement sets (``Calibration.applied``)."""

    net_bandwidth_scale: float = 1.0
    net_latency_delta_us: float = 0.0
    scaleup_bandwidth_scale: float = 1.0
    source: str = ""
    fabric: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class CalibrationSummary(Record):
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
class CalibrationComparison(Record):
    """Default vs calibrated recommendation with a customer's measurement (section 16)."""

    calibration: CalibrationApplied = field(default_factory=CalibrationApplied)
    fit_warnings: tuple[str, ...] = ()
    default: CalibrationSummary = field(default_factory=CalibrationSummary)
    calibrated: CalibrationSummary = field(default_factory=CalibrationSummary)
    recommendation_changed: bool = False
    why: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class RagTier(Record):
    """One tier of a retrieval pipeline (``rag.tiers``): its servers, why that many, and its
    traffic per server, as :func:`advisor.engine.model.rag.plan_rag` sizes it."""

    role: str = ""
    label: str = ""
    servers: int = 0
    sized_by: str = ""
    gbits_per_s_per_server: float = 0.0
    needed_servers: int = 0
    """What the engine's own sizing asks for the load (``servers`` may be fewer when given)."""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class RagFlow(Record):
    """What one question moves from one tier to the next (``bytes_per_query``) at the
    pipeline's rate (``rag.flows``, :func:`advisor.engine.model.rag.plan_rag`)."""

    name: str = ""
    source: str = ""
    target: str = ""
    bytes_per_query: float = 0.0
    gbits_per_s: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class RagNetwork(Record):
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
class RagAnswer(Record):
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
class CloudReference(Record):
    """The rented instance's scale-out fabric as the reference the answer compares against
    (``cloud_fabric``, from ``constraints.cloud``; MODEL.md 20.8)."""

    id: str = ""
    provider: str = ""
    instance: str = ""
    gpu: str = ""
    gpus_per_instance: int = 0
    links: int = 0
    """Scale-out network interfaces (EFA devices, InfiniBand HCAs, GPU NICs) per instance."""
    link_gbps: int = 0
    instance_gbps: int = 0
    gbps_per_gpu: float = 0.0
    transport: str = ""
    rdma: bool = False
    evaluated_as: str = ""
    """The engine's fabric class the shape is evaluated as."""
    source: str = ""
    cloud_step_time_s: float | None = field(default=None, metadata=ABSENT)
    """The instance's shape evaluated as the given design: its step time (training) ..."""
    cloud_ms_per_token: float | None = field(default=None, metadata=ABSENT)
    """... or its ms per token (inference), when the recommendation has the same figure."""
    statement: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class EngineResult(Record):
    """The whole answer of ``evaluate`` (docs/ENGINE_API.md "Result (output)")."""

    engine_version: str = ""
    constants_version: str | None = field(default=None, metadata=ABSENT)
    catalog_version: str = ""
    scenario: ScenarioEcho = field(default_factory=ScenarioEcho)
    workload: WorkloadInfo = field(default_factory=WorkloadInfo)
    design_evaluation: DesignEvaluation | None = field(default=None, metadata=ABSENT)
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
    rag: RagAnswer | None = field(default=None, metadata=ABSENT)
    """A retrieval pipeline's answer (only when ``scenario.rag`` is given)."""
    assumptions: tuple[Assumption, ...] = ()
    cloud_fabric: CloudReference | None = field(default=None, metadata=ABSENT)
    """The rented instance's fabric as a reference (``constraints.cloud``, MODEL.md 20.8)."""
    warnings: tuple[str, ...] | None = field(default=None, metadata=ABSENT)
    calibration: CalibrationComparison | None = field(default=None, metadata=ABSENT)
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


write_record_inits(globals())
