"""NCCL's tuning figures by NCCL release, read from NVIDIA/nccl's source at each tag.

A published nccl-tests measurement ran one NCCL release, and NCCL changed the figures its tuner
uses between releases: the per-channel bandwidth caps of the ring, tree and NVLS-tree
(``perChMaxRingLL128Bws``, ``perChMaxTreeLL128Bws``, ``perChMaxTreeBws``,
``perChMaxNVLSTreeBws`` from 2.28.3, in ``src/graph/tuning.cc``; one flat
``ll128MaxBwPerCh`` before 2.18.3), the one-domain LL cap of
Hopper and Blackwell (``llMaxBws``), the NVLS and NVLS-tree latencies (``baseLat``/``hwLat``) and
the NVLS channels a Blackwell domain runs (``src/transport/nvls.cc``).  :func:`tables` gives the
figures of a release; the product prices :data:`NCCL_DEFAULT_VERSION`, a validation row the
release its source states (docs/MODEL.md section 3, "NCCL releases").

Each entry below is the first release tag at which the figure took that value (every release
tag v2.12.7-1 ... v2.30.7-1 was read; a figure holds until the next entry).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

_T = TypeVar("_T")
NcclVersion = tuple[int, int, int]

NCCL_DEFAULT_VERSION: NcclVersion = (2, 30, 7)
"""The release the product prices (NVIDIA/nccl v2.30.7-1, the newest read)."""
NCCL_OLDEST_VERSION: NcclVersion = (2, 12, 0)
"""Oldest release whose tables are carried (v2.12.7-1 is the oldest tag read)."""

_Caps = tuple[float, float, float]
"""Per-channel bus bandwidth cap on 1 / 2 / more nodes, bytes/s."""


def _gb(a: float, b: float, c: float) -> _Caps:
    return (a * 1e9, b * 1e9, c * 1e9)


_FLAT20 = _gb(20.0, 20.0, 20.0)
_VOLTA_TREE = _gb(26.5, 18.5, 10.0)
_AMPERE_TREE = _gb(24.0, 23.6, 17.8)
_HOPPER_LL128 = _gb(36.7, 36.7, 36.7)
_HOPPER_TREE_LL128 = _gb(36.7, 36.7, 29.0)
_HOPPER_TREE = _gb(38.7, 41.4, 36.0)

# (first version, {cap kind: {generation: caps}}); a generation missing from a release's row
# takes the row NCCL indexed it by then (compute capability >= 9.0 -> Hopper before 2.25.1,
# exactly 8.0 -> Ampere and 9.0 -> Hopper before 2.17.1, everything else Volta's row)
_CAPS: tuple[tuple[NcclVersion, dict[str, dict[str, _Caps]]], ...] = (
    (
        (2, 12, 0),
        {
            "ring_ll128": {g: _FLAT20 for g in ("volta", "ampere", "ada", "hopper", "blackwell")},
            "tree_ll128": {g: _FLAT20 for g in ("volta", "ampere", "ada", "hopper", "blackwell")},
            "tree": {
                "volta": _VOLTA_TREE,
                "ampere": _AMPERE_TREE,
                "ada": _VOLTA_TREE,
                "hopper": _VOLTA_TREE,
                "blackwell": _VOLTA_TREE,
            },
        },
    ),
    (
        (2, 16, 0),
        {
            "ring_ll128": {g: _FLAT20 for g in ("volta", "ampere", "ada", "hopper", "blackwell")},
            "tree_ll128": {g: _FLAT20 for g in ("volta", "ampere", "ada", "hopper", "blackwell")},
            "tree": {
                "volta": _VOLTA_TREE,
                "ampere": _AMPERE_TREE,
                "ada": _VOLTA_TREE,
                "hopper": _AMPERE_TREE,
                "blackwell": _VOLTA_TREE,
            },
        },
    ),
    (
        (2, 17, 1),
        {
            "ring_ll128": {
                "volta": _FLAT20,
                "ampere": _FLAT20,
                "ada": _FLAT20,
                "hopper": _HOPPER_LL128,
                "blackwell": _HOPPER_LL128,
            },
            "tree_ll128": {
                "volta": _FLAT20,
                "ampere": _FLAT20,
                "ada": _FLAT20,
                "hopper": _HOPPER_LL128,
                "blackwell": _HOPPER_LL128,
            },
            "tree": {
                "volta": _VOLTA_TREE,
                "ampere": _AMPERE_TREE,
                "ada": _AMPERE_TREE,
                "hopper": _gb(38.7, 41.4, 33.0),
                "blackwell": _gb(38.7, 41.4, 33.0),
            },
        },
    ),
    (
        (2, 18, 3),
        {
            "ring_ll128": {
                "volta": _FLAT20,
                "ampere": _FLAT20,
                "ada": _FLAT20,
                "hopper": _HOPPER_LL128,
                "blackwell": _HOPPER_LL128,
            },
            "tree_ll128": {
                "volta": _FLAT20,
                "ampere": _FLAT20,
                "ada": _FLAT20,
                "hopper": _HOPPER_TREE_LL128,
                "blackwell": _HOPPER_TREE_LL128,
            },
            "tree": {
                "volta": _VOLTA_TREE,
                "ampere": _AMPERE_TREE,
                "ada": _AMPERE_TREE,
                "hopper": _HOPPER_TREE,
                "blackwell": _HOPPER_TREE,
            },
        },
    ),
    (
        (2, 25, 1),
        {
            "ring_ll128": {"blackwell": _gb(73.4, 73.4, 73.4)},
            "tree_ll128": {"blackwell": _gb(73.4, 73.4, 58.0)},
            "tree": {"blackwell": _gb(77.4, 82.8, 72.0)},
        },
    ),
    (
        (2, 28, 3),
        {
            "tree_ll128": {"blackwell": _gb(55.6, 31.67, 20.0)},
            "tree": {"blackwell": _gb(70.0, 42.8, 24.0)},
            # perChMaxNVLSTreeBws (new in 2.28.3; no one-node figure: NVLS-tree is multi-node)
            "nvls_tree": {"hopper": _gb(0.0, 57.7, 45.5), "blackwell": _gb(0.0, 96.0, 43.1)},
        },
    ),
    ((2, 28, 7), {"ring_ll128": {"blackwell": _gb(73.4, 34.6, 73.4)}}),
    ((2, 28, 9), {"nvls_tree": {"blackwell": _gb(0.0, 96.0, 43.8)}}),
    ((2, 29, 2), {"ring_ll128": {"blackwell": _gb(34.5, 34.6, 34.5)}}),
    ((2, 29, 7), {"ring_ll128": {"blackwell": _gb(40.0, 40.0, 40.0)}}),
    ((2, 30, 3), {"nvls_tree": {"blackwell": _gb(0.0, 96.0, 80.0)}}),
)

_LL_ONE_NODE: tuple[tuple[NcclVersion, dict[str, float]], ...] = (
    (
        (2, 12, 0),
        {"volta": 39e9, "ampere": 87.7e9, "ada": 39e9, "hopper": 39e9, "blackwell": 39e9},
    ),
    ((2, 16, 0), {"hopper": 87.7e9}),
    ((2, 17, 1), {"ada": 87.7e9, "blackwell": 87.7e9}),
    ((2, 21, 5), {"hopper": 141e9, "blackwell": 141e9}),
    ((2, 25, 1), {"blackwell": 282e9}),
)
"""``llMaxBws[compCapIndex][0]``: the LL bus bandwidth cap in one domain, by the row NCCL
indexes the GPU by (Volta 39, Ampere 87.7 GB/s; Hopper Volta's row before 2.16, 87.7 before
2.21.5, 141 from it; Blackwell its own 2 x 141 from 2.25.1)."""

_NVLS_LATENCY: tuple[tuple[NcclVersion, float], ...] = (
    ((2, 12, 0), 23e-6),
    ((2, 21, 5), 25e-6),
)
"""NVLS in one domain: ``baseLat`` + ``hwLat[NVLINK]`` of NVLS, Simple: 23 µs (2.17-2.20),
25 µs from 2.21.5."""

_NVLS_TREE_NET_LATENCY: tuple[tuple[NcclVersion, float], ...] = (
    ((2, 12, 0), 19e-6),
    ((2, 19, 1), 14e-6),
    ((2, 28, 9), 20.9e-6),
)
"""``hwLat[NET][NVLS_TREE][Simple]``: 19 µs (2.18), 14 µs (2.19.1-2.28.7), 20.9 µs from 2.28.9."""

_NVLS_CHANNELS: tuple[tuple[NcclVersion, tuple[int, int, int]], ...] = (
    ((2, 12, 0), (16, 16, 16)),
    ((2, 25, 1), (16, 32, 32)),
    ((2, 27, 3), (16, 32, 24)),
)
"""NVLS CTAs (``src/transport/nvls.cc``): (Hopper, Blackwell across domains, Blackwell in one
domain): ``NCCL_NVLS_NCHANNELS`` 16 before 2.25.1; ``NVLS_NCHANNELS_SM100`` 32 from 2.25.1;
``NVLS_NCHANNELS_SM100_NVL`` 24 in one Blackwell domain from 2.27.3."""


LL128_OVER_C2C_FROM: NcclVersion = (2, 27, 3)
"""First release that enables LL128 across nodes when the GPU reaches its NIC through the host
CPU over C2C (GB200): 2.27.3 adds the ``P2C`` path type (``src/graph/paths.cc``: a PHB path
whose GPU-CPU hop is C2C becomes P2C) and enables LL128 up to P2C (``tuning.cc``,
``NCCL_LL128_C2C`` default 1; release notes: "Add support for P2C (PXN over C2C) and the LL128
protocol").  Before it the path is PHB and LL128 needs PXB, or PXN on Hopper and newer
(v2.26.2-1 ``tuning.cc`` l. 426-440), so it is off between GB200 racks."""
NIC_BEHIND_C2C_GPUS: frozenset[str] = frozenset({"gb200-nvl72"})
"""Catalog GPUs whose compute NICs sit on the Grace CPU's PCIe, reached over C2C (NVIDIA DGX
SuperPOD GB200 RA: per compute tray 4 x ConnectX-7 on the Grace host's PCIe Gen5)."""


@dataclass(frozen=True)
class NcclTables:
    """The tuning figures of one NCCL release the engine uses."""

    version: NcclVersion
    per_channel_caps: dict[str, dict[str, _Caps]]
    """cap kind (``ring_ll128``, ``tree_ll128``, ``tree``, ``nvls_tree`` from 2.28.3) ->
    generation -> 1/2/more nodes (the NVLS-tree is priced by :func:`nvls_tree_head_cap` on
    every release, not by this release's entry)."""
    ll_one_node: dict[str, float]
    nvls_latency_s: float
    nvls_tree_net_latency_s: float
    nvls_channels: tuple[int, int, int]
    ll128_over_c2c: bool
    """LL128 across nodes with the NIC behind a C2C-attached CPU (:data:`LL128_OVER_C2C_FROM`)."""


def parse_version(text: str) -> NcclVersion:
    """``"2.26.2"`` (or ``"v2.26.2-1"``, ``"2.26.2+cuda12.8"``) -> (2, 26, 2); a clear error
    naming the field otherwise, and for releases older than the oldest carried."""
    m = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)(?:-\d+)?(?:\+\S*)?", text.strip())
    if m is None:
        raise ValueError(f"nccl_version: {text!r} is not an NCCL release such as '2.26.2'")
    version = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
    if version < NCCL_OLDEST_VERSION:
        oldest = ".".join(map(str, NCCL_OLDEST_VERSION))
        raise ValueError(f"nccl_version: {text!r} is older than {oldest}, the oldest carried")
    return version


