"""The scenario and the workload plan as the result echoes them (``result.scenario``,
``result.workload``): the normalised scenario v1 with every default filled in, and the plan
the model made of it (docs/ENGINE_API.md "Result (output)")."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from advisor.engine.facts.catalog.value_hash import cached_value_hash, state_without_value_hash
from advisor.engine.facts.constants import (
    DEFAULT_AMORTIZATION_YEARS,
    DEFAULT_CHUNK_TOKENS,
    DEFAULT_CORPUS_CHUNKS,
    DEFAULT_ELECTRICITY_USD_PER_KWH,
    DEFAULT_EMBEDDING_DIMS,
    DEFAULT_GPU_HOUR_USD,
    DEFAULT_GPU_PRICING,
    DEFAULT_PREFER,
    DEFAULT_PUE,
    DEFAULT_TEAM_SKILLS,
    DEFAULT_TOP_K,
    DEFAULT_UTILIZATION,
)
from advisor.engine.result.base import ABSENT, AT_DEFAULT_ABSENT, Record, write_record_inits

# --------------------------------------------------------------------------------- scenario

__all__ = [
    "Communicator",
    "Constraints",
    "CustomModel",
    "Design",
    "InferenceInput",
    "Memory",
    "ModelInfo",
    "Plan",
    "RagInput",
    "ScenarioEcho",
    "ServingPlan",
    "ServingPool",
    "ServingPools",
    "Traffic",
    "TrainingInput",
    "WorkloadInfo",
]


@dataclass(frozen=True)
class Constraints(Record):
    """The scenario's constraints with the engine's defaults: what the parser fills
    (:mod:`advisor.engine.input.scenario`, the keys ``CONSTRAINT_KEYS``) and the result echoes
    (one default each: a result stored before a key existed reads the default the engine
    used)."""

    gpu_pricing: str = DEFAULT_GPU_PRICING
    gpu_hour_usd: float = DEFAULT_GPU_HOUR_USD
    electricity_usd_per_kwh: float = DEFAULT_ELECTRICITY_USD_PER_KWH
    pue: float = DEFAULT_PUE
    amortization_years: float = DEFAULT_AMORTIZATION_YEARS
    network_budget_usd: float | None = None
    team_skills: str = DEFAULT_TEAM_SKILLS
    prefer: str = DEFAULT_PREFER
    utilization: float = DEFAULT_UTILIZATION
    """Share of the amortization life the cluster runs work (prices GPU time the network
    wastes over the cluster's life; docs/MODEL.md "Decision cost")."""
    allow_oversubscription: bool = False
    """With prefer=cost, oversubscribed or fewer-NIC designs may be recommended."""
    storage_write_gbytes_per_s: float | None = None
    """The storage system's sustained write rate for the whole cluster (GB/s): checkpoint
    time is the slower of it and the storage network (None: the network's rate, said so)."""
    cloud: str | None = field(default=None, metadata=ABSENT)
    """A cloud instance type whose fabric the GPUs are rented with (``facts.catalog.cloud``):
    its fabric shape is evaluated as the given design when none is given (MODEL.md 20.8)."""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False, hash=False)
    """Keys of a stored result this record does not declare (none in a parsed scenario; left
    out of the hash, so a parsed scenario keys the engine's caches)."""


