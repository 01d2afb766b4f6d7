"""Memory fit: weights, optimizer state, activations and KV cache per GPU for a plan.

Units: bytes unless the name says otherwise.
"""

from __future__ import annotations

import math
from typing import Final

from advisor.engine.facts.catalog import GpuSpec, ModelSpec
from advisor.engine.facts.constants import (
    MASTER_AND_ADAM_BYTES_PER_PARAM,
    RECOMPUTE_BYTES_PER_TOKEN_HIDDEN,
    TRAIN_WEIGHT_GRAD_BYTES_PER_PARAM,
    WEIGHT_BYTES,
)
from advisor.engine.facts.weights import dense_precision, served_weight_bytes
from advisor.engine.input.scenario import Scenario
from advisor.engine.model.placement import expert_dp_size, expert_tp
from advisor.engine.model.serving.compute import experts_per_gpu, kv_bytes_per_token
from advisor.engine.result.echo import Memory

GB: Final = 1e9


# ----------------------------------------------------------------------------- results


def memory_estimate(
    *,
    weights_gb: float,
    gradients_gb: float,
    optimizer_gb: float,
    activations_gb: float,
    kv_cache_gb: float,
    total_gb: float,
    capacity_gb: float,
    usable_gb: float,
) -> Memory:
    """Per-GPU memory in GB as the result's :class:`Memory` record; it fits when the total is
    within the usable part of the capacity."""
    return Memory(
        weights_gb=weights_gb,
        gradients_gb=gradients_gb,
        optimizer_gb=optimizer_gb,
        activations_gb=activations_gb,
        kv_cache_gb=kv_cache_gb,
        total_gb=total_gb,
        capacity_gb=capacity_gb,
        usable_gb=usable_gb,
        fits=total_gb <= usable_gb,
    )


def capacity_gb(gpu: GpuSpec) -> float:
    """The GPU's HBM in decimal GB, the unit of every other figure of a :class:`Memory` record
    (:attr:`GpuSpec.memory_bytes` / 1e9: 85.9 on an "80 GB" H100, 309.2 on a "288 GB" B300,
    whose vendor figures count binary gigabytes). Every record reports this capacity, so a
    serving record's usable figure (weights + the runtime's KV room, sized on these bytes)
    never reads above it."""
    return gpu.memory_bytes / GB


# ----------------------------------------------------------------------------- memory


_CONSTS: dict[ModelSpec, tuple[float, float, float, float]] = {}


def _model_consts(m: ModelSpec) -> tuple[float, float, float, float]:
    """(dense params, expert params, embedding params, per-layer dense params) of ``m``,
    cached by value (a ModelSpec hashes once per object), bounded."""
    hit = _CONSTS.get(m)
    if hit is not None:
        return hit
    dense = m.dense_params
    emb = m.embedding_params
    experts = m.expert_params if m.is_moe else 0.0
    value = (dense, experts, emb, max(0.0, dense - emb) / max(1, m.layers))
    if len(_CONSTS) > 256:
        _CONSTS.clear()
    _CONSTS[m] = value
    return value


_Consts = tuple[tuple[float, float, float, float], tuple[float, float]]


def _memory_parts(
    scenario: Scenario,
    tp: int,
    pp: int,
    dp: int,
    ep: int,
    mb: int,
    sharding: str,
    recompute: str,
    microbatches: int,
    cp: int,
    vp: int,
    stages: tuple[int, int, int] | None,
    consts: _Consts | None = None,
) -> tuple[float, float, float, float]:
    """(weights + gradients, optimizer, activations, weights) bytes per GPU
    (see :func:`training_memory`); ``consts``: :func:`memory_consts` of the scenario, if the
    caller holds it."""
    if consts is None:
        consts = memory_consts(scenario)
    wg, opt, weights_b = _state_parts(scenario, tp, pp, dp, ep, sharding, cp, stages, consts)
    act = _activation_part(scenario, tp, pp, mb, recompute, microbatches, cp, vp, stages, consts)
    return wg, opt, act, weights_b


