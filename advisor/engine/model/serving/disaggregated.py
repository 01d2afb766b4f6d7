"""The plan of one disaggregated serving deployment (its decode pool as the plan, memory and
notes) and of its copies, and the per-token costs of a serving replica kept by value for the
deployment search.

Units: seconds, bytes, FLOPs, requests per second unless the name says otherwise.
"""

from __future__ import annotations

import math
from dataclasses import replace

from advisor.engine.errors import ScenarioError
from advisor.engine.facts.formatting import megabytes
from advisor.engine.facts.vocabulary import scale_up_label
from advisor.engine.input.scenario import Scenario
from advisor.engine.model.memory import capacity_gb, memory_estimate
from advisor.engine.model.plans import InferencePlan, Plan, WorkloadPlan
from advisor.engine.model.serving.attention import serving_usable_gb
from advisor.engine.model.serving.compute import ServingPlan
from advisor.engine.model.serving.pools import redundant_experts_note
from advisor.engine.model.stage_time import _inference_costs
from advisor.engine.result.echo import ServingPool

_COSTS_CACHE: dict[tuple[Scenario, Plan, int, int, int], InferencePlan] = {}
"""stage_time._inference_costs by its arguments, bounded: the deployment search plans the same
replica (plan, GPUs per replica, batch) for many pools of one cluster (every split of prefill
and decode servers, every copy count), and each is priced once."""


def inference_costs(
    scenario: Scenario, plan: Plan, gpus_per_replica: int, batch: int, dom: int
) -> InferencePlan:
    """stage_time._inference_costs, kept by value (a frozen record)."""
    key = (scenario, plan, gpus_per_replica, batch, dom)
    hit = _COSTS_CACHE.get(key)
    if hit is None:
        if len(_COSTS_CACHE) >= 1024:
            _COSTS_CACHE.clear()
        hit = _COSTS_CACHE[key] = _inference_costs(scenario, plan, gpus_per_replica, batch, dom)
    return hit


def disaggregated_on(scenario: Scenario, dom: int, sp: ServingPlan) -> WorkloadPlan:
    """Prefill and decode pools (advisor.engine.model.serving.load); the decode pool is the plan."""
    inf = scenario.inference
    assert inf is not None
    if scenario.parallelism.given:
        raise ScenarioError.single(
            "parallelism",
            "a disaggregated deployment takes its parallelism from inference.pools",
        )
    dec = sp.decode
    gpus_per_replica = dec.ep if dec.ep > 1 else dec.tp * dec.pp
    replicas = max(1, dec.gpus // gpus_per_replica)
    batch = max(1, math.ceil(inf.concurrent_requests / replicas))
    plan = Plan(
        tp=dec.tp,
        pp=dec.pp,
        dp=replicas,
        ep=dec.ep,
        micro_batch=batch,
        virtual_stages=1,
        sharding="none",
        recompute="none",
        source="explicit" if inf.decode_pool or inf.prefill_pool else "planner",
    )
    per_gpu_requests = min(
        float(dec.max_batch_per_instance),
        inf.concurrent_requests / max(1, dec.instances),
    )
    kv_gb = per_gpu_requests * dec.kv_gb_per_request / max(1, dec.gpus_per_instance)
    mem = memory_estimate(
        weights_gb=dec.weights_gb_per_gpu,
        gradients_gb=0.0,
        optimizer_gb=0.0,
        activations_gb=0.0,
        kv_cache_gb=kv_gb,
        total_gb=dec.weights_gb_per_gpu + kv_gb,
        capacity_gb=capacity_gb(scenario.gpu),
        usable_gb=serving_usable_gb(scenario.gpu, dec.weights_gb_per_gpu, dec.ep > 1),
    )
    costs = inference_costs(scenario, plan, gpus_per_replica, batch, dom)
    inference = replace(costs, serving=sp, independent_replicas=sp.kv_inside_domain)
    kv_mb = megabytes(sp.kv_bytes_per_request)
    if sp.kv_inside_domain and dom > scenario.gpus_per_node:
        notes = [
            f"disaggregated serving: {sp.prefill.servers:,} prefill and {sp.decode.servers:,} "
            f"decode servers, each deployment whole inside one {dom}-GPU scale-up domain; each "
            f"request's KV cache ({kv_mb})"
            + (" and every expert all-to-all stay" if scenario.model.is_moe else " stays")
            + " on its NVLink (no compute fabric)"
        ]
    elif sp.kv_inside_domain:
        per = max(1, scenario.nodes)
        notes = [
            f"disaggregated serving inside every server: {sp.prefill.gpus // per} GPUs run "
            f"{sp.prefill.units // per} x {sp.prefill.shape} prefill and "
            f"{sp.decode.gpus // per} GPUs {sp.decode.units // per} x {sp.decode.shape} "
            f"decode; each request's KV cache ({kv_mb}) moves over the server's "
            f"{scale_up_label(scenario.gpu.scaleup_kind)} (no compute fabric)"
        ]
    else:
        notes = [
            f"disaggregated serving: {sp.prefill.servers:,} prefill and {sp.decode.servers:,} "
            f"decode servers; each request's KV cache ({kv_mb}) "
            + (
                f"moves over NVLink inside the {dom}-GPU scale-up domain (no compute fabric)"
                if scenario.gpus <= dom
                else "crosses the fabric from prefill to decode"
            )
        ]
    if dec.redundant_experts > 0:
        notes.append(redundant_experts_note(dec, "decode"))
    return WorkloadPlan(
        plan=plan,
        memory=mem,
        nodes=scenario.nodes,
        gpus_per_node=scenario.gpus_per_node,
        domain_gpus=dom,
        domains=max(1, scenario.gpus // dom),
        spans_servers=True,
        needs_compute_fabric=scenario.gpus > dom and not sp.kv_inside_domain,
        training=None,
        inference=inference,
        notes=tuple(notes),
    )


def copied_plan(sp: ServingPlan, copies: int, servers: int) -> ServingPlan:
    """``copies`` independent copies of a disaggregated deployment on a ``servers`` cluster."""

    def times(pool: ServingPool) -> ServingPool:
        return replace(
            pool,
            servers=pool.servers * copies,
            gpus=pool.gpus * copies,
            instances=pool.instances * copies,
        )

    return replace(sp, prefill=times(sp.prefill), decode=times(sp.decode), servers=servers)
