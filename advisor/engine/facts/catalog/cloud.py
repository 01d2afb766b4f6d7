"""Cloud GPU instances' scale-out fabrics, as named references (docs/MODEL.md 20.8).

A scenario on rented GPUs names its instance type (``constraints.cloud``); the engine then
evaluates the provider's fabric shape (links per instance x speed, RDMA or not) as the given
design and says what it is.  The per-instance bandwidth, the transport class and, for EFA, the
transport's own step latency, protocols and multipath spraying (``net_transport``,
``facts/transports.py``) are modelled: the provider's topology (oversubscription, placement,
TCPXO's host offload) is not, so the evaluation is that shape on a non-blocking fabric.
Every figure is from the provider's public documentation, named in ``source``.
"""

from __future__ import annotations

from dataclasses import dataclass

from advisor.engine.facts.vocabulary import ETHERNET, INFINIBAND, ROCE


@dataclass(frozen=True)
class CloudFabric:
    """One cloud instance type's GPU scale-out network."""

    id: str
    provider: str
    instance: str
    gpu_id: str
    gpus_per_instance: int
    links: int
    """Scale-out network interfaces (EFA devices, InfiniBand HCAs, GPU NICs) per instance."""
    link_gbps: int
    transport: str
    rdma: bool
    fabric: str
    """The engine's fabric class the shape is evaluated as (RDMA over Ethernet for EFA's
    OS-bypass SRD transport, TCP Ethernet for GPUDirect-TCPXO)."""
    source: str
    net_transport: str | None = None
    """The network-plugin transport NCCL runs on it (``facts.transports``: EFA's step latency
    and protocols through aws-ofi-nccl); None: NCCL's own transport of ``fabric``."""

    @property
    def instance_gbps(self) -> int:
        return self.links * self.link_gbps

    @property
    def gbps_per_gpu(self) -> float:
        return self.instance_gbps / self.gpus_per_instance

    @property
    def label(self) -> str:
        return f"{self.provider} {self.instance}"

    def describe(self) -> str:
        return (
            f"{self.label}: {self.links} x {self.link_gbps}G {self.transport} per instance "
            f"({self.instance_gbps:,} Gb/s, {self.gbps_per_gpu:g} Gb/s per GPU"
            f"{'' if self.rdma else ', not RDMA'})"
        )