def _state_parts(
    scenario: Scenario,
    tp: int,
    pp: int,
    dp: int,
    ep: int,
    sharding: str,
    cp: int,
    stages: tuple[int, int, int] | None,
    consts: _Consts,
) -> tuple[float, float, float]:
    """(weights + gradients, optimizer, weights) bytes per GPU of :func:`_memory_parts`: what
    does not depend on the micro-batch, recomputation or interleaving."""
    m = scenario.model
    first, inner, last = stages or (math.ceil(m.layers / pp),) * 3
    emb = float(m.vocab * m.hidden)
    dense_params, expert_params, _, per_layer_params = consts[0]
    is_moe = expert_params > 0
    if pp <= 1:
        dense_stage = dense_params
    else:
        head = 0.0 if m.tied_embeddings else emb
        # the last stage also holds the MTP modules (a layer and a 2h -> h projection each)
        mtp = m.mtp_layers * (per_layer_params + 2.0 * m.hidden * m.hidden)
        dense_stage = max(
            first * per_layer_params + emb,
            inner * per_layer_params,
            last * per_layer_params + head + mtp,
        )
    dense = dense_stage / tp
    experts = expert_params / (ep * pp * expert_tp(tp, ep))
    dpg = dp * cp
    edp = expert_dp_size(tp, dpg, ep) if is_moe else dpg
    dense_shard = dpg if sharding == "zero3" else 1
    expert_shard = edp if sharding == "zero3" else 1
    wg = TRAIN_WEIGHT_GRAD_BYTES_PER_PARAM * (dense / dense_shard + experts / expert_shard)
    opt_div_dense = dpg if sharding in ("zero1", "zero3") else 1
    opt_div_exp = edp if sharding in ("zero1", "zero3") else 1
    opt = MASTER_AND_ADAM_BYTES_PER_PARAM * (dense / opt_div_dense + experts / opt_div_exp)
    weights_b = (
        TRAIN_WEIGHT_GRAD_BYTES_PER_PARAM / 2.0 * (dense / dense_shard + experts / expert_shard)
    )
    return wg, opt, weights_b


def _activation_part(
    scenario: Scenario,
    tp: int,
    pp: int,
    mb: int,
    recompute: str,
    microbatches: int,
    cp: int,
    vp: int,
    stages: tuple[int, int, int] | None,
    consts: _Consts,
    terms: tuple[float, float, float] | None = None,
) -> float:
    """Activation bytes per GPU of :func:`_memory_parts` (the fullest pipeline rank);
    ``terms``: :func:`_activation_terms` of (tp, mb, recompute, cp), if the caller holds it."""
    m = scenario.model
    first, inner, last = stages or (math.ceil(m.layers / pp),) * 3
    per_layer_kept, per_layer_full, logits = terms or _activation_terms(
        scenario, tp, mb, recompute, cp, consts
    )
    if pp > 1:
        # the fullest stage: the first (input embedding) or the second, which holds one
        # micro-batch fewer in flight but, with a lighter first stage, more layers; each
        # _held_layer_microbatches of ranks 0, 1 and pp - 1 written out (~1,000 fits a design)
        second = inner if pp > 2 else last + m.mtp_layers
        final = last + m.mtp_layers
        if vp > 1:
            most = microbatches * vp
            warm = (vp - 1) * pp + 1
            passes = 2 * (pp - 1) + warm
            held = (most if most < passes else passes) * first / vp
            passes = 2 * (pp - 2) + warm
            held_1 = (most if most < passes else passes) * second / vp
            last_held = (most if most < warm else warm) * final / vp
        else:
            held = (pp if pp < microbatches else microbatches) * float(first)
            held_1 = (pp - 1 if pp - 1 < microbatches else microbatches) * float(second)
            last_held = (1 if microbatches > 1 else microbatches) * float(final)
        if held_1 > held:  # max(held, held_1)
            held = held_1
    else:
        held = float(m.layers)
    act = held * per_layer_kept
    if recompute == "full":
        act += per_layer_full
    if pp == 1:
        act += logits
    else:
        act = max(act, last_held * per_layer_kept + logits)
    return act


