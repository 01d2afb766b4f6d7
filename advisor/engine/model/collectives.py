"""Collective communication model (alpha-beta with NCCL's algorithms and protocols).

Conventions follow nccl-tests doc/PERFORMANCE.md: ``nbytes`` is the per-rank buffer size ``S``
(for all_gather the gathered output, for reduce_scatter the input, for all_to_all the send
buffer); ``algbw = S / t``; ``busbw = algbw * 2(n-1)/n`` (all_reduce), ``* (n-1)/n``
(all_gather, reduce_scatter, all_to_all) and ``* 1`` (broadcast, p2p).

A collective runs on a :class:`CommDomain`: ``nodes`` scale-up domains (servers, or a whole
NVL72 rack) of ``ranks_per_node`` ranks each.  Inside a domain ranks talk over NVLink / xGMI /
PCIe at ``scaleup_bytes_per_s`` (already multiplied by the scale-up efficiency); between
domains the communicator gets ``net_bytes_per_s`` of NIC bandwidth per domain (line rate x
fabric efficiency x routing and oversubscription factors).

For each algorithm and protocol the time is ``latency + bytes_on_bottleneck / bandwidth`` with
NCCL's own latencies and protocol bandwidth factors (``constants.NCCL_*``); ``auto`` takes the
fastest algorithm, as NCCL's tuner does.  Small messages therefore reach a small fraction of
the bus bandwidth (latency-bound, LL protocol), large ones approach it (Simple protocol).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Final

from advisor.engine.facts.constants import (
    DEEPEP_NORMAL_FORWARD_BYTES_PER_S,
    FABRICS,
    NCCL_BASE_LATENCY_S,
    NCCL_COLLNET_BW_FACTOR,
    NCCL_HW_LATENCY_S,
    NCCL_NET_OVERHEAD_S,
    NCCL_NVLS_BW_FACTOR,
    NCCL_P2P_PER_PEER_OVERHEAD_S,
    NCCL_PROTOCOL_BW_FACTOR,
    NCCL_TREE_BW_FACTOR,
    NVLS_BLACKWELL_MEASURED,
    NVLS_MIN_GPUS,
    NVLS_ONE_DOMAIN_MIN_GPUS,
    PCIE_HOST_GPUS_PER_SOCKET,
    PCIE_INTER_SOCKET_RING_BYTES_PER_S,
    SCALEUP_EFFICIENCY,
    SHARED_OPS,
    busbw_factor,
    nccl_latency_class,
    nvlink_few_gpu_share,
    nvlink_op_shares,
)
from advisor.engine.facts.transports import NetTransport, carries_rdma, net_transport
from advisor.engine.input.scenario import MOE_DISPATCHERS, Calibration
from advisor.engine.model.nccl_tree import tree_network_scale
from advisor.engine.model.nccl_versions import (
    NCCL_DEFAULT_VERSION,
    NcclVersion,
    nvls_tree_head_cap,
    tables,
)
from advisor.engine.model.network_rate import (
    network_efficiency,
    nic_bytes_per_s,
    node_cap_bytes_per_s,
    wire_efficiency,
)
from advisor.engine.model.scaleup import ScaleUp

if TYPE_CHECKING:
    from advisor.engine.facts.catalog import GpuSpec

OPS: tuple[str, ...] = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "all_to_all",
    "broadcast",
    "p2p",
)
ALGORITHMS: tuple[str, ...] = ("auto", "ring", "tree", "hierarchical", "nvls", "sharp")
BOUNDS: tuple[str, ...] = ("low", "point", "high")
"""``low`` = optimistic end of the range (fast), ``high`` = pessimistic end (slow)."""

_INF = float("inf")
_LL_MAX_BUSBW_SINGLE_NODE: tuple[tuple[float, float], ...] = ((400e9, 141e9), (250e9, 87.7e9))
_LL_MAX_BUSBW_VOLTA: Final = 39e9
_LL_MAX_BUSBW_2_NODES: Final = 39e9
_LL_MAX_BUSBW_MANY_NODES: Final = 20.4e9
"""NCCL llMaxBws (tuning.cc): LL protocol bus bandwidth caps, GB/s -> B/s.  Across servers
NCCL indexes the table by host CPU (Intel and Arm hosts: 39 on 2 nodes, 20.4 beyond); in one
server by the GPU's compute capability (:data:`LL_MAX_BUSBW_ONE_NODE`).  A GPU without a
compute-capability row (other vendors' scale-up) keeps the bandwidth-threshold fallback."""
LL_MAX_BUSBW_ONE_NODE: dict[str, float] = tables(NCCL_DEFAULT_VERSION).ll_one_node
"""NCCL tuning.cc ``llMaxBws[compCapIndex][0]`` (2.30.7): Volta 39, Ampere 87.7 (compute
capability 8.x, Ada included), Hopper 141, Blackwell 2 x 141 GB/s; others: :mod:`nccl_versions`."""
NVLS_CHANNELS_HOPPER: Final = 16
NVLS_CHANNELS_BLACKWELL_MULTI_NODE: Final = 32
NVLS_CHANNELS_BLACKWELL_ONE_NODE: Final = 24
"""NCCL src/transport/nvls.cc (2.30): NVLS_NCHANNELS_SM90 16, NVLS_NCHANNELS_SM100 32 (several
NVLink domains), NVLS_NCHANNELS_SM100_NVL 24 (one)."""


@dataclass(frozen=True)
class CommDomain:
    """Where a collective runs; bandwidths in bytes/s, latencies in seconds."""

    nodes: int
    ranks_per_node: int
    scaleup_bytes_per_s: float
    scaleup_latency_class: str = "nvlink"
    """Key into NCCL hwLat: ``nvlink`` or ``pcie``."""
    nvls: bool = False
    net_bytes_per_s: float = 0.0
    """NIC bandwidth per domain available to this communicator (effective)."""
    nic_count: int = 1
    """NICs per domain (a single p2p stream uses one of them)."""
    stream_bytes_per_s: float = 0.0
    """Most one p2p stream gets (one NIC, within the transport's per-server cap); 0 = the
    domain's network bandwidth / ``nic_count``."""
    net_extra_latency_s: float = 0.0
    ll128: bool = True
    sharp: bool = False
    nvls_channels: int = NVLS_CHANNELS_HOPPER
    """CTAs (channels) NCCL's NVLS and NVLS-tree kernels run on (:func:`nvls_channels`)."""
    nvls_generation: float = 1.0
    """NVLS efficiency of this GPU generation relative to Hopper's (the NVLS factor was set on
    8 x H100): NCCL tuning.cc ``nvlsEfficiency`` Blackwell 0.74 / Hopper 0.85."""
    deepep_forward_bytes_per_s: float = 0.0
    """Most DeepEP's normal internode kernels forward over NVLink per GPU, in the benchmark's
    count (``constants.DEEPEP_NORMAL_FORWARD_BYTES_PER_S``); 0 = the link's rate only."""
    ll_cap_one_node: float = 0.0
    """NCCL's LL bus bandwidth cap in one domain for this GPU's compute capability (bytes/s,
    :data:`LL_MAX_BUSBW_ONE_NODE`); 0 = by scale-up bandwidth (GPUs NCCL has no row for)."""
    generation: str = ""
    """The GPU's generation (``ScaleUp.generation``): NCCL's per-channel caps are by compute
    capability (:data:`PER_CHANNEL_MAX_BUSBW`); empty or another vendor's: none."""
    nccl_version: NcclVersion = NCCL_DEFAULT_VERSION
    """The NCCL release whose tuning figures apply (:func:`nccl_versions.tables`)."""
    transport: NetTransport | None = None
    """A network-plugin transport (AWS EFA) across domains: its step latency replaces NCCL's
    network latency and it sets the protocols (``facts/transports.py``); None: NCCL's own."""
    rdma: bool = True
    """RDMA verbs between domains (InfiniBand or RoCE, no plugin transport): what DeepEP's
    internode kernels need (NVSHMEM; deepseek-ai/DeepEP README); NCCL runs without them too."""
    op_bus_share: tuple[float, float, float] = (1.0, 1.0, 1.0)
    """NCCL's all-gather, reduce-scatter, all-to-all over the all-reduce's scale-up bandwidth."""

    # Kept per domain, computed on first use (``__init__`` sets the "not yet" marks), in declared
    # attributes rather than the instance dict, which a compiled (mypyc) class has none of.
    # Not fields of the value: no ``__init__`` argument, equality, repr, hash or pickled state.
    _value_hash: int = field(default=-1, init=False, repr=False, compare=False)
    """The value hash (-1: not yet; ``hash`` never returns -1): the expert all-to-all's cache
    is keyed by the domain."""
    _ring_tree_limits: tuple[int, float, float, float] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _tree_nic_subsets: tuple[CommDomain, ...] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    # written out: mypyc runs the methods @dataclass generates interpreted (ARCHITECTURE.md)
    def __init__(
        self,
        nodes: int,
        ranks_per_node: int,
        scaleup_bytes_per_s: float,
        scaleup_latency_class: str = "nvlink",
        nvls: bool = False,
        net_bytes_per_s: float = 0.0,
        nic_count: int = 1,
        stream_bytes_per_s: float = 0.0,
        net_extra_latency_s: float = 0.0,
        ll128: bool = True,
        sharp: bool = False,
        nvls_channels: int = NVLS_CHANNELS_HOPPER,
        nvls_generation: float = 1.0,
        deepep_forward_bytes_per_s: float = 0.0,
        ll_cap_one_node: float = 0.0,
        generation: str = "",
        nccl_version: NcclVersion = NCCL_DEFAULT_VERSION,
        transport: NetTransport | None = None,
        rdma: bool = True,
        op_bus_share: tuple[float, float, float] = (1.0, 1.0, 1.0),
    ) -> None:
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "ranks_per_node", ranks_per_node)
        object.__setattr__(self, "scaleup_bytes_per_s", scaleup_bytes_per_s)
        object.__setattr__(self, "scaleup_latency_class", scaleup_latency_class)
        object.__setattr__(self, "nvls", nvls)
        object.__setattr__(self, "net_bytes_per_s", net_bytes_per_s)
        object.__setattr__(self, "nic_count", nic_count)
        object.__setattr__(self, "stream_bytes_per_s", stream_bytes_per_s)
        object.__setattr__(self, "net_extra_latency_s", net_extra_latency_s)
        object.__setattr__(self, "ll128", ll128)
        object.__setattr__(self, "sharp", sharp)
        object.__setattr__(self, "nvls_channels", nvls_channels)
        object.__setattr__(self, "nvls_generation", nvls_generation)
        object.__setattr__(self, "deepep_forward_bytes_per_s", deepep_forward_bytes_per_s)
        object.__setattr__(self, "ll_cap_one_node", ll_cap_one_node)
        object.__setattr__(self, "generation", generation)
        object.__setattr__(self, "nccl_version", nccl_version)
        object.__setattr__(self, "transport", transport)
        object.__setattr__(self, "rdma", rdma)
        object.__setattr__(self, "op_bus_share", op_bus_share)
        object.__setattr__(self, "_value_hash", -1)
        object.__setattr__(self, "_ring_tree_limits", None)
        object.__setattr__(self, "_tree_nic_subsets", None)

    def __eq__(self, other: object) -> bool:
        """Equal field values (as the dataclass's own equality)."""
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, CommDomain)
        return (
            self.nodes == other.nodes
            and self.ranks_per_node == other.ranks_per_node
            and self.scaleup_bytes_per_s == other.scaleup_bytes_per_s
            and self.scaleup_latency_class == other.scaleup_latency_class
            and self.nvls == other.nvls
            and self.net_bytes_per_s == other.net_bytes_per_s
            and self.nic_count == other.nic_count
            and self.stream_bytes_per_s == other.stream_bytes_per_s
            and self.net_extra_latency_s == other.net_extra_latency_s
            and self.ll128 == other.ll128
            and self.sharp == other.sharp
            and self.nvls_channels == other.nvls_channels
            and self.nvls_generation == other.nvls_generation
            and self.deepep_forward_bytes_per_s == other.deepep_forward_bytes_per_s
            and self.ll_cap_one_node == other.ll_cap_one_node
            and self.generation == other.generation
            and self.nccl_version == other.nccl_version
            and self.transport == other.transport
            and self.rdma == other.rdma
            and self.op_bus_share == other.op_bus_share
        )

    def __hash__(self) -> int:
        """The hash of the field values (as the dataclass's own), computed once per domain."""
        kept = self._value_hash
        if kept == -1:
            kept = hash(_domain_values(self))
            object.__setattr__(self, "_value_hash", kept)
        return kept

    def __reduce__(self) -> tuple[type[CommDomain], tuple[object, ...]]:
        """Pickled as its field values: a copy computes its hash (string hashes differ between
        processes) and its kept figures again."""
        return CommDomain, _domain_values(self)

    @property
    def ranks(self) -> int:
        return self.nodes * self.ranks_per_node

    @property
    def ring_tree_limits(self) -> tuple[int, float, float, float]:
        """Across domains, NCCL's ring and tree channels and per-channel caps, computed once per
        domain: (channels run, tree cap, tree LL128 cap, ring LL128 cap); :func:`search_channels`,
        :func:`ring_tree_channels`, :func:`per_channel_cap`."""
        kept = self._ring_tree_limits
        if kept is None:
            kept = self._limits()
            object.__setattr__(self, "_ring_tree_limits", kept)
        return kept

    def _limits(self) -> tuple[int, float, float, float]:
        if self.nodes <= 1:
            return 0, _INF, _INF, _INF
        search = search_channels(self)
        return (
            ring_tree_channels(self),
            _per_channel_cap("tree", self, search),
            _per_channel_cap("tree_ll128", self, search),
            _per_channel_cap("ring_ll128", self, search),
        )

    @property
    def tree_nic_subsets(self) -> tuple[CommDomain, ...]:
        """The domain on fewer of its NICs, for each smaller NIC count that runs fewer tree
        channels (:func:`_tree_time` prices the best of them).  More channels mean more chunks
        to fill the tree's pipeline (:func:`tree_pipeline_factor`); where the scale-up side, not
        the NICs, bounds the tree's bandwidth (GPUs without NCCL's per-channel caps: AMD,
        Gaudi), an added NIC adds channels and no bandwidth, so the tree would get slower.  A
        communicator can always be pinned to fewer NICs (``NCCL_IB_HCA``), so a design is
        never priced slower for a NIC it has: each subset gets its share of the network
        bandwidth, ``net x k / NICs`` (docs/MODEL.md section 3, "NIC subsets")."""
        kept = self._tree_nic_subsets
        if kept is None:
            kept = self._nic_subsets()
            object.__setattr__(self, "_tree_nic_subsets", kept)
        return kept

    def _nic_subsets(self) -> tuple[CommDomain, ...]:
        if self.nodes <= 1 or self.nic_count <= 1:
            return ()
        channels = self.ring_tree_limits[0]
        subsets: list[CommDomain] = []
        # a pool of NICs at least the ranks or NCCL's 32 search channels runs as many
        for k in range(min(self.nic_count, self.ranks_per_node, _NCCL_MAX_CHANNELS + 1) - 1, 0, -1):
            fewer = replace(
                self, nic_count=k, net_bytes_per_s=self.net_bytes_per_s * k / self.nic_count
            )
            if fewer.ring_tree_limits[0] < channels:
                subsets.append(fewer)
                channels = fewer.ring_tree_limits[0]
        return tuple(subsets)


