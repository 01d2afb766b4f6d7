"""Collectives inside one scale-up domain as the serving model prices them (no network): the
tensor-parallel all-reduce of every decode step and prefill pass.

A decode step's all-reduce grows with its batch, so every batch the load model tries asks
:func:`collectives.collective_time_s` for a new size on the same one-domain communicator.
:class:`ScaleupAllReduce` keeps, per (GPU, ranks), what that function reads of the domain
besides the size (each protocol's latency and bandwidth for the ring, the tree and NVLS) and
prices a size with the same operations in the same order (the same bits;
tests/engine/test_serving_intra.py holds it to ``collective_time_s`` on every catalog GPU).

Units: seconds, bytes.
"""

from __future__ import annotations

import math

from advisor.engine.facts.catalog import GpuSpec
from advisor.engine.facts.constants import (
    NCCL_BASE_LATENCY_S,
    NCCL_HW_LATENCY_S,
    NCCL_NVLS_BW_FACTOR,
    NCCL_PROTOCOL_BW_FACTOR,
    NCCL_TREE_BW_FACTOR,
)
from advisor.engine.model.collectives import (
    _TREE_CORRECTION,
    NVLS_CHUNK_BYTES,
    NVLS_MAX_HEADS,
    NVLS_PIPELINE_STAGES,
    CommDomain,
    _ll_cap,
    _protocols,
    _ring_bus_bytes_per_s,
    collective_time_s,
    make_domain,
)
from advisor.engine.model.nccl_versions import tables
from advisor.engine.model.scaleup import ScaleUp

_INF = float("inf")

CUSTOM_ALL_REDUCE: dict[str, tuple[float, float]] = {
    "hopper": (2.8e-6, 0.58),
    "blackwell": (4.82e-6, 0.735),
}
"""(fixed seconds, share of the GPU's NVLink rate, one direction) of the serving engine's own
one-shot all-reduce by GPU generation: every rank reads its n - 1 peers' buffers over NVLink
peer memory and reduces them (TensorRT-LLM ``customAllReduceKernels.cu`` under
``AllReduceStrategy.AUTO``, vLLM ``custom_all_reduce.cuh``, SGLang), used instead of NCCL inside
an NVLink domain where faster.  Fitted per generation on TensorRT-LLM 1.3.0rc20's measured
latencies (AIConfigurator 0.12.0 ``custom_allreduce_perf``, BF16, 2 / 4 / 8 GPUs, 16-512 KB a
rank; ``bench/aic_allreduce_fit.py``), never on a serving row: Hopper on H100 / H200 (2.8 us,
261 of H100's 450 GB/s; 36 points, 4.4 % mean |error|), Blackwell on B200 / GB200 (4.82 us, 662
of 900 GB/s; 30 points, 6.0 %), where NCCL's own small all-reduce measures 25-28 us on 8 GPUs
(AIConfigurator's NCCL 2.27-2.29 tables) and the serving kernel 5.9.  Ampere's table (TensorRT-LLM
1.0.0) was not fitted, so it keeps NCCL, as do PCIe, AMD, Gaudi and custom GPUs
(docs/MODEL.md 15.2)."""