def _at(entries: tuple[tuple[NcclVersion, _T], ...], version: NcclVersion) -> _T:
    value = entries[0][1]
    for first, v in entries:
        if first <= version:
            value = v
    return value


@lru_cache(maxsize=64)
def tables(version: NcclVersion = NCCL_DEFAULT_VERSION) -> NcclTables:
    """The figures of release ``version`` (entries merged from the oldest up)."""
    caps: dict[str, dict[str, _Caps]] = {}
    for first, kinds in _CAPS:
        if first > version:
            break
        for kind, rows in kinds.items():
            caps.setdefault(kind, {}).update(rows)
    ll: dict[str, float] = {}
    for first, row in _LL_ONE_NODE:
        if first <= version:
            ll.update(row)
    return NcclTables(
        version=version,
        per_channel_caps=caps,
        ll_one_node=ll,
        nvls_latency_s=_at(_NVLS_LATENCY, version),
        nvls_tree_net_latency_s=_at(_NVLS_TREE_NET_LATENCY, version),
        nvls_channels=_at(_NVLS_CHANNELS, version),
        ll128_over_c2c=version >= LL128_OVER_C2C_FROM,
    )


def nvls_tree_head_cap(generation: str, nodes: int) -> float:
    """What one NVLS-tree head carries across ``nodes`` domains, bytes/s: NVIDIA's per-head
    figure (``perChMaxNVLSTreeBws``, ``tuning.cc``) of the newest release read
    (:data:`NCCL_DEFAULT_VERSION`: Hopper 57.7 / 45.5 GB/s on 2 / more nodes, Blackwell 96 / 80),
    on a run of any release; inf for a generation NCCL lists none for.

    Unlike the ring and tree caps (by release, :func:`tables`), this one is taken as the rate the
    NVLS-tree delivers, not a figure only the release that prints it steers by: NCCL published it
    first in v2.28.3-1 ("NVLSTree Tuning Fixes. Update tuning data for H100, GB200-NV72", release
    notes), and a 2.26.2 run shows it: dstack's 2 x 8 H100 Nebius InfiniBand log (dstackai/dstack
    ``mkdocs/docs/examples/clusters/nebius.md``, added in 107fefef5; the default image builds NCCL
    2.26.2, ``docker/base/Dockerfile``; no validation row) reads within 3.5 % of the capped
    NVLS-tree from 64 MB to 8 GB (32 MB: -6 %) and 9-14 % slower than the uncapped one at every
    size from 32 MB (``tests/engine/test_nccl_versions.py``)."""
    row = tables(NCCL_DEFAULT_VERSION).per_channel_caps["nvls_tree"].get(generation)
    return float("inf") if row is None else row[min(nodes, 3) - 1]