def _activation_terms(
    scenario: Scenario, tp: int, mb: int, recompute: str, cp: int, consts: _Consts
) -> tuple[float, float, float]:
    """(bytes a layer keeps for its backward pass, its whole activations, the output head's
    fp32 logits) per micro-batch of :func:`_activation_part`: what does not depend on the
    pipeline (the planner's search asks ~1,000 fits a design of ~30 such values)."""
    m = scenario.model
    tokens = scenario.sequence_length * mb / max(1, cp)
    per_token_hidden, activation_fn = consts[1]
    per_layer_full = per_token_hidden * tokens * m.hidden / tp
    if recompute == "selective":
        per_layer_kept = max(
            RECOMPUTE_BYTES_PER_TOKEN_HIDDEN * tokens * m.hidden / tp,
            per_layer_full - activation_fn * tokens * m.hidden / tp,
        )
    elif recompute == "full":
        per_layer_kept = RECOMPUTE_BYTES_PER_TOKEN_HIDDEN * tokens * m.hidden / tp
    else:
        per_layer_kept = per_layer_full
    # fp32 logits of the output head, once more per MTP module (on the last stage)
    logits = 4.0 * tokens * m.vocab / tp * (1 + m.mtp_layers)
    return per_layer_kept, per_layer_full, logits


def memory_consts(
    scenario: Scenario,
) -> tuple[tuple[float, float, float, float], tuple[float, float]]:
    """(:func:`_model_consts`, :func:`_layer_activation_bytes`) of ``scenario``'s model and
    precision: what :func:`_memory_parts` reads of them, looked up once by a caller that asks
    for many fits of one scenario (the planner's search)."""
    return _model_consts(scenario.model), _layer_activation_bytes(
        scenario.model, scenario.precision
    )


def _held_layer_microbatches(rank: int, layers: int, pp: int, vp: int, microbatches: int) -> float:
    """Layer x micro-batch activations pipeline rank ``rank`` holds at its peak under 1F1B.

    Megatron-Core (``schedules.py``, ``get_pp_rank_microbatches``): a rank runs
    ``pp - rank - 1`` warm-up forwards before its first backward, so it holds ``pp - rank``
    micro-batches of its layers; interleaved over ``vp`` chunks it runs
    ``2 (pp - rank - 1) + (vp - 1) pp`` warm-up chunk forwards, so it holds one more than that
    chunk passes of ``layers / vp`` layers each (never more than the step's chunk passes).
    """
    if vp > 1:
        passes = min(2 * (pp - rank - 1) + (vp - 1) * pp + 1, microbatches * vp)
        return passes * layers / vp
    return min(pp - rank, microbatches) * float(layers)


_ACT_CACHE: dict[tuple[ModelSpec, str], tuple[float, float]] = {}


