"""Performance of one network design for a planned workload.

:func:`evaluate_design` is the hot path of the recommendation (called for every candidate),
so everything that does not depend on the design is precomputed in the
:class:`~advisor.engine.model.planner.WorkloadPlan`; this module only prices the network parts.

Training step (seconds, per GPU, synchronous):
    step = compute + optimizer + exposed_comm + bubble + straggler
    exposed_comm = TP + EP + PP (on the critical path) + DP not hidden behind backward
    bubble = (pp - 1) / virtual_stages x time of one micro-batch
    straggler = sigma x sqrt(2 ln domains), sigma^2 = (cv_c compute)^2 + (cv_net comm)^2
Inference (per output token):
    ms_per_token = decode step (max(memory, compute)) + TP/PP/EP communication per token
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from advisor.engine.facts import constants as c
from advisor.engine.facts.catalog import GpuSpec
from advisor.engine.facts.constants import (
    FABRICS,
)
from advisor.engine.facts.transports import carries_rdma, net_transport
from advisor.engine.facts.vocabulary import fabric_label, scale_up_domain
from advisor.engine.input.scenario import Design, Scenario
from advisor.engine.model.collectives import p2p_time_s
from advisor.engine.model.design_network import design_fabric, domain_collective_s, net_for
from advisor.engine.model.efficiency import (
    MOE_ALLTOALL_HOST_SYNC_S,
    QUANTIZED_INFERENCE_GEMM,
    compute_efficiency,
    profile,
)
from advisor.engine.model.moe_dispatch import moe_dispatch
from advisor.engine.model.placement import (
    Communicator,
    boundary_bytes,
)
from advisor.engine.model.plans import (
    GroupLayout,
    InferencePlan,
    TrainingPlan,
    WorkloadPlan,
    as_planned,
    domain_gpus,
    plan_traffic,
)
from advisor.engine.model.scaleup import ScaleUp
from advisor.engine.model.serving.compute import (
    TARGET_QUANTILE,
    ServingPlan,
    decode_compute_s,
)
from advisor.engine.model.serving.intra import CUSTOM_ALL_REDUCE
from advisor.engine.model.serving.load import (
    LoadPoint,
    batch_cell,
    serving_metrics,
    serving_model,
)
from advisor.engine.model.serving.pools import reference_design
from advisor.engine.model.serving.precision import (
    MXFP4,
    dispatch_bytes_per_element,
    expert_math_precision,
)
from advisor.engine.model.training_step import (
    _compute_floor_s,
    _fastest_plan,
    _idle_fraction,
    _network_free_step_s,
    _times_below,
    _training_times,
    _TrainingTimes,
    alternatives_below,
    free_step_s,
)
from advisor.engine.result.records import Assumption, Metrics

__all__ = ["Design", "evaluate_design", "model_assumptions", "speed_model_error"]

_BOUNDS = ("point", "low", "high")


ModelErrorSource = Callable[[str, str], tuple[float, float]]
"""(kind, GPU generation) -> (low, high) factors on a predicted time."""


def _no_model_error(kind: str, generation: str) -> tuple[float, float]:
    return 1.0, 1.0


_MODEL_ERROR: list[ModelErrorSource] = [_no_model_error]


def set_model_error_source(source: ModelErrorSource) -> None:
    """Where the bounds' model error comes from: the calibration residuals
    (:func:`advisor.engine.tools.validation.model_error_band`, which runs the calibration rows
    through this module).  The engine package wires it when it is imported
    (``advisor/engine/__init__.py``), so this module does not import the validation that
    imports it; until then the bounds carry placement and jitter only."""
    _MODEL_ERROR[0] = source


MOE_SERVING_KIND: Final = "serving-moe"
"""The residual pool of serving answers for mixture-of-experts models (docs/MODEL.md 9.1)."""


def error_band_kind(kind: str, moe: bool) -> str:
    """The residual pool a prediction's model error is read from: its kind, but serving answers
    of MoE models keep their own (:data:`MOE_SERVING_KIND`): the MoE serving rows read 22.7 %
    where the dense ones read 5.7 %, and one pool would widen every dense answer's range by the
    MoE misses and narrow the MoE answers' by the dense fits."""
    return MOE_SERVING_KIND if kind == "serving" and moe else kind


def _model_error(scenario: Scenario, kind: str) -> tuple[float, float]:
    """(low, high) time factors from the calibration residuals (:func:`set_model_error_source`)."""
    band_kind = error_band_kind(kind, scenario.model.is_moe)
    return _MODEL_ERROR[0](band_kind, profile(scenario.gpu).generation)


def speed_model_error(scenario: Scenario) -> tuple[float, float]:
    """(low, high) factors of the model's own error on the answer's speed figure (a training
    step, or a serving answer's p95 time per token), the part of its range that is not the
    network's placement and jitter: the factors :func:`_training_metrics` and
    :func:`_serving_token_band` multiply the low and high worlds by."""
    return _model_error(scenario, "serving" if scenario.workload == "inference" else "training")


