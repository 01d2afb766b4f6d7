"""Scenario v1: parse and validate the JSON input into frozen dataclasses with defaults.

Defaults (also in docs/MODEL.md): ``gpus_per_node`` = the GPU's server size (or ``gpus`` when
smaller); ``precision`` = bf16 (fp16 where bf16 is unsupported; a served model as its publisher
ships it, :func:`advisor.engine.input.number_format.serving_precision`); ``sequence_length`` = 4096;
training ``global_batch_tokens`` = the larger of 4,194,304 (4M) and 1,024 per GPU (32,768 per
GPU for a mixture-of-experts model's pretraining; :func:`default_global_batch_tokens`);
``total_tokens`` = 1e12 (training)
or 1e9 (fine-tuning); ``sharding`` = zero1; inference 64 concurrent requests, 2048 prompt
and 512 output tokens, 50 ms per token and 2000 ms time-to-first-token targets (both p95),
no prefix-cache hits, no speculative decoding, deployment chosen by the engine.
"""

from __future__ import annotations

import math
from collections.abc import Container, Mapping
from dataclasses import dataclass, fields
from typing import Any

from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import Catalog, GpuSpec, ModelSpec
from advisor.engine.facts.catalog.cloud import cloud_fabric, cloud_fabric_ids
from advisor.engine.facts.catalog.models import with_derived_defaults
from advisor.engine.facts.catalog.value_hash import cached_value_hash, state_without_value_hash
from advisor.engine.facts.constants import (
    DEFAULT_GPU_HOUR_USD,
    DENSE_PRECISION,
    FABRIC_IDS,
)
from advisor.engine.facts.limits import check_limits
from advisor.engine.facts.transports import TRANSPORTS
from advisor.engine.facts.vocabulary import TEAM_SKILLS, fabric_label
from advisor.engine.input.number_format import serving_precision
from advisor.engine.input.rag import parse_rag, rag_problems
from advisor.engine.result.base import EXTRA
from advisor.engine.result.echo import Constraints, RagInput
from advisor.engine.result.echo import Design as Design  # a design is the result's record
from advisor.engine.result.records import CalibrationApplied

WORKLOADS: tuple[str, ...] = ("training", "fine_tuning", "inference")
PRECISIONS: tuple[str, ...] = ("bf16", "fp8", "fp16", "fp4", "mxfp4")
SERVING_ONLY_PRECISIONS: tuple[str, ...] = ("fp4", "mxfp4")
"""NVFP4 (4-bit values, an FP8 scale per 16): NVIDIA Blackwell serving checkpoints; MXFP4 (4-bit
values, an 8-bit scale per 32) on an MoE model's routed experts, the rest BF16: gpt-oss's
published checkpoint.  The engine prices no 4-bit training (docs/MODEL.md 15.1, "NVFP4 serving",
"MXFP4 experts")."""
EXPERT_ONLY_PRECISIONS: tuple[str, ...] = tuple(DENSE_PRECISION)
"""Precisions that quantize only the routed experts, the rest keeping a dense precision of its
own (:data:`constants.DENSE_PRECISION`): an MoE model's alone."""
SHARDINGS: tuple[str, ...] = ("none", "zero1", "zero3")
RECOMPUTE_MODES: tuple[str, ...] = ("none", "selective", "full")
EP_OVERLAP_MODES: tuple[str, ...] = ("none", "dualpipe", "a2a_1f1b")
"""``dualpipe`` (DeepSeek-V3) and ``a2a_1f1b`` (Megatron-Core's ``moe_a2a_overlap``: the
forward of one micro-batch runs with the backward of another in interleaved 1F1B) hide the
expert all-to-all behind the other micro-batch's compute."""
MOE_DISPATCHERS: tuple[str, ...] = ("alltoall", "deepep")
"""Expert-parallel token dispatchers of training: ``alltoall`` (an explicit plan's default:
Megatron-Core's NCCL all-to-all token dispatcher, the one NeMo's MoE recipes use unless DeepEP is
enabled; one copy per routed expert) or ``deepep`` (Megatron-Core's ``flex`` dispatcher with
DeepEP / HybridEP, as the NeMo DeepSeek-V3 performance recipes enable it: a token crosses the
network once per destination server and is forwarded over NVLink inside it; a planned job's
default on NVIDIA Hopper and Blackwell, ``model.plans.moe_software``)."""
ZERO_STAGES: dict[int, str] = {0: "none", 1: "zero1", 3: "zero3"}
GPU_PRICING: tuple[str, ...] = ("owned", "cloud")
PREFERENCES: tuple[str, ...] = ("cost", "balanced", "performance")

DEFAULT_SEQUENCE_LENGTH = 4096
DEFAULT_GLOBAL_BATCH_TOKENS = 4_194_304
"""The smallest default batch: 4M tokens, Llama 2's and Llama 3's starting batch (Touvron et
al. 2023; Llama 3 paper section 3.4.1)."""
BATCH_TOKENS_PER_GPU = 1_024
"""Published large runs grow the batch with the data-parallel width at about 1,024 tokens per
GPU: Llama 3 405B 16M tokens on 16,384 H100 (section 3.4.1), MegaScale 175B 6,144 x 2,048 =
12.6M on 12,288 GPUs (Jiang et al., NSDI 2024); docs/MODEL.md 1."""


MOE_BATCH_TOKENS_PER_GPU = 32_768
"""Mixture-of-experts pretraining runs carry about 30 times the dense batch per GPU: DeepSeek-V3
15,360 sequences of 4,096 tokens (62.9M) on 2,048 H800, 30,720 per GPU (arXiv 2412.19437
sections 3.1 and 4.2); NVIDIA's own MoE performance configurations run more (Megatron-Bridge
performance summary: DeepSeek-V3 on 256 GPUs at 2,048-8,192 sequences of 4,096, 32-128k per
GPU). Their expert all-to-all moves every token each layer, so a dense-sized batch would leave
most of a large cluster waiting on it (docs/MODEL.md 1)."""


