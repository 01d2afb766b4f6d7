"""Every constant of the performance model, with its unit and public source.

Versioned by content: ``CONSTANTS_VERSION`` is a digest of this file (stored with each run and
listed in the result's ``assumptions``; the engine's own version digests every source and data
file, advisor/engine/build_id.py).  docs/MODEL.md explains each one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from advisor.engine.build_id import constants_version

# The fabric ids are the vocabulary's; the model's constants are keyed by them.
from advisor.engine.facts.vocabulary import ETHERNET as ETHERNET
from advisor.engine.facts.vocabulary import FABRIC_IDS as FABRIC_IDS
from advisor.engine.facts.vocabulary import INFINIBAND as INFINIBAND
from advisor.engine.facts.vocabulary import ROCE as ROCE

CONSTANTS_VERSION: Final = constants_version()

BYTES_PER_GB: Final = 1e9
BITS_PER_BYTE: Final = 8.0


@dataclass(frozen=True)
class FabricClass:
    """How a fabric class behaves for NCCL-style collectives.

    ``wire_efficiency`` is the fraction of NIC line rate that large NCCL transfers reach
    (point estimate, with the low/high bounds of the published spread).  Latencies are in
    seconds; ``extra_step_latency_s`` is added to NCCL's network latency per inter-node
    algorithm step for this transport.
    """

    id: str
    rdma: bool
    wire_efficiency: float
    wire_efficiency_low: float
    wire_efficiency_high: float
    message_latency_s: float
    """One-way small-message latency NIC to NIC through one switch."""
    extra_step_latency_s: float
    switch_hop_latency_s: float
    adaptive_routing_default: bool
    ll128_allowed: bool
    """NCCL enables LL128 only with GPUDirect RDMA on NVLink systems."""
    jitter_cv: float
    """Coefficient of variation of a network collective's time (congestion, noise)."""
    in_network_reduction_available: bool
    source: str
    node_cap_gbytes_per_s: float = 0.0
    """Most a server moves over this transport whatever its NICs (0 = no limit beyond the
    NICs): NCCL's socket transport bounces every byte through host memory and kernel TCP."""
    node_cap_gbytes_per_s_low: float = 0.0
    """Pessimistic end of the published spread (used by the high bound)."""
    node_cap_gbytes_per_s_high: float = 0.0
    """Optimistic end of the published spread (used by the low bound)."""


FABRICS: dict[str, FabricClass] = {  # how each fabric (vocabulary.FABRIC_IDS) behaves
    INFINIBAND: FabricClass(
        id=INFINIBAND,
        rdma=True,
        wire_efficiency=0.94,
        wire_efficiency_low=0.92,
        wire_efficiency_high=0.97,
        message_latency_s=1.5e-6,
        extra_step_latency_s=0.0,
        switch_hop_latency_s=0.2e-6,
        adaptive_routing_default=True,
        ll128_allowed=True,
        jitter_cv=0.02,
        in_network_reduction_available=True,
        source=(
            "NVIDIA maintainers: ~12/24/46-48 GB/s per 100/200/400G NIC in NCCL "
            "(NVIDIA/nccl-tests #119, #160, #290); IB ~1-2 us end to end, ~100-300 ns per "
            "switch hop"
        ),
    ),
    ROCE: FabricClass(
        id=ROCE,
        rdma=True,
        wire_efficiency=0.92,
        wire_efficiency_low=0.88,
        wire_efficiency_high=0.96,
        message_latency_s=3.0e-6,
        extra_step_latency_s=1.0e-6,
        switch_hop_latency_s=0.4e-6,
        adaptive_routing_default=False,
        ll128_allowed=True,
        jitter_cv=0.04,
        in_network_reduction_available=False,
        source=(
            "RoCE v2 reaches ~90-97% of line rate when tuned; a few us per message "
            "(Meta, 'RDMA over Ethernet for Distributed AI Training at Meta Scale', SIGCOMM'24)"
        ),
    ),
    ETHERNET: FabricClass(
        id=ETHERNET,
        rdma=False,
        wire_efficiency=0.40,
        wire_efficiency_low=0.32,
        wire_efficiency_high=0.60,
        message_latency_s=25e-6,
        extra_step_latency_s=20e-6,
        switch_hop_latency_s=0.6e-6,
        adaptive_routing_default=False,
        ll128_allowed=False,
        jitter_cv=0.10,
        in_network_reduction_available=False,
        source=(
            "NCCL over TCP sockets: 4-6 GB/s busbw on a 100G NIC, i.e. 32-48% of line rate "
            "(NVIDIA/nccl #450), 'not more than 60% of wire speed' (NVIDIA/nccl #209); per "
            "server at most ~6.5-14 GB/s whatever its NICs: InfiniBand gave 26-57x the "
            "multi-node throughput of TCP on the same Azure H100 servers (a published "
            "fine-tuning comparison), "
            "against ~370 GB/s of 8 x 400G IB; kernel TCP adds tens of us per message"
        ),
        node_cap_gbytes_per_s=10.0,
        node_cap_gbytes_per_s_low=6.5,
        node_cap_gbytes_per_s_high=14.0,
    ),
}

# --- Scale-up (inside the server / NVLink domain) -------------------------------------------