def _training_metrics(
    scenario: Scenario,
    workload: WorkloadPlan,
    t: TrainingPlan,
    design: Design,
    point: _TrainingTimes | None = None,
    free_step_s: float | None = None,
    *,
    bounds: bool = True,
) -> Metrics:
    """``free_step_s``: the least step of the planner's plans on a network that costs
    nothing (:func:`_network_free_step_s`); the GPU time this design wastes waiting on the
    network is the share of its step above it, so a faster design never wastes more.
    ``bounds=False``: the low and high step and run times are left out (None)."""
    point = point or _training_times(scenario, workload, t, design, "point")
    step = point.step_s
    run_s = t.steps * step
    peak = scenario.gpu.peak_tflops(scenario.precision) * 1e12
    tflops = t.hardware_flops_per_gpu / step / 1e12
    low_s: float | None = None
    high_s: float | None = None
    if bounds:
        low = _training_times(scenario, workload, t, design, "low")
        high = _training_times(scenario, workload, t, design, "high")
        # the model's own error (calibration residuals of training rows on this GPU
        # generation) widens the placement/jitter bounds
        err_low, err_high = _model_error(scenario, "training")
        low_s = low.step_s * err_low
        high_s = high.step_s * err_high
    server, leaf, pod = _boundary_values(scenario, workload, design)
    return Metrics(
        step_time_s=step,
        step_time_s_low=low_s,
        step_time_s_high=high_s,
        compute_s=t.compute_s + t.optimizer_s,
        exposed_comm_s=point.exposed_comm_s,
        exposed_network_s=point.exposed_network_s,
        network_comm_s=point.network_comm_s,
        bubble_s=point.bubble_s,
        straggler_s=point.straggler_s,
        tflops_per_gpu=tflops,
        model_tflops_per_gpu=t.model_flops_per_gpu / step / 1e12,
        mfu=(t.causal_model_flops_per_gpu or t.model_flops_per_gpu) / step / peak
        if peak > 0
        else 0.0,
        scaling_efficiency=min(1.0, (t.compute_s + t.optimizer_s) / step),
        gpu_idle_fraction=_idle_fraction(step, free_step_s, point),
        tokens_per_s=t.tokens_per_step / step,
        run_time_s=run_s,
        run_time_s_low=None if low_s is None else t.steps * low_s,
        run_time_s_high=None if high_s is None else t.steps * high_s,
        gpu_hours=run_s * scenario.gpus / 3600.0,
        inter_server_bytes_per_gpu=server,
        inter_leaf_bytes_per_gpu=leaf,
        inter_pod_bytes_per_gpu=pod,
    )


# ----------------------------------------------------------------------------- inference


@dataclass(frozen=True)
class _InferenceTimes:
    token_s: float
    comm_s: float
    network_s: float
    ttft_s: float


def _inference_times(
    scenario: Scenario, workload: WorkloadPlan, inference: InferencePlan, design: Design, bound: str
) -> _InferenceTimes:
    net = net_for(scenario, workload, design, bound)
    fabric = FABRICS[design.fabric]
    comm = inference.tp_decode_intra_s
    prefill_comm = inference.tp_prefill_intra_s
    network = 0.0
    plan = workload.plan
    if inference.tp_layout.crosses_network and inference.tp_collectives_per_token:
        dom = net.domain(inference.tp_layout, Communicator("tp", "ring", plan.tp, 1))
        decode_tp = inference.tp_collectives_per_token * domain_collective_s(
            "all_reduce", inference.tp_bytes_per_decode_collective, dom
        )
        comm += decode_tp
        network += decode_tp
        prefill_comm += inference.tp_collectives_per_token * domain_collective_s(
            "all_reduce", inference.tp_bytes_per_prefill_collective, dom
        )
    if inference.pp_hops:
        if inference.pp_crosses_network:
            pair = GroupLayout(
                size=2 * workload.domain_gpus,
                nodes=2,
                ranks_per_node=workload.domain_gpus,
                concurrent_groups=1,
            )
            dom = net.domain(pair, Communicator("pp", "p2p", plan.pp, plan.tp))
            senders = max(1, min(workload.domain_gpus, plan.tp))
            hop = p2p_time_s(inference.pp_bytes_per_token, dom, concurrent_per_node=senders)
            network += inference.pp_hops * hop
            prompt_bytes = inference.pp_bytes_per_token / max(1, inference.batch_per_replica)
            prefill_comm += inference.pp_hops * p2p_time_s(
                prompt_bytes * (scenario.inference.prompt_tokens if scenario.inference else 1),
                dom,
                concurrent_per_node=senders,
            )
        else:
            local = GroupLayout(size=2, nodes=1, ranks_per_node=2, concurrent_groups=1)
            hop = p2p_time_s(inference.pp_bytes_per_token, net.domain(local))
        comm += inference.pp_hops * hop
    if inference.moe_layers and workload.plan.ep > 1:
        dom = net.domain(inference.ep_layout, Communicator("ep", "all_to_all", plan.ep, 1))
        disp = moe_dispatch(
            tokens_per_rank=max(1, inference.ep_tokens_per_gpu),
            hidden=scenario.model.hidden,
            top_k=scenario.model.moe_top_k,
            bytes_per_element=dispatch_bytes_per_element(scenario),
            d=dom,
        )
        comb = moe_dispatch(
            tokens_per_rank=max(1, inference.ep_tokens_per_gpu),
            hidden=scenario.model.hidden,
            top_k=scenario.model.moe_top_k,
            bytes_per_element=2.0,
            d=dom,
        )
        ep_s = inference.moe_layers * (disp.time_s + comb.time_s)
        comm += ep_s
        if inference.ep_layout.crosses_network:
            network += ep_s
    tail = 0.0
    if network > 0 and bound != "low":
        ranks = max(2, workload.plan.tp * workload.plan.pp * max(1, workload.plan.ep))
        tail = fabric.jitter_cv * network * math.sqrt(2.0 * math.log(ranks))
        if bound == "high":
            tail *= 2.0
    token = inference.decode_compute_s + comm + tail
    ttft = inference.prefill_compute_s + prefill_comm + token
    return _InferenceTimes(token_s=token, comm_s=comm + tail, network_s=network + tail, ttft_s=ttft)