def _layer_activation_bytes(m: ModelSpec, precision: str) -> tuple[float, float]:
    """(bytes one layer keeps for its backward pass, bytes of its activation function's
    output) per token per hidden unit, before the division by tp (sequence parallel).

    Korthikanti et al. 2022 (arXiv 2205.05198, section 4.1) counted 34 B for GPT-3's layer
    with flash attention (no s^2 scores): per token per h, attention 2 (norm input) + 2 (QKV
    GEMM input) + 4 (Q, K) + 2 (V) + 2 (attention output = projection input) + 1 (dropout
    mask); MLP 2 (norm input) + 2 (first GEMM input) + 8 (GeLU input, 4 h) + 8 (GeLU output =
    second GEMM input) + 1 (dropout mask).  The same terms at the model's own widths: K and V
    at the KV heads' width (GQA), a gated MLP (SwiGLU) keeps its first GEMM's 2 x ffn outputs,
    a MoE layer top_k copies of the expert width and of its permuted input.  Under fp8
    Transformer Engine keeps each GEMM input as its fp8 cast (1 B, ``saved_inputmat`` in
    ``module/linear.py``), besides the bf16 attention output the attention kernel keeps.
    Dropout masks only for the GPT-3 family (non-gated MLP; the Llama / MoE configs set no
    dropout).
    """
    key = (m, precision)
    hit = _ACT_CACHE.get(key)
    if hit is not None:
        return hit
    h = float(m.hidden)
    gemm_in = 1.0 if precision == "fp8" else 2.0
    q = m.heads * m.head_dim / h
    kv = 2.0 * m.kv_heads * m.head_dim / h
    gated = m.is_moe or _gated_mlp(m)
    ffn = float(m.ffn_hidden) * (m.moe_top_k if m.is_moe else 1) / h
    up = (2.0 if gated else 1.0) * ffn
    mask = 0.0 if gated else 1.0
    attention = 2.0 + gemm_in + 2.0 * q + 2.0 * kv + 2.0 * q + mask
    attention += gemm_in if precision == "fp8" else 0.0  # the projection's own fp8 copy
    act_out = gemm_in * ffn
    # a MoE layer's experts take their input as top_k permuted copies of the token
    copies = float(m.moe_top_k) if m.is_moe else 0.0
    mlp = 2.0 + gemm_in + gemm_in * copies + 2.0 * up + act_out + mask
    value = (attention + mlp, act_out)
    if len(_ACT_CACHE) > 256:
        _ACT_CACHE.clear()
    _ACT_CACHE[key] = value
    return value


def _gated_mlp(m: ModelSpec) -> bool:
    """Whether the dense MLP is gated (3 h x ffn parameters, SwiGLU) rather than 2 h x ffn,
    read from the layer's parameters left after attention."""
    dense, _, emb, _ = _model_consts(m)
    per_layer = max(0.0, dense - emb) / max(1, m.layers)
    attention = 2.0 * m.hidden * m.heads * m.head_dim + 2.0 * m.hidden * m.kv_heads * m.head_dim
    return per_layer - attention > 2.5 * m.hidden * m.ffn_hidden


def training_memory(
    scenario: Scenario,
    tp: int,
    pp: int,
    dp: int,
    ep: int,
    mb: int,
    sharding: str,
    recompute: str,
    microbatches: int,
    *,
    cp: int = 1,
    vp: int = 1,
    stages: tuple[int, int, int] | None = None,
) -> Memory:
    """Per-GPU memory of a training plan (GB), for the fullest pipeline stage.

    Dense parameters are split over tp x pp (by the stage's layers; the first stage also holds
    the input embedding, the last the output head), routed experts over ep x pp (x tp without
    expert parallelism, :func:`placement.expert_tp`), their optimizer state over the expert-DP
    group (:func:`placement.expert_dp_size`).  Weights +
    gradients take 4 B/param; fp32 master weights and Adam moments 12 B/param, divided by
    dp x cp under zero1 (distributed optimizer); zero3 also shards weights and gradients.
    Activations (Korthikanti et al. 2022, with sequence parallelism and flash attention):
    A x s/cp x b x h / tp per layer with A from the model's widths and the precision
    (:func:`_layer_activation_bytes`; 34 for GPT-3 in bf16); selective recomputation drops the
    activation function's output; full recomputation keeps 2 B x s x b x h per layer plus one
    layer's working set.  The fullest pipeline rank holds the layer x micro-batch count of
    Megatron-Core's 1F1B warm-up (:func:`_held_layer_microbatches`).  Capacity is the GPU's
    HBM in bytes (:attr:`GpuSpec.memory_bytes`: the vendor's figure counts binary gigabytes).
    """
    wg, opt, act, weights_b = _memory_parts(
        scenario, tp, pp, dp, ep, mb, sharding, recompute, microbatches, cp, vp, stages
    )
    total = wg + opt + act
    cap = capacity_gb(scenario.gpu)
    return memory_estimate(
        weights_gb=weights_b / GB,
        gradients_gb=(wg - weights_b) / GB,
        optimizer_gb=opt / GB,
        activations_gb=act / GB,
        kv_cache_gb=0.0,
        total_gb=total / GB,
        capacity_gb=cap,
        usable_gb=scenario.gpu.usable_bytes / GB,
    )