_domain_values: Callable[[CommDomain], tuple[object, ...]] = attrgetter(
    *(f.name for f in fields(CommDomain) if f.init)
)
"""A domain's field values in the fields' order (its value, as the dataclass's own hash and
equality read it; an ``attrgetter`` of two or more names returns their tuple)."""


@dataclass(frozen=True)
class CollectiveResult:
    """Predicted time and nccl-tests bandwidths of one collective."""

    op: str
    algorithm: str
    protocol: str
    nbytes: float
    ranks: int
    time_s: float
    algbw_bytes_per_s: float
    busbw_bytes_per_s: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "algorithm": self.algorithm,
            "protocol": self.protocol,
            "bytes": self.nbytes,
            "ranks": self.ranks,
            "time_us": self.time_s * 1e6,
            "algbw_GBps": self.algbw_bytes_per_s / 1e9,
            "busbw_GBps": self.busbw_bytes_per_s / 1e9,
        }


def scaleup_bytes_per_s(
    scaleup_kind: str, scaleup_gbytes_per_s: float, efficiency: float | None = None
) -> float:
    """Effective NCCL ring bus bandwidth inside a scale-up domain, bytes/s."""
    eff = efficiency if efficiency is not None else SCALEUP_EFFICIENCY.get(scaleup_kind, 0.75)
    return scaleup_gbytes_per_s * 1e9 * eff