MOE_MAX_BATCH_TOKENS = 67_108_864
"""The largest default MoE batch, 64M tokens: DeepSeek-V3's 62.9M (the largest published MoE
pretraining batch found, arXiv 2412.19437 section 4.2) as a power of two; beyond 2,048 GPUs the
MoE default stays there until the dense rule (1,024 per GPU) reaches it at 65,536 GPUs."""


def default_global_batch_tokens(gpus: int, moe: bool = False) -> int:
    """Tokens per optimizer step when the scenario gives no batch: 4M up to 4,096 GPUs, then
    1,024 per GPU (published practice, :data:`BATCH_TOKENS_PER_GPU`) rounded down to a power
    of two as published batches are (4M, 8M, 16M): 16M from 16,384 GPUs.  ``moe``: the
    pretraining of a mixture-of-experts model, 32,768 per GPU
    (:data:`MOE_BATCH_TOKENS_PER_GPU`), the same floor and rounding, at most
    :data:`MOE_MAX_BATCH_TOKENS` (64M from 2,048 GPUs) and never below the dense rule."""
    dense = _power_of_two_batch(BATCH_TOKENS_PER_GPU * max(1, gpus))
    if not moe:
        return dense
    moe_tokens = _power_of_two_batch(MOE_BATCH_TOKENS_PER_GPU * max(1, gpus))
    return max(dense, min(moe_tokens, MOE_MAX_BATCH_TOKENS))


def _power_of_two_batch(tokens: int) -> int:
    return max(DEFAULT_GLOBAL_BATCH_TOKENS, 1 << (tokens.bit_length() - 1))


DEFAULT_TRAINING_TOKENS = 1e12
DEFAULT_FINE_TUNING_TOKENS = 1e9
DEFAULT_CONCURRENT_REQUESTS = 64
DEFAULT_PROMPT_TOKENS = 2048
DEFAULT_OUTPUT_TOKENS = 512
DEFAULT_TARGET_MS_PER_TOKEN = 50.0
DEFAULT_TARGET_TTFT_MS = 2000.0
DEPLOYMENTS: tuple[str, ...] = ("replicas", "split", "disaggregated")

# The keys each part of scenario v1 accepts: the parser below and the published schema
# (advisor.engine.input.spec) both read these, so the API's description cannot drift.
SCENARIO_KEY_ORDER: tuple[str, ...] = (
    "workload",
    "model",
    "gpu",
    "gpus",
    "gpus_per_node",
    "precision",
    "sequence_length",
    "training",
    "inference",
    "rag",
    "parallelism",
    "design",
    "constraints",
    "name",
    "description",
    "version",
)
"""The scenario's top-level keys in the order the published schema lists them."""
SCENARIO_KEYS = frozenset(SCENARIO_KEY_ORDER)
_TOP_LEVEL_KEYS = SCENARIO_KEYS
MODEL_KEYS: tuple[str, ...] = (
    "params_b",
    "layers",
    "hidden",
    "heads",
    "vocab",
    "moe_experts",
    "moe_top_k",
    "kv_heads",
    "ffn_hidden",
    "active_params_b",
    "name",
    "tied_embeddings",
)
TRAINING_KEYS: tuple[str, ...] = (
    "global_batch_sequences",
    "global_batch_tokens",
    "total_tokens",
    "sharding",
)
INFERENCE_KEYS: tuple[str, ...] = (
    "independent_replicas",
    "concurrent_requests",
    "prompt_tokens",
    "output_tokens",
    "target_ms_per_token",
    "deployment",
    "requests_per_s",
    "target_ttft_ms",
    "prefix_cache_hit_rate",
    "mtp",
    "pools",
)
POOLS_KEYS: tuple[str, ...] = ("prefill", "decode")
POOL_KEYS: tuple[str, ...] = ("servers", "tp", "ep")
PARALLELISM_INTS: tuple[str, ...] = (
    "tp",
    "pp",
    "dp",
    "ep",
    "cp",
    "micro_batch",
    "virtual_stages",
    "first_stage_layers",
    "last_stage_layers",
)
PARALLELISM_FLAGS: tuple[str, ...] = (
    "tp_comm_overlap",
    "flash_attention",
    "sequence_parallel",
    "fp8_param_gather",
)
PARALLELISM_KEYS: tuple[str, ...] = (
    *PARALLELISM_INTS,
    "recompute",
    "zero",
    *PARALLELISM_FLAGS,
    "ep_overlap",
    "moe_dispatcher",
    "dp_bucket_params",
)
DESIGN_KEYS: tuple[str, ...] = (
    "fabric",
    "nic_gbps",
    "nics_per_node",
    "oversubscription",
    "adaptive_routing",
    "in_network_reduction",
    "transport",
)


@dataclass(frozen=True)
class TrainingSpec:
    global_batch_sequences: int
    global_batch_tokens: int
    total_tokens: float
    sharding: str
    sharding_given: bool

    # the value hash, computed once per object (the planner's and the serving model's caches
    # key by the scenario and its parts); pickled without it (string hashes differ by process)
    __hash__ = cached_value_hash
    __getstate__ = state_without_value_hash


@dataclass(frozen=True)
class PoolSpec:
    """One serving pool of a disaggregated deployment (``None`` = left to the engine)."""

    servers: int | None = None
    tp: int | None = None
    ep: int | None = None


