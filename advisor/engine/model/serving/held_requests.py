"""A given serving replica whose KV memory holds fewer requests than are in flight: the
runtime admits what its KV memory holds and queues the rest (docs/MODEL.md 15.2, "An explicit
replica whose KV memory holds fewer than the requests in flight queues the rest"); and how many
servers would hold every request when the cluster does not."""

from __future__ import annotations

import math
from collections.abc import Callable

from advisor.engine.input.scenario import Scenario
from advisor.engine.model.memory import GB, capacity_gb, memory_estimate, request_kv_bytes
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
    if ep > 1:
        return fit, [queue_note(held, batch)]
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
    return mem, [queue_note(kept, batch)] if kept < batch else []


def queue_note(held: int, batch: int) -> str:
    """The answer's note: how many of a replica's requests in flight its KV memory holds."""
    return (
        f"the KV cache memory of each replica holds {held} of the {batch} requests in flight "
        "at the asked rate; the others wait for a place"
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


def servers_for_requests(scenario: Scenario, weights_gb: float, usable_gb: float) -> str:
    """'about N servers would hold them, or ' when one server holds the weights with room for
    KV caches (each server a replica of its GPUs, the fit rule's usable memory); else ''."""
    inf = scenario.inference
    assert inf is not None
    per_request_gb = request_kv_bytes(scenario) / GB
    room_gb = scenario.gpus_per_node * usable_gb - weights_gb
    if per_request_gb <= 0 or room_gb < per_request_gb:
        return ""
    per_server = int(room_gb // per_request_gb)
    servers = math.ceil(inf.concurrent_requests / per_server)
    return (
        f"a server of {scenario.gpus_per_node} holds about {per_server:,} of them, so about "
        f"{servers:,} servers would hold them all; or "
    )