def _scaleup_ring_bytes_per_s(scaleup: ScaleUp, ranks_per_node: int) -> float:
    """:func:`scaleup_bytes_per_s` of ``scaleup``, less on fewer than 8 GPUs of an NVSwitch
    domain (:func:`nvlink_few_gpu_share`); a PCIe ring of more GPUs than one CPU socket holds
    crosses the host's inter-socket link: at most ``PCIE_INTER_SOCKET_RING_BYTES_PER_S``
    (NCCL's own rating of that link, docs/MODEL.md 15.1)."""
    bw = scaleup_bytes_per_s(scaleup.kind, scaleup.gbytes_per_s, scaleup.efficiency)
    if scaleup.kind == "pcie" and ranks_per_node > PCIE_HOST_GPUS_PER_SOCKET:
        return min(bw, PCIE_INTER_SOCKET_RING_BYTES_PER_S)
    return bw * nvlink_few_gpu_share(scaleup.kind, scaleup.generation, ranks_per_node)


def make_domain(
    *,
    nodes: int,
    ranks_per_node: int,
    scaleup: ScaleUp,
    fabric_id: str | None,
    nic_gbps: float,
    nics_per_node: int,
    oversubscription: float = 1.0,
    adaptive_routing: bool | None = None,
    in_network_reduction: bool = False,
    bound: str = "point",
    net_share: float = 1.0,
    uplink_load: float | None = None,
    pod_load: float = 0.0,
    hops: int = 1,
    servers_per_node: int = 1,
    nccl_version: NcclVersion = NCCL_DEFAULT_VERSION,
    transport: str | None = None,
) -> CommDomain:
    """Build a :class:`CommDomain` from hardware figures.

    ``net_share`` is the fraction of the node's NICs this communicator gets when several
    communicators (e.g. one data-parallel group per tensor-parallel rank) run at once.
    ``uplink_load`` / ``pod_load`` are the shares of its network bytes that leave the leaf /
    pod under the job's placement (None: the placement-free fallback); ``hops`` the switches
    its farthest message crosses: each hop beyond the first adds the fabric's per-switch
    latency to every inter-node algorithm step.  A transport with a per-server throughput cap
    (NCCL over TCP sockets) gets at most ``servers_per_node`` x that cap per domain.
    ``nccl_version``: the NCCL release whose tuning figures apply (a published run's own).
    ``transport``: a network-plugin transport id (``facts.transports.TRANSPORTS``, AWS EFA).
    """
    fabric = FABRICS[fabric_id] if fabric_id else None
    plugin = net_transport(transport) if fabric is not None and nodes > 1 else None
    release = tables(nccl_version)
    net = 0.0
    stream = 0.0
    extra = 0.0
    ll128 = True
    if fabric is not None and nodes > 1:
        routing = fabric.adaptive_routing_default if adaptive_routing is None else adaptive_routing
        if adaptive_routing is None and plugin is not None and plugin.multipath:
            routing = True  # SRD sprays each flow over many paths: no ECMP collisions
        line = nics_per_node * nic_bytes_per_s(nic_gbps)
        # a transport capped per server (NCCL over TCP) offers the NICs only the cap: the
        # cap is the server's, however many NICs share it, and the uplinks see that load
        cap = node_cap_bytes_per_s(fabric, bound) * max(1, servers_per_node)
        # network_efficiency of traffic that stays under one leaf: the wire efficiency alone
        wire = wire_efficiency(fabric, bound)
        offered = min(1.0, cap / (line * wire)) if cap > 0.0 and line * wire > 0.0 else 1.0
        eff = network_efficiency(
            fabric,
            nodes=nodes,
            oversubscription=oversubscription,
            adaptive_routing=routing,
            bound=bound,
            uplink_load=uplink_load,
            pod_load=pod_load,
            offered=offered,
        )
        net = line * eff * offered
        # one stream alone (a pipeline send) may use its NIC up to the server's cap
        stream = nic_bytes_per_s(nic_gbps) * eff
        if cap > 0.0:
            stream = min(stream, cap)
        net *= net_share
        # a plugin transport's step latency is whole (no RoCE extra); hops beyond still add
        extra = 0.0 if plugin is not None else fabric.extra_step_latency_s
        extra += max(0, hops - 1) * fabric.switch_hop_latency_s
        # NCCL enables LL128 across nodes only up to PXN (2.18-2.26) or P2C (2.27.3+,
        # NCCL_LL128_C2C): a NIC behind a Grace CPU is PHB before 2.27.3 (tuning.cc, paths.cc)
        ll128 = fabric.ll128_allowed and (not scaleup.nic_c2c or release.ll128_over_c2c)
    return CommDomain(
        nodes=nodes,
        ranks_per_node=ranks_per_node,
        scaleup_bytes_per_s=_scaleup_ring_bytes_per_s(scaleup, ranks_per_node),
        scaleup_latency_class=nccl_latency_class(scaleup.kind, scaleup.generation),
        nvls=scaleup.nvls
        and ranks_per_node >= (NVLS_MIN_GPUS if nodes > 1 else NVLS_ONE_DOMAIN_MIN_GPUS),
        net_bytes_per_s=net,
        nic_count=max(1, nics_per_node),
        stream_bytes_per_s=stream,
        net_extra_latency_s=extra,
        ll128=ll128 and scaleup.kind == "nvlink",
        sharp=in_network_reduction and fabric is not None and fabric.in_network_reduction_available,
        nvls_channels=nvls_channels(scaleup.blackwell, nodes, nccl_version),
        nvls_generation=(
            NVLS_EFFICIENCY_BLACKWELL / NVLS_EFFICIENCY_HOPPER * NVLS_BLACKWELL_MEASURED
            if scaleup.blackwell
            else 1.0
        ),
        deepep_forward_bytes_per_s=DEEPEP_NORMAL_FORWARD_BYTES_PER_S if scaleup.hopper else 0.0,
        ll_cap_one_node=release.ll_one_node.get(scaleup.generation, 0.0),
        generation=scaleup.generation,
        nccl_version=nccl_version,
        transport=plugin,
        rdma=carries_rdma(fabric, plugin),
        op_bus_share=nvlink_op_shares(scaleup.kind, scaleup.generation, ranks_per_node),
    )


