"""Where a communicator's ranks sit: scale-up domain, leaf, pod, super-pod; what crosses each.

Ranks are numbered in Megatron-LM order (tensor parallel fastest, then context parallel,
then data/expert parallel, then pipeline stages), so one communicator is an arithmetic
progression of ``size`` ranks spaced ``stride`` apart (TP stride 1, CP stride tp, DP and EP
stride tp x cp, expert-DP stride tp x cp x ep, PP stride tp x cp x dp).

Two placements of a job's servers on the fabric sized for it:

* ``contiguous`` (the point estimate): the scheduler hands rank blocks to servers in
  topology order (Slurm topology/tree, Kubernetes topology-aware scheduling), so rank r sits
  on server r // gpus_per_server and servers fill one leaf (rail group), then one pod, in
  turn;
* ``scattered`` (the high bound): whole servers in random order, as on a shared cluster
  without topology-aware placement, so two different servers share a leaf with probability
  (L - 1) / (S - 1) for L servers per leaf and S servers.

For each boundary (scale-up domain = the NIC boundary, leaf, pod, super-pod) the share of a
communicator's on-wire bytes that crosses it:

* ring (all-reduce, all-gather, reduce-scatter: NCCL rings follow rank order): a ring of n
  ranks spanning c blocks has c of its n edges crossing block boundaries -> c / n (0 if c = 1);
* p2p (pipeline edges rank r -> r + stride over N = size x stride ranks): the edges crossing
  one of the ceil(N / B) - 1 block boundaries, min(stride, B) of them each, over N - stride
  edges;
* all-to-all: the peers outside the sender's block, (n - m) / (n - 1) with m members per block.

Cheap: closed forms on integers, cached.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final

import numpy as np

PATTERNS: tuple[str, ...] = ("ring", "p2p", "all_to_all")
PLACEMENTS: tuple[str, ...] = ("contiguous", "scattered")
LEVELS: tuple[str, ...] = ("server", "leaf", "pod", "superpod")
"""Boundaries a message can cross, innermost first ("server" is the scale-up domain)."""


@dataclass(frozen=True)
class Communicator:
    """One kind of communicator of a plan: ``size`` ranks ``stride`` apart."""

    kind: str
    """``tp``, ``cp``, ``pp``, ``dp``, ``ep`` or ``edp`` (expert data parallel)."""
    pattern: str
    size: int
    stride: int
    ranks: int = 0
    """Ranks of the whole job (0 = size x stride): the groups of this kind tile them."""
    _value_hash: int = field(default=-1, init=False, repr=False, compare=False)
    """The value hash, kept once computed (-1: not yet; ``hash`` never returns -1): a
    communicator keys the placement's and every design network's domain caches."""

    # written out: mypyc runs the methods @dataclass generates interpreted (ARCHITECTURE.md)
    def __init__(
        self,
        kind: str,
        pattern: str,
        size: int,
        stride: int,
        ranks: int = 0,
    ) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "pattern", pattern)
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "stride", stride)
        object.__setattr__(self, "ranks", ranks)
        object.__setattr__(self, "_value_hash", -1)

    def _value(self) -> tuple[object, ...]:
        """The compared fields' values, in the fields' order (as ``@dataclass`` reads them)."""
        return (
            self.kind,
            self.pattern,
            self.size,
            self.stride,
            self.ranks,
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Communicator)
        return self._value() == other._value()

    def __hash__(self) -> int:
        kept = self._value_hash
        if kept == -1:
            kept = hash(self._value())
            object.__setattr__(self, "_value_hash", kept)
        return kept


@dataclass(frozen=True)
class Crossing:
    """Placement facts of one communicator (one group; all groups of a kind are alike).

    ``shares[i]`` is the share of the communicator's on-wire bytes that crosses boundary
    ``LEVELS[i]``; shares never grow outward.  ``hops`` counts the switches its farthest
    message crosses (0 inside a scale-up domain, 1 inside a leaf, 3 inside a pod, 5 inside a
    super-pod, 7 beyond).
    """

    communicator: Communicator
    placement: str
    domains: int
    """Scale-up domains one group spans."""
    ranks_per_domain: int
    shares: tuple[float, float, float, float]
    hops: int

    # written out: mypyc runs the methods @dataclass generates interpreted (ARCHITECTURE.md)
    def __init__(
        self,
        communicator: Communicator,
        placement: str,
        domains: int,
        ranks_per_domain: int,
        shares: tuple[float, float, float, float],
        hops: int,
    ) -> None:
        object.__setattr__(self, "communicator", communicator)
        object.__setattr__(self, "placement", placement)
        object.__setattr__(self, "domains", domains)
        object.__setattr__(self, "ranks_per_domain", ranks_per_domain)
        object.__setattr__(self, "shares", shares)
        object.__setattr__(self, "hops", hops)

    @property
    def crosses_network(self) -> bool:
        return self.shares[0] > 0.0

    @property
    def uplink_load(self) -> float:
        """Share of this communicator's NIC traffic that leaves the leaf."""
        return self.shares[1] / self.shares[0] if self.shares[0] > 0 else 0.0

    @property
    def pod_load(self) -> float:
        """Share of this communicator's NIC traffic that leaves the pod."""
        return self.shares[2] / self.shares[0] if self.shares[0] > 0 else 0.0

    def to_dict(self, wire_bytes_per_gpu: float) -> dict[str, Any]:
        c = self.communicator
        return {
            "kind": c.kind,
            "pattern": c.pattern,
            "size": c.size,
            "stride_gpus": c.stride,
            "placement": self.placement,
            "scaleup_domains_per_group": self.domains,
            "ranks_per_domain": self.ranks_per_domain,
            "hops": self.hops,
            "wire_bytes_per_gpu": wire_bytes_per_gpu,
            "inter_server_bytes_per_gpu": wire_bytes_per_gpu * self.shares[0],
            "inter_leaf_bytes_per_gpu": wire_bytes_per_gpu * self.shares[1],
            "inter_pod_bytes_per_gpu": wire_bytes_per_gpu * self.shares[2],
        }