def _fits(
    scenario: Scenario,
    tp: int,
    pp: int,
    dp: int,
    ep: int,
    mb: int,
    sharding: str,
    recompute: str,
    microbatches: int,
    cp: int,
    vp: int,
    stages: tuple[int, int, int],
    consts: _Consts | None = None,
) -> bool:
    """Whether :func:`training_memory` fits, without building the estimate (``consts``: as
    :func:`_memory_parts`)."""
    wg, opt, act, _ = _memory_parts(
        scenario, tp, pp, dp, ep, mb, sharding, recompute, microbatches, cp, vp, stages, consts
    )
    return _parts_fit(scenario, wg, opt, act)


def _parts_fit(scenario: Scenario, wg: float, opt: float, act: float) -> bool:
    """Whether a plan of these parts (bytes per GPU) fits the GPU's usable memory."""
    return wg + opt + act <= scenario.gpu.usable_bytes


def request_kv_bytes(scenario: Scenario) -> float:
    """The fit rule's KV cache of one request at its full context (prompt + output tokens x
    :func:`serving.compute.kv_bytes_per_token`, the pools' own figure), bytes."""
    assert scenario.inference is not None
    m = scenario.model
    context = scenario.inference.prompt_tokens + scenario.inference.output_tokens
    return context * kv_bytes_per_token(m, scenario.precision, scenario.gpu)


def inference_memory(
    scenario: Scenario, gpus_per_replica: int, batch: int, kv_shards: int
) -> Memory:
    """Weights / gpus_per_replica + KV cache of ``batch`` full contexts / kv_shards (GB): the
    GPUs a request's cache is spread over (``serving.compute.kv_shards``)."""
    assert scenario.inference is not None
    m = scenario.model
    wbytes = WEIGHT_BYTES[dense_precision(scenario.precision)]
    weights = served_weight_bytes(m, scenario.precision) / gpus_per_replica
    kv = batch * request_kv_bytes(scenario) / max(1, kv_shards)
    act = 2.0 * batch * m.hidden * 64 * wbytes  # small decode working set
    total = weights + kv + act
    usable = scenario.gpu.usable_bytes / GB  # the fit rule
    return memory_estimate(
        weights_gb=weights / GB,
        gradients_gb=0.0,
        optimizer_gb=0.0,
        activations_gb=act / GB,
        kv_cache_gb=kv / GB,
        total_gb=total / GB,
        capacity_gb=capacity_gb(scenario.gpu),
        usable_gb=usable,
    )


def _moe_ep_memory(scenario: Scenario, r: int, batch: int) -> Memory:
    assert scenario.inference is not None
    m = scenario.model
    wbytes = WEIGHT_BYTES[scenario.precision]
    # routed experts: ceil(experts / r) per GPU, redundant copies fill the remainder
    weights = (
        served_weight_bytes(m, scenario.precision, m.dense_params)
        + experts_per_gpu(m, r) * m.expert_params / max(1, m.moe_experts) * wbytes
    )
    per_gpu_requests = math.ceil(batch / r)
    kv = per_gpu_requests * request_kv_bytes(scenario)
    total = weights + kv
    usable = scenario.gpu.usable_bytes / GB  # the fit rule
    return memory_estimate(
        weights_gb=weights / GB,
        gradients_gb=0.0,
        optimizer_gb=0.0,
        activations_gb=0.0,
        kv_cache_gb=kv / GB,
        total_gb=total / GB,
        capacity_gb=capacity_gb(scenario.gpu),
        usable_gb=usable,
    )