def scaleup_time_s(
    gpu: GpuSpec, op: str, nbytes: float, ranks: int, nvls: bool | None = None
) -> float:
    """Time of collective ``op`` on ``nbytes`` among ``ranks`` GPUs of one scale-up domain
    (no network); ``nvls`` None: the GPU's own NVLink SHARP."""
    if ranks <= 1 or nbytes <= 0:
        return 0.0
    domain = make_domain(
        nodes=1,
        ranks_per_node=ranks,
        scaleup=ScaleUp.of(gpu, nvls=nvls),
        fabric_id=None,
        nic_gbps=0.0,
        nics_per_node=0,
    )
    return collective_time_s(op, nbytes, domain)[0]


def ring_tree_nic_share(d: CommDomain) -> float:
    """Share of a domain's NICs NCCL's ring and tree send over.

    NCCL's topology search finds at most ``MAXCHANNELS / 2`` = 32 ring channels per node
    (``src/init.cc``: ``ringGraph->maxChannels = MAXCHANNELS/2``; the tree at most the ring's,
    ``treeGraph->maxChannels = ringGraph->nChannels``), each entering and leaving the node
    through one NIC (``src/graph/search.cc``, ``graph->inter``); duplicated channels
    (``ncclTopoDupChannels``, ``connect.cc`` ``copyChannels``) reuse those NICs.  So a domain
    of more than 32 GPUs and NICs (an NVL72 rack with a NIC per GPU) sends a ring or tree over
    at most 32 of them, as the NVLS-tree (:func:`nvls_tree_nic_share`).
    """
    pool = min(d.ranks_per_node, d.nic_count)
    return min(1.0, _NCCL_MAX_CHANNELS / pool) if pool > 0 else 1.0


def _ring_bus_bytes_per_s(d: CommDomain, op: str = "all_reduce") -> float:
    share = d.op_bus_share[SHARED_OPS.index(op)] if op in SHARED_OPS else 1.0
    intra = d.scaleup_bytes_per_s * share if d.ranks_per_node > 1 else _INF
    inter = d.net_bytes_per_s * ring_tree_nic_share(d) if d.nodes > 1 else _INF
    bw = min(intra, inter)
    return bw if bw != _INF else d.scaleup_bytes_per_s


def _ll_cap(d: CommDomain) -> float:
    if d.nodes > 2:
        return _LL_MAX_BUSBW_MANY_NODES
    if d.nodes == 2:
        return _LL_MAX_BUSBW_2_NODES
    if d.ll_cap_one_node > 0.0:
        return d.ll_cap_one_node
    for threshold, cap in _LL_MAX_BUSBW_SINGLE_NODE:
        if d.scaleup_bytes_per_s >= threshold * 0.8:
            return cap
    return _LL_MAX_BUSBW_VOLTA


def _protocols(d: CommDomain) -> tuple[str, ...]:
    both = ("LL", "LL128", "Simple") if d.ll128 else ("LL", "Simple")
    return both if d.transport is None else tuple(p for p in both if p in d.transport.protocols)


def _net_latency(d: CommDomain, algo: str) -> dict[str, float]:
    """One inter-node step's latency by protocol: NCCL's (``hwLat[NET]``), or the plugin's."""
    return NCCL_HW_LATENCY_S["net"][algo] if d.transport is None else d.transport.step_latencies_s()


def _ring_time(op: str, nbytes: float, d: CommDomain) -> tuple[float, str]:
    n = d.ranks
    nodes = d.nodes
    if op == "all_reduce":
        nsteps, inter_steps = 2 * (n - 1), 2 * (nodes - 1)
    else:
        nsteps, inter_steps = n - 1, nodes - 1
    moved = nbytes * nsteps / n if op != "broadcast" else nbytes
    bus = _ring_bus_bytes_per_s(d, op)
    hw_intra = NCCL_HW_LATENCY_S[d.scaleup_latency_class]["ring"]
    # tuning.cc: "With ppn=1 latencies are fully exposed, use the Tree network latency"
    hw_net = _net_latency(d, "tree" if d.ranks_per_node == 1 else "ring")
    base = NCCL_BASE_LATENCY_S["ring"]
    cap128 = d.ring_tree_limits[3]
    best_t, best_p = _INF, "Simple"
    for p in _protocols(d):
        intra_lat = hw_intra[p]
        if nodes > 1:
            intra_lat = max(intra_lat, NCCL_NET_OVERHEAD_S * (3.0 if p == "Simple" else 1.0))
        if op == "broadcast":
            lat = (
                base[p]
                + (n - nodes) * intra_lat
                + inter_steps * (hw_net[p] + d.net_extra_latency_s)
            )
        else:
            lat = (
                base[p]
                + (nsteps - inter_steps) * intra_lat
                + inter_steps * (hw_net[p] + d.net_extra_latency_s)
            )
        if (
            op == "all_reduce"
            and p == "Simple"
            and nodes > 1
            and nbytes >= 64 * _NCCL_MAX_CHANNELS * n
        ):
            lat *= RING_PLATEAU_LATENCY_FACTOR
        bw = bus * NCCL_PROTOCOL_BW_FACTOR[p]
        if p == "LL":
            bw = min(bw, _ll_cap(d))
        elif p == "LL128":
            # tuning.cc: min(busBw x 0.92, nChannels x perChMaxRingLL128Bw)
            bw = min(bw, cap128)
        t = lat + moved / bw
        if t < best_t:
            best_t, best_p = t, p
    return best_t, best_p


_TREE_CORRECTION: dict[str, tuple[float, ...]] = {
    "LL": (
        1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5,
        0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0,
    ),
    "LL128": (
        1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6,
        0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9, 0.9, 1.0, 1.0, 1.0,
    ),
    "Simple": (
        0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5,
        0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9, 0.9,
    ),
}  # fmt: skip
"""NCCL tuning.cc ``treeCorrectionFactor`` (2.30): NVIDIA's measured bandwidth correction of the
tree all-reduce for medium sizes, per protocol, indexed by floor(log2(bytes / 64)) (64 B ...
512 MB); ``ncclTopoGetAlgoTime`` applies indices 0-22 ("Trees are not perfectly sticking to the
model for medium sizes")."""
RING_PLATEAU_LATENCY_FACTOR: Final = 1.4
"""NCCL tuning.cc "plateau effect of ring": the latency of an inter-node ring all-reduce on the
Simple protocol x1.4 (x1.9 before Ampere) once every channel moves >= 64 B per rank."""
_NCCL_MAX_CHANNELS: Final = 32


