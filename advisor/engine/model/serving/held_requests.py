"""A serving replica whose KV memory holds fewer requests than are in flight: the runtime
admits what its KV memory holds and queues the rest (docs/MODEL.md 15.2, "An explicit replica
whose KV memory holds fewer than the requests in flight queues the rest" and "Users beyond what
the KV memory holds"); and the refusal when no replica holds the weights and one request."""

from __future__ import annotations

import math
from collections.abc import Callable

from advisor.engine.errors import ScenarioError
from advisor.engine.facts.weights import served_weight_bytes
from advisor.engine.input.number_format import fit_remedy
from advisor.engine.input.scenario import Scenario
from advisor.engine.model.memory import GB, capacity_gb, memory_estimate
from advisor.engine.model.serving.attention import serving_usable_gb
from advisor.engine.result.echo import Memory, ServingPool


def queued_memory(
    scenario: Scenario, pool: ServingPool, batch: int, held: int, ep: int, fit: Memory
) -> tuple[Memory, list[str]]:
    """The memory record and the note of a given replica whose KV cache of the ``batch``
    requests in flight does not pass the fit rule (which holds ``held``, record ``fit``): what
    the runtime's own KV sizing keeps (``pool.max_batch_per_instance``,
    :func:`attention.kv_room_bytes`: the batch the load model serves), and a note when that is
    fewer than ``batch``.  An expert-parallel replica keeps the fit rule's figures (its
    instances are GPUs, not replicas)."""
    open_loop = scenario.inference is not None and scenario.inference.open_loop
    if ep > 1:
        return fit, [queue_note(held, None if open_loop else batch)]
    kept = min(batch, pool.max_batch_per_instance)
    kv_gb = kept * pool.kv_gb_per_request
    mem = memory_estimate(
        weights_gb=pool.weights_gb_per_gpu,
        gradients_gb=0.0,
        optimizer_gb=0.0,
        activations_gb=0.0,  # the runtime's KV sizing reserves their room (kv_room_bytes)
        kv_cache_gb=kv_gb,
        total_gb=pool.weights_gb_per_gpu + kv_gb,
        capacity_gb=capacity_gb(scenario.gpu),
        usable_gb=serving_usable_gb(scenario.gpu, pool.weights_gb_per_gpu),
    )
    return mem, [queue_note(kept, None if open_loop else batch)] if kept < batch else []


def queue_note(held: int, batch: int | None) -> str:
    """The answer's note: how many of a replica's ``batch`` requests in flight (a closed
    loop's share of its users; ``None`` under an open rate, whose requests in flight the load
    model counts) its KV memory holds."""
    if batch is None:
        return (
            f"the KV cache memory of each replica holds {held} requests at once; at the asked "
            "rate the others wait for a place, and the capacity counts only those held"
        )
    return (
        f"the KV cache memory of each replica holds {held} of its {batch} users' requests at "
        "once; the others wait for a place"
    )


def largest_batch_held(memory_at: Callable[[int], Memory], batch: int) -> int:
    """The most requests (0 to ``batch``) whose weights and KV cache fit, by bisection
    (memory grows with the batch)."""
    if not memory_at(1).fits:
        return 0
    low, high = 1, batch  # memory_at(low) fits; memory_at(high) does not
    while high - low > 1:
        mid = (low + high) // 2
        if memory_at(mid).fits:
            low = mid
        else:
            high = mid
    return low


def no_replica_fits(scenario: Scenario, dom: int, deployment: str | None) -> ScenarioError:
    """The refusal when no replica shape of the deployment search holds the model and one
    request (a runtime queues the requests its KV memory does not hold, so more users or a
    higher rate are never what does not fit): the weights that need more GPUs than a replica
    may take (with what would hold them: more GPUs, or a replica across servers where one
    server or scale-up domain bounds it), else the KV cache of one request, naming the field
    to change."""
    inf, m = scenario.inference, scenario.model
    assert inf is not None
    field = "inference.independent_replicas" if inf.independent_replicas else "gpus"
    if deployment == "replicas":
        field = "inference.deployment"
    weights_gb = served_weight_bytes(m, scenario.precision) / GB
    usable_gb = scenario.gpu.usable_bytes / GB
    need = math.ceil(weights_gb / usable_gb)
    bounded = inf.independent_replicas or deployment == "replicas"
    limit = dom if bounded else scenario.gpus
    context = inf.prompt_tokens + inf.output_tokens
    domain = "server" if dom <= scenario.gpus_per_node else "scale-up domain"
    where = (
        f"inside one {domain} of {dom:,} x {scenario.gpu.name}"
        if bounded
        else f"on {scenario.gpus:,} x {scenario.gpu.name}"
    )
    if need > limit:
        grow = f"let a replica span {domain}s" if bounded else "add GPUs"
        grow += " on more GPUs" if bounded and need > scenario.gpus else ""
        remedy = fit_remedy(
            m, scenario.gpu, scenario.gpus, scenario.gpus_per_node, scenario.precision, grow
        )
        why = (
            f"its {scenario.precision} weights alone take {weights_gb:,.0f} GB at "
            f"{usable_gb:.0f} GB usable per GPU, so a replica needs at least {need} GPUs "
            f"({remedy})"
        )
    else:
        why = (
            f"the weights ({weights_gb:,.0f} GB) fit, the KV cache of one request of {context:,} "
            "tokens does not (shorter prompts would fit)"
        )
    return ScenarioError.single(field, f"{m.name} does not fit {where}: {why}")
