"""Scale-out transports that NCCL reaches through a network plugin rather than its own
InfiniBand verbs transport, and what they change in the collective model (docs/MODEL.md 3,
"Transports").

AWS's Elastic Fabric Adapter is not RoCE or InfiniBand: NCCL drives it through the
aws-ofi-nccl plugin over libfabric, on EFA's Scalable Reliable Datagram (SRD) transport, which
sprays each flow over many paths and delivers out of order.  What the collective model needs of
it is (a) the latency of one inter-node algorithm step, which replaces NCCL's own network
latency (``NCCL_HW_LATENCY_S["net"]``, set for InfiniBand verbs), (b) the protocols NCCL
may run across servers and (c) that SRD's spraying leaves no ECMP hash collisions
(:data:`SRD_MULTIPATH_SOURCE`).  Bandwidth per EFA device is its line rate times the fabric class's
wire efficiency, as for the other RDMA classes (the instances' EFA devices and speeds are in
``facts/catalog/cloud.py``).  Every figure is from AWS's public sources, named in ``source``.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.engine.facts.constants import PROTOCOLS, FabricClass

EFA_NET_LATENCY_S = 20.0e-6
"""One inter-node step over EFA on p5/p5e (and p4d/p4de, below): aws-ofi-nccl's tuner model
``model_platform_params`` P5 & P5e ``net_lat = 20.0`` µs (src/tuner/nccl_ofi_model.cpp)."""
EFA_NET_LATENCY_V3_S = 18.0e-6
"""The same on p5en (EFA v3): ``net_lat = 18.0`` µs (P5en platform, the same file)."""
EFA_SIMPLE_COMPLETION_S = 3.0e-6
"""Added to a Simple-protocol step: the tuner's ``TUNER_NET_COMP_OVERHEAD`` default, 3 µs
(include/nccl_ofi_param.h): 'overheads from libfabric and NCCL's proxy thread itself in
processing a completion handed to the host by the device'."""


SRD_MULTIPATH_SOURCE = (
    "Shalev et al., 'A Cloud-Optimized Transport Protocol for Elastic and Scalable HPC', IEEE "
    "Micro 40(6), 2020 (AWS): SRD sprays the packets of one flow over many paths through the "
    "Clos network and reorders at the receiver, so one flow does not sit on one hashed path"
)


@dataclass(frozen=True)
class NetTransport:
    """A network-plugin transport's inter-node step latency and protocols."""

    id: str
    label: str
    step_latency_s: float
    """One inter-node algorithm step on LL / LL128 (s)."""
    simple_extra_s: float
    """Added on the Simple protocol (s)."""
    protocols: tuple[str, ...]
    """The protocols NCCL runs across servers over this transport."""
    source: str
    multipath: bool = False
    """The transport sprays each flow's packets over many paths (SRD), so ECMP hash
    collisions cost nothing: priced as adaptive routing unless the design says otherwise."""

    def step_s(self, protocol: str) -> float:
        """The latency of one inter-node step on ``protocol`` (s)."""
        return self.step_latency_s + (self.simple_extra_s if protocol == "Simple" else 0.0)

    def step_latencies_s(self) -> dict[str, float]:
        """:meth:`step_s` of every protocol, keyed as ``constants.NCCL_HW_LATENCY_S``."""
        return {p: self.step_s(p) for p in PROTOCOLS}


_TUNER = (
    "aws/aws-ofi-nccl src/tuner/nccl_ofi_model.cpp (model_platform_params: net_lat per "
    "platform; Simple adds TUNER_NET_COMP_OVERHEAD, 3 µs, include/nccl_ofi_param.h)"
)

TRANSPORTS: dict[str, NetTransport] = {
    "efa-p4d": NetTransport(
        id="efa-p4d",
        label="EFA (SRD, send/recv) via aws-ofi-nccl",
        step_latency_s=EFA_NET_LATENCY_S,
        simple_extra_s=EFA_SIMPLE_COMPLETION_S,
        protocols=("Simple",),
        multipath=True,
        source=(
            f"{_TUNER}, the p5 figure: the tuner has no p4d entry, and the plugin reports the "
            "same internode latency to NCCL for p4d, p4de and p5 (src/platform-aws.cpp, 75 µs; "
            "commit d87d61e); p4d/p4de run the plugin's SENDRECV protocol (platform-aws.cpp "
            "default_protocol), on which the plugin forces NCCL_PROTO=simple unless EFA "
            "reports in-order 128-byte delivery for send/recv, which AWS has not stated for "
            "p4d ('EFA doesn't support LL and LL128 variants', aws/aws-ofi-nccl #76; the EFA "
            "provider 'may segment messages at non-128 byte points when using send/recv', "
            "aws/aws-ofi-nccl #280)"
        ),
    ),
    "efa-p5": NetTransport(
        id="efa-p5",
        label="EFA v2 (SRD, RDMA write) via aws-ofi-nccl",
        step_latency_s=EFA_NET_LATENCY_S,
        simple_extra_s=EFA_SIMPLE_COMPLETION_S,
        protocols=PROTOCOLS,
        multipath=True,
        source=(
            f"{_TUNER}, P5 & P5e; LL and LL128 stay on: EFA on p5 reports "
            "WRITE_IN_ORDER_ALIGNED_128_BYTES for the plugin's RDMA protocol (aws/aws-ofi-nccl "
            "commit ece41f0, 2024-08; before it pull request #280 skipped the check on p5)"
        ),
    ),
    "efa-p5en": NetTransport(
        id="efa-p5en",
        label="EFA v3+ (SRD, RDMA write) via aws-ofi-nccl",
        step_latency_s=EFA_NET_LATENCY_V3_S,
        simple_extra_s=EFA_SIMPLE_COMPLETION_S,
        protocols=PROTOCOLS,
        multipath=True,
        source=(
            f"{_TUNER}, P5en (also taken for p6-b200, which shares p5en's platform block in "
            "src/platform-aws.cpp); the plugin skips the NCCL_PROTO check on p5en with RDMA "
            "(LL and LL128 stay on)"
        ),
    ),
}
"""Network-plugin transports by id (``collectives.make_domain(transport=...)``)."""


def net_transport(transport_id: str | None) -> NetTransport | None:
    """The named transport; None for none (NCCL's own InfiniBand / RoCE / socket transport)."""
    if not transport_id:
        return None
    found = TRANSPORTS.get(transport_id)
    if found is None:
        raise ValueError(
            f"unknown transport {transport_id!r}; known: {', '.join(sorted(TRANSPORTS))}"
        )
    return found


def carries_rdma(fabric: FabricClass | None, plugin: NetTransport | None) -> bool:
    """Whether a network carries RDMA verbs end to end, which DeepEP's internode kernels need:
    an RDMA fabric (InfiniBand, RoCE) with no network plugin in between (AWS EFA's); a group
    with no fabric (inside one scale-up domain) reads True.  The one rule for the collectives'
    domains (``CommDomain.rdma``) and a design's boundary bytes (``performance``)."""
    return fabric is None or (fabric.rdma and plugin is None)