def tree_correction(protocol: str, nbytes: float) -> float:
    """NCCL's medium-size correction of the tree all-reduce's bandwidth at ``nbytes``.

    NCCL's table holds one factor per power of two (64 B = index 0) and applies indices 0-22;
    between powers of two the factor is interpolated linearly in log2(size) (a step would make
    a message 1.3x larger finish sooner: LL128 jumps 0.6 -> 0.8 at 4 MB), rising to 1 at 512 MB.
    """
    if nbytes < 64:
        return 1.0
    x = math.log2(nbytes / 64.0)
    if x >= 23.0:
        return 1.0
    table = _TREE_CORRECTION[protocol]
    i = int(x)
    upper = table[i + 1] if i + 1 < 23 else 1.0
    return table[i] + (upper - table[i]) * (x - i)


TREE_SIMPLE_CHUNK_BYTES = (1 << 22) // 8
"""NCCL's Simple tree step: DEFAULT_BUFFSIZE 4 MiB / NCCL_STEPS 8 (``src/init.cc``,
``src/include/device.h``), one step per tree chunk (``calcCollChunking``: ``chunkSteps`` 1)."""
TREE_LL128_CHUNK_BYTES = (120 * 640 * 8 * 8 // 8) // 16 * 15
"""NCCL's LL128 tree chunk before shrinking: DEFAULT_LL128_BUFFSIZE (120 elements x 640
threads x 8 steps x 8 B) / NCCL_STEPS, 15 of every 16 words data (``calcCollChunking``)."""
TREE_LL_CHUNK_BYTES = (8 * 512 * 8 * 16 // 8) // 2
"""NCCL's LL tree chunk: DEFAULT_LL_BUFFSIZE (8 lines x 512 threads x 8 steps x 16 B) /
NCCL_STEPS, half of every line data."""
_NCCL_EXEC_CHANNELS_MAX: Final = 64
"""MAXCHANNELS (``src/include/device.h``): ``connect.cc`` doubles the search's channels up to it."""


_NO_CAPS: dict[str, tuple[float, float, float]] = {}
"""The caps of a kind NCCL's release lists none for (read, never written)."""
PER_CHANNEL_MAX_BUSBW: dict[str, dict[str, tuple[float, float, float]]] = tables(
    NCCL_DEFAULT_VERSION
).per_channel_caps
"""NCCL tuning.cc (2.30.7) ``perChMaxRingLL128Bws``, ``perChMaxTreeLL128Bws``,
``perChMaxTreeBws``: the bus bandwidth one search channel reaches at most, by compute
capability (Ada counts as Ampere) and by 1 / 2 / more nodes, bytes/s; a domain takes its NCCL
release's table (:mod:`nccl_versions`)."""


def search_channels(d: CommDomain) -> int:
    """The channels NCCL's topology search finds for the ring and tree across domains, as the
    engine counts them for NCCL's per-channel caps.

    ``src/graph/search.cc``: each channel enters and leaves a domain through one NIC at the
    fastest speed of its speed array the NIC carries, at most 32 (``MAXCHANNELS/2``), and
    ``ncclTopoDupChannels`` doubles them unless the GPU is Hopper or newer with more than 4
    (an A100 server's 8 become 16; 8 x H100 with 8 x 400G NICs keep 8, NCCL's 8 at 45 GB/s).
    The search also stops at what each GPU's NVLink carries at that speed (an NVL72 rack: 15 at
    48 GB/s); the engine does not count that bound, nor the loss of the doubling from 4 NICs to
    5, because with them a faster or an added NIC would lower the cap (fewer, faster channels
    each held to the same per-channel figure): it takes the most channels any subset of the
    domain's NICs at any speed up to theirs gets, ``max(min(NICs, 32), 2 min(NICs, 4))``."""
    return _search_channels(max(1, min(d.ranks_per_node, d.nic_count)), d.generation)


def _search_channels(pool: int, generation: str) -> int:
    if generation in ("hopper", "blackwell"):
        return max(min(pool, _NCCL_MAX_CHANNELS), 2 * min(pool, 4))
    return min(2 * pool, _NCCL_MAX_CHANNELS)


def per_channel_cap(kind: str, d: CommDomain) -> float:
    """NCCL's cap on a ring's or tree's bus bandwidth across domains: the search's channels x
    the per-channel figure (:data:`PER_CHANNEL_MAX_BUSBW`); none in one domain (the engine
    derives no one-domain channel count) or for GPUs NCCL has no row for."""
    if d.nodes <= 1:
        return _INF
    return _per_channel_cap(kind, d, search_channels(d))


def _per_channel_cap(kind: str, d: CommDomain, search: int) -> float:
    row = tables(d.nccl_version).per_channel_caps.get(kind, _NO_CAPS).get(d.generation)
    return _INF if row is None else search * row[min(d.nodes, 3) - 1]


def ring_tree_channels(d: CommDomain) -> int:
    """The ring and tree channels (CTAs) a communicator's chunks spread over across domains:
    ``connect.cc`` doubles the search's (:func:`search_channels`) for execution
    (``nChannels*2``, at most 64): 8 x H100 with 8 x 400G NICs 16 (NCCL's logs: "16 coll
    channels").  Counted on the NICs whose bandwidth the communicator gets (a transport capped
    per server, or NICs shared with other communicators, give it fewer), so that a NIC that
    adds no bandwidth adds no channel to fill."""
    pool = max(1, min(d.ranks_per_node, d.nic_count))
    if d.stream_bytes_per_s > 0.0 and d.net_bytes_per_s > 0.0:
        used = max(1, math.ceil(d.net_bytes_per_s / d.stream_bytes_per_s - 1e-9))
        pool = min(pool, used)
    return min(_NCCL_EXEC_CHANNELS_MAX, 2 * _search_channels(pool, d.generation))


def tree_chunk_bytes(protocol: str, nbytes: float, d: CommDomain) -> float:
    """The chunk a tree all-reduce channel moves per step (``calcCollChunking``,
    ``src/enqueue.cc`` 2.26-2.30): Simple 512 KB, LL 32 KB, LL128 576,000 B halved while a
    channel would get fewer than ``nstepsLL128 x 64 / ppn`` chunks (down to 128 KB), then
    ``x 16 / ppn`` (down to 32 KB), ``nstepsLL128 = 1 + log2i(nNodes) + 0.1 ppn``."""
    return _tree_chunk_bytes(protocol, nbytes, d, ring_tree_channels(d))


def _tree_chunk_bytes(protocol: str, nbytes: float, d: CommDomain, channels: int) -> float:
    if protocol == "Simple":
        return float(TREE_SIMPLE_CHUNK_BYTES)
    if protocol == "LL":
        return float(TREE_LL_CHUNK_BYTES)
    chunk = TREE_LL128_CHUNK_BYTES
    ppn = float(d.ranks_per_node)
    nsteps = 1.0 + (d.nodes.bit_length() - 1) + 0.1 * ppn
    per = nbytes / channels
    while per // chunk < nsteps * 64.0 / ppn and chunk > 131072:
        chunk //= 2
    while per // chunk < nsteps * 16.0 / ppn and chunk > 32768:
        chunk //= 2
    return float(chunk)


def tree_pipeline_factor(protocol: str, nbytes: float, d: CommDomain) -> float:
    """How much longer than ``bytes / bandwidth`` a tree all-reduce across domains takes while
    its chunks fill the tree: a chunk is forwarded only once whole at every store-and-forward
    stage, the network hops for every protocol (NCCL's proxy posts a step once the GPU has
    written all of it, NVIDIA/nccl #756) and, on Simple, the NVLink hops too (the receiver
    waits for the step's tail flag; LL and LL128 forward each flagged line as it lands).  Up
    and down the tree that is ``D = 2 log2i(nodes)`` stages (Simple: ``+ 2 (g - 1)``), and
    each channel's ``k`` chunks take ``(k + D - 1) / k`` chunk times (k >= 1)."""
    if d.nodes <= 1:
        return 1.0
    return _tree_pipeline_factor(protocol, nbytes, d, ring_tree_channels(d))


def _tree_pipeline_factor(protocol: str, nbytes: float, d: CommDomain, channels: int) -> float:
    stages = 2.0 * (d.nodes.bit_length() - 1)
    if protocol == "Simple":
        stages += 2.0 * (d.ranks_per_node - 1)
    chunk = _tree_chunk_bytes(protocol, nbytes, d, channels)
    chunks = max(1.0, nbytes / (channels * chunk))
    return (chunks + stages - 1.0) / chunks


def _tree_bus_bytes_per_s(d: CommDomain, *, tuner: bool) -> float:
    """The tree's bus bandwidth before NCCL's factors: the ring's, with the network's raised by
    ``2 / f(N)`` for the bytes the double binary tree sends (:mod:`nccl_tree`)."""
    if d.nodes <= 1:
        return _ring_bus_bytes_per_s(d)
    intra = d.scaleup_bytes_per_s if d.ranks_per_node > 1 else _INF
    inter = d.net_bytes_per_s * ring_tree_nic_share(d) * tree_network_scale(d.nodes, tuner=tuner)
    return min(intra, inter)


def _tree_time(nbytes: float, d: CommDomain, *, tuner: bool = False) -> tuple[float, str]:
    """(time, protocol) of a tree all-reduce, the fastest protocol.  ``tuner``: with the bytes
    NCCL's tuner prices (2 S per domain on three domains, where the tree sends 1.5 S,
    :mod:`nccl_tree`), as ``auto`` chooses and prices it; otherwise with the bytes sent, as a
    forced tree (``NCCL_ALGO=Tree``) costs.  The two differ on three domains only."""
    times = _tree_protocol_times(nbytes, d, tuner=tuner)
    for fewer in d.tree_nic_subsets:
        for p, t in _tree_protocol_times(nbytes, fewer, tuner=tuner).items():
            times[p] = min(times[p], t)
    best = min(times, key=lambda p: times[p])
    return times[best], best


def _tree_protocol_times(nbytes: float, d: CommDomain, *, tuner: bool) -> dict[str, float]:
    # tuning.cc: min(busBw x 0.92, nChannels x perChMaxTreeBw) for every protocol
    channels, cap, cap128, _ = d.ring_tree_limits
    bus = min(_tree_bus_bytes_per_s(d, tuner=tuner) * NCCL_TREE_BW_FACTOR, cap)
    hw_intra = NCCL_HW_LATENCY_S[d.scaleup_latency_class]["tree"]
    hw_net = _net_latency(d, "tree")
    base = NCCL_BASE_LATENCY_S["tree"]
    # tuning.cc counts the tree's network hops as log2i(nNodes), the floor of log2
    log_nodes = float(d.nodes.bit_length() - 1) if d.nodes > 1 else 0.0
    times: dict[str, float] = {}
    for p in _protocols(d):
        lat = base[p] + 2.0 * (
            (d.ranks_per_node - 1) * hw_intra[p] + log_nodes * (hw_net[p] + d.net_extra_latency_s)
        )
        bw = bus
        if p == "LL":
            # tuning.cc: busBw = min(busBw / 3.8, llMaxBw), then the tree's 0.5 below
            bw = min(bus / 3.8, _ll_cap(d))
        elif p == "LL128":
            bw = min(bus * (120.0 / 128.0 if d.nodes > 1 else 7.0 / 9.0), cap128)
        # tuning.cc: tree algorithm bandwidth = 0.5 x bus bandwidth, corrected for size
        xfer = nbytes / (0.5 * bw * tree_correction(p, nbytes))
        if channels:
            xfer *= _tree_pipeline_factor(p, nbytes, d, channels)
        times[p] = lat + xfer
    return times


NVLS_EFFICIENCY_HOPPER: Final = 0.85
NVLS_EFFICIENCY_BLACKWELL: Final = 0.74
"""NCCL tuning.cc ``nvlsEfficiency`` (2.30): the share of NVLink bandwidth NVLS reaches, by
compute capability (Hopper 0.85, Blackwell 0.74)."""
NVLS_CHUNK_BYTES = 128 * 1024
"""NCCL_NVLS_CHUNKSIZE default (nvls.cc): the largest chunk an NVLS head moves per pipeline step."""
NVLS_TREE_MAX_CHUNK_BYTES_4_NODES = 64 * 1024
"""nvls.cc: NVLS-tree chunks are capped at 64 KB from 4 NVLink domains on (treeMaxChunkSize)."""
NVLS_PIPELINE_STAGES: Final = 3
"""NCCL's NVLS and NVLS-tree all-reduce kernels (src/device/all_reduce.h) split a CTA's warps in
three groups that hand chunks on: scatter (into the multicast buffer), reduce (multimem
load-reduce / store, with the tree's network send and receive) and gather (out of it)."""
NVLS_MAX_HEADS: Final = 32
"""NCCL_MAX_NVLS_ARITY (src/include/device.h)."""


def nvls_channels(
    blackwell: bool, nodes: int, nccl_version: NcclVersion = NCCL_DEFAULT_VERSION
) -> int:
    """NVLS CTAs NCCL runs (nvls.cc defaults of the release, no user override)."""
    hopper, multi, one = tables(nccl_version).nvls_channels
    if not blackwell:
        return hopper
    return multi if nodes > 1 else one


def nvls_chunk_bytes(nbytes: float, d: CommDomain) -> float:
    """The chunk an NVLS (one domain) or NVLS-tree (several) all-reduce moves per pipeline step,
    by NCCL's ``calcCollChunking`` (src/enqueue.cc, 2.30): smaller messages get smaller chunks
    so every (channel, head) pair still has some; ``concurrent`` = channels x heads."""
    concurrent = d.nvls_channels * min(d.ranks_per_node, NVLS_MAX_HEADS)
    if d.nodes <= 1:
        chunk = float(NVLS_CHUNK_BYTES)
        for factor, floor in ((64, 65536), (8, 32768), (2, 16384)):
            if nbytes < factor * concurrent * chunk and chunk > floor:
                chunk = float(floor)
        return chunk
    cap = NVLS_TREE_MAX_CHUNK_BYTES_4_NODES if d.nodes >= 4 else NVLS_CHUNK_BYTES
    chunk = float(min(NVLS_CHUNK_BYTES, cap))
    for factor, floor in ((32, 262144), (16, 131072), (4, 65536), (1, 32768)):
        if nbytes < factor * concurrent * chunk and chunk > floor:
            chunk = float(floor)
    return chunk


def nvls_tree_nic_share(d: CommDomain) -> float:
    """Share of a domain's NICs an NVLS-tree carries its network tree on.

    NCCL runs the tree between domains from the NVLS heads, one GPU per NIC that has a local
    GPU and at most ``NCCL_MAX_NVLS_ARITY`` (32) of them (``src/graph/search.cc``, NVLS
    pattern: ``maxChannels = min(32, GPUs)``, one head per NIC; ``src/graph/connect.cc``
    ``connectNvls``: each head rank keeps the tree's up and down links), so a domain of more
    than 32 GPUs and NICs (an NVL72 rack with a NIC per GPU) sends the tree over 32 of them.
    """
    pool = min(d.ranks_per_node, d.nic_count)
    return min(1.0, NVLS_MAX_HEADS / pool) if pool > 0 else 1.0


def nvls_pipeline_factor(nbytes: float, d: CommDomain) -> float:
    """How much longer than ``bytes / bandwidth`` an NVLS or NVLS-tree all-reduce's transfer
    takes while its chunk pipeline fills: each (channel, head) pair moves ``k`` chunks through
    :data:`NVLS_PIPELINE_STAGES` stages, ``(k + stages - 1) / k`` chunk times, with ``k`` =
    bytes / (channels x heads x chunk) (at least 1: a smaller message is one partial chunk
    that still crosses every stage).  A 16 MB all-reduce on two 8-GPU servers runs 64 KB
    chunks, two per head: x2; from ~1 GB on the factor is within 3 % of 1."""
    concurrent = d.nvls_channels * min(d.ranks_per_node, NVLS_MAX_HEADS)
    chunks = max(1.0, nbytes / (concurrent * nvls_chunk_bytes(nbytes, d)))
    return (chunks + NVLS_PIPELINE_STAGES - 1) / chunks


def _hierarchical_time(nbytes: float, d: CommDomain, *, nvls: bool, sharp: bool) -> float:
    """Reduce-scatter inside the domain, all-reduce of S/g between domains, all-gather inside.

    The phases are pipelined by chunks, so the bandwidth term is the slower phase.  NVLS does
    the in-domain part in the NVSwitch (bytes S per GPU instead of 2(g-1)/g S); SHARP does the
    reduction in the IB switches (each domain sends S once instead of 2(n-1)/n S).
    """
    g, n = d.ranks_per_node, d.nodes
    if g > 1:
        if nvls:
            intra_t = nbytes / (d.scaleup_bytes_per_s * NCCL_NVLS_BW_FACTOR * d.nvls_generation)
        else:
            intra_t = 2.0 * (g - 1) / g * nbytes / d.scaleup_bytes_per_s
    else:
        intra_t = 0.0
    if n > 1:
        if sharp:
            inter_t = nbytes / (d.net_bytes_per_s * NCCL_COLLNET_BW_FACTOR)
            inter_lat = _net_latency(d, "collnet")["Simple"] + d.net_extra_latency_s
        else:
            # Between domains the reduction runs as NCCL's (double binary) tree.  A domain
            # that is interior in one tree receives S from its children and sends S to them,
            # so the tree's bus bandwidth is the domain's NIC bandwidth; on two domains each
            # is only a root or a leaf and it doubles (NCCL tuning.cc: NVLSTree interBw x 2
            # for nNodes <= 2, x 1 beyond).
            ranks = d.ranks
            tree_bw = d.net_bytes_per_s * (2.0 if n <= 2 else 1.0)
            if nvls:  # NVIDIA's per-head figure (perChMaxNVLSTreeBws) x heads, any release
                cap = min(g, d.nic_count, NVLS_MAX_HEADS) * nvls_tree_head_cap(d.generation, n)
                tree_bw = min(tree_bw * nvls_tree_nic_share(d), cap)
            inter_t = 2.0 * (ranks - 1) / ranks * nbytes / tree_bw
            hops = 2.0 * (n.bit_length() - 1)  # tuning.cc log2i(nNodes)
            net_lat = (
                tables(d.nccl_version).nvls_tree_net_latency_s
                if nvls and d.transport is None
                else _net_latency(d, "tree")["Simple"]
            )
            inter_lat = hops * (net_lat + d.net_extra_latency_s)
    else:
        inter_t, inter_lat = 0.0, 0.0
    if nvls:
        intra_lat = tables(d.nccl_version).nvls_latency_s
        # the chunk pipeline of NCCL's NVLS kernels fills before it streams
        fill = nvls_pipeline_factor(nbytes, d)
        intra_t *= fill
        inter_t *= fill
    else:
        intra_lat = (
            NCCL_BASE_LATENCY_S["tree"]["Simple"]
            + 2.0 * (g - 1) * (NCCL_HW_LATENCY_S[d.scaleup_latency_class]["ring"]["Simple"])
        )
    return intra_lat + inter_lat + max(intra_t, inter_t)


def _all_to_all_time(
    nbytes: float, d: CommDomain, net_share: float = 1.0, forward: bool = False
) -> float:
    """``net_share`` scales the bytes that cross the network (a dispatcher that sends a token
    once per destination domain); with ``forward`` the copies arriving from other domains are
    forwarded over the scale-up links to their experts' GPUs (DeepEP normal kernels)."""
    n, g = d.ranks, d.ranks_per_node
    intra_bytes_per_gpu = nbytes * (g - 1) / n
    if forward and g > 1:
        intra_bytes_per_gpu += nbytes * (n - g) / n * (g - 1) / g
    inter_bytes_per_node = g * nbytes * (n - g) / n * net_share
    share = 1.0 if forward else d.op_bus_share[2]  # NCCL's measured all-to-all, not DeepEP's
    t_intra = intra_bytes_per_gpu / (d.scaleup_bytes_per_s * share) if g > 1 else 0.0
    t_inter = inter_bytes_per_node / d.net_bytes_per_s if d.nodes > 1 else 0.0
    lat = NCCL_BASE_LATENCY_S["ring"]["Simple"] + (n - 1) * NCCL_P2P_PER_PEER_OVERHEAD_S
    if d.nodes > 1:
        lat += _net_latency(d, "ring")["Simple"] + d.net_extra_latency_s
    else:
        lat += NCCL_HW_LATENCY_S[d.scaleup_latency_class]["ring"]["Simple"]
    return lat + max(t_intra, t_inter)


def deepep_network_share(nodes: int, top_k: int) -> float:
    """Network bytes of a DeepEP-style dispatch relative to an all-to-all of every copy.

    Experts spread uniformly over ``nodes`` domains: the all-to-all dispatcher sends each of
    a token's ``top_k`` copies, ``top_k (nodes-1)/nodes`` of them across the network; DeepEP
    (and Megatron-Core's flex dispatcher) sends the token once to every other domain holding
    at least one of its experts, ``(nodes-1)(1 - (1 - 1/nodes)^top_k)`` expected sends, and
    forwards it over the scale-up links inside.  Ratio ``nodes (1 - (1-1/nodes)^k) / k``
    (<= 1; 1 for one domain or top-1 routing): 0.45 at 4 domains and top-8, 0.25 at 2.
    """
    if nodes <= 1 or top_k <= 1:
        return 1.0
    return nodes * (1.0 - (1.0 - 1.0 / nodes) ** top_k) / top_k


def expert_all_to_all_time_s(
    nbytes: float, d: CommDomain, *, top_k: int, dispatcher: str = "alltoall"
) -> float:
    """One expert-parallel dispatch (or combine) of training: ``nbytes`` = every (token,
    expert) copy a rank holds (nccl-tests ``S``).  ``alltoall`` is NCCL's all-to-all of all
    copies (Megatron-Core ``alltoall`` token dispatcher); ``deepep`` sends a token once per
    destination domain (:func:`deepep_network_share`) and forwards it inside the domain, over
    RDMA only (``CommDomain.rdma``; without it the dispatch is NCCL's all-to-all)."""
    if dispatcher not in MOE_DISPATCHERS:
        raise ValueError(f"unknown dispatcher {dispatcher!r}; known: {', '.join(MOE_DISPATCHERS)}")
    if d.ranks <= 1 or nbytes <= 0:
        return 0.0
    if dispatcher == "alltoall" or d.nodes <= 1 or not d.rdma:
        return _all_to_all_time(nbytes, d)
    return _all_to_all_time(nbytes, d, net_share=deepep_network_share(d.nodes, top_k), forward=True)


def p2p_time_s(nbytes: float, d: CommDomain, *, concurrent_per_node: int = 1) -> float:
    """One send/recv between two ranks (in different domains when ``d.nodes > 1``).

    ``concurrent_per_node`` ranks of the same domain send at the same time (pipeline stages
    of a tensor-parallel group), sharing the NICs.
    """
    base = NCCL_BASE_LATENCY_S["ring"]["Simple"]
    if d.nodes > 1:
        # one stream uses one NIC; concurrent streams of a domain share its NICs
        per_nic = d.net_bytes_per_s / d.nic_count
        if d.stream_bytes_per_s > 0:
            per_nic = max(per_nic, min(d.stream_bytes_per_s, d.net_bytes_per_s))
        bw = min(d.scaleup_bytes_per_s, per_nic, d.net_bytes_per_s / max(1, concurrent_per_node))
        lat = base + _net_latency(d, "ring")["Simple"] + d.net_extra_latency_s
    else:
        bw = d.scaleup_bytes_per_s
        lat = base + NCCL_HW_LATENCY_S[d.scaleup_latency_class]["ring"]["Simple"]
    return lat + nbytes / bw


def algorithm_candidates(op: str, d: CommDomain) -> tuple[str, ...]:
    """Algorithms ``auto`` chooses from (the ones NCCL would consider)."""
    if op != "all_reduce":
        return ("ring",)
    algos = ["ring", "tree"]
    if d.nvls:
        algos.append("nvls")
    if d.sharp and d.nodes > 1:
        algos.append("sharp")
    return tuple(algos)


def collective_time_s(
    op: str, nbytes: float, d: CommDomain, algorithm: str = "auto"
) -> tuple[float, str, str]:
    """(time_s, algorithm, protocol) of one collective; 0 s for a single rank.  An all-reduce
    inside one domain is replayed term by term by ``serving/intra.py`` (its test holds the
    two to the same bits): a change here to that case is made there too."""
    if d.ranks <= 1 or nbytes <= 0:
        return 0.0, "none", "none"
    if op == "all_to_all":
        return _all_to_all_time(nbytes, d), "pairwise", "Simple"
    if op == "p2p":
        return p2p_time_s(nbytes, d), "p2p", "Simple"
    if op in ("all_gather", "reduce_scatter", "broadcast"):
        if algorithm not in ("auto", "ring"):
            raise ValueError(f"algorithm {algorithm!r} is not available for {op}; use ring")
        t, p = _ring_time(op, nbytes, d)
        return t, "ring", p
    if op != "all_reduce":
        raise ValueError(f"unknown op {op!r}; known: {', '.join(OPS)}")
    choices = algorithm_candidates(op, d) if algorithm == "auto" else (algorithm,)
    # auto chooses and prices by NCCL's tuner's bytes (the tree's differ from what it sends on
    # three domains only, nccl_tree: there auto keeps the tuner's figure, so that a larger
    # message never takes less time); a forced tree costs what it sends
    best = (_INF, "ring", "Simple")
    for algo in choices:
        if algo == "ring":
            t, p = _ring_time(op, nbytes, d)
        elif algo == "tree":
            t, p = _tree_time(nbytes, d, tuner=algorithm == "auto")
        elif algo == "hierarchical":
            t, p = _hierarchical_time(nbytes, d, nvls=False, sharp=False), "Simple"
        elif algo == "nvls":
            if not d.nvls:
                raise ValueError("nvls needs NVLink SHARP (NVSwitch gen 3+) GPUs")
            t, p = _hierarchical_time(nbytes, d, nvls=True, sharp=d.sharp), "Simple"
            algo = "nvls" if d.nodes == 1 else ("nvls_sharp" if d.sharp else "nvls_tree")
        elif algo == "sharp":
            if not d.sharp:
                raise ValueError("sharp needs an InfiniBand fabric with in-network reduction")
            t, p = _hierarchical_time(nbytes, d, nvls=d.nvls, sharp=True), "Simple"
        else:
            raise ValueError(f"unknown algorithm {algorithm!r}; known: {', '.join(ALGORITHMS)}")
        if t < best[0]:
            best = (t, algo, p)
    return best


def collective(op: str, nbytes: float, d: CommDomain, algorithm: str = "auto") -> CollectiveResult:
    """Time, algbw and busbw of one collective (nccl-tests definitions)."""
    t, algo, proto = collective_time_s(op, nbytes, d, algorithm)
    n = d.ranks
    algbw = nbytes / t if t > 0 else 0.0
    return CollectiveResult(
        op=op,
        algorithm=algo,
        protocol=proto,
        nbytes=nbytes,
        ranks=n,
        time_s=t,
        algbw_bytes_per_s=algbw,
        busbw_bytes_per_s=algbw * busbw_factor(op, n),
    )


def physical_busbw_bound_bytes_per_s(op: str, d: CommDomain) -> float:
    """Upper bound of busbw from link capacity alone (no in-network reduction).

    Ring-type algorithms cannot beat min(scale-up, NIC) bus bandwidth; a hierarchical
    all-reduce moves 2(n-1)/n S per domain instead of 2(N-1)/N S, so its bound is higher by
    ((N-1)/N) / ((n-1)/n).
    """
    intra = d.scaleup_bytes_per_s if d.ranks_per_node > 1 else _INF
    if d.nodes <= 1:
        return intra
    n, nodes = d.ranks, d.nodes
    inter = d.net_bytes_per_s
    if op in ("all_reduce", "all_gather", "reduce_scatter"):
        inter *= ((n - 1) / n) / ((nodes - 1) / nodes)
    if op == "all_to_all":
        g = d.ranks_per_node
        inter = d.net_bytes_per_s * (n - 1) / (g * (n - g)) * n / n
    return min(intra, inter)


def calibrated_domain(
    d: CommDomain, calibration: Calibration, fabric: str | None = None
) -> CommDomain:
    """``d`` with a customer's calibration applied (its network terms only to domains of the
    fabric class it was measured on)."""
    net_applies = d.nodes > 1 and (calibration.fabric is None or fabric == calibration.fabric)
    net = d.net_bytes_per_s * calibration.net_bandwidth_scale if net_applies else d.net_bytes_per_s
    extra = d.net_extra_latency_s
    if net_applies:
        extra = max(0.0, extra + calibration.net_latency_delta_s)
    return replace(
        d,
        net_bytes_per_s=net,
        net_extra_latency_s=extra,
        scaleup_bytes_per_s=d.scaleup_bytes_per_s * calibration.scaleup_bandwidth_scale,
    )