@dataclass(frozen=True)
class InferenceSpec:
    independent_replicas: bool | None
    concurrent_requests: int
    prompt_tokens: int
    output_tokens: int
    target_ms_per_token: float
    deployment: str | None = None
    """``replicas`` | ``split`` | ``disaggregated``; ``None`` lets the engine choose."""
    requests_per_s: float | None = None
    """Open-loop arrival rate (Poisson); ``None`` means closed loop at concurrent_requests."""
    target_ttft_ms: float = 2000.0
    """p95 time to first token target."""
    prefix_cache_hit_rate: float = 0.0
    """Share of prompt tokens whose KV cache is reused (not recomputed)."""
    mtp: float | None = None
    """Speculative decoding with one draft token (DeepSeek MTP): its acceptance rate."""
    prefill_pool: PoolSpec | None = None
    decode_pool: PoolSpec | None = None

    @property
    def open_loop(self) -> bool:
        """Requests arrive at ``requests_per_s``, whose requests in flight follow from the rate;
        else ``concurrent_requests`` users are in flight (a closed loop)."""
        return self.requests_per_s is not None


@dataclass(frozen=True)
class ParallelismSpec:
    """An explicit plan; ``None`` fields are left to the planner."""

    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    ep: int | None = None
    micro_batch: int | None = None
    virtual_stages: int | None = None
    recompute: str | None = None
    cp: int | None = None
    """Context parallel size (sequence split over cp ranks, ring attention)."""
    zero: int | None = None
    """ZeRO stage 0 | 1 | 3 (overrides training.sharding when given)."""
    first_stage_layers: int | None = None
    last_stage_layers: int | None = None
    """Layers of the first / last pipeline stage (Megatron's uneven split); the rest are even."""
    tp_comm_overlap: bool | None = None
    """Tensor-parallel communication overlapped with GEMMs (Transformer Engine userbuffers)."""
    ep_overlap: str | None = None
    """``none`` | ``dualpipe`` | ``a2a_1f1b``: expert all-to-all hidden behind another
    micro-batch's compute."""
    moe_dispatcher: str | None = None
    """``alltoall`` | ``deepep``: how training sends tokens to their experts; ``None`` (and
    ``ep_overlap`` ``None``): ``model.plans.moe_software`` decides."""
    flash_attention: bool | None = None
    """False: attention as batched GEMMs + softmax over the full score matrix (pre-2022)."""
    sequence_parallel: bool | None = None
    """False: norms and residuals on the full hidden size on every TP rank (pre-2022)."""
    fp8_param_gather: bool | None = None
    """True: the distributed optimizer all-gathers FP8 weights (1 B; Megatron-Core
    ``fp8_param_gather``, NeMo ``fp8_params``); FP8 precision only."""
    dp_bucket_params: int | None = None
    """Parameters per data-parallel gradient bucket (Megatron-Core ``bucket_size``, Apex
    ``bucket_cap_mb`` x 2^20 / 2); ``None``: Megatron-LM's max(40 M, 1 M x dp)."""

    @property
    def given(self) -> bool:
        return any(v is not None for v in (self.tp, self.pp, self.dp, self.ep, self.cp))

    # the value hash, computed once per object (the planner's and the serving model's caches
    # key by the scenario and its parts); pickled without it (string hashes differ by process)
    __hash__ = cached_value_hash
    __getstate__ = state_without_value_hash


def model_parallel_size(tp: int | None, cp: int | None, pp: int | None) -> int:
    """The GPUs one copy of the model spans under an explicit plan, tp x cp x pp (a missing
    degree is 1): an explicit ``dp`` is the GPUs over it, as the planner checks it, and follows
    a change of size over it (``plans.resized``: the scaling chart, a sweep; the what-if's
    changed inputs, ``scenarios.whatif.changed_inputs``)."""
    return (tp or 1) * (cp or 1) * (pp or 1)


CONSTRAINT_KEYS: tuple[str, ...] = tuple(f.name for f in fields(Constraints) if f.name != EXTRA)
"""The keys of ``constraints`` (the fields of the result's :class:`Constraints` record, which
the parser fills: one description, one default each)."""


@dataclass(frozen=True)
class Calibration:
    """What a customer's fit changes in every communication domain the engine builds (one optional
    object; :func:`advisor.engine.model.collectives.calibrated_domain` applies it).

    ``net_bandwidth_scale`` multiplies the effective NIC bandwidth of multi-server domains,
    ``net_latency_delta_s`` is added to their per-step network latency, ``scaleup_bandwidth_scale``
    multiplies the scale-up bandwidth.  1.0 / 0.0 mean "as the default model".
    """

    net_bandwidth_scale: float = 1.0
    net_latency_delta_s: float = 0.0
    scaleup_bandwidth_scale: float = 1.0
    source: str = ""
    fabric: str | None = None
    """Fabric class the network terms were measured on; they apply to candidates of that class
    only (a RoCE measurement says nothing about an InfiniBand fabric).  None: every class."""

    def applied(self) -> CalibrationApplied:
        """The calibration as the result and a stored fit say it (latency in microseconds)."""
        return CalibrationApplied(
            net_bandwidth_scale=self.net_bandwidth_scale,
            net_latency_delta_us=self.net_latency_delta_s * 1e6,
            scaleup_bandwidth_scale=self.scaleup_bandwidth_scale,
            source=self.source,
            fabric=self.fabric,
        )


@dataclass(frozen=True)
class Scenario:
    workload: str
    model: ModelSpec
    model_is_preset: bool
    gpu: GpuSpec
    gpus: int
    gpus_per_node: int
    precision: str
    sequence_length: int
    training: TrainingSpec | None
    inference: InferenceSpec | None
    parallelism: ParallelismSpec
    design: Design | None
    constraints: Constraints
    calibration: Calibration | None = None
    """Fit from the customer's own nccl-tests (advisor.engine.calibration.fabric_fit); applied
    to every communicator domain. Not part of the scenario v1 input:
    ``evaluate(calibration=...)``."""
    warnings: tuple[str, ...] = ()
    """What the input asks that the platform is not sold as (e.g. part of an NVL72 rack)."""
    rag: RagInput | None = None
    """A retrieval pipeline (embedding and vector-search tiers) in front of the serving fleet
    (:mod:`advisor.engine.input.rag`); only with workload ``inference``."""

    # the value hash, computed once per object (the planner's and the serving model's caches
    # key by the scenario and its parts); pickled without it (string hashes differ by process)
    __hash__ = cached_value_hash
    __getstate__ = state_without_value_hash

    @property
    def nodes(self) -> int:
        return self.gpus // self.gpus_per_node

    @property
    def is_training(self) -> bool:
        return self.workload in ("training", "fine_tuning")