SCALEUP_EFFICIENCY: dict[str, float] = {
    "nvlink": 0.82,
    "nvlink-mesh": 0.80,
    "xgmi": 0.75,
    "roce-mesh": 0.75,
    "pcie": 0.75,
}
"""Fraction of per-direction scale-up bandwidth that NCCL ring bus bandwidth reaches.

NVLink: 8x H100 measure ~367-370 GB/s of 450 (NVIDIA/nccl #1455; nccl-tests #212), 8x A100
~230-235 of 300 (NCCL caps its own A100 model at 235 GB/s, tuning.cc).  Mesh and PCIe values
are engineering estimates (no switch: links to different peers are used in parallel with
some loss; PCIe moves data through host bridges)."""
SCALEUP_EFFICIENCY_SOURCE: Final = "NVIDIA/nccl #1455, NVIDIA/nccl-tests #212, NCCL tuning.cc"

PCIE_RING_EFFICIENCY: Final = 0.625
"""NCCL ring bus bandwidth over a GPU's PCIe x16 link / the link's per-direction rate, for
GPUs with no NVLink (L40S, H100 PCIe; their catalog ``scaleup_efficiency``).  NCCL rates a
PCIe link at ``width x speed / 80`` GB/s (24 for Gen4 x16, 48 for Gen5; src/graph/topo.cc)
and its ring search runs a channel at the largest entry of its intra-node speed array not
above that (src/graph/search.cc ``speedArrayIntra`` {40, 30, 20, ...} below sm90,
``sm90SpeedArrayIntra`` {60, 50, 40, ...}): 20 of Gen4's 32 GB/s, 40 of Gen5's 64, and no
second channel (``ncclTopoDupChannels`` needs 25 GB/s).  Measured: 8-GPU NCCL all-reduce bus
bandwidth 37.6-41.7 GB/s on PCIe Gen5 x16 hosts with P2P (voipmonitor/rtx6kpro,
hardware/pcie-bandwidth.md), 0.60-0.66 of 63 GB/s."""
PCIE_HOST_GPUS_PER_SOCKET: Final = 4
"""GPUs under one CPU socket of an 8-GPU PCIe server (two sockets, four x16 GPUs each): a
tensor-parallel ring of more crosses the inter-socket link."""
PCIE_INTER_SOCKET_RING_BYTES_PER_S: Final = 15.0e9
"""NCCL ring bus bandwidth of a ring that crosses a two-socket host's CPU-to-CPU link: NCCL
rates AMD's Infinity Fabric link at 16 GB/s (src/graph/topo.h ``AMD_BW``; Intel UPI 10,
``SKL_QPI_BW``) and runs the ring at the speed array's 15.  AMD: the TensorRT-LLM v0.17
performance overview reports an all-reduce issue with NCCL 2.23.4 "on AMD-based CPU
platforms" worked around by ``NCCL_P2P_LEVEL=SYS``, a setting that matters only between GPUs
joined through CPU host bridges (NCCL 2.23 stopped using P2P across them, src/graph/paths.cc),
i.e. its PCIe-only (L40S) host."""

# --- NCCL cost model (NVIDIA/nccl src/graph/tuning.cc, 2.19-2.2x series) ---------------------

NCCL_TUNING_SOURCE: Final = (
    "NVIDIA/nccl src/graph/tuning.cc (2.19-2.2x): baseLat, hwLat, bw factors"
)
PROTOCOLS: tuple[str, ...] = ("LL", "LL128", "Simple")
NCCL_BASE_LATENCY_S: dict[str, dict[str, float]] = {
    "tree": {"LL": 6.8e-6, "LL128": 14.0e-6, "Simple": 8.4e-6},
    "ring": {"LL": 6.6e-6, "LL128": 14.0e-6, "Simple": 8.4e-6},
}
NCCL_HW_LATENCY_S: dict[str, dict[str, dict[str, float]]] = {
    "nvlink": {
        "tree": {"LL": 0.6e-6, "LL128": 1.25e-6, "Simple": 4.0e-6},
        "ring": {"LL": 0.6e-6, "LL128": 1.9e-6, "Simple": 3.4e-6},
        "nvls": {"LL": 0.0, "LL128": 0.0, "Simple": 25e-6},
    },
    "pcie": {
        "tree": {"LL": 1.0e-6, "LL128": 1.9e-6, "Simple": 4.0e-6},
        "ring": {"LL": 1.0e-6, "LL128": 2.5e-6, "Simple": 5.7e-6},
        "nvls": {"LL": 0.0, "LL128": 0.0, "Simple": 0.0},
    },
    "net": {
        "tree": {"LL": 5.0e-6, "LL128": 8.5e-6, "Simple": 14e-6},
        "ring": {"LL": 2.7e-6, "LL128": 4.0e-6, "Simple": 14e-6},
        "nvls": {"LL": 0.0, "LL128": 0.0, "Simple": 18e-6},
        "nvls_tree": {"LL": 0.0, "LL128": 0.0, "Simple": 20.9e-6},
        "collnet": {"LL": 0.0, "LL128": 0.0, "Simple": 31e-6},
    },
}
NVLINK_HOP_EXTRA_S: dict[str, float] = {"ampere": 0.6e-6, "blackwell": 0.8e-6}
"""Measured time per NVLink step beyond NCCL's hwLat (the ``nvlink`` row above, which reads
Hopper's tables within 1 us), by GPU generation: NCCL's one-server all-reduce and all-gather of
64 KB or less as AIConfigurator 0.12.0's collectors measured them
(``<gpu>/comm/nccl/<version>/nccl_perf.parquet``, 2, 4 and 8 GPUs), less the engine's time,
over the ring's steps (2(n-1) for an all-reduce, n-1 for an all-gather): on 8 GPUs B200
0.78 / 0.81 us (NCCL 2.29.2 / 2.27.3), B300 0.76, all-gathers 0.79-1.07, GB200 on 4 GPUs
0.99; A100 0.50 (all-gather 0.64, 4 GPUs 0.72); H100 / H200 -0.04 to +0.08.  A 512-byte
all-reduce on 8 B200 takes 25.1 us, on 8 H100 15.5 (docs/MODEL.md 3, "NVLink steps by
generation"; ``bench/aic_nccl_table.py``).  Added to every protocol's hwLat of the generation's
latency class (:data:`NCCL_HW_LATENCY_S`); not set on any validation row."""


