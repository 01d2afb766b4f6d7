"""The KV cache of a request moved from its prefill instance to its decode instance
(disaggregated serving): over NVLink inside one scale-up domain, else over the fabric's NICs.

Units: seconds, bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from advisor.engine.facts.constants import FABRICS
from advisor.engine.input.scenario import Design, Scenario
from advisor.engine.model.network_rate import nic_bytes_per_s
from advisor.engine.model.serving.compute import ServingPlan, scaleup_domain_gpus

KV_TRANSFER_SETUP_S: Final = 200e-6
"""Per-request handshake of a KV transfer (decode pre-allocates, prefill is told where to
write: SGLang PD design, Mooncake transfer engine); engineering estimate, two round trips plus
bookkeeping."""


@dataclass(frozen=True)
class KvTransfer:
    seconds: float
    """Unloaded transfer of one request's KV cache (setup + per-layer latency + wire)."""
    bytes_per_s_per_server: float
    """What one server's NICs carry for KV transfer on this fabric."""
    rdma: bool


def kv_transfer(
    scenario: Scenario, serving_plan: ServingPlan, design: Design, bound: str
) -> KvTransfer:
    """One request's KV cache from its prefill instance to its decode instance.

    Streams: the cache is spread over the instance's GPUs (one GPU under attention data-
    parallel), each sending over its share of the server's NICs at the fabric's wire
    efficiency; TCP also stops at the fabric's per-server socket cap (host copies and kernel
    TCP, constants.FABRICS).  SGLang, Dynamo and
    Mooncake send after the prefill forward pass completes, so the transfer adds to TTFT.
    Pools inside one scale-up domain move the cache over NVLink instead (no NIC, no fabric).
    """
    if serving_plan.kv_inside_domain or scenario.gpus <= scaleup_domain_gpus(scenario):
        # prefill and decode pools inside one NVLink domain (a server, an NVL72 rack): the
        # cache moves GPU to GPU over NVLink/NVSwitch (Dynamo NIXL, SGLang), no NIC involved
        nvlink = scenario.gpu.scaleup_gbytes_per_s * 1e9 * scenario.gpu.scaleup_efficiency
        streams_nv = min(
            serving_plan.prefill.gpus_per_instance, serving_plan.decode.gpus_per_instance
        )
        return KvTransfer(
            seconds=KV_TRANSFER_SETUP_S
            + serving_plan.kv_bytes_per_request / (nvlink * max(1, streams_nv)),
            bytes_per_s_per_server=math.inf,
            rdma=True,
        )
    fabric = FABRICS[design.fabric]
    # the optimistic bound ("low" time) takes the high efficiency and the high cap
    eff = {"low": fabric.wire_efficiency_high, "high": fabric.wire_efficiency_low}.get(
        bound, fabric.wire_efficiency
    )
    cap_gbytes = {
        "low": fabric.node_cap_gbytes_per_s_high,
        "high": fabric.node_cap_gbytes_per_s_low,
    }.get(bound, fabric.node_cap_gbytes_per_s)
    server_bw = design.nics_per_node * nic_bytes_per_s(design.nic_gbps) * eff
    if cap_gbytes > 0:
        server_bw = min(server_bw, cap_gbytes * 1e9)
    per_gpu = server_bw / scenario.gpus_per_node
    streams = min(
        serving_plan.prefill.gpus_per_instance,
        serving_plan.decode.gpus_per_instance,
        scenario.gpus_per_node,
    )
    wire = serving_plan.kv_bytes_per_request / (per_gpu * max(1, streams))
    latency = scenario.model.layers * (fabric.message_latency_s + fabric.extra_step_latency_s)
    return KvTransfer(
        seconds=KV_TRANSFER_SETUP_S + latency + wire,
        bytes_per_s_per_server=server_bw,
        rdma=fabric.rdma,
    )