@dataclass(frozen=True)
class TrainingInput(Record):
    global_batch_sequences: int = 0
    global_batch_tokens: int = 0
    total_tokens: float = 0.0
    sharding: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class InferenceInput(Record):
    independent_replicas: bool | None = None
    concurrent_requests: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    target_ms_per_token: float = 0.0
    deployment: str | None = field(default=None, metadata=ABSENT)
    requests_per_s: float | None = field(default=None, metadata=ABSENT)
    target_ttft_ms: float = 0.0
    prefix_cache_hit_rate: float = 0.0
    mtp: float | None = field(default=None, metadata=ABSENT)
    pools: Mapping[str, Mapping[str, int]] | None = field(default=None, metadata=ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class RagInput(Record):
    """A retrieval pipeline in front of the generation tier as given, defaults filled
    (``scenario.rag``; :mod:`advisor.engine.input.rag` parses it; ``None`` = sized by the
    engine)."""

    top_k: int = DEFAULT_TOP_K
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS
    embedding_dims: int = DEFAULT_EMBEDDING_DIMS
    corpus_chunks: int = DEFAULT_CORPUS_CHUNKS
    embedding_servers: int | None = field(default=None, metadata=ABSENT)
    vector_search_servers: int | None = field(default=None, metadata=ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False, hash=False)
    """Keys of a stored result this record does not declare (none in a parsed scenario; left
    out of the hash, so a parsed scenario keys the engine's caches)."""

    @property
    def context_tokens(self) -> int:
        """Retrieved tokens in every prompt: ``top_k x chunk_tokens``."""
        return self.top_k * self.chunk_tokens


@dataclass(frozen=True)
class Design(Record):
    """One network design: as the scenario gives it (``scenario.design``,
    ``design_evaluation.design``), and as the engine evaluates its candidates (the parser and
    the recommendation build it; re-exported by :mod:`advisor.engine.input.scenario`).

    ``nic_gbps`` is the line rate of one compute NIC port; ``nics_per_node`` counts compute
    NICs per server; ``oversubscription`` is r of r:1 at the leaf; ``adaptive_routing=None``
    means the fabric default (InfiniBand yes, RoCE/Ethernet no).  ``switch_radix`` is the
    compute switch's port count at ``nic_gbps`` (None: ``constants.DEFAULT_SWITCH_RADIX``);
    it sizes the leaves and pods that placement uses.
    """

    fabric: str = ""
    nic_gbps: float = 0.0
    nics_per_node: int = 0
    oversubscription: float = 1.0
    adaptive_routing: bool | None = None
    in_network_reduction: bool = False
    switch_radix: int | None = None
    planes: int = field(default=1, metadata=AT_DEFAULT_ABSENT)
    """Independent fabrics the rails are split over (a multi-plane design: each plane its own
    shallower fat tree); set by the recommendation for its multi-plane candidates."""
    links_per_rail: int = field(default=1, metadata=AT_DEFAULT_ABSENT)
    """Links of a server that land on one rail leaf together (8 per Gaudi 3 ply: two whole
    4 x 200G OSFPs); set by the recommendation from the NIC's rail layout."""
    transport: str = field(default="", metadata=AT_DEFAULT_ABSENT)
    """A network-plugin transport NCCL runs across servers (``facts.transports``: AWS EFA),
    set from ``constraints.cloud`` for a rented instance's fabric; empty: the fabric's own."""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False, hash=False)
    """Keys of a stored result this record does not declare (none in a design the engine
    makes; left out of the hash, so a design keys the model's caches)."""

    # the dataclass's own hash (every field but ``extra``), computed once per design and kept
    # on it: a design keys the model's caches, ~2,500 look-ups an evaluation; the function
    # itself, one call per hash
    __hash__ = cached_value_hash

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the kept hash (string hashes differ between processes)."""
        return state_without_value_hash(self)


@dataclass(frozen=True)
class CustomModel(Record):
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
class ScenarioEcho(Record):
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
    training: TrainingInput | None = field(default=None, metadata=ABSENT)
    inference: InferenceInput | None = field(default=None, metadata=ABSENT)
    design: Design | None = field(default=None, metadata=ABSENT)
    rag: RagInput | None = field(default=None, metadata=ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


# --------------------------------------------------------------------------------- workload


@dataclass(frozen=True)
class ModelInfo(Record):
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
    attention_head_dim: int = 0
    attention_chunk: int = 0
    chunked_attention_layers: int = 0
    sliding_window: int = 0
    sliding_window_layers: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class Memory(Record):
    """Per-GPU memory in GB of the plan's fullest GPU: what the model estimates
    (:func:`advisor.engine.model.memory.memory_estimate`, which sets ``fits``) and the result
    echoes (``result.workload.memory``)."""

    weights_gb: float = 0.0
    gradients_gb: float = 0.0
    optimizer_gb: float = 0.0
    activations_gb: float = 0.0
    kv_cache_gb: float = 0.0
    total_gb: float = 0.0
    capacity_gb: float = 0.0
    usable_gb: float = 0.0
    fits: bool = True
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False, hash=False)
    """Keys of a stored result this record does not declare (none in an estimate; left out
    of the hash, so a workload plan holding it stays hashable)."""


@dataclass(frozen=True)
class Plan(Record):
    """The parallelism plan: what the planner (:mod:`advisor.engine.model.planner`) and the
    serving deployment choice make and the result echoes (``result.workload.plan``)."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    micro_batch: int = 1
    virtual_stages: int = 1
    sharding: str = ""
    recompute: str = ""
    source: str = ""
    """``planner`` or ``explicit``."""
    cp: int = 1
    """Context parallel ranks (the sequence is split over them; ring attention)."""
    first_stage_layers: int = 0
    last_stage_layers: int = 0
    """Layers on the first / last pipeline stage; 0 = an even split."""
    tp_comm_overlap: bool = False
    ep_overlap: str = "none"
    moe_dispatcher: str = "alltoall"
    """Training's expert dispatcher: ``deepep`` (once per destination server) or ``alltoall``."""
    gpus_used: int = 0
    """GPUs the plan runs on (tp x cp x pp x dp); the rest of the cluster idles (0 = all)."""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False, hash=False)
    """Keys of a stored result this record does not declare (none in a plan the engine makes;
    left out of the hash, so a plan keys the model's caches)."""

    # the value hash, computed once per plan (a plan keys the planner's cost cache, asked for
    # every contender of every size); pickled without it (string hashes differ by process)
    __hash__ = cached_value_hash
    __getstate__ = state_without_value_hash

    @property
    def model_parallel(self) -> int:
        return self.tp * self.cp * self.pp