def _nvlink_class(extra_s: float) -> dict[str, dict[str, float]]:
    """The ``nvlink`` latency class with ``extra_s`` more per ring and tree step (NVLS as is)."""
    return {
        algo: {p: t + (extra_s if algo in ("ring", "tree") else 0.0) for p, t in protos.items()}
        for algo, protos in NCCL_HW_LATENCY_S["nvlink"].items()
    }


for _generation, _extra in NVLINK_HOP_EXTRA_S.items():
    NCCL_HW_LATENCY_S[f"nvlink-{_generation}"] = _nvlink_class(_extra)


def nccl_latency_class(scaleup_kind: str, generation: str = "") -> str:
    """The :data:`NCCL_HW_LATENCY_S` row of a scale-up kind on a GPU generation (a
    ``CommDomain``'s ``scaleup_latency_class``)."""
    if scaleup_kind == "pcie":
        return "pcie"
    return f"nvlink-{generation}" if generation in NVLINK_HOP_EXTRA_S else "nvlink"


NVLS_MIN_GPUS: Final = 3
"""NCCL enables NVLS only on more than two GPUs of a domain: ``ncclNvlsInit``
(``src/transport/nvls.cc``, 2.19-2.30) returns with ``nvlsSupport = 0`` when the topology holds
``gpuCount <= 2`` (an MNNVL clique of 2 or fewer likewise); two GPUs run the ring or the tree."""
NVLS_ONE_DOMAIN_MIN_GPUS: Final = 8
"""The fewest GPUs of a communicator inside one NVLink domain the engine prices NVLS for: the
one-server tables (:data:`NVLINK_FEW_GPU_BUS_SHARE`) read 4 H100 and H200 at the ring's bus
bandwidth (0.953 of 8's ring, 349 GB/s at 512 MB) where NVLS as priced on 8 would give 395: no
NVLS gain below 8 (on 4 Blackwell GPUs the ring is the faster already).  Across domains NVLS
(NVLS-tree) keeps :data:`NVLS_MIN_GPUS`."""
NVLS_BLACKWELL_MEASURED: Final = 0.89
"""What one Blackwell NVLink domain's NVLS all-reduce reaches of NCCL's Blackwell efficiency
(``nvlsEfficiency`` 0.74 over Hopper's 0.85, which the NVLS factor was set on): the engine's
time over the measured at 256 MB and more on 8 GPUs, NCCL's own one-server all-reduce as
AIConfigurator 0.12.0's collectors measured it (``<gpu>/comm/nccl/<version>/nccl_perf.parquet``):
B200 0.875-0.895 (NCCL 2.27.3-2.29.2), B300 0.895, against H100 0.969 and H200 1.003 with the same
model (docs/MODEL.md 3, "Blackwell NVLS at its measured bandwidth"; ``bench/aic_nccl_table.py``).
Not set on any validation row."""
NVLINK_FEW_GPU_BUS_SHARE: dict[str, dict[int, float]] = {
    "ampere": {2: 0.855, 4: 0.959, 8: 1.0},
    "hopper": {2: 0.856, 4: 0.953, 8: 1.0},
    "blackwell": {2: 0.736, 4: 0.879, 8: 1.0},
}
"""What a ring all-reduce among 2 or 4 GPUs of one NVSwitch domain reaches of the bus bandwidth
the engine gives 8 (``SCALEUP_EFFICIENCY``, set on 8-GPU servers): the engine's ring time over
the measured at 256 MB and more, NCCL's one-server all-reduce as AIConfigurator 0.12.0's
collectors measured it (``<gpu>/comm/nccl/<version>/nccl_perf.parquet``), averaged over the
tables of a generation: A100 (NCCL 2.27.3) 0.855 / 0.959; H100 and H200 (2.26.2-2.29.2)
0.851-0.861 / 0.952-0.955; B200, GB200, B300, GB300 (2.23-2.29.2) 0.717-0.747 / 0.855-0.889;
on 8 GPUs the same reading is 0.97-1.00.  8 B200 reach 704 GB/s of bus bandwidth at 512 MB,
2 of them 534, 4 H100 349 against 8's ring 365 (docs/MODEL.md 3, "Fewer than eight GPUs of a
server"; ``bench/aic_nccl_table.py``).  Not set on any validation row."""