class ScaleupAllReduce:
    """``collective_time_s("all_reduce", nbytes, d)[0]`` on a communicator ``d`` of one
    domain (``auto``: the fastest of the ring, the tree and NVLS, each on its fastest
    protocol), ``d``'s terms computed once."""

    __slots__ = ("n", "nsteps", "nvls", "ring", "tree")

    def __init__(self, d: CommDomain) -> None:
        if d.nodes != 1 or d.ranks_per_node <= 1 or d.sharp or d.ring_tree_limits[0]:
            raise ValueError("ScaleupAllReduce prices a communicator inside one domain")
        n = d.ranks
        nodes = d.nodes
        # collectives._ring_time, op "all_reduce", one domain: no network step, no plateau
        nsteps, inter_steps = 2 * (n - 1), 2 * (nodes - 1)
        self.n, self.nsteps = n, nsteps
        bus = _ring_bus_bytes_per_s(d)
        hw_intra = NCCL_HW_LATENCY_S[d.scaleup_latency_class]["ring"]
        hw_net = NCCL_HW_LATENCY_S["net"]["tree" if d.ranks_per_node == 1 else "ring"]
        base = NCCL_BASE_LATENCY_S["ring"]
        cap128 = d.ring_tree_limits[3]
        ring: list[tuple[float, float]] = []
        for p in _protocols(d):
            intra_lat = hw_intra[p]
            lat = (
                base[p]
                + (nsteps - inter_steps) * intra_lat
                + inter_steps * (hw_net[p] + d.net_extra_latency_s)
            )
            bw = bus * NCCL_PROTOCOL_BW_FACTOR[p]
            if p == "LL":
                bw = min(bw, _ll_cap(d))
            elif p == "LL128":
                bw = min(bw, cap128)
            ring.append((lat, bw))
        self.ring = tuple(ring)
        # collectives._tree_protocol_times (tuner's bytes, as auto prices it), one domain: no
        # network hop, no channels to fill, no NIC subsets
        _, cap, cap128, _ = d.ring_tree_limits
        tree_bus = min(_ring_bus_bytes_per_s(d) * NCCL_TREE_BW_FACTOR, cap)
        hw_intra = NCCL_HW_LATENCY_S[d.scaleup_latency_class]["tree"]
        hw_net = NCCL_HW_LATENCY_S["net"]["tree"]
        base = NCCL_BASE_LATENCY_S["tree"]
        log_nodes = 0.0
        tree: list[tuple[float, float, tuple[float, ...]]] = []
        for p in _protocols(d):
            lat = base[p] + 2.0 * (
                (d.ranks_per_node - 1) * hw_intra[p]
                + log_nodes * (hw_net[p] + d.net_extra_latency_s)
            )
            bw = tree_bus
            if p == "LL":
                bw = min(tree_bus / 3.8, _ll_cap(d))
            elif p == "LL128":
                bw = min(tree_bus * (7.0 / 9.0), cap128)
            tree.append((lat, 0.5 * bw, _TREE_CORRECTION[p]))
        self.tree = tuple(tree)
        # collectives._hierarchical_time(nvls=True), one domain: (latency + 0, bandwidth,
        # NVLS heads x channels)
        self.nvls: tuple[float, float, int] | None = None
        if d.nvls:
            self.nvls = (
                tables(d.nccl_version).nvls_latency_s + 0.0,
                d.scaleup_bytes_per_s * NCCL_NVLS_BW_FACTOR * d.nvls_generation,
                d.nvls_channels * min(d.ranks_per_node, NVLS_MAX_HEADS),
            )

    def time_s(self, nbytes: float) -> float:
        """The all-reduce of ``nbytes`` per rank (``nbytes`` > 0)."""
        best = _INF
        moved = nbytes * self.nsteps / self.n
        for lat, bw in self.ring:
            t = lat + moved / bw
            if t < best:
                best = t
        # collectives.tree_correction, the log taken once for the three protocols
        x = math.log2(nbytes / 64.0) if nbytes >= 64 else 0.0
        i = int(x)
        flat = nbytes < 64 or x >= 23.0
        tree = _INF
        for lat, half_bw, table in self.tree:
            if flat:
                correction = 1.0
            else:
                upper = table[i + 1] if i + 1 < 23 else 1.0
                correction = table[i] + (upper - table[i]) * (x - i)
            t = lat + nbytes / (half_bw * correction)
            if t < tree:
                tree = t
        if tree < best:
            best = tree
        if self.nvls is not None:
            lat, bw, concurrent = self.nvls
            # collectives.nvls_chunk_bytes and nvls_pipeline_factor, one domain
            chunk = float(NVLS_CHUNK_BYTES)
            for factor, floor in ((64, 65536), (8, 32768), (2, 16384)):
                if nbytes < factor * concurrent * chunk and chunk > floor:
                    chunk = float(floor)
            chunks = max(1.0, nbytes / (concurrent * chunk))
            intra_t = nbytes / bw * ((chunks + NVLS_PIPELINE_STAGES - 1) / chunks)
            t = lat + intra_t
            if t < best:
                best = t
        return best


_INTRA_CACHE: dict[tuple[GpuSpec, str, float, int], float] = {}
"""Collective times inside a scale-up domain by value (GPU, op, bytes, ranks), bounded: a
prefill pass's all-reduce is asked for again by every deployment the search weighs."""


_ALL_REDUCE_CACHE: dict[tuple[GpuSpec, int], AllReduce] = {}
"""The all-reduce of the one-domain communicator of (GPU, ranks), bounded: a decode step's
all-reduce grows with its batch, so :data:`_INTRA_CACHE` rarely hits, but the domain it runs
on is the same for every batch."""