class _Errors:
    """Collects per-field messages so one response lists every problem."""

    def __init__(self) -> None:
        self.by_field: dict[str, list[str]] = {}

    def add(self, field: str, message: str) -> None:
        self.by_field.setdefault(field, []).append(message)

    def raise_if_any(self) -> None:
        if self.by_field:
            raise ScenarioError(self.by_field)

    def reject_unknown(self, raw: Mapping[str, Any], allowed: Container[str], prefix: str) -> None:
        """Each key of `raw` not in `allowed` is an "unknown field", named `prefix.key` (the
        key alone at the top level, where `prefix` is empty)."""
        for key in raw:
            if key not in allowed:
                self.add(f"{prefix}.{key}" if prefix else key, "unknown field")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _positive_int(errors: _Errors, field: str, value: Any) -> int | None:
    if _is_number(value) and math.isfinite(value) and float(value).is_integer() and value > 0:
        return int(value)
    errors.add(field, "must be a positive integer")
    return None


def _positive_number(errors: _Errors, field: str, value: Any) -> float | None:
    if _is_number(value) and math.isfinite(value) and value > 0:
        return float(value)
    errors.add(field, "must be a positive number")
    return None


def _non_negative_number(errors: _Errors, field: str, value: Any) -> float | None:
    if _is_number(value) and math.isfinite(value) and value >= 0:
        return float(value)
    errors.add(field, "must be a number >= 0")
    return None


def _choice(errors: _Errors, field: str, value: Any, choices: tuple[str, ...]) -> str | None:
    if isinstance(value, str) and value in choices:
        return value
    errors.add(field, f"must be one of {', '.join(choices)}")
    return None


def _section(errors: _Errors, raw: dict[str, Any], key: str) -> dict[str, Any]:
    value = raw.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        errors.add(key, "must be an object")
        return {}
    return value


def parse_scenario(raw: dict[str, Any], catalog: Catalog) -> Scenario:
    """Validate scenario v1 and fill defaults; raises :class:`ScenarioError` naming fields."""
    errors = _Errors()
    if not isinstance(raw, dict):
        raise ScenarioError.single("scenario", "must be a JSON object")
    # Ranges first (advisor.engine.facts.limits): nothing below may see an unbounded number.
    check_limits(raw, lambda cleaned: parse_scenario(cleaned, catalog))
    errors.reject_unknown(raw, _TOP_LEVEL_KEYS, "")

    workload = None
    if "workload" not in raw:
        errors.add("workload", "is required")
    else:
        workload = _choice(errors, "workload", raw["workload"], WORKLOADS)

    model, model_is_preset = _parse_model(errors, raw.get("model"), catalog)
    gpu = _parse_gpu(errors, raw.get("gpu"), catalog)

    gpus = None
    if "gpus" not in raw:
        errors.add("gpus", "is required")
    else:
        gpus = _positive_int(errors, "gpus", raw["gpus"])

    gpus_per_node = None
    if raw.get("gpus_per_node") is not None:
        gpus_per_node = _positive_int(errors, "gpus_per_node", raw["gpus_per_node"])
    elif gpu is not None and gpus is not None:
        gpus_per_node = min(gpu.gpus_per_server, gpus)
    if raw.get("gpus_per_node") is not None and gpu is not None and gpus_per_node is not None:
        _check_server_shape(errors, gpu, gpus_per_node, gpus)
    if gpus is not None and gpus_per_node is not None and gpus % gpus_per_node != 0:
        errors.add(
            "gpus",
            f"must be a multiple of gpus_per_node ({gpus_per_node}): whole servers only",
        )

    shipped = (
        serving_precision(model, gpu, gpus, gpus_per_node) if workload == "inference" else None
    )
    precision = _parse_precision(errors, raw.get("precision"), gpu, shipped)
    if precision in SERVING_ONLY_PRECISIONS and workload in ("training", "fine_tuning"):
        errors.add(
            "precision",
            f"{precision} is a serving precision (4-bit checkpoints); training and fine-tuning "
            "run bf16, fp16 or fp8",
        )
        precision = None
    if precision in EXPERT_ONLY_PRECISIONS and model is not None and not model.is_moe:
        errors.add(
            "precision",
            f"{precision} stores an MoE model's routed experts in 4 bits (gpt-oss's checkpoint); "
            f"{model.name} has no experts: use "
            + ", ".join(
                p
                for p in PRECISIONS
                if p not in EXPERT_ONLY_PRECISIONS and (gpu is None or gpu.supports(p))
            ),
        )
        precision = None

    sequence_length = DEFAULT_SEQUENCE_LENGTH
    if raw.get("sequence_length") is not None:
        sequence_length = _positive_int(errors, "sequence_length", raw["sequence_length"]) or 1

    training = None
    inference = None
    if workload in ("training", "fine_tuning"):
        training = _parse_training(
            errors,
            _section(errors, raw, "training"),
            workload,
            sequence_length,
            gpus or 1,
            moe=workload == "training" and model is not None and model.is_moe,
        )
    if workload == "inference":
        inference = _parse_inference(errors, _section(errors, raw, "inference"))
    rag, rag_errors = parse_rag(raw.get("rag"))
    for field, message in rag_errors.items():
        errors.add(field, message)
    if rag is not None and workload is not None:
        prompt = inference.prompt_tokens if inference is not None else None
        for field, message in rag_problems(rag, workload, prompt).items():
            errors.add(field, message)
    parallelism = _parse_parallelism(errors, _section(errors, raw, "parallelism"))
    if parallelism.fp8_param_gather and precision != "fp8":
        errors.add("parallelism.fp8_param_gather", "needs precision fp8 (FP8 weights)")
    design = None
    if raw.get("design") is not None:
        design = parse_design(errors, _section(errors, raw, "design"), "design")
        if gpu is not None and not errors.by_field:
            _check_design_buildable(errors, design, gpu, catalog)
    constraints = _parse_constraints(errors, _section(errors, raw, "constraints"), gpu)
    cloud = cloud_fabric(constraints.cloud) if constraints.cloud else None
    if cloud is not None and gpu is not None:
        if cloud.gpu_id != gpu.id or (gpus_per_node and gpus_per_node != cloud.gpus_per_instance):
            cloud_gpu = catalog.gpu(cloud.gpu_id)
            errors.add(
                "constraints.cloud",
                f"{cloud.label} has {cloud.gpus_per_instance} x "
                f"{cloud_gpu.name if cloud_gpu else cloud.gpu_id} per instance, "
                f"not {gpus_per_node} x {gpu.name}",
            )
        elif design is None:
            design = Design(
                fabric=cloud.fabric,
                nic_gbps=float(cloud.link_gbps),
                nics_per_node=cloud.links,
                transport=cloud.net_transport or "",
            )

    errors.raise_if_any()
    assert workload is not None and model is not None and gpu is not None
    assert gpus is not None and gpus_per_node is not None and precision is not None
    return Scenario(
        workload=workload,
        model=model,
        model_is_preset=model_is_preset,
        gpu=gpu,
        gpus=gpus,
        gpus_per_node=gpus_per_node,
        precision=precision,
        sequence_length=sequence_length,
        training=training,
        inference=inference,
        parallelism=parallelism,
        design=design,
        constraints=constraints,
        warnings=_platform_warnings(gpu, gpus),
        rag=rag,
    )