def nvlink_few_gpu_share(scaleup_kind: str, generation: str, ranks: int) -> float:
    """:data:`NVLINK_FEW_GPU_BUS_SHARE` of ``ranks`` GPUs of a generation on an NVSwitch
    (:func:`_nvlink_share`): 1 from 8 GPUs on."""
    return _nvlink_share(NVLINK_FEW_GPU_BUS_SHARE, scaleup_kind, generation, ranks)


NVLINK_OP_BUS_SHARE: dict[str, dict[str, dict[int, float]]] = {
    "all_gather": {
        "ampere": {2: 0.771, 4: 0.880, 8: 0.908},
        "hopper": {2: 0.806, 4: 0.902, 8: 0.922},
        "blackwell": {2: 0.820, 4: 0.900, 8: 0.890},
    },
    "reduce_scatter": {
        "ampere": {2: 0.867, 4: 0.937, 8: 0.951},
        "hopper": {2: 0.767, 4: 0.885, 8: 0.931},
        "blackwell": {2: 0.765, 4: 0.875, 8: 0.887},
    },
    "all_to_all": {
        "ampere": {2: 0.851, 4: 0.897, 8: 0.897},
        "hopper": {2: 0.903, 4: 0.901, 8: 0.865},
        "blackwell": {2: 0.627, 4: 0.769, 8: 0.767},
    },
}
"""What NCCL's all-gather, reduce-scatter and all-to-all reach of the all-reduce's bus bandwidth
(:data:`NVLINK_FEW_GPU_BUS_SHARE` applied) among 2, 4 and 8 GPUs of one NVSwitch domain: the
engine's time over the measured at 256 MB and more, NCCL's one-server collectives as
AIConfigurator 0.12.0's collectors measured them (``<gpu>/comm/nccl/<version>/nccl_perf.parquet``,
half-precision buffers), averaged over a generation's tables (A100 one table, H100 and H200
six, B200, GB200, B300, GB300 ten at 2 and 4 GPUs, six at 8; each table within 0.04 of its
generation's mean but the all-to-all's, within 0.08).  8 H100 gather at 335 GB/s of bus
bandwidth and exchange (all-to-all) at 315 where they all-reduce at 365; 8 B200 at 620 and 563
against 704 (docs/MODEL.md 3, "Fewer than eight GPUs of a server"; Hopper's 4-GPU figures read
again on its ring share, "NVLS below eight GPUs").  Not set on any validation row."""


def busbw_factor(op: str, ranks: int) -> float:
    """nccl-tests bus bandwidth factor: busbw = algbw * factor."""
    if ranks <= 1:
        return 1.0
    if op == "all_reduce":
        return 2.0 * (ranks - 1) / ranks
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        return (ranks - 1) / ranks
    return 1.0


def nvlink_op_share(op: str, scaleup_kind: str, generation: str, ranks: int) -> float:
    """:data:`NVLINK_OP_BUS_SHARE` of ``op`` among ``ranks`` GPUs of a generation on an NVSwitch
    (:func:`_nvlink_share`; a rack of 72 takes the 8-GPU figure); 1 for the all-reduce."""
    return _nvlink_share(NVLINK_OP_BUS_SHARE.get(op, {}), scaleup_kind, generation, ranks)


SHARED_OPS: tuple[str, str, str] = ("all_gather", "reduce_scatter", "all_to_all")
"""The collectives of :data:`NVLINK_OP_BUS_SHARE`, in the order of :func:`nvlink_op_shares`."""


@lru_cache(maxsize=256)
def nvlink_op_shares(scaleup_kind: str, generation: str, ranks: int) -> tuple[float, float, float]:
    """:func:`nvlink_op_share` of each of :data:`SHARED_OPS` (a ``CommDomain``'s shares; kept
    by value: every domain a design builds asks it, from a few kinds, generations and sizes)."""
    gather, scatter, exchange = (
        nvlink_op_share(op, scaleup_kind, generation, ranks) for op in SHARED_OPS
    )
    return gather, scatter, exchange


def _nvlink_share(
    by_generation: dict[str, dict[int, float]], scaleup_kind: str, generation: str, ranks: int
) -> float:
    """A generation's row of figures at 2, 4 and 8 GPUs of an NVSwitch domain (``nvlink``) at
    ``ranks``: linear in log2(ranks) between them, the 2-GPU figure below, the 8-GPU figure
    above; 1 for another scale-up kind or a generation without a row."""
    row = by_generation.get(generation) if scaleup_kind == "nvlink" else None
    if row is None:
        return 1.0
    if ranks <= 2:
        return row[2]
    if ranks >= 8:
        return row[8]
    x = math.log2(ranks)
    if ranks <= 4:
        return row[2] + (row[4] - row[2]) * (x - 1.0)
    return row[4] + (row[8] - row[4]) * (x - 2.0)