def scaleup_domain(gpu: GpuSpec, ranks: int) -> CommDomain:
    """The communicator of ``ranks`` GPUs inside one scale-up domain, on the GPU's own
    NVLink SHARP (no network)."""
    return make_domain(
        nodes=1,
        ranks_per_node=ranks,
        scaleup=ScaleUp.of(gpu),
        fabric_id=None,
        nic_gbps=0.0,
        nics_per_node=0,
    )


def custom_all_reduce_s(gpu: GpuSpec, nbytes: float, ranks: int) -> float | None:
    """The serving engine's one-shot all-reduce of ``nbytes`` per rank over ``ranks`` GPUs of
    one NVLink domain: a fixed time plus the n - 1 peers' buffers read at a share of the link
    rate (None: a generation or scale-up that keeps NCCL, :data:`CUSTOM_ALL_REDUCE`)."""
    one_shot = _one_shot(gpu)
    if one_shot is None:
        return None
    fixed, link = one_shot
    return _one_shot_s(fixed, link, ranks, nbytes)


def _one_shot(gpu: GpuSpec) -> tuple[float, float] | None:
    """The one-shot all-reduce's fixed seconds and the link rate it reads the peers' buffers
    at (the GPU's NVLink rate times its generation's share, :data:`CUSTOM_ALL_REDUCE`), or None
    where the serving engine keeps NCCL (a generation not fitted, or not NVLink)."""
    constants = CUSTOM_ALL_REDUCE.get(gpu.generation)
    if constants is None or gpu.scaleup_kind != "nvlink":
        return None
    fixed, share = constants
    return fixed, gpu.scaleup_gbytes_per_s * 1e9 * share


def _one_shot_s(fixed: float, link: float, ranks: int, nbytes: float) -> float:
    """:func:`custom_all_reduce_s` on its fixed time and link rate (:func:`_one_shot`)."""
    return fixed + (ranks - 1) * nbytes / link


class AllReduce:
    """The all-reduce among ``ranks`` GPUs of one scale-up domain at any size (:meth:`seconds`):
    NCCL's (:class:`ScaleupAllReduce`), or the serving engine's one-shot kernel
    (:func:`custom_all_reduce_s`) where that is faster; what it reads of the GPU read once."""

    def __init__(self, gpu: GpuSpec, ranks: int) -> None:
        self.nccl = ScaleupAllReduce(scaleup_domain(gpu, ranks))
        self.ranks = ranks
        one_shot = _one_shot(gpu)
        self.one_shot = one_shot is not None
        self.fixed, self.link = (0.0, 0.0) if one_shot is None else one_shot

    def seconds(self, nbytes: float) -> float:
        """The all-reduce of ``nbytes`` per rank (``nbytes`` > 0)."""
        nccl = self.nccl.time_s(nbytes)
        if not self.one_shot:
            return nccl
        custom = _one_shot_s(self.fixed, self.link, self.ranks, nbytes)
        return nccl if custom >= nccl else custom


def all_reduce(gpu: GpuSpec, ranks: int) -> AllReduce:
    """:class:`AllReduce` of (GPU, ranks), kept (:data:`_ALL_REDUCE_CACHE`)."""
    pricer = _ALL_REDUCE_CACHE.get((gpu, ranks))
    if pricer is None:
        if len(_ALL_REDUCE_CACHE) >= 1024:
            _ALL_REDUCE_CACHE.clear()
        pricer = _ALL_REDUCE_CACHE[(gpu, ranks)] = AllReduce(gpu, ranks)
    return pricer


def intra_time_s(gpu: GpuSpec, op: str, nbytes: float, ranks: int) -> float:
    """Collective time inside one scale-up domain (no network):
    ``collectives.scaleup_time_s`` on the GPU's own NVLink SHARP, or an all-reduce priced by
    :class:`AllReduce`."""
    if ranks <= 1 or nbytes <= 0:
        return 0.0
    if op == "all_reduce":
        return all_reduce(gpu, ranks).seconds(nbytes)
    key = (gpu, op, nbytes, ranks)
    hit = _INTRA_CACHE.get(key)
    if hit is None:
        if len(_INTRA_CACHE) >= 65536:
            _INTRA_CACHE.clear()
        hit = _INTRA_CACHE[key] = collective_time_s(op, nbytes, scaleup_domain(gpu, ranks))[0]
    return hit