def _check_server_shape(
    errors: _Errors, gpu: GpuSpec, gpus_per_node: int, gpus: int | None
) -> None:
    """``gpus_per_node`` must be a server the platform is built as (HGX: 4 or 8 GPUs; NVL72
    trays: 4; 8-GPU OAM/UBB baseboards: 8).  One partly used server (``gpus`` below a
    server) is allowed."""
    allowed = gpu.gpus_per_node_options or tuple(range(1, gpu.gpus_per_server + 1))
    if gpus_per_node in allowed:
        return
    if gpus is not None and gpus == gpus_per_node and gpus_per_node < max(allowed):
        return  # part of one server
    errors.add(
        "gpus_per_node",
        f"{gpu.name} servers hold {_or_list(allowed)} GPUs, not {gpus_per_node}"
        + (
            f" (a rack is {gpu.rack_gpus} GPUs in trays of {gpu.gpus_per_server})"
            if gpu.rack_gpus
            else ""
        ),
    )


def _or_list(values: tuple[int, ...]) -> str:
    items = [str(v) for v in values]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def _platform_warnings(gpu: GpuSpec, gpus: int) -> tuple[str, ...]:
    """Rack-scale platforms (NVL72) are bought as whole racks: name the nearest whole-rack
    counts when ``gpus`` is not one."""
    rack = gpu.rack_gpus
    if not rack or gpus % rack == 0:
        return ()
    lower = (gpus // rack) * rack
    upper = lower + rack
    nearest = f"{lower:,} or {upper:,}" if lower else f"{upper:,}"
    return (
        f"{gpu.name} is sold as whole racks of {rack} GPUs (one NVLink domain each): "
        f"{gpus:,} GPUs is {gpus / rack:.2f} racks; the nearest whole-rack counts are "
        f"{nearest} GPUs, and a partial rack still pays for its NVLink switch trays, power and "
        "cooling.",
    )


def _check_design_buildable(
    errors: _Errors, design: Design, gpu: GpuSpec, catalog: Catalog
) -> None:
    """A given design must be one the platform can build: its scale-out fabric (integrated
    ports fix it), a NIC speed its PCIe slot carries, and a NIC the catalog has at that
    speed and fabric.  Each refusal names the field."""
    gbps = design.nic_gbps
    if gpu.integrated_scaleout:
        ref = next((n for n in catalog.nics if n.sku == gpu.reference_nic_sku), None)
        if ref is not None and not ref.serves(design.fabric):
            errors.add(
                "design.fabric",
                f"{gpu.name} scales out only through its integrated "
                f"{'/'.join(fabric_label(f) for f in ref.fabrics)} ports "
                f"({gpu.reference_nic_count} x {ref.port_gbps}G per server); "
                f"{fabric_label(design.fabric)} cannot be built on it",
            )
            return
        if ref is not None and gbps != ref.port_gbps:
            errors.add(
                "design.nic_gbps",
                f"{gpu.name}'s integrated scale-out ports run at {ref.port_gbps}G, not {gbps:g}G",
            )
        return
    slot = gpu.slot_gbps
    if gbps > slot:
        gen = gpu.host_pcie_gen or "5 (assumed)"
        errors.add(
            "design.nic_gbps",
            f"{'an' if str(int(gbps)).startswith('8') else 'a'} {gbps:g}G NIC needs more than "
            f"the PCIe Gen{gen} x16 slot of {gpu.name} servers "
            f"carries (about {slot:.0f} Gb/s), so it cannot run at line rate",
        )
        return
    speeds = sorted(
        {
            n.port_gbps
            for n in catalog.nics
            if n.serves(design.fabric) and n.use in ("compute", "any") and not n.integrated
        }
    )
    if speeds and int(gbps) not in speeds:
        errors.add(
            "design.nic_gbps",
            f"no {fabric_label(design.fabric)} NIC in the catalog runs at {gbps:g}G; "
            f"speeds: {', '.join(f'{v}G' for v in speeds)}",
        )


def _parse_model(errors: _Errors, value: Any, catalog: Catalog) -> tuple[ModelSpec | None, bool]:
    if value is None:
        errors.add("model", "is required")
        return None, False
    if isinstance(value, str):
        preset = catalog.model(value)
        if preset is None:
            errors.add(
                "model", f"unknown model id '{value}'; known: {', '.join(catalog.model_ids)}"
            )
        return preset, True
    if not isinstance(value, dict):
        errors.add("model", "must be a preset id or an object with params_b, layers, hidden, heads")
        return None, False
    errors.reject_unknown(value, MODEL_KEYS, "model")
    ok = True
    fields_out: dict[str, Any] = {}
    for key in ("params_b",):
        if key not in value:
            errors.add(f"model.{key}", "is required")
            ok = False
        else:
            fields_out[key] = _positive_number(errors, f"model.{key}", value[key])
            ok = ok and fields_out[key] is not None
    for key in ("layers", "hidden", "heads"):
        if key not in value:
            errors.add(f"model.{key}", "is required")
            ok = False
        else:
            fields_out[key] = _positive_int(errors, f"model.{key}", value[key])
            ok = ok and fields_out[key] is not None
    optional_ints = {"vocab": 32000, "kv_heads": None, "ffn_hidden": 0}
    for key, default in optional_ints.items():
        if value.get(key) is None:
            fields_out[key] = default
        else:
            fields_out[key] = _positive_int(errors, f"model.{key}", value[key])
            ok = ok and fields_out[key] is not None
    for key in ("moe_experts", "moe_top_k"):
        raw_v = value.get(key, 0) or 0
        if _is_number(raw_v) and float(raw_v).is_integer() and raw_v >= 0:
            fields_out[key] = int(raw_v)
        else:
            errors.add(f"model.{key}", "must be an integer >= 0")
            ok = False
    active = 0.0
    if value.get("active_params_b") is not None:
        active = _positive_number(errors, "model.active_params_b", value["active_params_b"]) or 0.0
    if not ok:
        return None, False
    heads = int(fields_out["heads"])
    hidden = int(fields_out["hidden"])
    kv_heads = int(fields_out["kv_heads"] or heads)
    if hidden % heads != 0:
        errors.add("model.hidden", f"must be divisible by heads ({heads})")
    if kv_heads > heads or heads % kv_heads != 0:
        errors.add("model.kv_heads", f"must divide heads ({heads})")
    experts, top_k = int(fields_out["moe_experts"]), int(fields_out["moe_top_k"])
    if (experts > 0) != (top_k > 0):
        errors.add("model.moe_top_k", "moe_experts and moe_top_k must both be 0 or both > 0")
    if experts > 0 and top_k > experts:
        errors.add("model.moe_top_k", f"must be <= moe_experts ({experts})")
    if active and active > float(fields_out["params_b"]):
        errors.add("model.active_params_b", "must be <= params_b")
    if errors.by_field:
        return None, False
    model = ModelSpec(
        id="custom",
        name=str(value.get("name") or "custom model"),
        params_b=float(fields_out["params_b"]),
        layers=int(fields_out["layers"]),
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        vocab=int(fields_out["vocab"]),
        ffn_hidden=int(fields_out["ffn_hidden"]),
        moe_experts=experts,
        moe_top_k=top_k,
        active_params_b=active,
        tied_embeddings=bool(value.get("tied_embeddings", False)),
        source="custom (user input)",
    )
    return with_derived_defaults(model), False


def _parse_gpu(errors: _Errors, value: Any, catalog: Catalog) -> GpuSpec | None:
    if value is None:
        errors.add("gpu", "is required")
        return None
    gpu = catalog.gpu(value) if isinstance(value, str) else None
    if gpu is None:
        errors.add("gpu", f"unknown GPU id '{value}'; known: {', '.join(catalog.gpu_ids)}")
    return gpu


def _parse_precision(
    errors: _Errors, value: Any, gpu: GpuSpec | None, shipped: str | None = None
) -> str | None:
    """The named precision, checked against the GPU; unnamed, ``shipped`` (a served model's
    own format, ``number_format.serving_precision``) or 16-bit (bf16, fp16 where the GPU lacks
    it)."""
    if value is None:
        if shipped:
            return shipped
        if gpu is not None and not gpu.supports("bf16"):
            return "fp16"
        return "bf16"
    precision = _choice(errors, "precision", value, PRECISIONS)
    if precision is not None and gpu is not None and not gpu.supports(precision):
        supported = [p for p in PRECISIONS if gpu.supports(p)]
        # fp4 is NVIDIA's NVFP4: other 4-bit formats (AMD CDNA4's MXFP4) are not it
        what = "NVFP4 (fp4 here: NVIDIA Blackwell's 4-bit format)" if precision == "fp4" else ""
        errors.add(
            "precision",
            f"the {gpu.name} runs no {what or precision + ' tensor cores'}; supported: "
            f"{', '.join(supported)}",
        )
        return None
    return precision


def _parse_training(
    errors: _Errors,
    raw: dict[str, Any],
    workload: str,
    sequence_length: int,
    gpus: int = 1,
    *,
    moe: bool = False,
) -> TrainingSpec:
    errors.reject_unknown(raw, TRAINING_KEYS, "training")
    sequences: int | None = None
    if raw.get("global_batch_sequences") is not None:
        sequences = _positive_int(
            errors, "training.global_batch_sequences", raw["global_batch_sequences"]
        )
    tokens: int | None = None
    if raw.get("global_batch_tokens") is not None:
        tokens = _positive_int(errors, "training.global_batch_tokens", raw["global_batch_tokens"])
    if sequences is None:
        tokens = tokens or default_global_batch_tokens(gpus, moe)
        sequences = max(1, round(tokens / sequence_length))
    default_total = (
        DEFAULT_TRAINING_TOKENS if workload == "training" else DEFAULT_FINE_TUNING_TOKENS
    )
    total = default_total
    if raw.get("total_tokens") is not None:
        total = _positive_number(errors, "training.total_tokens", raw["total_tokens"]) or total
    sharding = "zero1"
    if raw.get("sharding") is not None:
        sharding = _choice(errors, "training.sharding", raw["sharding"], SHARDINGS) or sharding
    return TrainingSpec(
        global_batch_sequences=sequences,
        global_batch_tokens=sequences * sequence_length,
        total_tokens=total,
        sharding=sharding,
        sharding_given=raw.get("sharding") is not None,
    )


def _parse_pool(errors: _Errors, raw: Any, field: str) -> PoolSpec | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        errors.add(field, "must be an object with servers, tp, ep")
        return None
    values: dict[str, int | None] = {}
    errors.reject_unknown(raw, POOL_KEYS, field)
    for key in ("servers", "tp", "ep"):
        if raw.get(key) is not None:
            values[key] = _positive_int(errors, f"{field}.{key}", raw[key])
    return PoolSpec(**values)


def _fraction(errors: _Errors, field: str, value: Any, *, below_one: bool) -> float | None:
    if _is_number(value) and math.isfinite(value) and 0 <= value <= 1:
        if below_one and value >= 1:
            errors.add(field, "must be >= 0 and < 1")
            return None
        return float(value)
    errors.add(field, "must be a number between 0 and 1" + (" (below 1)" if below_one else ""))
    return None


def _parse_inference(errors: _Errors, raw: dict[str, Any]) -> InferenceSpec:
    errors.reject_unknown(raw, INFERENCE_KEYS, "inference")
    independent = raw.get("independent_replicas")
    if independent is not None and not isinstance(independent, bool):
        errors.add("inference.independent_replicas", "must be true, false or null")
        independent = None

    def int_or(key: str, default: int) -> int:
        if raw.get(key) is None:
            return default
        return _positive_int(errors, f"inference.{key}", raw[key]) or default

    target = DEFAULT_TARGET_MS_PER_TOKEN
    if raw.get("target_ms_per_token") is not None:
        target = (
            _positive_number(errors, "inference.target_ms_per_token", raw["target_ms_per_token"])
            or target
        )
    deployment = None
    if raw.get("deployment") is not None:
        deployment = _choice(errors, "inference.deployment", raw["deployment"], DEPLOYMENTS)
    if deployment == "replicas" and independent is False:
        errors.add("inference.deployment", "replicas contradicts independent_replicas=false")
    if deployment in ("split", "disaggregated") and independent is True:
        errors.add("inference.deployment", f"{deployment} contradicts independent_replicas=true")
    rate = None
    if raw.get("requests_per_s") is not None:
        rate = _positive_number(errors, "inference.requests_per_s", raw["requests_per_s"])
    ttft = DEFAULT_TARGET_TTFT_MS
    if raw.get("target_ttft_ms") is not None:
        ttft = _positive_number(errors, "inference.target_ttft_ms", raw["target_ttft_ms"]) or ttft
    hit = 0.0
    if raw.get("prefix_cache_hit_rate") is not None:
        hit = (
            _fraction(
                errors,
                "inference.prefix_cache_hit_rate",
                raw["prefix_cache_hit_rate"],
                below_one=True,
            )
            or 0.0
        )
    mtp = None
    if raw.get("mtp") is not None:
        mtp = _fraction(errors, "inference.mtp", raw["mtp"], below_one=False)
    pools_raw = raw.get("pools")
    prefill_pool = decode_pool = None
    if pools_raw is not None:
        if not isinstance(pools_raw, dict):
            errors.add("inference.pools", "must be an object with prefill and decode")
        else:
            errors.reject_unknown(pools_raw, POOLS_KEYS, "inference.pools")
            prefill_pool = _parse_pool(errors, pools_raw.get("prefill"), "inference.pools.prefill")
            decode_pool = _parse_pool(errors, pools_raw.get("decode"), "inference.pools.decode")
            if deployment not in (None, "disaggregated"):
                errors.add("inference.pools", "only a disaggregated deployment has pools")
            elif deployment is None:
                deployment = "disaggregated"
    return InferenceSpec(
        independent_replicas=independent,
        concurrent_requests=int_or("concurrent_requests", DEFAULT_CONCURRENT_REQUESTS),
        prompt_tokens=int_or("prompt_tokens", DEFAULT_PROMPT_TOKENS),
        output_tokens=int_or("output_tokens", DEFAULT_OUTPUT_TOKENS),
        target_ms_per_token=target,
        deployment=deployment,
        requests_per_s=rate,
        target_ttft_ms=ttft,
        prefix_cache_hit_rate=hit,
        mtp=mtp if mtp else None,
        prefill_pool=prefill_pool,
        decode_pool=decode_pool,
    )


def _parse_parallelism(errors: _Errors, raw: dict[str, Any]) -> ParallelismSpec:
    values: dict[str, Any] = {}
    ints = PARALLELISM_INTS
    errors.reject_unknown(raw, PARALLELISM_KEYS, "parallelism")
    for key in ints:
        if raw.get(key) is not None:
            values[key] = _positive_int(errors, f"parallelism.{key}", raw[key])
    if raw.get("recompute") is not None:
        values["recompute"] = _choice(
            errors, "parallelism.recompute", raw["recompute"], RECOMPUTE_MODES
        )
    if raw.get("ep_overlap") is not None:
        values["ep_overlap"] = _choice(
            errors, "parallelism.ep_overlap", raw["ep_overlap"], EP_OVERLAP_MODES
        )
    if raw.get("moe_dispatcher") is not None:
        values["moe_dispatcher"] = _choice(
            errors, "parallelism.moe_dispatcher", raw["moe_dispatcher"], MOE_DISPATCHERS
        )
    if raw.get("dp_bucket_params") is not None:
        # at least 1,000,000 (facts.limits): a smaller bucket_size holds one weight tensor per
        # bucket in Megatron-Core, which the engine does not model
        bucket = _positive_int(errors, "parallelism.dp_bucket_params", raw["dp_bucket_params"])
        if bucket is not None:
            values["dp_bucket_params"] = bucket
    if raw.get("zero") is not None:
        z = raw["zero"]
        if isinstance(z, bool) or not isinstance(z, int) or z not in ZERO_STAGES:
            errors.add("parallelism.zero", "must be one of 0, 1, 3 (ZeRO stage)")
        else:
            values["zero"] = z
    for key in _PARALLELISM_FLAGS:
        if raw.get(key) is not None:
            if not isinstance(raw[key], bool):
                errors.add(f"parallelism.{key}", "must be true or false")
            else:
                values[key] = raw[key]
    return ParallelismSpec(**values)


_PARALLELISM_FLAGS = PARALLELISM_FLAGS


def parse_design(errors: _Errors | None, raw: dict[str, Any], prefix: str = "design") -> Design:
    """Parse a design object (used for ``scenario.design`` and by the CLI)."""
    own = errors or _Errors()
    own.reject_unknown(raw, DESIGN_KEYS, prefix)
    fabric = None
    if "fabric" not in raw:
        own.add(f"{prefix}.fabric", "is required")
    else:
        fabric = _choice(own, f"{prefix}.fabric", raw["fabric"], FABRIC_IDS)
    nic_gbps = 400.0
    if raw.get("nic_gbps") is not None:
        nic_gbps = _positive_number(own, f"{prefix}.nic_gbps", raw["nic_gbps"]) or nic_gbps
    nics = 8
    if raw.get("nics_per_node") is not None:
        nics = _positive_int(own, f"{prefix}.nics_per_node", raw["nics_per_node"]) or nics
    over = 1.0
    if raw.get("oversubscription") is not None:
        value = raw["oversubscription"]
        if _is_number(value) and math.isfinite(value) and value >= 1:
            over = float(value)
        else:
            own.add(f"{prefix}.oversubscription", "must be a number >= 1 (r of r:1)")
    adaptive = raw.get("adaptive_routing")
    if adaptive is not None and not isinstance(adaptive, bool):
        own.add(f"{prefix}.adaptive_routing", "must be true, false or null")
        adaptive = None
    inr = raw.get("in_network_reduction", False)
    if not isinstance(inr, bool):
        own.add(f"{prefix}.in_network_reduction", "must be true or false")
        inr = False
    if inr and fabric is not None and fabric != "infiniband":
        own.add(f"{prefix}.in_network_reduction", "needs an InfiniBand fabric (SHARP)")
    transport = raw.get("transport")
    if transport is not None:
        transport = _choice(own, f"{prefix}.transport", transport, tuple(sorted(TRANSPORTS)))
        if transport and fabric is not None and fabric != "roce":
            own.add(f"{prefix}.transport", "AWS EFA is evaluated on the roce fabric class")
    if errors is None:
        own.raise_if_any()
    return Design(
        fabric=fabric or "infiniband",
        nic_gbps=nic_gbps,
        nics_per_node=nics,
        oversubscription=over,
        adaptive_routing=adaptive,
        in_network_reduction=inr,
        transport=transport or "",
    )


def _parse_constraints(errors: _Errors, raw: dict[str, Any], gpu: GpuSpec | None) -> Constraints:
    base = Constraints(
        gpu_hour_usd=gpu.cloud_usd_per_hour if gpu is not None else DEFAULT_GPU_HOUR_USD
    )
    values: dict[str, Any] = {key: getattr(base, key) for key in CONSTRAINT_KEYS}
    errors.reject_unknown(raw, values, "constraints")
    if raw.get("gpu_pricing") is not None:
        values["gpu_pricing"] = _choice(
            errors, "constraints.gpu_pricing", raw["gpu_pricing"], GPU_PRICING
        )
    for key in ("gpu_hour_usd", "electricity_usd_per_kwh"):
        if raw.get(key) is not None:
            values[key] = _non_negative_number(errors, f"constraints.{key}", raw[key])
    for key in ("pue", "amortization_years"):
        if raw.get(key) is not None:
            values[key] = _positive_number(errors, f"constraints.{key}", raw[key])
    if values.get("pue") is not None and values["pue"] < 1:
        errors.add("constraints.pue", "must be >= 1")
    if raw.get("network_budget_usd") is not None:
        values["network_budget_usd"] = _positive_number(
            errors, "constraints.network_budget_usd", raw["network_budget_usd"]
        )
    if raw.get("storage_write_gbytes_per_s") is not None:
        values["storage_write_gbytes_per_s"] = _positive_number(
            errors, "constraints.storage_write_gbytes_per_s", raw["storage_write_gbytes_per_s"]
        )
    if raw.get("team_skills") is not None:
        values["team_skills"] = _choice(
            errors, "constraints.team_skills", raw["team_skills"], tuple(TEAM_SKILLS)
        )
    if raw.get("prefer") is not None:
        values["prefer"] = _choice(errors, "constraints.prefer", raw["prefer"], PREFERENCES)
    if raw.get("utilization") is not None:
        util = raw["utilization"]
        if not _is_number(util) or not 0 < float(util) <= 1:
            errors.add("constraints.utilization", "must be a number in (0, 1]")
            values["utilization"] = None
        else:
            values["utilization"] = float(util)
    if raw.get("allow_oversubscription") is not None:
        flag = raw["allow_oversubscription"]
        if not isinstance(flag, bool):
            errors.add("constraints.allow_oversubscription", "must be true or false")
            values["allow_oversubscription"] = None
        else:
            values["allow_oversubscription"] = flag
    if raw.get("cloud") is not None:
        name = raw["cloud"]
        if not isinstance(name, str) or cloud_fabric(name) is None:
            errors.add(
                "constraints.cloud",
                f"unknown cloud instance fabric {name!r}; known: {', '.join(cloud_fabric_ids())}",
            )
        else:
            values["cloud"] = name
    optional = ("network_budget_usd", "storage_write_gbytes_per_s", "cloud")
    if any(v is None for k, v in values.items() if k not in optional):
        return base
    return Constraints(**values)