NCCL_PROTOCOL_BW_FACTOR: dict[str, float] = {"LL": 0.5, "LL128": 0.92, "Simple": 1.0}
"""LL carries 4 B of flag per 8 B line (busBw*0.5); LL128 120 of 128 B (0.92)."""
NCCL_TREE_BW_FACTOR: Final = 0.92
"""Tree all-reduce busBw = 0.92 x channel bandwidth (tuning.cc 'busBw*.92')."""
NCCL_NVLS_BW_FACTOR: Final = 0.745
"""NVLS all-reduce algorithm bandwidth / NCCL ring bus bandwidth inside the domain.
NVIDIA maintainer: 8x H100 NVLS peaks at busbw ~480 GB/s, algbw ~275 GB/s, against ~370 GB/s
ring busbw (NVIDIA/nccl-tests #212): 275/370 = 0.745 (NCCL's own tuner uses 5/6)."""
NCCL_COLLNET_BW_FACTOR: Final = 0.9
"""IB SHARP (CollNet) busBw x 0.9 (tuning.cc)."""
NCCL_NET_OVERHEAD_S: Final = 1.0e-6
"""Per inter-node step proxy overhead (getNetOverhead: 1 us x86 Intel; x3 for Simple)."""
NCCL_P2P_PER_PEER_OVERHEAD_S: Final = 0.5e-6
"""Posting one send/recv pair to one peer in a grouped all-to-all (NVIDIA/nccl #866: all-to-all
latency grows linearly with the number of peers).  Engineering estimate."""

# --- Network fabric effects -----------------------------------------------------------------

DEFAULT_SWITCH_RADIX: Final = 64
"""Ports of one compute-fabric switch at the NIC speed when a design names no switch (NVIDIA
Quantum-2 QM9700: 64 x 400G; 51.2 Tb/s Ethernet switches: 64 x 800G).  Sizes the leaves and
pods that placement uses (advisor/engine/model/placement.py)."""
TCP_GBITS_PER_S_PER_CORE: Final = 42.0
"""One CPU core moves ~42 Gb/s of a long TCP flow with TSO/GRO/jumbo frames, receive side
being the bottleneck (Cai et al., 'Understanding Host Network Stack Overheads', SIGCOMM'21).
CPU cost of NCCL over sockets = 2 x node throughput / this (send + receive), reported as an
assumption; NCCL's socket helper threads (NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD <= 64)
come on top."""
RAIL_GROUP_NODES: Final = 32
"""Servers whose same-index NICs share one leaf in a rail-optimized fabric (NVIDIA DGX SuperPOD
reference architecture: a scalable unit of 32 nodes, one leaf per rail)."""
ECMP_COLLISION_LOSS: Final = 0.20
ECMP_COLLISION_LOSS_HIGH: Final = 0.40
"""Throughput lost on cross-leaf traffic by ECMP hash collisions without adaptive routing.
High: 'up to ~40%' on all-reduce before mitigation (Meta, SIGCOMM'24); point: half of that,
with NCCL's several channels/QPs per NIC spreading flows.  Balls-into-bins gives 1-1/e = 37%
of uplinks idle with one flow per uplink."""

# --- Compute ---------------------------------------------------------------------------------

GEMM_HALF_EFFICIENCY_WIDTH: Final = 128
"""Per-GPU hidden width (hidden / tp) at which GEMM efficiency halves: eff = w / (w + 128).
Small matrices cannot fill the GPU's SMs; engineering estimate consistent with the rise of
Megatron-LM throughput with model width (Narayanan et al. SC'21, Table 1)."""
FP8_EFFICIENCY_FACTOR: Final = 0.70
"""FP8 reaches 0.7x the bf16 fraction of its (2x) peak: end-to-end FP8 speed-ups of ~1.3-1.5x
reported with Transformer Engine (NVIDIA TE docs; DeepSeek-V3 report)."""
HBM_EFFICIENCY: Final = 0.80
"""Achievable fraction of HBM bandwidth in memory-bound kernels (decode GEMV, optimizer):
STREAM-like measurements reach 80-90% of datasheet bandwidth."""
OPTIMIZER_BYTES_PER_PARAM: Final = 30.0
"""Adam step memory traffic over the GPU's optimizer shard: read fp32 master, m, v, grad
(16 B), write master, m, v (12 B), write bf16 param (2 B).  The gradient buffer's zeroing
covers every local parameter, not the shard: :data:`STEP_GRAD_BUFFER_BYTES_PER_PARAM`."""
STEP_GRAD_BUFFER_BYTES_PER_PARAM: Final = 8.0
"""Per-step passes over the whole local fp32 gradient buffer (``main_grad``), outside the
GEMMs and on the compute stream, once per step whatever the batch: Megatron-Core zeroes it
before the step (``_ParamAndGradBuffer.reset``: ``grad_data.zero_()``, 4 B written) and reads
it for the NaN/Inf check before the data-parallel collective (``check_grads``:
``grad_data.norm()``, 4 B read; Megatron-LM's ``check_for_nan_in_loss_and_grad`` is on unless
``--no-check-for-nan-in-loss-and-grad``).  The buffer is fp32: Megatron-LM sets
``accumulate_allreduce_grads_in_fp32`` for bf16 training ("bfloat16 requires gradient
accumulation and all-reduce to be done in fp32", megatron/training/arguments.py) unless
``--grad-reduce-in-bf16``."""
FP8_WEIGHT_CAST_BYTES_PER_PARAM: Final = 4.0
"""FP8 training casts every local weight to FP8 once per step, on the first micro-batch, and
reuses it for the others (Transformer Engine's ``is_first_microbatch``: "allows caching of the
FP8 versions of the weights"): read the bf16 weight (2 B), write the FP8 copy for the forward
and its transpose for the backward's data gradient (1 + 1 B)."""

# --- Memory ----------------------------------------------------------------------------------