def _with_comm(
    inference: InferencePlan, times: _InferenceTimes, ref: _InferenceTimes
) -> ServingPlan:
    """The serving plan of a colocated deployment with the per-token communication the
    serving model does not price itself (it prices compute and in-server TP): pipeline hops,
    expert all-to-all and whatever crosses servers, at ``times`` and on the reference
    network."""
    assert inference.serving is not None
    return dataclasses.replace(
        inference.serving,
        legacy_comm_s=max(0.0, times.comm_s - inference.tp_decode_intra_s),
        reference_comm_s=max(0.0, ref.comm_s - inference.tp_decode_intra_s),
    )


def colocated_serving_plan(
    scenario: Scenario, workload: WorkloadPlan, design: Design
) -> ServingPlan:
    """The serving plan of colocated ``workload`` as :func:`evaluate_design` prices it on
    ``design`` (:func:`_with_comm`): what the deployment search scores, so that it weighs a
    plan with the communication its answer will report (an EP8 replica's all-to-all over
    NVLink, 5.8 ms a step for Qwen3-235B on H200, was left out of the search's score)."""
    inference = workload.inference
    assert inference is not None and inference.serving is not None
    reference = reference_design(scenario)
    ref = _inference_times(scenario, workload, inference, reference, "point")
    point = (
        ref
        if design == reference
        else _inference_times(scenario, workload, inference, design, "point")
    )
    return _with_comm(inference, point, ref)