@dataclass(frozen=True)
class Fabric:
    """The boundaries of the fabric a job runs on, in GPUs (ranks) per block.

    ``blocks[0]`` is the scale-up domain; the rest are leaf, pod and super-pod blocks of the
    compute fabric sized for this job (:meth:`TopologySize.placement_blocks` x GPUs per
    server); a single-switch fabric has only the domain.  ``servers`` is the job's server
    count and ``servers_per_block`` the servers under one leaf, pod, super-pod.
    """

    blocks: tuple[int, ...]
    servers: int
    servers_per_block: tuple[int, ...]
    _value_hash: int = field(default=-1, init=False, repr=False, compare=False)
    """The value hash, kept once computed (-1: not yet): a fabric keys the placement's cache
    and every design network's behaviour."""

    # written out: mypyc runs the methods @dataclass generates interpreted (ARCHITECTURE.md)
    def __init__(
        self,
        blocks: tuple[int, ...],
        servers: int,
        servers_per_block: tuple[int, ...],
    ) -> None:
        object.__setattr__(self, "blocks", blocks)
        object.__setattr__(self, "servers", servers)
        object.__setattr__(self, "servers_per_block", servers_per_block)
        object.__setattr__(self, "_value_hash", -1)

    def _value(self) -> tuple[object, ...]:
        """The compared fields' values, in the fields' order (as ``@dataclass`` reads them)."""
        return (
            self.blocks,
            self.servers,
            self.servers_per_block,
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Fabric)
        return self._value() == other._value()

    def __hash__(self) -> int:
        kept = self._value_hash
        if kept == -1:
            kept = hash(self._value())
            object.__setattr__(self, "_value_hash", kept)
        return kept