MEMORY_USABLE_FRACTION: Final = 0.90
"""Share of HBM usable for model state (CUDA context, allocator fragmentation take the rest)."""
WEIGHT_BYTES: dict[str, float] = {
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "fp4": 0.5625,
    "mxfp4": 0.53125,
}
"""Bytes per element of each precision: weights, GEMM operands, expert dispatch payloads (the
one table; training activations stay 16-bit under fp8, see ``stage_time._act_bytes``).  fp4 is
NVFP4 (serving only): 4-bit values and one FP8 (E4M3) scale per 16 (NVIDIA Model Optimizer's
NVFP4 block size), 4.5 bits an element.  mxfp4 (serving only, MoE models) is the OCP
Microscaling MXFP4 format of gpt-oss's published checkpoint: 4-bit E2M1 values and one 8-bit
(E8M0) scale per 32 (OCP Microscaling Formats (MX) Specification v1.0, 2023), 4.25 bits an
element; only the routed experts are stored so (:data:`DENSE_PRECISION`)."""
DENSE_PRECISION: dict[str, str] = {"mxfp4": "bf16"}
"""The precision of every layer but the routed experts where it differs from the scenario's:
gpt-oss ships its MoE experts in MXFP4 and its attention, router, embedding and output head in
BF16 (openai/gpt-oss-120b ``config.json``, ``quantization_config``: ``quant_method`` mxfp4,
``modules_to_not_convert`` the attention, router, embedding and ``lm_head``); any other
precision is its own (``facts.weights.dense_precision``)."""
MXFP4_MXFP8_GPUS_NEED: Final = "fp4"
"""The tensor-core precision a GPU must have for TensorRT-LLM to run MXFP4 experts against
MXFP8 activations (Blackwell: B200 / GB200 / B300 / GB300, its gpt-oss MoE support matrix,
"MXFP8 activation, MXFP4 weights, TRTLLM / CUTLASS backends") at the FP8 rate, with the FP8 KV
cache of its gpt-oss recipe (perf-overview ``llm_options.yml``: ``kv_cache_config: dtype: fp8``);
elsewhere (Hopper: the TRITON backend) the experts run BF16 activations against the MXFP4 weights
at the 16-bit rate and the KV cache keeps BF16 (the recipe's "Hopper: use auto")
(``serving.precision.expert_math_precision``)."""
HEAD_PRECISION: dict[str, str] = {
    "bf16": "bf16",
    "fp16": "fp16",
    "fp8": "bf16",
    "fp4": "bf16",
    "mxfp4": "bf16",
}
"""The precision of a model's output head (and, served, its embedding table) at each precision:
16 bits under fp8 and fp4. Training: Megatron-Core's output layer is ``tensor_parallel.
ColumnParallelLinear``, not a Transformer Engine module, so ``fp8_autocast`` leaves it in BF16
(``megatron/core/models/gpt/gpt_model.py``). Serving: NVIDIA's Model Optimizer disables
``*lm_head*`` in every quantization config and quantizes no embedding
(``modelopt/torch/quantization/config.py``, ``_default_disabled_quantizer_cfg``; docs/MODEL.md
5.1 and 15.1)."""
QUANTIZED_PRECISIONS: frozenset[str] = frozenset({"fp8", "fp4"})
"""Precisions whose GEMMs run on the 8- and 4-bit tensor-core path: priced at their own peak
with the FP8 GEMMs' measured fraction of it (``ComputeProfile.mamf_fp8``) and, at inference,
the FP8 kernels' overlap; for fp4 (NVFP4, Blackwell) that is an assumption, no FP4 GEMM table
being read (docs/MODEL.md 15.1, "NVFP4 serving")."""
SATURATED_S: Final = 3600.0
"""Latency the serving load model reports when the arrival rate exceeds capacity (the queue
grows without bound), and the most a closed loop's users are said to wait (their cycle, users /
capacity, past the hour): a stand-in, said in words wherever people read it
(:func:`advisor.engine.facts.formatting.first_token`, :func:`~advisor.engine.facts.formatting.
first_token_over_capacity`)."""
SATURATED_MS: Final = SATURATED_S * 1e3
""":data:`SATURATED_S` in the milliseconds the serving metrics are given in."""


def over_capacity_ms(value_ms: float) -> bool:
    """A time in milliseconds at the load model's over-capacity stand-in (:data:`SATURATED_S`):
    the queue has no bound, whatever the figure says."""
    return value_ms >= SATURATED_MS