@dataclass(frozen=True)
class Communicator(Record):
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
class Traffic(Record):
    unit: str = ""
    tokens_per_step: int | None = field(default=None, metadata=ABSENT)
    microbatches: int | None = field(default=None, metadata=ABSENT)
    tensor_parallel_bytes: float = 0.0
    tensor_parallel_collectives: int = 0
    tensor_parallel_crosses_network: bool = False
    pipeline_bytes: float = 0.0
    pipeline_crosses_network: bool = False
    data_parallel_bytes: float | None = field(default=None, metadata=ABSENT)
    data_parallel_crosses_network: bool | None = field(default=None, metadata=ABSENT)
    expert_all_to_all_bytes: float = 0.0
    expert_crosses_network: bool = False
    placement: str = ""
    communicators: tuple[Communicator, ...] = ()
    inter_server_bytes_per_gpu: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


def parallel_shape(tp: int, pp: int = 1, ep: int = 1) -> str:
    """One instance's parallelism in words, as serving engineers write it: ``TP8``,
    ``TP8 x PP2``, ``EP64`` (attention data-parallel over the experts' GPUs: TP1 left out),
    ``TP2 x EP16``."""
    parts = [f"TP{tp}"] if tp > 1 or ep <= 1 else []
    if pp > 1:
        parts.append(f"PP{pp}")
    if ep > 1:
        parts.append(f"EP{ep}")
    return " x ".join(parts)


def replicas_shape(count: int, tp: int, pp: int = 1, ep: int = 1, *, split: bool = False) -> str:
    """A colocated deployment in words: ``2 x TP16 split replicas``, ``1 x EP8 replica``."""
    kind = "split replica" if split else "replica"
    return f"{count:,} x {parallel_shape(tp, pp, ep)} {kind}{'' if count == 1 else 's'}"


def deployment_shape(
    deployment: str, plan: Plan, prefill: ServingPool | None, decode: ServingPool | None
) -> str:
    """A serving deployment in words, as answers say it: ``2 x TP4 replicas``, ``1 x TP16
    split replica``, ``disaggregated 4 x TP2 prefill + 2 x TP4 decode`` (a disaggregated
    deployment's pools; a colocated one's replicas of ``plan``)."""
    if deployment == "disaggregated" and prefill is not None and decode is not None:
        return (
            f"disaggregated {prefill.units:,} x {prefill.shape} prefill + "
            f"{decode.units:,} x {decode.shape} decode"
        )
    split = deployment != "replicas"
    return replicas_shape(plan.dp, plan.tp, plan.pp, plan.ep, split=split)


@dataclass(frozen=True)
class ServingPool(Record):
    """One pool of GPUs serving one phase (``prefill``, ``decode``) or both (``serve``): what
    the serving model plans (:mod:`advisor.engine.model.serving.pools`) and the result echoes.

    An *instance* batches requests on its own: a tensor/pipeline-parallel replica, or one
    GPU of attention data-parallel when experts are spread over ``ep`` GPUs.
    """

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
    """KV cache of one request at its full context, per GPU holding it."""
    max_batch_per_instance: int = 0
    """Requests an instance can hold in memory at full context."""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False, hash=False)
    """Keys of a stored result this record does not declare (none in a pool the engine plans;
    left out of the hash, so a pool keys the serving model's caches)."""

    @property
    def shape(self) -> str:
        """The parallelism of what the pool runs copies of, in words (:func:`parallel_shape`):
        ``TP8 x PP2``, ``EP32``."""
        return parallel_shape(self.tp, self.pp, self.ep)

    @property
    def placed_gpus(self) -> int:
        """GPUs its instances run on: the pool's ``gpus`` less those no whole instance (or
        expert group) fits where the scale-up domain does not divide them (``pools._pool``:
        TP16 on a 72-GPU rack, 64 of 72)."""
        return self.instances * self.gpus_per_instance

    @property
    def units(self) -> int:
        """How many of :attr:`shape` the pool runs: its instances, or its expert-parallel
        groups of ``ep`` GPUs (where an instance is one attention data-parallel GPU)."""
        return self.gpus // self.ep if self.ep > 1 else self.instances


@dataclass(frozen=True)
class ServingPools(Record):
    """``prefill`` and ``decode`` (disaggregated), or ``serve`` when they share GPUs."""

    prefill: ServingPool | None = field(default=None, metadata=ABSENT)
    decode: ServingPool | None = field(default=None, metadata=ABSENT)
    serve: ServingPool | None = field(default=None, metadata=ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class ServingPlan(Record):
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
    copies: int = 1
    """Independent copies of a disaggregated deployment planned on fewer servers."""
    copy_servers: int = 0
    """Servers of one copy (0: one deployment on all its servers)."""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class WorkloadInfo(Record):
    model: ModelInfo = field(default_factory=ModelInfo)
    memory: Memory = field(default_factory=Memory)
    plan: Plan = field(default_factory=Plan)
    nodes: int = 0
    gpus_per_node: int = 0
    scaleup_domain_gpus: int | None = field(default=None, metadata=ABSENT)
    spans_servers: bool = False
    needs_compute_fabric: bool | None = field(default=None, metadata=ABSENT)
    traffic: Traffic = field(default_factory=Traffic)
    notes: tuple[str, ...] = ()
    serving: ServingPlan | None = field(default=None, metadata=ABSENT)
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


write_record_inits(globals())