def make_fabric(
    *, domain_gpus: int, gpus_per_server: int, servers: int, placement_blocks: tuple[int, ...]
) -> Fabric:
    """Fabric boundaries from the scale-up domain and the topology's servers per block."""
    blocks = [max(1, domain_gpus)]
    per_block: list[int] = []
    for servers_per in placement_blocks[: len(LEVELS) - 1]:
        if servers_per >= servers:
            break  # the whole job sits under this block: no outer boundary to cross
        blocks.append(max(blocks[-1], servers_per * gpus_per_server))
        per_block.append(servers_per)
    return Fabric(blocks=tuple(blocks), servers=max(1, servers), servers_per_block=tuple(per_block))


def blocks_spanned(size: int, stride: int, block: int) -> int:
    """Distinct blocks of ``block`` ranks holding ranks 0, stride, ..., (size-1) x stride."""
    if size <= 1:
        return 1
    if stride >= block:
        return size
    return (size - 1) * stride // block + 1


_MAX_BOUNDARY_TERMS: Final = 4096
"""Boundaries summed exactly before the periodic remainder is extrapolated (speed)."""


_NUMPY_MIN_TERMS: Final = 512
"""Boundary sums of at least this many terms run as one NumPy expression (exact int64
arithmetic, the same integers as the loop; below it the compiled loop is faster than NumPy's
half-dozen calls)."""


def _boundary_terms(n: int, block: int, period_len: int, stride: int) -> int:
    """sum over m = 1 .. n of min(stride, y, period_len - y), y = m x block mod period_len."""
    if n <= 0:
        return 0
    if n < _NUMPY_MIN_TERMS or n * block >= 2**62:
        total = 0
        for m in range(1, n + 1):
            y = (m * block) % period_len
            # min(stride, y, period_len - y), written out (a call of the builtin per term)
            least = y if y < stride else stride
            rest = period_len - y
            total += rest if rest < least else least
        return total
    ys = (np.arange(1, n + 1, dtype=np.int64) * block) % period_len
    return int(np.minimum(np.minimum(ys, period_len - ys), stride).sum())


def _groups_crossing(size: int, stride: int, block: int, ranks: int) -> float:
    """Boundary crossings summed over all groups of ``size`` ranks ``stride`` apart.

    Groups start at a + b x P (a < stride, P = size x stride) and span (size - 1) x stride
    ranks; a block boundary at x is crossed by min(stride, y, P - y) groups, y = x mod P.
    The terms repeat every P / gcd(block, P) boundaries.
    """
    period_len = size * stride
    count = math.ceil(ranks / block) - 1
    if count <= 0:
        return 0.0
    period = period_len // math.gcd(block, period_len)
    if period > _MAX_BOUNDARY_TERMS and count > _MAX_BOUNDARY_TERMS:
        terms = _MAX_BOUNDARY_TERMS
        return _boundary_terms(terms, block, period_len, stride) * count / terms
    per_period = _boundary_terms(min(count, period), block, period_len, stride)
    if count <= period:
        return float(per_period)
    full, rest = divmod(count, period)
    return float(full * per_period + _boundary_terms(rest, block, period_len, stride))


