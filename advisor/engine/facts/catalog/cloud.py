"""Cloud GPU instances' scale-out fabrics, as named references (docs/MODEL.md 20.8).

A scenario on rented GPUs names its instance type (``constraints.cloud``); the engine then
evaluates the provider's fabric shape (links per instance x speed, RDMA or not) as the given
design and says what it is.  Only the per-instance bandwidth and transport class are
modelled: the provider's topology (oversubscription, placement, SRD's multipath spraying,
TCPXO's host offload) is not, so the evaluation is that shape on a non-blocking fabric.
Every figure is from the provider's public documentation, named in ``source``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "provider": self.provider,
            "instance": self.instance,
            "gpu": self.gpu_id,
            "gpus_per_instance": self.gpus_per_instance,
            "links": self.links,
            "link_gbps": self.link_gbps,
            "instance_gbps": self.instance_gbps,
            "gbps_per_gpu": self.gbps_per_gpu,
            "transport": self.transport,
            "rdma": self.rdma,
            "evaluated_as": self.fabric,
            "source": self.source,
        }


CLOUD_FABRICS: tuple[CloudFabric, ...] = (
    CloudFabric(
        id="aws-p5",
        provider="AWS",
        instance="p5.48xlarge",
        gpu_id="h100-sxm",
        gpus_per_instance=8,
        links=32,
        link_gbps=100,
        transport="EFA (SRD)",
        rdma=True,
        fabric=ROCE,
        source="AWS EC2 user guide, 'EFA configuration for P5 instances' (32 network cards, "
        "one EFA each; 3,200 Gbps EFAv2 per p5.48xlarge with 8 H100); EFA's Scalable Reliable "
        "Datagram transport, OS-bypass RDMA for NCCL through aws-ofi-nccl",
    ),
    CloudFabric(
        id="aws-p5en",
        provider="AWS",
        instance="p5en.48xlarge",
        gpu_id="h200-sxm",
        gpus_per_instance=8,
        links=16,
        link_gbps=200,
        transport="EFA (SRD)",
        rdma=True,
        fabric=ROCE,
        source="AWS EC2 P5en instances (8 H200, 3,200 Gbps EFAv3 over 16 EFA devices)",
    ),
    CloudFabric(
        id="aws-p6-b200",
        provider="AWS",
        instance="p6-b200.48xlarge",
        gpu_id="b200",
        gpus_per_instance=8,
        links=8,
        link_gbps=400,
        transport="EFA (SRD)",
        rdma=True,
        fabric=ROCE,
        source="AWS EC2 P6-B200 instances (8 B200, 3.2 Tbps EFAv4, 8 x 400G network cards)",
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
        source="Google Cloud GPU machine types, A3 Mega (8 H100, 8 GPU NICs x 200 Gbps with "
        "GPUDirect-TCPXO, a TCP offload that is not RDMA, plus one host NIC; 1,800 Gbps in all)",
    ),
)


def cloud_fabric(fabric_id: str) -> CloudFabric | None:
    """The named cloud fabric, or None."""
    return next((c for c in CLOUD_FABRICS if c.id == fabric_id), None)


def cloud_fabric_ids() -> tuple[str, ...]:
    return tuple(c.id for c in CLOUD_FABRICS)
