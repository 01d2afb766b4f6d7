"""The stage-time model: compute and intra-domain communication time of a pipeline stage per
microbatch, and the training and inference costs of a plan built from it.

Units: bytes, seconds, FLOPs (not FLOP/s) unless the name says otherwise.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Final

from advisor.engine.facts.catalog import ModelSpec
from advisor.engine.facts.constants import (
    DDP_BUCKET_MIN_PARAMS,
    DDP_BUCKET_PARAMS_PER_RANK,
    FP8_PARAM_GATHER_BYTES_PER_PARAM,
    FP8_WEIGHT_CAST_BYTES_PER_PARAM,
    GRAD_BYTES_PER_PARAM,
    HBM_EFFICIENCY,
    HEAD_PRECISION,
    OPTIMIZER_BYTES_PER_PARAM,
    STEP_GRAD_BUFFER_BYTES_PER_PARAM,
    WEIGHT_BYTES,
)
from advisor.engine.input.scenario import Scenario
from advisor.engine.model.attention_span import (
    decode_attention_context,
    prefill_attention_context,
)
from advisor.engine.model.collectives import (
    scaleup_time_s,
)
from advisor.engine.model.efficiency import (
    BACKWARD_FACTOR,
    MOE_ALLTOALL_HOST_SYNC_S,
    cp_ring_overhead_s,
    forward_flops_per_token,
    gemm_time_s,
    layer_forward,
    mla_up_projection_flops_per_token,
    mla_up_projection_s,
)
from advisor.engine.model.placement import (
    expert_dp_size,
    expert_tp,
    pipeline_crosses_network,
    whole_groups,
)
from advisor.engine.model.plans import (
    InferencePlan,
    Plan,
    TrainingPlan,
    domain_gpus,
    group_layout,
    moe_software,
)
from advisor.engine.model.serving.compute import (
    dense_decode_s,
    dense_prefill_s,
    experts_per_gpu,
    moe_decode_s,
    moe_prefill_pass_s,
)
from advisor.engine.model.serving.precision import dispatch_bytes_per_element
from advisor.engine.result.echo import ServingPool


def _intra_time_s(
    scenario: Scenario, op: str, nbytes: float, ranks: int, nvls: bool | None = None
) -> float:
    """Collective time inside one scale-up domain (no network)."""
    return scaleup_time_s(scenario.gpu, op, nbytes, ranks, nvls)


def _stage_split(layers: int, pp: int, mtp_layers: int = 0) -> tuple[int, int, int] | None:
    """(first, inner, last) layers per pipeline stage, Megatron's uneven split, or None.

    Inner stages hold ``ceil(layers / pp)`` layers; the first and last stages share the rest
    (at least one layer each, at most an inner stage's), as Megatron-Core's
    ``num_layers_in_first/last_pipeline_stage`` allow (Llama 3 405B: 126 layers on 16 stages
    as 7 + 14 x 8 + 7, arXiv 2407.21783 section 3.3.2).  A model trained with multi-token
    prediction runs its MTP modules and the loss on the last stage, so the first stage takes
    a whole inner stage and the last the remainder, as Megatron-Bridge's DeepSeek-V3 layouts
    do (61 layers: 4 + 14 x 4 + 1 on 16 stages, 8 x 7 + 5 on 8, 16 x 3 + 13 on 4).
    """
    if pp <= 1:
        return (layers, layers, layers)
    if pp > layers:
        return None
    if layers % pp == 0:
        return (layers // pp, layers // pp, layers // pp)
    inner = math.ceil(layers / pp)
    rest = layers - (pp - 2) * inner
    if pp == 2:
        rest = layers
    first, last = math.ceil(rest / 2), rest // 2
    if mtp_layers > 0:
        first = min(inner, rest - 1)
        last = rest - first
    if last < 1 or first > inner:
        return None
    return (first, inner, last)


TP_OVERLAP_HIDDEN: Final = 0.8
"""Share of tensor-parallel collective time hidden behind GEMMs with Transformer Engine's
comm-GEMM overlap (userbuffers; default in NeMo recipes on Hopper and newer).  Engineering
estimate: the first and last chunk of each pipelined exchange stay exposed."""


def _microbatches(batch_sequences: int, dp: int, mb: int) -> int:
    return max(1, math.ceil(batch_sequences / (dp * mb)))


SELECTIVE_RECOMPUTE_EXTRA: Final = 0.3
"""Selective recomputation (Megatron-Core ``recompute_modules``: activation function and norms)
re-runs this share of a layer's forward element-wise time."""


_STAGE_CACHE: dict[tuple[Any, ...], dict[tuple[Any, ...], tuple[float, float]]] = {}
"""Stage times by value, bounded: one table per (GPU, model, precision, sequence, kernel
settings), keyed inside by the shape (the planner asks for the same stage many times, and
hashing the GPU and the model for each of ~70,000 look-ups of a grid cost more than the
look-up)."""


def _stage_table(scenario: Scenario) -> dict[tuple[Any, ...], tuple[float, float]]:
    """The stage-time table of ``scenario``'s GPU, model, precision, sequence and kernel
    settings (:data:`_STAGE_CACHE`): a planner asks it once per cluster size."""
    p = scenario.parallelism
    key = (
        scenario.gpu,
        scenario.model,
        scenario.precision,
        scenario.sequence_length,
        p.flash_attention,
        p.sequence_parallel,
        moe_software(scenario).dispatcher,
    )
    table = _STAGE_CACHE.get(key)
    if table is None:
        if len(_STAGE_CACHE) > 64:
            _STAGE_CACHE.clear()
        table = _STAGE_CACHE[key] = {}
    return table


def _stage_time_per_microbatch(
    scenario: Scenario,
    tp: int,
    cp: int,
    ep: int,
    mb: int,
    recompute: str,
    stages: tuple[int, int, int],
    pp: int,
    table: dict[tuple[Any, ...], tuple[float, float]] | None = None,
) -> tuple[float, float]:
    """Cached :func:`_stage_time` (the planner asks for the same stage many times);
    ``table``: :func:`_stage_table` of ``scenario``, if the caller holds it."""
    if table is None:
        table = _stage_table(scenario)
    key = (tp, cp, ep, mb, recompute, stages, pp)
    v = table.get(key)
    if v is None:
        if len(table) > 8192:
            table.clear()
        v = _stage_time(scenario, tp, cp, ep, mb, recompute, stages, pp, table)
        table[key] = v
    return v


def _stage_time(
    scenario: Scenario,
    tp: int,
    cp: int,
    ep: int,
    mb: int,
    recompute: str,
    stages: tuple[int, int, int],
    pp: int,
    table: dict[tuple[Any, ...], tuple[float, float]] | None = None,
) -> tuple[float, float]:
    """(compute seconds of the slowest pipeline stage for one micro-batch forward+backward,
    in-domain TP collective seconds of that stage); ``table``: :func:`_stage_table` of
    ``scenario``, which then also keeps the layer's and the output head's seconds
    (:func:`_layer_time`: the same for every pipeline depth)."""
    m = scenario.model
    seq = scenario.sequence_length
    layer, head = layer_and_head_s(scenario, tp, cp, ep, mb, recompute, table)
    first, inner, last = stages
    if pp <= 1:
        stage = first * layer + head
        stage_layers = first
    else:
        stage = max(first * layer, inner * layer, last * layer + head)
        stage_layers = max(first, inner, last)
    tp_s = 0.0
    if tp > 1:
        tp_bytes = mb * seq / cp * m.hidden * _act_bytes(scenario)
        count = tp_collectives_per_stage(m, tp, ep, recompute, stage_layers)
        tp_s = count * _intra_time_cached(scenario, tp_bytes, tp)
    return stage, tp_s


def layer_and_head_s(
    scenario: Scenario,
    tp: int,
    cp: int,
    ep: int,
    mb: int,
    recompute: str,
    table: dict[tuple[Any, ...], tuple[float, float]] | None = None,
) -> tuple[float, float]:
    """:func:`_layer_time` (one layer's and the output head's seconds for one micro-batch),
    kept in ``table`` (:func:`_stage_table` of ``scenario``) when given: the same for every
    pipeline depth and cluster size."""
    if table is None:
        return _layer_time(scenario, tp, cp, ep, mb, recompute)
    key = ("layer", tp, cp, ep, mb, recompute)
    hit = table.get(key)
    if hit is None:
        hit = table[key] = _layer_time(scenario, tp, cp, ep, mb, recompute)
    return hit


def tp_collectives_per_stage(
    m: ModelSpec, tp: int, ep: int, recompute: str, stage_layers: int
) -> int:
    """Tensor-parallel collectives of one micro-batch through a stage of ``stage_layers``
    layers: 2 forward + 2 backward per layer (+2 with full recomputation), one pair for the
    attention and one for the MLP (Megatron-LM, Shoeybi et al. 2019; with sequence
    parallelism an all-gather and a reduce-scatter each, Korthikanti et al. 2022).  The MoE
    layers of a plan whose experts are not tensor-parallel (:func:`placement.expert_tp` 1)
    keep the attention's pair only: the router and experts run on the rank's own tokens."""
    if tp <= 1:
        return 0
    per_layer = 6 if recompute == "full" else 4
    count = per_layer * stage_layers
    if m.is_moe and expert_tp(tp, ep) == 1:
        count -= per_layer // 2 * _moe_layers_of_stage(m, stage_layers)
    return count


def _moe_layers_of_stage(m: ModelSpec, stage_layers: int) -> int:
    """MoE layers of a stage of ``stage_layers`` layers (the model's share, rounded up)."""
    return math.ceil(m.moe_layers / m.layers * stage_layers)


def _expert_shard(m: ModelSpec, tp: int, pp: int, dp: int, cp: int, ep: int) -> tuple[float, int]:
    """(routed-expert parameters one GPU holds, ranks of its expert-data-parallel group):
    the experts over ep x pp x expert TP (:func:`placement.expert_tp`), their gradients and
    optimizer state over :func:`placement.expert_dp_size` ranks (dp x cp for a dense model)."""
    return m.expert_params / (ep * pp * expert_tp(tp, ep)), expert_dp_size(tp, dp * cp, ep)


def _layer_time(
    scenario: Scenario, tp: int, cp: int, ep: int, mb: int, recompute: str
) -> tuple[float, float]:
    """(seconds of one layer's forward + backward for one micro-batch, seconds of the output
    head and multi-token prediction modules) of :func:`_stage_time`."""
    m = scenario.model
    seq = scenario.sequence_length
    tokens = max(1, mb * seq // max(1, cp))
    par = scenario.parallelism
    alltoall = m.is_moe and moe_software(scenario).dispatcher == "alltoall"
    lc = layer_forward(
        scenario.gpu,
        scenario.precision,
        m,
        tokens,
        seq,
        tp,
        ep,
        par.flash_attention is not False,
        par.sequence_parallel is not False,
        sort_local=alltoall,
    )
    layer = (
        (1.0 + BACKWARD_FACTOR) * (lc.gemm_s + lc.elementwise_s)
        + lc.backward_gemm_extra_s
        + 3.5 * lc.attention_s
        + cp_ring_overhead_s(scenario.gpu, m, tokens, tp, cp)
    )
    if recompute == "full":
        layer += lc.forward_s
    else:
        # MLA's up-projections are recomputed in the backward pass (section 6 of MODEL.md)
        layer += mla_up_projection_s(scenario.gpu, scenario.precision, m, tokens, tp)
        if recompute == "selective":
            layer += SELECTIVE_RECOMPUTE_EXTRA * lc.elementwise_s
    if alltoall:
        # the dispatcher's host round trip in each MoE layer's forward (again when the
        # forward is recomputed), spread over the layers as the layer's other terms are
        syncs = 2.0 if recompute == "full" else 1.0
        layer += syncs * MOE_ALLTOALL_HOST_SYNC_S * m.moe_layers / m.layers
    # Megatron-Core's output layer is not a Transformer Engine module: BF16 under fp8
    head_precision = HEAD_PRECISION[scenario.precision]
    head = 3.0 * gemm_time_s(scenario.gpu, head_precision, tokens, m.vocab / tp, m.hidden)
    if m.mtp_layers:
        # multi-token prediction (DeepSeek-V3 report 2.2; Megatron-Core's MTP block after the
        # last decoder layer): per module one more layer, the 2h -> h projection of the
        # normed hidden state and embedding, and the shared output head once more
        proj = 3.0 * gemm_time_s(
            scenario.gpu, scenario.precision, tokens, m.hidden / tp, 2 * m.hidden
        )
        head += m.mtp_layers * (layer + proj + head)
    return layer, head


def _act_bytes(scenario: Scenario) -> float:
    return 2.0 if scenario.precision == "fp8" else WEIGHT_BYTES.get(scenario.precision, 2.0)


_INTRA_CACHE: dict[tuple[str, float, int], float] = {}


def _intra_time_cached(scenario: Scenario, nbytes: float, ranks: int) -> float:
    key = (scenario.gpu.id, nbytes, ranks)
    v = _INTRA_CACHE.get(key)
    if v is None:
        if len(_INTRA_CACHE) > 4096:
            _INTRA_CACHE.clear()
        v = _intra_time_s(scenario, "all_reduce", nbytes, ranks)
        _INTRA_CACHE[key] = v
    return v


def _compute_terms(
    scenario: Scenario, plan: Plan
) -> tuple[int, tuple[int, int, int], float, float, float]:
    """(micro-batches, stage layers, TP seconds of a stage per micro-batch, compute seconds,
    optimizer seconds) of a training plan: the part of :func:`_training_costs` that the
    compute floor (:func:`training_step.plan_floor_s`) reads, shared so the floor is the
    same float as the one of the plan's :class:`TrainingPlan`."""
    assert scenario.training is not None
    m = scenario.model
    tp, pp, dp, ep, mb, cp = plan.tp, plan.pp, plan.dp, plan.ep, plan.micro_batch, plan.cp
    microbatches = _microbatches(scenario.training.global_batch_sequences, dp, mb)
    stages = (
        (plan.first_stage_layers or math.ceil(m.layers / pp)),
        math.ceil(m.layers / pp)
        if not plan.first_stage_layers
        else _inner_layers(m.layers, pp, plan.first_stage_layers, plan.last_stage_layers),
        (plan.last_stage_layers or math.ceil(m.layers / pp)),
    )
    if not plan.first_stage_layers and not plan.last_stage_layers:
        split = _stage_split(m.layers, pp, m.mtp_layers)
        stages = split if split is not None else stages
    per_mb, tp_stage_s = _stage_time_per_microbatch(
        scenario, tp, cp, ep, mb, plan.recompute, stages, pp
    )
    compute_s = microbatches * per_mb
    # optimizer: memory-bound Adam over this GPU's shard of parameters
    dense = m.dense_params / (tp * pp)
    experts, edp = _expert_shard(m, tp, pp, dp, cp, ep)
    opt_div = dp * cp if plan.sharding != "none" else 1
    opt_params = dense / opt_div + experts / (edp if plan.sharding != "none" else 1)
    # and once per step over every local parameter, whatever the batch and the sharding: the
    # fp32 gradient buffer zeroed and checked for NaN, the weights cast to FP8 (MODEL.md 5.1)
    step_bytes = STEP_GRAD_BUFFER_BYTES_PER_PARAM
    if scenario.precision == "fp8":
        step_bytes += FP8_WEIGHT_CAST_BYTES_PER_PARAM
    optimizer_s = (opt_params * OPTIMIZER_BYTES_PER_PARAM + (dense + experts) * step_bytes) / (
        scenario.gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
    )
    return microbatches, stages, tp_stage_s, compute_s, optimizer_s


def bucket_params(ranks: int, given: int | None = None) -> float:
    """Parameters per gradient bucket of Megatron-Core's data-parallel buffers on ``ranks``
    data-parallel (x context-parallel) ranks: the job's own (``parallelism.dp_bucket_params``,
    ``given``) or ``max(40,000,000, 1,000,000 x ranks)`` (Megatron-LM's default for
    ``DistributedDataParallelConfig.bucket_size``)."""
    if given is not None:
        return float(given)
    return max(DDP_BUCKET_MIN_PARAMS, DDP_BUCKET_PARAMS_PER_RANK * ranks)


def _gather_bytes_per_param(scenario: Scenario) -> tuple[float, float]:
    """Bytes per parameter of the distributed optimizer's all-gather (dense, expert): the bf16
    weights, or with ``parallelism.fp8_param_gather`` the FP8 ones of the linear layers
    (``FP8_PARAM_GATHER_BYTES_PER_PARAM``) and bf16 embeddings and output layer, their share of
    the dense parameters."""
    if not scenario.parallelism.fp8_param_gather:
        return GRAD_BYTES_PER_PARAM, GRAD_BYTES_PER_PARAM
    m = scenario.model
    embedding_share = min(1.0, m.embedding_params / max(m.dense_params, 1.0))
    fp8 = FP8_PARAM_GATHER_BYTES_PER_PARAM
    return fp8 + embedding_share * (GRAD_BYTES_PER_PARAM - fp8), fp8


def _buckets(params: float, ranks: int, given: int | None) -> tuple[int, float]:
    """(buckets, parameters per bucket) of ``params`` on ``ranks`` (:func:`bucket_params`):
    each bucket is its own collective, overlapped as its gradients are ready."""
    n = max(1, math.ceil(params / bucket_params(ranks, given)))
    return n, params / n


def _training_costs(scenario: Scenario, plan: Plan) -> TrainingPlan:
    assert scenario.training is not None
    m = scenario.model
    tp, pp, dp, ep, mb, cp = plan.tp, plan.pp, plan.dp, plan.ep, plan.micro_batch, plan.cp
    used = plan.gpus_used or scenario.gpus
    microbatches, stages, tp_stage_s, compute_s, optimizer_s = _compute_terms(scenario, plan)
    batch = microbatches * dp * mb
    seq = scenario.sequence_length
    tokens = batch * seq
    fwd = forward_flops_per_token(m, seq)
    passes = 4.0 if plan.recompute == "full" else 3.0
    # recomputation repeats every layer's forward pass but not the output (logit) layer
    recompute_flops = (
        fwd - 2.0 * m.hidden * m.vocab
        if plan.recompute == "full"
        else mla_up_projection_flops_per_token(m) * m.layers
    )
    hardware_flops = tokens * (3.0 * fwd + recompute_flops) / used
    model_flops = tokens * fwd * 3.0 / used
    # causal attention executes half of the 4 s h per layer that fwd counts
    causal_fwd = fwd - 2.0 * seq * m.heads * m.head_dim * m.layers
    causal_model_flops = tokens * causal_fwd * 3.0 / used
    dense = m.dense_params / (tp * pp)
    experts, edp = _expert_shard(m, tp, pp, dp, cp, ep)
    act_bytes = _act_bytes(scenario)
    dom = domain_gpus(scenario)
    stage_layers = max(stages) if pp > 1 else m.layers

    # tensor parallel: 2 all-reduces forward + 2 backward per layer per micro-batch
    # (+2 with recomputation), of b x s/cp x h activations (Megatron-LM, Shoeybi et al. 2019)
    tp_bytes = mb * seq / cp * m.hidden * act_bytes
    tp_count = tp_collectives_per_stage(m, tp, ep, plan.recompute, stage_layers) * microbatches
    tp_layout = group_layout(tp, 1, dom, used)
    tp_comm_s = 0.0
    if tp > 1 and not tp_layout.crosses_network:
        tp_comm_s = microbatches * tp_stage_s

    # pipeline: activations of one micro-batch forward, their gradients backward, per edge
    pp_bytes = mb * seq / cp * m.hidden * act_bytes / tp
    pp_count = 2 * microbatches * plan.virtual_stages if pp > 1 else 0
    pp_crosses = pipeline_crosses_network(tp, cp, dp, pp, dom)

    # data parallel: dense gradients over dp x cp ranks, expert gradients over the expert-DP
    # group (placement.expert_dp_size)
    grad = GRAD_BYTES_PER_PARAM
    dp_ops: list[tuple[str, float, int]] = []
    edp_ops: list[tuple[str, float, int]] = []
    dense_bytes = dense * grad
    expert_bytes = experts * grad
    dpg = dp * cp
    bucket = scenario.parallelism.dp_bucket_params
    if plan.sharding == "zero3":
        if dpg > 1:
            dp_ops = [
                ("all_gather", dense_bytes, 2 * microbatches),
                ("reduce_scatter", dense_bytes, 1),
            ]
        if edp > 1 and expert_bytes > 0:
            edp_ops = [
                ("all_gather", expert_bytes, 2 * microbatches),
                ("reduce_scatter", expert_bytes, 1),
            ]
    elif plan.sharding == "zero1":
        gather, expert_gather = _gather_bytes_per_param(scenario)
        if dpg > 1:
            n, b = _buckets(dense, dpg, bucket)
            dp_ops = [("reduce_scatter", b * grad, n), ("all_gather", b * gather, n)]
        if edp > 1 and expert_bytes > 0:
            n, b = _buckets(experts, edp, bucket)
            edp_ops = [("reduce_scatter", b * grad, n), ("all_gather", b * expert_gather, n)]
    else:
        if dpg > 1:
            n, b = _buckets(dense, dpg, bucket)
            dp_ops = [("all_reduce", b * grad, n)]
        if edp > 1 and expert_bytes > 0:
            n, b = _buckets(experts, edp, bucket)
            edp_ops = [("all_reduce", b * grad, n)]
    dp_layout = group_layout(dpg, tp, dom, used)
    etp = expert_tp(tp, ep)
    ep_layout = group_layout(ep, etp, dom, used)
    edp_layout = group_layout(edp, ep * etp, dom, used)
    cp_layout = group_layout(cp, tp, dom, used)

    # expert parallel: dispatch + combine per MoE layer, forward and backward (+1 fwd w/ recompute)
    ep_bytes = 0.0
    ep_count = 0
    ep_intra_s = 0.0
    if m.is_moe and ep > 1:
        tokens_per_gpu = mb * seq / cp / tp
        ep_bytes = tokens_per_gpu * m.moe_top_k * m.hidden * act_bytes
        moe_layers_stage = _moe_layers_of_stage(m, stage_layers)
        passes_a2a = 6 if plan.recompute == "full" else 4
        ep_count = passes_a2a * moe_layers_stage * microbatches
        if not ep_layout.crosses_network:
            ep_intra_s = ep_count * _intra_time_s(scenario, "all_to_all", ep_bytes, ep, nvls=False)

    # context parallel: K and V of every rank's chunk travel the cp ring, forward (1x) and
    # backward (2x: K/V again and their gradients), overlapped with the attention kernels
    cp_bytes = 0.0
    cp_count = 0
    cp_intra_s = 0.0
    attention_s = 0.0
    if cp > 1:
        kv = m.kv_dim_per_layer or 2 * m.kv_heads * m.head_dim
        local = mb * seq / cp * kv * act_bytes / min(tp, max(1, m.kv_heads))
        cp_bytes = local * cp
        cp_count = 3 * stage_layers * microbatches

        lc = layer_forward(
            scenario.gpu, scenario.precision, m, max(1, mb * seq // cp), seq, tp, ep, True, True
        )
        attention_s = 3.5 * lc.attention_s * stage_layers * microbatches
        if not cp_layout.crosses_network:
            cp_intra_s = cp_count * _intra_time_s(scenario, "all_gather", cp_bytes, cp, nvls=False)

    return TrainingPlan(
        microbatches=microbatches,
        global_batch_sequences=batch,
        tokens_per_step=tokens,
        steps=scenario.training.total_tokens / tokens,
        hardware_flops_per_gpu=hardware_flops,
        model_flops_per_gpu=model_flops,
        causal_model_flops_per_gpu=causal_model_flops,
        compute_s=compute_s,
        optimizer_s=optimizer_s,
        forward_fraction=1.0 / passes,
        tp_comm_s=tp_comm_s,
        tp_bytes_per_collective=tp_bytes,
        tp_collectives_per_step=tp_count,
        pp_bytes_per_p2p=pp_bytes,
        pp_p2p_per_step=pp_count,
        dp_bytes=dense_bytes,
        dp_op_bytes=tuple(dp_ops),
        expert_dp_op_bytes=tuple(edp_ops),
        ep_bytes_per_all_to_all=ep_bytes,
        ep_all_to_all_per_step=ep_count,
        ep_intra_s=ep_intra_s,
        dp_layout=dp_layout,
        expert_dp_layout=edp_layout,
        tp_layout=tp_layout,
        ep_layout=ep_layout,
        pp_crosses_network=pp_crosses,
        tp_overlap=TP_OVERLAP_HIDDEN if plan.tp_comm_overlap else 0.0,
        ep_overlap=plan.ep_overlap,
        moe_dispatcher=plan.moe_dispatcher,
        moe_top_k=max(1, m.moe_top_k) if m.is_moe else 1,
        cp_layout=cp_layout,
        cp_bytes_per_exchange=cp_bytes,
        cp_exchanges_per_step=cp_count,
        cp_intra_s=cp_intra_s,
        attention_s=attention_s,
    )


def _inner_layers(layers: int, pp: int, first: int, last: int) -> int:
    given = [v for v in (first, last) if v]
    rest = layers - sum(given)
    inner_stages = pp - len(given)
    return rest // inner_stages if inner_stages > 0 else max(given)


def _inference_costs(
    scenario: Scenario, plan: Plan, gpus_per_replica: int, batch: int, dom: int
) -> InferencePlan:
    """Per-token quantities of one serving replica of ``gpus_per_replica`` GPUs.

    Replicas (and disaggregated pools) are placed from a scale-up domain's first GPU, as
    serving stacks place them, so a replica that fits one domain keeps its tensor- and
    expert-parallel groups off the network.
    """
    assert scenario.inference is not None
    inf = scenario.inference
    m = scenario.model
    tp, pp, ep = plan.tp, plan.pp, plan.ep
    dispatch_bytes = dispatch_bytes_per_element(scenario)
    act_bytes = 2.0
    context = decode_attention_context(m, inf.prompt_tokens, inf.output_tokens)
    prompt = float(inf.prompt_tokens)
    prompt_context = prefill_attention_context(m, prompt, prompt)

    if ep > 1:
        # expert-parallel serving: attention data-parallel (one GPU an instance), experts
        # spread over the replica's GPUs; the MoE roofline of the serving model (15.1)
        requests_per_gpu = math.ceil(batch / gpus_per_replica)
        pool = ServingPool(
            role="decode",
            tp=1,
            pp=1,
            ep=gpus_per_replica,
            gpus_per_instance=1,
            experts_per_gpu=experts_per_gpu(m, gpus_per_replica),
        )
        decode = moe_decode_s(scenario, pool, requests_per_gpu, 1, context, tp_comm=False)
        prefill = moe_prefill_pass_s(scenario, pool, prompt, 1.0, prompt_context)
        tokens_per_gpu = requests_per_gpu
        dispatch = tokens_per_gpu * m.moe_top_k * m.hidden * dispatch_bytes
        ep_layout = group_layout(ep, 1, dom, gpus_per_replica)
        tp_layout = group_layout(1, 1, dom, gpus_per_replica)
        tp_bytes = 0.0
        tp_count = 0
        tp_prefill_bytes = 0.0
    else:
        if m.is_moe:
            # experts split over tp (no expert parallelism): the MoE roofline (15.1)
            pool = ServingPool(role="decode", tp=tp, pp=pp, ep=1, gpus_per_instance=tp * pp)
            decode = moe_decode_s(scenario, pool, batch, 1, context, tp_comm=False)
            prefill = moe_prefill_pass_s(scenario, replace(pool, pp=1), prompt, 1.0, prompt_context)
        else:
            # dense: the serving model's GEMM roofline (docs/MODEL.md 15.1), launch costs in it
            decode = dense_decode_s(scenario, batch, 1, context, tp, pp, tp_comm=False)
            prefill = dense_prefill_s(scenario, prompt, prompt, tp, 1, pack=False)
        dispatch = 0.0
        tokens_per_gpu = 0
        ep_layout = group_layout(1, 1, dom, gpus_per_replica)
        tp_layout = group_layout(tp, 1, dom, gpus_per_replica)
        tp_bytes = batch * m.hidden * act_bytes
        tp_count = 2 * m.layers if tp > 1 else 0
        tp_prefill_bytes = inf.prompt_tokens * m.hidden * act_bytes

    tp_decode_intra = 0.0
    tp_prefill_intra = 0.0
    if tp > 1 and not tp_layout.crosses_network:
        tp_decode_intra = tp_count * _intra_time_s(scenario, "all_reduce", tp_bytes, tp)
        tp_prefill_intra = tp_count * _intra_time_s(scenario, "all_reduce", tp_prefill_bytes, tp)
    # a replica's stages are tp apart in rank order (pipeline outermost)
    pp_crosses = pipeline_crosses_network(tp, 1, 1, pp, dom)
    return InferencePlan(
        replicas=max(1, whole_groups(gpus_per_replica, dom, scenario.gpus)),
        gpus_per_replica=gpus_per_replica,
        batch_per_replica=batch,
        independent_replicas=gpus_per_replica <= dom,
        decode_compute_s=decode,
        prefill_compute_s=prefill,
        tp_bytes_per_decode_collective=tp_bytes,
        tp_collectives_per_token=tp_count,
        tp_bytes_per_prefill_collective=tp_prefill_bytes,
        tp_decode_intra_s=tp_decode_intra,
        tp_prefill_intra_s=tp_prefill_intra,
        pp_bytes_per_token=batch * m.hidden * act_bytes if pp > 1 else 0.0,
        pp_hops=pp - 1,
        ep_dispatch_bytes_per_gpu=dispatch,
        ep_tokens_per_gpu=tokens_per_gpu,
        moe_layers=m.moe_layers,
        tp_layout=tp_layout,
        ep_layout=ep_layout,
        pp_crosses_network=pp_crosses,
    )
