"""MoE expert-parallel dispatch and combine in DeepEP's accounting (docs/MODEL.md section 8):
how many token copies cross the NICs and NVLink, and the time the slower of them takes on a
communicator domain of :mod:`advisor.engine.model.collectives`."""

from __future__ import annotations

from dataclasses import dataclass

from advisor.engine.facts.constants import (
    MOE_LL_FIXED_OVERHEAD_S,
    MOE_NORMAL_FIXED_OVERHEAD_S,
    NCCL_HW_LATENCY_S,
)
from advisor.engine.model.collectives import CommDomain


@dataclass(frozen=True)
class MoeDispatchResult:
    """One MoE dispatch (or combine) in DeepEP's accounting."""

    time_s: float
    total_bytes: float
    """tokens x top_k x bytes per token copy (DeepEP's 'dispatch bytes')."""
    rdma_bytes: float
    nvlink_bytes: float
    reported_rdma_bytes: float = 0.0
    """What DeepEP's normal-kernel benchmark calls its RDMA bytes: every node a token is sent
    to, the sender's own node included (``tests/legacy/test_internode.py``,
    ``num_rdma_token_sent``); only ``rdma_bytes`` of it crosses the NIC."""

    @property
    def total_bytes_per_s(self) -> float:
        return self.total_bytes / self.time_s if self.time_s > 0 else 0.0

    @property
    def rdma_bytes_per_s(self) -> float:
        return self.rdma_bytes / self.time_s if self.time_s > 0 else 0.0


def moe_token_bytes(hidden: int, bytes_per_element: float) -> float:
    """Bytes of one token copy; FP8 adds one fp32 scale per 128 elements (DeepEP)."""
    scales = hidden / 128.0 * 4.0 if bytes_per_element <= 1.0 else 0.0
    return hidden * bytes_per_element + scales


def moe_dispatch(
    *,
    tokens_per_rank: int,
    hidden: int,
    top_k: int,
    bytes_per_element: float,
    d: CommDomain,
    mode: str = "low_latency",
    node_limit: int | None = None,
) -> MoeDispatchResult:
    """Expert-parallel dispatch (or combine, with bf16 bytes) across ``d.ranks`` GPUs.

    Experts are spread uniformly, so a token copy goes to another domain with probability
    (N-g)/N and over NVLink with (g-1)/N.  ``low_latency`` (DeepEP LL kernels) sends every
    (token, expert) copy; ``normal`` sends a token once per remote domain that hosts at least
    one of its experts and forwards it there over NVLink.  ``node_limit`` (node-limited
    routing: a token's experts lie in at most that many domains, DeepSeek-V3's M = 4, DeepEP's
    ``num_topk_groups``) restricts the domains a token can reach; each reached domain holds at
    least one of its experts with probability ``h = 1 - (1 - 1/reach)^top_k``, so a token goes
    to ``reach x h`` domains, ``(nodes - 1) / nodes`` of them remote.  Across domains the
    NVLink carries one copy per distinct GPU holding an expert of the token, except the GPU the
    token arrives at (the same-rank forwarder, or the sender itself on its own domain):
    ``reach x (g - 1) x (1 - (1 - 1/(reach g))^top_k)`` copies per token (DeepEP's internode
    kernels send to ranks, not to experts).  Each GPU uses its share of the domain's NICs.
    Time = fixed kernel and signalling overhead + one network latency + the slower of the RDMA
    and NVLink transfers.
    """
    n, g, nodes = d.ranks, d.ranks_per_node, d.nodes
    per_copy = moe_token_bytes(hidden, bytes_per_element)
    total = tokens_per_rank * top_k * per_copy
    reported = 0.0
    t_forward = 0.0
    if mode == "normal":
        nvl = total * (g - 1) / n
        rdma = 0.0
        if nodes > 1:
            reach = nodes if node_limit is None else max(1, min(nodes, node_limit))
            sent = reach * (1.0 - (1.0 - 1.0 / reach) ** top_k)
            rdma = tokens_per_rank * per_copy * sent * (nodes - 1) / nodes
            reported = tokens_per_rank * per_copy * sent
            if g > 1:
                targets = 1.0 - (1.0 - 1.0 / (reach * g)) ** top_k
                nvl = tokens_per_rank * per_copy * reach * (g - 1) * targets
                if d.deepep_forward_bytes_per_s > 0:
                    # the kernels' forwarding limit, on the benchmark's count (every distinct
                    # target GPU, the one the token arrives at included)
                    counted = tokens_per_rank * per_copy * reach * g * targets
                    t_forward = counted / d.deepep_forward_bytes_per_s
        fixed = MOE_NORMAL_FIXED_OVERHEAD_S
    else:
        rdma = total * (n - g) / n
        nvl = total * (g - 1) / n
        fixed = MOE_LL_FIXED_OVERHEAD_S
    net_per_gpu = d.net_bytes_per_s / g if nodes > 1 else 0.0
    t_rdma = rdma / net_per_gpu if rdma > 0 and net_per_gpu > 0 else 0.0
    t_nvl = max(nvl / d.scaleup_bytes_per_s if nvl > 0 else 0.0, t_forward)
    latency = 0.0
    if nodes > 1:
        fabric_latency = NCCL_HW_LATENCY_S["net"]["ring"]["LL"] + d.net_extra_latency_s
        latency = fabric_latency
    return MoeDispatchResult(
        time_s=fixed + latency + max(t_rdma, t_nvl),
        total_bytes=total,
        rdma_bytes=rdma,
        nvlink_bytes=nvl,
        reported_rdma_bytes=reported,
    )