@lru_cache(maxsize=16384)
def contiguous_share(pattern: str, size: int, stride: int, block: int, ranks: int = 0) -> float:
    """Share of on-wire bytes crossing boundaries of ``block`` ranks (contiguous placement),
    averaged over all groups of this kind on ``ranks`` ranks (default size x stride).

    Cached by value (a pure function of its arguments): an evaluation places the
    communicators of ~10 plans on the fabric of every design, and designs of one NIC count
    and leaf share the same boundaries (a 24,576-GPU evaluation asked ~10,000 times for
    ~2,000 values, summing up to 4,096 boundary terms each)."""
    if size <= 1:
        return 0.0
    ranks = max(ranks, size * stride)
    if pattern == "ring":
        if stride >= block:
            return 1.0
        groups = ranks / size
        crossings = _groups_crossing(size, stride, block, ranks)
        if (size - 1) * stride + 1 > block:
            # every group spans a boundary: its ring has (1 + crossings) edges crossing
            return min(1.0, (groups + crossings) / (groups * size))
        # a group crosses at most one boundary, then 2 of its ring edges do
        return min(1.0, 2.0 * crossings / (groups * size))
    if pattern == "p2p":
        if stride >= block:
            return 1.0
        # edges r -> r + stride, r < total - stride; one crosses boundary x = m x block when
        # x - stride <= r < x (all stride of them, except near the end of the ranks)
        total = size * stride
        last = total - stride
        boundaries = math.ceil(total / block) - 1
        full = min(boundaries, last // block)
        crossing = full * stride
        for m in range(full + 1, boundaries + 1):
            crossing += max(0, min(m * block, last) - (m * block - stride))
        return min(1.0, crossing / last)
    if pattern == "all_to_all":
        per_block = 1.0 if stride >= block else min(float(size), block / stride)
        return (size - per_block) / (size - 1)
    raise ValueError(f"unknown pattern {pattern!r}; known: {', '.join(PATTERNS)}")


def place(comm: Communicator, fabric: Fabric, placement: str = "contiguous") -> Crossing:
    """Placement facts of ``comm`` on ``fabric`` (cached)."""
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement {placement!r}; known: {', '.join(PLACEMENTS)}")
    return _place(comm, fabric, placement)


@lru_cache(maxsize=8192)
def _place(comm: Communicator, fabric: Fabric, placement: str) -> Crossing:
    size, stride = max(1, comm.size), max(1, comm.stride)
    domain = fabric.blocks[0]
    domains = blocks_spanned(size, stride, domain)
    server_share = contiguous_share(comm.pattern, size, stride, domain, comm.ranks)
    shares = [server_share]
    for level, block in enumerate(fabric.blocks[1:], start=1):
        share = contiguous_share(comm.pattern, size, stride, block, comm.ranks)
        if placement != "contiguous":
            # random server order: a cross-server message stays under this block with the
            # probability that another server shares it; the pessimistic placement is never
            # better than the contiguous one (a group that straddles a leaf boundary when
            # contiguous can cross it less often in random order on a small fabric)
            per = fabric.servers_per_block[level - 1]
            same = (min(per, fabric.servers) - 1) / max(1, fabric.servers - 1)
            share = max(share, server_share * (1.0 - same) if domains > 1 else 0.0)
        shares.append(min(shares[-1], share))
    while len(shares) < len(LEVELS):
        shares.append(0.0)
    hops = 0
    for level, share in enumerate(shares):
        if share > 0.0:
            hops = 2 * level + 1
    return Crossing(
        communicator=comm,
        placement=placement,
        domains=domains,
        ranks_per_domain=math.ceil(size / domains),
        shares=(shares[0], shares[1], shares[2], shares[3]),
        hops=hops,
    )


def wire_bytes(op: str, nbytes: float, ranks: int) -> float:
    """Bytes one rank sends for one collective of buffer ``nbytes`` (nccl-tests ``S``).

    all-reduce 2(n-1)/n S (ring), all-gather / reduce-scatter / all-to-all (n-1)/n S,
    p2p and broadcast S.
    """
    if ranks <= 1 or nbytes <= 0:
        return 0.0
    if op == "all_reduce":
        return 2.0 * (ranks - 1) / ranks * nbytes
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        return (ranks - 1) / ranks * nbytes
    return nbytes


@lru_cache(maxsize=1024)
def training_communicators(tp: int, cp: int, dp: int, ep: int, pp: int) -> dict[str, Communicator]:
    """Communicators of a training plan in Megatron rank order (tp, cp, dp/ep, pp).

    Gradients are reduced over the combined data x context parallel group (dp x cp ranks at
    stride tp, as Megatron-Core does); with expert parallelism the experts are not
    tensor-parallel (:func:`expert_tp`): a stage's tp x cp x dp ranks split into ep
    consecutive ranks for the all-to-all and expert-DP groups of tp x cp x dp / ep at stride ep
    (:func:`expert_dp_size`).  Cached: do not mutate.
    """
    dpg = dp * cp
    edp = expert_dp_size(tp, dpg, ep)
    n = tp * cp * dp * pp
    return {
        "tp": Communicator("tp", "ring", tp, 1, n),
        "cp": Communicator("cp", "ring", cp, tp, n),
        "dp": Communicator("dp", "ring", dpg, tp, n),
        "ep": Communicator("ep", "all_to_all", ep, expert_tp(tp, ep), n),
        "edp": Communicator("edp", "ring", edp, ep * expert_tp(tp, ep), n),
        "pp": Communicator("pp", "p2p", pp, tp * cp * dp, n),
    }


def expert_tp(tp: int, ep: int) -> int:
    """Tensor-parallel size of the routed experts: 1 with expert parallelism (Megatron-Core's
    MoE parallel folding, ``expert_tensor_parallel_size = 1``, as NeMo's MoE recipes set it:
    the experts' ranks are a stage's tp x cp x dp ranks, ep consecutive ones holding one copy of
    every expert), else ``tp`` (the experts split over tp like the dense MLP)."""
    return 1 if ep > 1 else tp


def expert_dp_size(tp: int, dp_cp: int, ep: int) -> int:
    """Ranks of one expert-data-parallel group: a stage's tp x dp x cp ranks over the ep x
    expert-TP ranks that hold one copy of every expert (:func:`expert_tp`; Megatron-Core's
    expert rank order ``tp-ep-dp-pp``, megatron/core/parallel_state.py ``RankGenerator``)."""
    return max(1, tp * dp_cp // (max(1, ep) * expert_tp(tp, ep)))


def whole_groups(group: int, domain: int, gpus: int) -> int:
    """Groups of ``group`` GPUs that ``gpus`` GPUs hold with none straddling two scale-up
    domains of ``domain`` GPUs: ``domain // group`` per full domain and ``rest // group`` in a
    last partial one (4 TP16 replicas per 72-GPU NVL72 rack, 8 GPUs left idle).  A group larger
    than a domain spans domains anyway: ``gpus // group``."""
    if group <= 1 or group > domain:
        return gpus // max(1, group)
    full, rest = divmod(gpus, domain)
    return full * (domain // group) + rest // group


def pipeline_crosses_network(tp: int, cp: int, dp: int, pp: int, domain_gpus: int) -> bool:
    """Whether any pipeline edge joins stages in different scale-up domains: whether the
    contiguous share of its sends crossing a domain boundary (:func:`contiguous_share`
    ``"p2p"``) is above 0, in closed form.  The pipeline's ranks are ``pp x stride``
    (stride = tp x cp x dp); a stride of a domain or more puts every edge across one, and a
    shorter one has the edges into the first boundary cross it (``min(block, last) - (block -
    stride)`` of them, > 0) as soon as the ranks pass one domain: either way exactly when
    ``pp x stride`` exceeds the domain (the planner asks it of every shape)."""
    return pp > 1 and tp * cp * dp * pp > domain_gpus


@lru_cache(maxsize=4096)
def boundary_bytes(
    traffic: tuple[tuple[Communicator, float], ...], fabric: Fabric, placement: str = "contiguous"
) -> tuple[float, float, float]:
    """Bytes per GPU crossing the server (scale-up domain), leaf and pod boundaries."""
    server = leaf = pod = 0.0
    for comm, nbytes in traffic:
        if nbytes <= 0 or comm.size <= 1:
            continue
        x = place(comm, fabric, placement)
        server += nbytes * x.shares[0]
        leaf += nbytes * x.shares[1]
        pod += nbytes * x.shares[2]
    return server, leaf, pod