KV_ELEMENT_BYTES: dict[str, float] = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp4": 1.0}
"""KV-cache bytes per element of a GQA/MHA model served at each precision: FP8 under fp8
(TensorRT-LLM ``fp8_kv_cache``, vLLM ``kv_cache_dtype=fp8``) and under fp4 (NVIDIA's NVFP4
checkpoints keep an FP8 KV cache: Model Optimizer's ``hf_ptq.py`` exports them with
``kv_cache_qformat`` fp8, ``kv_cache_quant_algo: FP8`` in their ``hf_quant_config.json``); a
latent (MLA) cache stays 16-bit under fp8 and bf16 and is FP8 under fp4 (NVIDIA's NVFP4 DeepSeek
checkpoints say ``kv_cache_quant_algo: FP8`` too: ``nvidia/DeepSeek-V3.1-NVFP4``'s
``hf_quant_config.json``; ``serving.precision.kv_element_bytes``)."""
LATENT_KV_ELEMENT_BYTES: dict[str, float] = {"bf16": 2.0, "fp16": 2.0, "fp8": 2.0, "fp4": 1.0}
"""KV-cache bytes per element of a latent (MLA) cache at each serving precision: bf16 as in
FlashMLA and the DeepSeek / SGLang deployments, whose FP8 checkpoints (deepseek-ai) quantise no
cache; FP8 under fp4, as NVIDIA's NVFP4 checkpoints of DeepSeek ship it (see
:data:`KV_ELEMENT_BYTES`)."""
GRAD_BYTES_PER_PARAM: Final = 2.0
"""bf16 gradients communicated: 2 bytes per parameter per step."""
FP8_PARAM_GATHER_BYTES_PER_PARAM: Final = 1.0
"""With FP8 weights (``parallelism.fp8_param_gather``) the distributed optimizer all-gathers
the FP8 bytes of every linear layer's weight: Megatron-Core ``fp8_param_gather`` (the param
buffer holds the Float8Tensor data), NeMo 1.x ``MegatronDistributedFusedAdam``
(``param_sync_dtype=torch.uint8`` for Float8Tensor parameters); embeddings and the output layer
stay bf16 (docs/MODEL.md 5.4)."""
MASTER_AND_ADAM_BYTES_PER_PARAM: Final = 12.0
"""fp32 master weights + Adam m and v (ZeRO paper, Rajbhandari et al. 2020: 16 B/param total
with 2 B weights and 2 B gradients)."""
TRAIN_WEIGHT_GRAD_BYTES_PER_PARAM: Final = 4.0
"""bf16 weights (2) + bf16 gradients (2) kept on every model-parallel shard."""
RECOMPUTE_BYTES_PER_TOKEN_HIDDEN: Final = 2.0
"""Full recomputation keeps only each layer's bf16 input (2 bytes per token per hidden)."""

# --- Overlap, bubbles, stragglers ------------------------------------------------------------

DP_OVERLAP_EFFICIENCY: Final = 0.85
"""Fraction of the overlap window in which gradient communication actually progresses
(communication kernels compete with compute for SMs and memory bandwidth)."""
DDP_BUCKET_MIN_PARAMS: Final = 40e6
DDP_BUCKET_PARAMS_PER_RANK: Final = 1e6
"""Megatron-Core's gradient bucket: ``max(40,000,000, 1,000,000 x dp_size)`` parameters when
``overlap_grad_reduce`` is on (``DistributedDataParallelConfig.bucket_size``: "larger DP sizes
need larger buckets to ensure collectives do not become latency-bound").  Each bucket's
reduce-scatter (all-reduce without sharding) and all-gather is its own collective; the last
bucket's reduce-scatter and the first bucket's all-gather are never overlapped."""
TP_COMM_OVERLAP: Final = 0.0
"""Tensor-parallel collectives sit on the critical path (Megatron-LM default)."""
EP_COMM_OVERLAP: Final = 0.0
"""MoE all-to-all exposed unless the framework overlaps it (DualPipe hides most of it)."""
EP_COMM_SMS: Final = 20
"""Streaming multiprocessors the expert all-to-all kernels hold while they run under another
micro-batch's compute: DeepSeek-V3's DualPipe communication kernels use 20 SMs (DeepSeek-V3
report arXiv 2412.19437 section 3.2.2), Megatron-Core's DeepEP dispatcher the same by default
(``moe_deepep_num_sms = 20``, TransformerConfig).  The overlapped compute runs on the rest."""
COMPUTE_JITTER_CV: Final = 0.005
"""Per-node step-time variation from clocks, thermals and OS noise (0.5%); engineering
estimate, stragglers in large runs reported in Llama 3 (arXiv 2407.21783 section 3.3.4)."""

# --- MoE all-to-all (DeepEP) -----------------------------------------------------------------

MOE_LL_FIXED_OVERHEAD_S: Final = 30e-6
"""Fixed cost of one low-latency dispatch or combine (kernel launch, per-expert packing,
completion flags over the network).  Engineering estimate; checked against DeepEP's published
latencies for EP8..EP256 (docs/MODEL.md)."""
MOE_NORMAL_FIXED_OVERHEAD_S: Final = 30e-6
DEEPEP_NORMAL_FORWARD_BYTES_PER_S: Final = 147e9
"""Most a GPU's DeepEP normal internode kernels deliver over NVLink, in the benchmark's own
count (``nvl_recv_bytes``: a token once per distinct GPU holding one of its experts, the GPU it
arrives at included).  A kernel limit, not the link's: on two 8 x H20 servers over RoCE
(NVLink ~450 GB/s per direction) the benchmark reports up to 139 GB/s (NVL) at 42.5 GB/s
(RDMA) with 24 SMs (deepseek-ai/DeepEP issue #137), and the same author's two-server run in
pull request #181 up to 147 GB/s at 44.7; on two servers every token reaches both, so NVLink,
not the NIC, binds.  Taken as 147 GB/s (the best line) for Hopper GPUs only, where DeepEP's
internode kernels were measured (other generations: the link's rate alone)."""
FP8_SCALE_BYTES_PER_128: Final = 4.0
"""DeepEP FP8 dispatch adds one fp32 scale per 128 elements."""