def _inference_metrics(
    scenario: Scenario,
    workload: WorkloadPlan,
    inference: InferencePlan,
    design: Design,
    *,
    bounds: bool = True,
) -> Metrics:
    """``bounds=False``: without the low and high ms per token (None; the serving model's
    operating points in the two other worlds are not solved)."""
    server, leaf, pod = _boundary_values(scenario, workload, design)
    if inference.serving is not None and not inference.serving.colocated:
        return dataclasses.replace(
            _disaggregated_metrics(scenario, inference.serving, design, bounds=bounds),
            inter_server_bytes_per_gpu=server,
            inter_leaf_bytes_per_gpu=leaf,
            inter_pod_bytes_per_gpu=pod,
        )
    point = _inference_times(scenario, workload, inference, design, "point")
    servers = max(1, scenario.gpus // scenario.gpus_per_node)
    tokens_per_s = inference.replicas * inference.batch_per_replica / point.token_s
    target = scenario.inference.target_ms_per_token if scenario.inference else 0.0
    err_low, err_high = _model_error(scenario, "serving")
    # ms_per_token and ttft_ms mean the p95 at the scenario's load for every deployment
    # (docs/ENGINE_API.md); without a serving plan, the idle-batch model of section 7
    token_ms, ttft_ms = point.token_s * 1e3, point.ttft_s * 1e3
    low_ms: float | None = None
    high_ms: float | None = None
    if bounds:
        low = _inference_times(scenario, workload, inference, design, "low")
        high = _inference_times(scenario, workload, inference, design, "high")
        low_ms, high_ms = low.token_s * 1e3 * err_low, high.token_s * 1e3 * err_high
    # without a serving plan, the section-7 step at the planner's batch; with one, the serving
    # model's step at the operating batch (serving_metrics)
    serving = Metrics(
        compute_ms_per_token=inference.decode_compute_s * 1e3,
        comm_ms_per_token=point.comm_s * 1e3,
    )
    if inference.serving is not None:
        # the serving model prices compute and in-server TP; the per-token model adds what
        # crosses servers on this design (split TP/PP, expert all-to-all of a split replica)
        ref = _inference_times(scenario, workload, inference, reference_design(scenario), "point")

        def plan(times: _InferenceTimes) -> ServingPlan:
            return _with_comm(inference, times, ref)

        serving = serving_metrics(scenario, plan(point), design, bounds=bounds)
        assert serving.ms_per_token_p95 is not None and serving.ttft_ms_p95 is not None
        token_ms, ttft_ms = serving.ms_per_token_p95, serving.ttft_ms_p95
        # tokens per second mean one thing for every deployment, as for disaggregated pools:
        # what the requests served at the scenario's load emit (the planner's batch without
        # load read up to 2.7 x the served requests' tokens past capacity)
        assert serving.serving_tokens_per_s_per_server is not None
        servers = max(1, inference.serving.servers)
        tokens_per_s = serving.serving_tokens_per_s_per_server * servers
        if bounds:
            lo = serving_model(scenario, plan(low), design, "low").operating_point()
            hi = serving_model(scenario, plan(high), design, "high").operating_point()
            low_ms, high_ms = _serving_token_band(scenario, token_ms, lo, hi)
    return dataclasses.replace(
        serving,
        ms_per_token=token_ms,
        ms_per_token_low=low_ms,
        ms_per_token_high=high_ms,
        ttft_ms=ttft_ms,
        tokens_per_s_per_server=tokens_per_s / servers,
        tokens_per_s=tokens_per_s,
        network_ms_per_token=point.network_s * 1e3,
        gpu_idle_fraction=min(1.0, point.network_s / point.token_s),
        meets_target=token_ms <= target,
        inter_server_bytes_per_gpu=server,
        inter_leaf_bytes_per_gpu=leaf,
        inter_pod_bytes_per_gpu=pod,
    )


def _serving_token_band(
    scenario: Scenario, token_ms: float, low: LoadPoint, high: LoadPoint
) -> tuple[float, float]:
    """The p95 time per token's (low, high) in ms for every serving deployment: the low and
    high worlds' operating points widened by the model's own error on serving rows of the
    scenario's family (:func:`_model_error`), never narrower than the point. Disaggregated
    pools had the worlds alone, which differ only in the network: a cache moved over NVLink
    read "between 49.5 ms and 49.5 ms"."""
    err_low, err_high = _model_error(scenario, "serving")
    return (
        min(token_ms, low.tpot_p95_s * 1e3 * err_low),
        max(token_ms, high.tpot_p95_s * 1e3 * err_high),
    )


def _disaggregated_metrics(
    scenario: Scenario, serving_plan: ServingPlan, design: Design, *, bounds: bool = True
) -> Metrics:
    """Prefill and decode pools under load (advisor.engine.model.serving.load).

    ``ms_per_token`` is the p95 time per output token at the scenario's load and ``ttft_ms``
    the p95 time to first token (KV transfer included), so the latency targets are checked
    against what a user sees under load.  ``bounds=False``: without the low and high ms per
    token (None)."""
    serving = serving_metrics(scenario, serving_plan, design, bounds=bounds)
    model = serving_model(scenario, serving_plan, design, "point")
    op = model.operating_point()
    low_ms: float | None = None
    high_ms: float | None = None
    if bounds:
        low = serving_model(scenario, serving_plan, design, "low").operating_point()
        high = serving_model(scenario, serving_plan, design, "high").operating_point()
        low_ms, high_ms = _serving_token_band(scenario, op.tpot_p95_s * 1e3, low, high)
    q = serving_plan.tokens_per_step
    b = batch_cell(op.decode_batch_per_instance)  # the batch the step and its parts are priced at
    step = model.step(b) / q
    # the expert all-to-all (what the step adds to its compute and in-domain all-reduces) is
    # network time only when the expert group leaves the scale-up domain (an NVL72 rack is one
    # domain of 72 GPUs, not 18 trays of 4)
    compute = decode_compute_s(scenario, serving_plan, serving_plan.decode, b) / q
    exchange = max(0.0, step - compute)
    network = exchange if serving_plan.decode.ep > domain_gpus(scenario) else 0.0
    tokens = op.output_tokens_per_s
    target = scenario.inference.target_ms_per_token if scenario.inference else 0.0
    return dataclasses.replace(
        serving,
        ms_per_token=op.tpot_p95_s * 1e3,
        ms_per_token_low=low_ms,
        ms_per_token_high=high_ms,
        ttft_ms=op.ttft_p95_s * 1e3,
        tokens_per_s_per_server=tokens / max(1, serving_plan.servers),
        tokens_per_s=tokens,
        network_ms_per_token=network * 1e3,
        gpu_idle_fraction=min(1.0, network / step) if step > 0 else 0.0,
        meets_target=op.tpot_p95_s * 1e3 <= target,
        decode_tokens_per_s_per_server=tokens / max(1, serving_plan.decode.servers),
        prefill_servers=float(serving_plan.prefill.servers),
        decode_servers=float(serving_plan.decode.servers),
        kv_bytes_per_request=serving_plan.kv_bytes_per_request,
        prefill_tokens_per_s_per_server=serving_plan.prefill.instances
        / max(model.prefill_s, 1e-12)
        * serving_plan.computed_prompt_tokens
        / max(1, serving_plan.prefill.servers),
    )


def _plan_traffic(
    workload: WorkloadPlan, rdma: bool = True
) -> tuple[tuple[Communicator, float], ...]:
    """plan_traffic(w, rdma), kept in the plan's memo (the same for every design of the same
    kind of transport)."""
    key = ("traffic", rdma)
    hit: tuple[tuple[Communicator, float], ...] | None = workload.memo.get(key)
    if hit is not None:
        return hit
    traffic: tuple[tuple[Communicator, float], ...] = workload.remember(
        key, plan_traffic(workload, rdma)
    )
    return traffic


def _boundary_values(
    scenario: Scenario, workload: WorkloadPlan, design: Design
) -> tuple[float, float, float]:
    """Bytes per GPU (per step, or per output token) crossing each boundary of the fabric
    sized for ``design`` under contiguous placement (docs/ENGINE_API.md)."""
    return boundary_bytes(
        _plan_traffic(
            workload, carries_rdma(c.FABRICS[design.fabric], net_transport(design.transport))
        ),
        design_fabric(scenario, workload, design),
    )


def _bounds_over_plans(
    scenario: Scenario,
    main: WorkloadPlan,
    chosen: WorkloadPlan,
    design: Design,
    metrics: Metrics,
    priced: dict[int, float] | None = None,
) -> Metrics:
    """Low and high step bounds as the best any of the planner's plans reaches in that world.

    The point estimate takes the plan fastest on ``design``; in the pessimistic (or optimistic)
    world the planner could as well run another of its plans, so each bound is the least over
    them.  A minimum over a fixed set of plans, each monotone in the network, keeps the bounds
    monotone too (a worse network never narrows a bound by switching plans).  A plan's high
    step is never below its point step (``tests/engine/test_performance.py`` checks it), so a
    plan whose point step (``priced``, from :func:`_fastest_plan`) already reaches the best
    high bound is not priced again.
    """
    err = dict(zip(("low", "high"), _model_error(scenario, "training"), strict=True))
    bounds = {"low": metrics.step_time_s_low, "high": metrics.step_time_s_high}
    runs = {"low": metrics.run_time_s_low, "high": metrics.run_time_s_high}
    # every plan whose floor x factor can be below a bound's best so far (a little more: a
    # plan more is priced by the same rule as before), lowest compute floor first: once a
    # floor reaches the best bound so far, no later plan can beat it
    reach = max(
        (b or 0.0) / factor for b, factor in zip(bounds.values(), err.values(), strict=True)
    )
    floors = _bound_floors(main, reach * (1.0 + 1e-6))
    for bound, factor in err.items():
        best_step = bounds[bound]
        assert best_step is not None
        assert chosen.training is not None
        best_run = chosen.training.steps * best_step
        for floor, _, plan in floors:
            if plan is chosen:
                continue
            t = plan.training
            assert t is not None
            if floor * factor >= best_step:
                break
            if bound == "high" and priced and priced.get(id(plan), 0.0) * factor >= best_step:
                continue
            if free_step_s(scenario, plan, design, bound) * factor >= best_step:
                continue  # not even on a free network
            below = _times_below(scenario, plan, t, design, bound, best_step, factor=factor)
            if below is None:
                continue  # its step x factor is at least its bound's, not below the best
            step = below.step_s * factor
            if step < best_step:
                best_step, best_run = step, t.steps * step
        bounds[bound], runs[bound] = best_step, best_run
    return dataclasses.replace(
        metrics,
        step_time_s_low=bounds["low"],
        step_time_s_high=bounds["high"],
        run_time_s_low=runs["low"],
        run_time_s_high=runs["high"],
    )


def _bound_floors(main: WorkloadPlan, below: float) -> list[tuple[float, int, WorkloadPlan]]:
    """``main`` and the planner's other plans whose floors are below ``below``
    (:func:`training_step.alternatives_below`), each with its compute floor and its place,
    lowest floor first (kept in ``main``'s memo while no smaller size is searched anew)."""
    assert main.training is not None
    others = alternatives_below(main, below)
    kept: tuple[Any, list[tuple[float, int, WorkloadPlan]]] | None = main.memo.get("bound-floors")
    if kept is not None and kept[0] is others:
        return kept[1]
    floors = sorted(
        [
            (_compute_floor_s(main.training, main.plan.pp, main.plan.virtual_stages), 0, main),
            *((floor, i + 1, alt) for i, (floor, alt) in enumerate(others)),
        ],
        key=lambda x: (x[0], x[1]),
    )
    main.remember("bound-floors", (others, floors))
    return floors


def evaluate_design(
    scenario: Scenario, workload: WorkloadPlan, design: Design, *, bounds: bool = True
) -> Metrics:
    """Metrics of ``workload`` on design ``design`` (see module docstring for the composition).

    Cheap by construction: only the network-dependent collectives are priced here; the
    metrics of a training plan object on a design are kept in its memo while it lives (training
    plans are cached per scenario by :func:`advisor.engine.model.planner.plan_workload`).

    ``bounds=False``: the metrics without the low and high bounds of the step and run time, or
    of the ms per token, the pessimistic TTFT and the rates within the latency targets (None),
    every other figure the same; the bounds price every plan of the family (or solve the
    serving model) again, and the recommendation needs them for the chosen design only (and
    the fastest serving design's rates).

    The design is evaluated for the scenario with the default constraints
    (:func:`advisor.engine.model.plans.as_planned`): no model module reads the constraints,
    so the metrics are the same, and the metrics kept per design serve every job that differs
    only in them (the audit's constraint variants, a what-if that changes the budget).
    """
    scenario = as_planned(scenario)
    if workload.training is None:
        # serving: kept per (design, bounds) in the plan's memo, so the scaling chart's point at
        # the cluster's own size reuses what scoring the candidates computed (the same plan
        # object, from the planner's cache by the scenario's value)
        kept: tuple[Scenario, Metrics] | None = workload.memo.get(("metrics", design, bounds))
        if kept is not None and (kept[0] is scenario or kept[0] == scenario):
            return kept[1]
        served = _evaluate_design(scenario, workload, design, bounds=bounds)
        workload.remember(("metrics", design, bounds), (scenario, served))
        return served
    for key in (("metrics", design, True), ("metrics", design, bounds)):
        hit: tuple[Scenario, Metrics] | None = workload.memo.get(key)
        if hit is not None and (hit[0] is scenario or hit[0] == scenario):
            if bounds or key[2] is False:
                return hit[1]
            return _without_bounds(hit[1])
    metrics = _evaluate_design(scenario, workload, design, bounds=bounds)
    workload.remember(("metrics", design, bounds), (scenario, metrics))
    return metrics


def _without_bounds(metrics: Metrics) -> Metrics:
    return dataclasses.replace(
        metrics,
        step_time_s_low=None,
        step_time_s_high=None,
        run_time_s_low=None,
        run_time_s_high=None,
    )


def _evaluate_design(
    scenario: Scenario, workload: WorkloadPlan, design: Design, *, bounds: bool = True
) -> Metrics:
    if workload.training is not None:
        point = None
        main = workload
        priced: dict[int, float] = {}
        free_step_s = _network_free_step_s(scenario, workload, design)
        others = workload.weighs_other_plans()
        if others:
            workload, point = _fastest_plan(scenario, workload, design, priced)
        assert workload.training is not None
        metrics = _training_metrics(
            scenario, workload, workload.training, design, point, free_step_s, bounds=bounds
        )
        if not others or not bounds:
            return metrics
        return _bounds_over_plans(scenario, main, workload, design, metrics, priced)
    assert workload.inference is not None
    return _inference_metrics(scenario, workload, workload.inference, design, bounds=bounds)


# ----------------------------------------------------------------------------- assumptions


def _row(name: str, value: Any, unit: str, source: str) -> Assumption:
    return Assumption(name=name, value=value, unit=unit, source=source)


def _measured_kernel_rows(scenario: Scenario) -> list[Assumption]:
    """The measured kernel figures that shape this GPU's answer where NCCL's and the datasheet's
    do not hold: the NVLink step latency of an Ampere or Blackwell domain, Blackwell's NVLS
    share, the bandwidth of 2 or 4 NVSwitch GPUs and of their collectives other than the
    all-reduce, and an NVFP4 GEMM's rate over FP8's (docs/MODEL.md 3 and 15.1)."""
    g = scenario.gpu
    scaleup = ScaleUp.of(g)
    rows: list[Assumption] = []
    latency_class = c.nccl_latency_class(scaleup.kind, scaleup.generation)
    if latency_class != c.nccl_latency_class(scaleup.kind):  # a measured class of its own
        ring = c.NCCL_HW_LATENCY_S["nvlink"]["ring"]["LL"]
        step = c.NCCL_HW_LATENCY_S[latency_class]["ring"]["LL"]
        rows.append(
            _row(
                "NVLink step latency",
                round(step * 1e6, 2),
                "µs per ring step (LL)",
                f"NCCL's hwLat {ring * 1e6:.1f} µs plus {(step - ring) * 1e6:.1f} µs measured "
                f"on {g.generation.capitalize()} (NCCL's one-server collectives, AIConfigurator "
                "0.12.0 tables; docs/MODEL.md 3)",
            )
        )
    if scaleup.blackwell and scaleup.nvls:
        rows.append(
            _row(
                "NVLS bandwidth on Blackwell",
                c.NVLS_BLACKWELL_MEASURED,
                "of NCCL's nvlsEfficiency ratio",
                "NCCL's one-server all-reduce at 256 MB and more on 8 B200 / B300, AIConfigurator "
                "0.12.0 tables (docs/MODEL.md 3)",
            )
        )
    # the shares the collectives apply (constants._nvlink_share: 1 where none was measured)
    few = tuple(c.nvlink_few_gpu_share(scaleup.kind, g.generation, n) for n in (2, 4))
    if few != (1.0, 1.0):
        rows.append(
            _row(
                "NVLink bandwidth among 2 / 4 GPUs of a server",
                " / ".join(f"{x:g}" for x in few),
                "x the 8-GPU bus bandwidth",
                f"NCCL's one-server all-reduce at 256 MB and more on {g.generation.capitalize()} "
                "GPUs, AIConfigurator 0.12.0 tables (docs/MODEL.md 3)",
            )
        )
    shares = c.nvlink_op_shares(scaleup.kind, g.generation, 8)
    if shares != (1.0, 1.0, 1.0):
        rows.append(
            _row(
                "NVLink all-gather / reduce-scatter / all-to-all among 8 GPUs",
                " / ".join(f"{x:g}" for x in shares),
                "x the all-reduce's bus bandwidth",
                f"NCCL's one-server collectives at 256 MB and more on {g.generation.capitalize()} "
                "GPUs, AIConfigurator 0.12.0 tables (docs/MODEL.md 3)",
            )
        )
    fp4 = profile(g).fp4_over_fp8
    if scenario.precision == "fp4" and fp4 > 0:
        rows.append(
            _row(
                "NVFP4 GEMM rate",
                fp4,
                "x the FP8 GEMM rate",
                "TensorRT-LLM 1.3.0rc20's measured NVFP4 and FP8 GEMMs, AIConfigurator 0.12.0 "
                "tables (docs/MODEL.md 15.1)",
            )
        )
    if scenario.precision == MXFP4:
        math_precision = expert_math_precision(g, scenario.precision)
        rows.append(
            _row(
                "MXFP4 experts",
                "MXFP8 activations" if math_precision == "fp8" else f"{math_precision} activations",
                "the routed experts' weights 4.25 bits, their math at this precision; "
                "attention and the rest bf16",
                "gpt-oss's checkpoint (quant_method mxfp4) as TensorRT-LLM serves it: MXFP8 "
                "activations on Blackwell, bf16 on Hopper; the KV cache likewise "
                '(docs/MODEL.md 15.1, "MXFP4 experts")',
            )
        )
    return rows


NUMBER_FORMAT_ASSUMPTION: Final = "Number format"
"""The assumption that names a served model's number format beside its publisher's."""
SHIPPED_FORMAT: Final = "as the publisher ships the weights"
"""That assumption's unit where the served format is the publisher's own."""
RELEASE_FORMAT: Final = "the publisher's own release in this format"
"""That assumption's unit where the served format is the publisher's smaller release
(``ModelSpec.compact_release``)."""


def _checkpoint_rows(scenario: Scenario) -> list[Assumption]:
    """The number format a served model runs at beside the one its publisher ships, for a
    model whose weights are not 16-bit (``ModelSpec.checkpoint_precision``): the default a
    scenario that names none takes, or the departure one that names another makes; and the
    publisher's smaller release where the model runs it (``ModelSpec.compact_release``: by
    default where the 16-bit weights overfill one scale-up domain, or by name)."""
    model = scenario.model
    shipped = model.checkpoint_precision
    section = 'docs/MODEL.md 15.1, "The number format of a served model"'
    if shipped:
        return [
            _row(
                NUMBER_FORMAT_ASSUMPTION,
                scenario.precision,
                SHIPPED_FORMAT
                if scenario.precision == shipped
                else f"the publisher ships the weights in {shipped}",
                f"{model.checkpoint_source}; a serving scenario that names no precision runs "
                f"the model as it ships where the GPU runs that format ({section})",
            )
        ]
    if model.compact_release and scenario.precision == model.compact_release:
        return [
            _row(
                NUMBER_FORMAT_ASSUMPTION,
                scenario.precision,
                RELEASE_FORMAT,
                f"{model.compact_release_source}; a serving scenario that names no precision "
                "runs this release where the 16-bit weights overfill the memory of one "
                f"{scale_up_domain(domain_gpus(scenario), scenario.gpus_per_node)} and this "
                f"release's do not ({section})",
            )
        ]
    return []


def _serving_kernel_rows(scenario: Scenario) -> list[Assumption]:
    """The measured kernel costs a serving answer's decode step carries on this GPU: a quantized
    GEMM's fixed part and overlap, and the serving engine's own all-reduce inside the server
    (docs/MODEL.md 15.1, "The decode step at the kernel tables' own costs")."""
    g = scenario.gpu
    rows: list[Assumption] = []
    math_precision = expert_math_precision(g, scenario.precision)
    quantized = QUANTIZED_INFERENCE_GEMM.get((g.generation, math_precision))
    if quantized is not None:
        fixed, overlap = quantized
        rows.append(
            _row(
                f"{math_precision.upper()} GEMM fixed part and overlap",
                f"{fixed * 1e6:.1f} / {overlap:g}",
                "µs a GEMM beyond a 16-bit one's (the activation's cast) / share of the "
                "shorter of its math and weight read added to the longer",
                "TensorRT-LLM 1.3.0rc20's measured GEMMs at 1-1,024 rows, AIConfigurator 0.12.0 "
                "tables (docs/MODEL.md 15.1)",
            )
        )
    all_reduce = CUSTOM_ALL_REDUCE.get(g.generation)
    if all_reduce is not None and g.scaleup_kind == "nvlink":
        fixed, share = all_reduce
        rows.append(
            _row(
                "serving all-reduce inside a server",
                f"{fixed * 1e6:.2f} µs + {share:g} of NVLink",
                "fixed time, then each peer's buffer at this share of the link (where faster "
                "than NCCL)",
                "the serving engine's one-shot kernel (TensorRT-LLM, vLLM, SGLang); TensorRT-LLM "
                "1.3.0rc20's measured all-reduce, AIConfigurator 0.12.0 tables (docs/MODEL.md "
                "15.2)",
            )
        )
    return rows


def _peak_label(gpu: GpuSpec, precision: str) -> str:
    """The precision whose peak the answer shows: the scenario's, or for mxfp4 the experts'
    math precision, said as such."""
    math_precision = expert_math_precision(gpu, precision)
    return precision if math_precision == precision else f"{math_precision} ({precision} experts)"


def _transport_rows(scenario: Scenario) -> list[Assumption]:
    """The network-plugin transport of the evaluated design (AWS EFA, docs/MODEL.md 3
    "Transports"), by its display label: its step latency and the protocols it runs."""
    design = scenario.design
    plugin = net_transport(design.transport) if design is not None else None
    if plugin is None:
        return []
    return [
        _row(
            f"{plugin.label}: latency per inter-server step",
            round(plugin.step_latency_s * 1e6, 1),
            f"µs (Simple +{plugin.simple_extra_s * 1e6:g}), in place of NCCL's network latency",
            plugin.source,
        ),
        _row(
            f"{plugin.label}: protocols across servers",
            ", ".join(plugin.protocols),
            "",
            plugin.source,
        ),
    ]


def _moe_training_rows(scenario: Scenario, workload: WorkloadPlan) -> list[Assumption]:
    """The expert dispatch and overlap a training plan with expert parallelism runs
    (``plans.moe_software``, docs/MODEL.md 8), and the all-to-all dispatcher's host round trip
    wherever a mixture-of-experts plan runs that dispatcher."""
    plan = workload.plan
    if workload.training is None or not scenario.model.is_moe:
        return []
    sync = (
        [
            _row(
                "all-to-all dispatcher host round trip",
                round(MOE_ALLTOALL_HOST_SYNC_S * 1e3, 2),
                "ms per MoE layer and micro-batch",
                "Megatron-Core's all-to-all token dispatcher copies the token counts to the host "
                "and synchronises before each exchange; fitted on three published NeMo rows "
                "(docs/MODEL.md 8)",
            )
        ]
        if plan.moe_dispatcher == "alltoall"
        else []
    )
    if plan.ep <= 1:
        return sync
    dispatch = (
        "DeepEP (once per destination server over RDMA; NCCL all-to-all where the fabric "
        "has no RDMA)"
        if plan.moe_dispatcher == "deepep"
        else "NCCL all-to-all of every token copy"
    )
    overlap = {
        "a2a_1f1b": "under another micro-batch's compute (Megatron-Core 1F1B overlap)",
        "dualpipe": "under another micro-batch's compute (DualPipe)",
    }.get(plan.ep_overlap, "not overlapped")
    source = (
        "Megatron-Core token dispatchers; NVIDIA Megatron-Bridge MoE performance recipes "
        "(flex dispatcher with DeepEP/HybridEP, overlap_moe_expert_parallel_comm)"
    )
    return [
        _row("expert dispatch", dispatch, "", source),
        _row("expert all-to-all overlap", overlap, "", source),
        *sync,
    ]


def _serving_load_rows() -> list[Assumption]:
    """How a serving answer reads its load (docs/MODEL.md 15, "Load")."""
    return [
        _row(
            "request arrivals",
            "random (Poisson) at the asked rate",
            "",
            "open arrivals, as users send them and as MLPerf Inference's Server scenario "
            "issues them; a closed loop of users when the scenario gives concurrent users",
        ),
        _row(
            "latency targets",
            round(TARGET_QUANTILE * 100),
            "% of requests within the TTFT and time-per-token targets",
            "the questionnaire's '95 of 100 requests' (docs/ENGINE_API.md)",
        ),
        _row(
            "request routing",
            "to the least-loaded replica",
            "",
            "the prompts of all replicas wait in one queue, which a load-aware router "
            "(NVIDIA Dynamo's KV router, llm-d's scheduler) comes close to; random or "
            "round-robin routing raises the p95 time to first token of many small replicas "
            "(docs/MODEL.md 15.2)",
        ),
    ]


def model_assumptions(scenario: Scenario, workload: WorkloadPlan) -> list[Assumption]:
    """The performance-model constants that shaped this result."""
    g = scenario.gpu
    t = workload.training
    peak = g.peak_tflops(scenario.precision) * 1e12
    if t is not None and t.compute_s > 0 and peak > 0:
        prof = profile(g)
        efficiency_row = _row(
            "compute efficiency",
            round(t.hardware_flops_per_gpu / (t.compute_s * peak), 4),
            "fraction of dense peak (slowest pipeline stage, before communication)",
            f"GEMM-level roofline: MAMF x sustained clock ({prof.generation}), wave "
            "quantisation, flash attention, element-wise traffic (efficiency.py, docs/MODEL.md "
            f"5.1); {prof.source}",
        )
    elif workload.inference is not None:
        efficiency_row = _row(
            "compute model",
            "GEMM and attention roofline per layer",
            "",
            "prompts and decode steps priced per layer: each GEMM at the larger of its math "
            f"(the measured matmul rate at the sustained clock of the {g.name}) and its "
            "weight read from memory plus its kernel's fixed part, attention's KV-cache read "
            "and math as TensorRT-LLM's measured kernels take them, per-layer launch costs "
            "(docs/MODEL.md 15.1; checked against TensorRT-LLM's measured kernels and "
            "published throughput tables)",
        )
    else:
        efficiency_row = _row(
            "compute efficiency",
            round(
                compute_efficiency(g, scenario.precision, workload.plan.tp, scenario.model.hidden),
                4,
            ),
            "fraction of dense peak",
            "catalog achievable_compute_fraction x width factor (docs/MODEL.md)",
        )
    rows = [
        efficiency_row,
        _row(
            "peak",
            g.peak_tflops(expert_math_precision(g, scenario.precision)),
            f"TFLOP/s dense {_peak_label(g, scenario.precision)}",
            g.name,
        ),
        _row(
            "scale-up bandwidth",
            g.scaleup_gbytes_per_s,
            "GB/s per GPU per direction",
            dict(g.sources).get("scaleup_gbytes_per_s", ""),
        ),
        _row(
            "scale-up ring efficiency",
            g.scaleup_efficiency,
            "fraction",
            c.SCALEUP_EFFICIENCY_SOURCE,
        ),
    ]
    for fabric in c.FABRICS.values():
        rows.append(
            _row(
                f"{fabric_label(fabric.id)} wire efficiency",
                fabric.wire_efficiency,
                "fraction of NIC line rate",
                fabric.source,
            )
        )
    tcp_cap = c.FABRICS[c.ETHERNET].node_cap_gbytes_per_s
    rows += [
        _row(
            "ECMP collision loss",
            c.ECMP_COLLISION_LOSS,
            "fraction of cross-leaf bandwidth",
            "Meta SIGCOMM'24 (up to 0.40)",
        ),
        _row(
            "job placement",
            "contiguous (point, low); scattered (high)",
            "",
            "ranks in Megatron order (tp, cp, dp/ep, pp) on servers filling one leaf, then one "
            "pod, of the fabric sized for each design; the high bound puts whole servers in "
            "random order, as on a shared cluster without topology-aware scheduling "
            "(docs/MODEL.md section 17)",
        ),
        _row(
            "leaf size for placement",
            "switch ports down at the design's oversubscription",
            "servers per leaf (rail group)",
            f"topology sized per design; radix {c.DEFAULT_SWITCH_RADIX} when the design names "
            "no switch",
        ),
        _row(
            "NCCL over TCP per server",
            tcp_cap,
            "GB/s (6.5-14)",
            "InfiniBand 26-57x TCP on Azure H100; NVIDIA/nccl #450 (4-6 GB/s per 100G)",
        ),
        _row(
            "NCCL over TCP CPU cost",
            round(2.0 * tcp_cap * 8.0 / c.TCP_GBITS_PER_S_PER_CORE, 1),
            "CPU cores per server at the cap",
            "42 Gb/s per core (Cai et al., SIGCOMM'21), send + receive",
        ),
        *_transport_rows(scenario),
        *_measured_kernel_rows(scenario),
        *_moe_training_rows(scenario, workload),
        *(_serving_load_rows() if workload.inference is not None else []),
        *(_serving_kernel_rows(scenario) if workload.inference is not None else []),
        *(_checkpoint_rows(scenario) if workload.inference is not None else []),
        _row("rail group", c.RAIL_GROUP_NODES, "servers per leaf", "NVIDIA DGX SuperPOD RA"),
        _row("NCCL cost model", c.NCCL_TUNING_SOURCE, "", "NVIDIA/nccl"),
        _row("usable memory", c.MEMORY_USABLE_FRACTION, "fraction of HBM", "engineering estimate"),
        _row("constants version", c.CONSTANTS_VERSION, "", "advisor/engine/facts/constants.py"),
    ]
    return rows