CLOUD_FABRICS: tuple[CloudFabric, ...] = (
    CloudFabric(
        id="aws-p4de",
        net_transport="efa-p4d",
        provider="AWS",
        instance="p4de.24xlarge",
        gpu_id="a100-80gb-sxm",
        gpus_per_instance=8,
        links=4,
        link_gbps=100,
        transport="EFA (SRD)",
        rdma=True,
        fabric=ROCE,
        source="AWS EC2 user guide, 'Specifications for Amazon EC2 accelerated computing "
        "instances', network specifications (p4de.24xlarge: 8 A100 80 GB, 400 Gigabit, EFA, 4 "
        "network cards, so 100 Gbps each); EFA user guide, supported instance types (p4d and "
        "p4de under Nitro v3, EFA v1)",
    ),
    CloudFabric(
        id="aws-p5",
        net_transport="efa-p5",
        provider="AWS",
        instance="p5.48xlarge",
        gpu_id="h100-sxm",
        gpus_per_instance=8,
        links=32,
        link_gbps=100,
        transport="EFA (SRD)",
        rdma=True,
        fabric=ROCE,
        source="AWS EC2 user guide, 'Specifications for Amazon EC2 accelerated computing "
        "instances', network specifications (p5.48xlarge: 3200 Gigabit, EFA, 32 network cards) "
        "and 'EFA configuration for P5 instances' (one EFA per network card); EFA user guide, "
        "supported instance types (P5 under Nitro v4, EFA v2); EFA's Scalable Reliable "
        "Datagram transport, OS-bypass RDMA for NCCL through aws-ofi-nccl",
    ),
    CloudFabric(
        id="aws-p5en",
        net_transport="efa-p5en",
        provider="AWS",
        instance="p5en.48xlarge",
        gpu_id="h200-sxm",
        gpus_per_instance=8,
        links=16,
        link_gbps=200,
        transport="EFA (SRD)",
        rdma=True,
        fabric=ROCE,
        source="AWS EC2 user guide, 'Specifications for Amazon EC2 accelerated computing "
        "instances', network specifications (p5en.48xlarge: 3200 Gigabit, EFA, 16 network "
        "cards, so 200 Gbps each); EFA user guide, supported instance types (p5en under Nitro "
        "v5, EFA v3)",
    ),
    CloudFabric(
        id="aws-p6-b200",
        net_transport="efa-p5en",
        provider="AWS",
        instance="p6-b200.48xlarge",
        gpu_id="b200",
        gpus_per_instance=8,
        links=8,
        link_gbps=400,
        transport="EFA (SRD)",
        rdma=True,
        fabric=ROCE,
        source="AWS EC2 user guide, 'Specifications for Amazon EC2 accelerated computing "
        "instances', network specifications (p6-b200.48xlarge: 3200 Gigabit, EFA, 8 network "
        "cards, so 400 Gbps each); EFA user guide, supported instance types (p6-b200 under "
        "Nitro v6, EFA v4)",
    ),
    CloudFabric(
        id="azure-nd-h100-v5",
        provider="Azure",
        instance="ND H100 v5 (Standard_ND96isr_H100_v5)",
        gpu_id="h100-sxm",
        gpus_per_instance=8,
        links=8,
        link_gbps=400,
        transport="InfiniBand NDR",
        rdma=True,
        fabric=INFINIBAND,
        source="Microsoft Learn, ND H100 v5 size series (8 H100, one 400 Gb/s NVIDIA "
        "Quantum-2 ConnectX-7 InfiniBand link per GPU, 3.2 Tb/s per VM)",
    ),
    CloudFabric(
        id="azure-nd-h200-v5",
        provider="Azure",
        instance="ND H200 v5 (Standard_ND96isr_H200_v5)",
        gpu_id="h200-sxm",
        gpus_per_instance=8,
        links=8,
        link_gbps=400,
        transport="InfiniBand NDR",
        rdma=True,
        fabric=INFINIBAND,
        source="Microsoft Learn, ND H200 v5 size series (8 H200, each GPU with its own "
        "dedicated 400 Gbps NVIDIA Quantum-2 CX7 InfiniBand connection, 3.2 Tb/s per VM, "
        "GPUDirect RDMA)",
    ),
    CloudFabric(
        id="azure-nd-gb200-v6",
        provider="Azure",
        instance="ND GB200 v6",
        gpu_id="gb200-nvl72",
        gpus_per_instance=4,
        links=4,
        link_gbps=400,
        transport="InfiniBand NDR",
        rdma=True,
        fabric=INFINIBAND,
        source="Microsoft Learn, ND GB200 v6 size series (2 Grace CPUs and 4 Blackwell GPUs "
        "per VM, scale-out backend of 4 x 400 Gb/s NVIDIA Quantum-2 CX7 InfiniBand per VM; 18 "
        "VMs per NVL72 rack, 28.8 Tb/s of scale-out per rack)",
    ),
    CloudFabric(
        id="gcp-a3-mega",
        provider="Google Cloud",
        instance="A3 Mega (a3-megagpu-8g)",
        gpu_id="h100-sxm",
        gpus_per_instance=8,
        links=8,
        link_gbps=200,
        transport="GPUDirect-TCPXO",
        rdma=False,
        fabric=ETHERNET,
        source="Google Cloud Compute Engine, 'Networking and GPU machines' (A3 Mega, 8 H100: "
        "1,800 Gbps maximum total, 1,600 Gbps of it GPU to GPU over GPUDirect-TCPXO, a TCP "
        "offload that is not RDMA; 8 GPU NICs, so 200 Gbps each, plus a host NIC)",
    ),
    CloudFabric(
        id="gcp-a3-ultra",
        provider="Google Cloud",
        instance="A3 Ultra (a3-ultragpu-8g)",
        gpu_id="h200-sxm",
        gpus_per_instance=8,
        links=8,
        link_gbps=400,
        transport="GPUDirect RDMA (RoCE, ConnectX-7)",
        rdma=True,
        fabric=ROCE,
        source="Google Cloud Compute Engine, 'Networking and GPU machines' (A4 and A3 Ultra: "
        "eight NVIDIA ConnectX-7 NICs, one aligned with each GPU, 3,200 Gbps for GPU-to-GPU "
        "traffic over GPUDirect RDMA, plus two gVNICs with 400 Gbps for general networking, "
        "3,600 Gbps in all); Cluster Toolkit v1.44.1 release notes (RDMA via RoCE)",
    ),
    CloudFabric(
        id="gcp-a4",
        provider="Google Cloud",
        instance="A4 (a4-highgpu-8g)",
        gpu_id="b200",
        gpus_per_instance=8,
        links=8,
        link_gbps=400,
        transport="GPUDirect RDMA (RoCE, ConnectX-7)",
        rdma=True,
        fabric=ROCE,
        source="Google Cloud Compute Engine, 'Networking and GPU machines' (A4, 8 B200: eight "
        "NVIDIA ConnectX-7 NICs, one per GPU, 3,200 Gbps GPU to GPU over GPUDirect RDMA, plus "
        "two gVNICs with 400 Gbps; 3,600 Gbps in all)",
    ),
    CloudFabric(
        id="gcp-a4x",
        provider="Google Cloud",
        instance="A4X (a4x-highgpu-4g)",
        gpu_id="gb200-nvl72",
        gpus_per_instance=4,
        links=4,
        link_gbps=400,
        transport="GPUDirect RDMA (RoCE, ConnectX-7)",
        rdma=True,
        fabric=ROCE,
        source="Google Cloud Compute Engine, 'Networking and GPU machines' (A4X, GB200 "
        "Superchips: four NVIDIA ConnectX-7 NICs with 1,600 Gbps for GPU-to-GPU traffic plus "
        "two Titanium NICs with 400 Gbps; 2,000 Gbps in all)",
    ),
)


def cloud_fabric(fabric_id: str) -> CloudFabric | None:
    """The named cloud fabric, or None."""
    return next((c for c in CLOUD_FABRICS if c.id == fabric_id), None)


def cloud_fabric_ids() -> tuple[str, ...]:
    return tuple(c.id for c in CLOUD_FABRICS)