# --- Inference -------------------------------------------------------------------------------

DECODE_KERNEL_OVERHEAD_S_PER_LAYER: Final = 20e-6
"""Kernel launch and synchronisation cost per layer per decode step without CUDA graphs
(~10 kernels x 2 us); engineering estimate."""

# --- Retrieval pipelines (RAG; docs/MODEL.md section 21) -------------------------------------

TEXT_BYTES_PER_TOKEN: Final = 4.0
"""Bytes of UTF-8 text per token: one token is about 4 characters of English text (OpenAI,
'What are tokens and how to count them'); sizes questions, retrieved chunks and answers on the
wire."""
EMBEDDING_BYTES_PER_DIM: Final = 4.0
"""A query vector travels as float32: 4 bytes per dimension (FAISS and Milvus FLOAT_VECTOR)."""
EMBEDDING_MAX_INPUT_TOKENS: Final = 512
"""BERT-class embedding models read at most 512 tokens (BAAI bge-large-en-v1.5 and intfloat
e5-large-v2 model cards; NV-EmbedQA-E5-v5: 512 in the NVIDIA NeMo Retriever Embedding NIM
support matrix): a longer question is truncated before it is embedded."""
HNSW_LINKS: Final = 16
HNSW_BYTES_PER_LINK: Final = 16.0
VECTOR_INDEX_MEMORY_HEADROOM: Final = 1.2
"""Memory of an in-memory HNSW index: N x (D x 4 + m x 16) x 1.2 bytes, m = 16 neighbour links
(16 bytes each with their metadata) and 20 % operational headroom (ScyllaDB Vector Search
'Sizing and Capacity Planning'; the FAISS wiki gives (d x 4 + M x 2 x 4) bytes per vector
before headroom)."""
VECTOR_SERVER_MEMORY_BYTES = 512 * 2**30
"""Memory of one vector-search server: a memory-optimised 2-socket server such as AWS
r7i.16xlarge (64 vCPU, 512 GiB); an estimate of the tier's building block, not a catalog part."""
VECTOR_SEARCH_QUERIES_PER_S_PER_SERVER: Final = 1_500.0
VECTOR_SEARCH_LATENCY_S: Final = 0.010
"""One Milvus node on VectorDBBench (1M x 768-d, IVF_FLAT, 100 concurrent clients): ~1,560
queries/s with p99 latency 4-10 ms (a published VectorDBBench run, 2024); a conservative
per-replica rate (USearch reaches ~100k queries/s on 64 cores at 256-d, unum-cloud/USearch
BENCHMARKS.md)."""
EMBEDDING_QUERIES_PER_S_PER_SERVER: Final = 4_600.0
EMBEDDING_LATENCY_S: Final = 0.022
"""One embedding GPU server answering short queries with a 1,024-d BERT-large-class model
(mxbai-embed-large): 4,600 texts/s at p99 22 ms (GigaGPU's published TEI/Infinity throughput
table, 2026; bge-large-en-v1.5 unbatched reaches 70 requests/s at concurrency 5 on an RTX
4070, SearchLayer 2025, so batching is assumed)."""
RETRIEVAL_TIER_MIN_SERVERS: Final = 2
"""Each retrieval tier keeps one spare replica (N+1): a failed embedding or vector-search
server must not stop the pipeline (Milvus in-memory replicas for high availability)."""

# --- Sanity bounds ---------------------------------------------------------------------------

MIN_BYTES: Final = 1.0

# --- Scenario defaults: constraints (docs/MODEL.md section 1) ---------------------------------
# One default each: the scenario parser and the result records both read these.

DEFAULT_GPU_PRICING: Final = "cloud"
DEFAULT_GPU_HOUR_USD: Final = 2.5
"""Cloud price of one GPU-hour when the GPU's catalog entry gives none."""
DEFAULT_ELECTRICITY_USD_PER_KWH: Final = 0.10
DEFAULT_PUE: Final = 1.3
DEFAULT_AMORTIZATION_YEARS: Final = 4.0
DEFAULT_TEAM_SKILLS: Final = "both"
DEFAULT_PREFER: Final = "balanced"
DEFAULT_UTILIZATION: Final = 0.8
"""Share of the amortization life the cluster runs work (docs/MODEL.md "Decision cost")."""

# --- Scenario defaults: a retrieval pipeline (``rag``, docs/MODEL.md section 21) ---------------

DEFAULT_TOP_K: Final = 4
"""Chunks retrieved per question: LangChain's ``VectorStore.similarity_search`` returns k = 4
by default (langchain-core reference)."""
DEFAULT_CHUNK_TOKENS: Final = 256
"""Tokens per chunk: common practice is 128-512 tokens (Milvus, 'optimal chunk size for RAG
applications'); Vertex AI RAG Engine defaults to 1,024 (Google Cloud docs)."""
DEFAULT_EMBEDDING_DIMS: Final = 1024
"""Dimensions of one embedding: bge-large-en-v1.5, e5-large-v2 and NVIDIA NV-EmbedQA-E5-v5
all produce 1,024 (their model cards)."""
DEFAULT_CORPUS_CHUNKS: Final = 10_000_000
"""Chunks in the index: VectorDBBench's 10M-vector performance case (zilliztech/VectorDBBench,
Performance768D10M), about 2.6 billion tokens at 256 tokens per chunk."""
