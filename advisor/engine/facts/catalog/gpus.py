"""GPU catalog: compute, memory, scale-up bandwidth, power and indicative price.

Every figure carries a public source.  TFLOP/s are *dense* (no 2:4 sparsity) tensor-core
peaks; ``0`` means the precision has no tensor-core support on that GPU.  Scale-up bandwidth is
per GPU and per direction (NVLink 4 "900 GB/s" is 450 GB/s each way).  Prices are indicative,
editable estimates (``price_is_estimate``); they are not quotes.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from advisor.engine.facts.catalog.value_hash import cached_value_hash, state_without_value_hash
from advisor.engine.facts.constants import MEMORY_USABLE_FRACTION, PCIE_RING_EFFICIENCY

_NV_A100 = "NVIDIA A100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/a100)"
_NV_V100 = "NVIDIA V100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/v100)"
_NV_H100 = "NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100)"
_NV_H200 = "NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200)"
_NV_H800 = (
    "NVIDIA H800 product brief; DeepSeek-V3 technical report arXiv 2412.19437 section 3.1 "
    "(H800 NVLink 400 GB/s bidirectional, ~160 GB/s achieved)"
)
_NV_H20 = "NVIDIA HGX H20 product brief (public listings of the China-market Hopper part)"
_NV_B200 = "NVIDIA DGX B200 datasheet (72 PF FP8 / 8 GPUs; 1,440 GB HBM3e; 64 TB/s)"
_NV_GB200 = "NVIDIA GB200 NVL72 datasheet (nvidia.com/en-us/data-center/gb200-nvl72)"
_NV_B300 = (
    "NVIDIA DGX B300 datasheet (72 PF FP8 training and 144 PF FP4 inference per 8 GPUs: 4.5 PF "
    "dense FP8 and 2.25 PF dense BF16 per GPU; 2.3 TB HBM3e = 288 GB per GPU, 8 TB/s)"
)
_NV_GB300 = (
    "NVIDIA GB300 NVL72 datasheet (nvidia.com/en-us/data-center/gb300-nvl72): 360 PF dense FP8 "
    "and 180 PF dense BF16 per 72 GPUs (5 and 2.5 PF per GPU)"
)
_NV_FP4_B200 = (
    "NVIDIA DGX B200 datasheet: 144 PF FP4 inference per 8 GPUs with sparsity, 9 PF dense"
)
_NV_FP4_GB200 = (
    "NVIDIA GB200 NVL72 datasheet: FP4 Tensor Core 1,440 PF with sparsity per 72 GPUs, 10 PF "
    "dense per GPU"
)
_NV_FP4_B300 = "NVIDIA HGX B300 datasheet: FP4 Tensor Core 108 PF dense per 8 GPUs (13.5 per GPU)"
_NV_FP4_GB300 = "NVIDIA GB300 NVL72 datasheet: FP4 Tensor Core 1,080 PF dense per 72 GPUs (15)"
_NV_L40S = "NVIDIA L40S datasheet (nvidia.com/en-us/data-center/l40s)"
_AMD_MI300X = "AMD Instinct MI300X datasheet (amd.com/en/products/accelerators/instinct/mi300)"
_AMD_MI325X = "AMD Instinct MI325X datasheet (amd.com/en/products/accelerators/instinct/mi300)"
_AMD_MI355X = (
    "AMD Instinct MI355X datasheet (amd.com/en/products/accelerators/instinct/mi350): 2.5 PF "
    "dense FP16/BF16, 5.0 PF dense FP8, 288 GB HBM3E at 8 TB/s"
)
_INTEL_GAUDI3 = "Intel Gaudi 3 AI accelerator white paper (intel.com, 2024)"
_PRICE = "indicative street price per GPU, estimate (public reseller listings, 2024-2025)"
_CLOUD = "indicative on-demand/committed cloud price per GPU-hour, estimate (2024-2025)"
_SCALEUP_EFF = (
    "NCCL ring busbw / per-direction link rate: H100 ~370 of 450 GB/s (NVIDIA/nccl-tests #212, "
    "maintainer); A100 200-235 of 300 (nccl-tests #149, #178; NCCL caps A100 at 235 in "
    "tuning.cc); PCIe parts (L40S, H100 PCIe): NCCL's ring search, 20 of 32 GB/s on Gen4 "
    "x16 and 40 of 64 on Gen5 (src/graph/search.cc speedArrayIntra; 8-GPU PCIe Gen5 hosts "
    "measure 37.6-41.7, voipmonitor/rtx6kpro); mesh parts: engineering estimate 0.75"
)
_EFF = (
    "achievable fraction of dense peak inside transformer layers at large size, before "
    "communication and pipeline bubbles; see docs/MODEL.md 'Compute efficiency'"
)


PCIE_X16_GBPS: dict[int, float] = {3: 126.0, 4: 252.0, 5: 504.0, 6: 1008.0}
"""Usable x16 PCIe bandwidth per direction in Gb/s by generation (PCI-SIG: 8/16/32/64 GT/s
per lane, 128b/130b encoding; Gen6 FLIT mode).  A NIC faster than its slot cannot run at
line rate."""
ASSUMED_PCIE_GEN = 5
"""Used only when a GPU's platform facts leave ``host_pcie_gen`` unset; the result says so."""
GIB_BYTES = float(2**30)
"""Bytes in the gigabyte GPU vendors quote HBM capacity in (a binary gigabyte, GiB)."""


HOPPER_OR_NEWER: tuple[str, ...] = ("hopper", "blackwell")
"""NVIDIA compute generations from Hopper on: the ones field practice builds large training
clusters of non-blocking with one 400G+ NIC per GPU (NVIDIA DGX SuperPOD H100 / B200 / GB200
reference architectures) and that run tensor-parallel communication overlapped with GEMMs
(Megatron-LM userbuffers)."""


@dataclass(frozen=True)
class GpuSpec:
    """One accelerator model.  Units are in the field names."""

    id: str
    name: str
    vendor: str
    bf16_dense_tflops: float
    fp16_dense_tflops: float
    fp8_dense_tflops: float
    memory_gb: float
    memory_bw_gbytes_per_s: float
    scaleup_kind: str
    """``nvlink`` (NVSwitch), ``nvlink-mesh`` (V100 hybrid cube), ``xgmi`` (AMD Infinity
    Fabric mesh), ``roce-mesh`` (Gaudi on-die Ethernet), ``pcie``."""
    scaleup_gbytes_per_s: float
    """Per GPU, per direction."""
    scaleup_domain_gpus: int
    """GPUs reachable over the scale-up fabric (8 in an HGX server, 72 in an NVL72 rack)."""
    gpus_per_server: int
    nvlink_sharp: bool
    """NVSwitch in-switch reduction (NCCL NVLS) available."""
    scaleup_efficiency: float
    """Fraction of ``scaleup_gbytes_per_s`` that NCCL ring bus bandwidth reaches."""
    power_w: float
    price_usd: float
    cloud_usd_per_hour: float
    achievable_compute_fraction: float
    price_is_estimate: bool
    sources: tuple[tuple[str, str], ...]
    """(field name, public source) pairs."""
    # Platform facts: what the reference server around this GPU ships with (the reference
    # design a recommendation is compared with, and the NICs and PCIe it can use).
    # Staff edit them in the hardware admin; 0 / "" means "not known" and is said so.
    host_pcie_gen: int = 0
    """PCIe generation of the slots the compute NICs sit in (0: unknown)."""
    reference_nic_sku: str = ""
    """The platform's compute NIC (catalog NIC sku), or its integrated scale-out ports."""
    reference_nic_count: int = 0
    """Compute links per server at the reference (8 = one 400G NIC per GPU on HGX H100;
    24 x 200G for Gaudi 3's integrated ports)."""
    reference_fabric: str = ""
    """Fabric of the platform's primary published reference design (infiniband | roce)."""
    nic_options: tuple[str, ...] = ()
    """Other compute NICs the platform vendor publishes for it (e.g. AMD Pollara)."""
    storage_nic_sku: str = ""
    """Storage / in-band adapter (catalog NIC sku); "" = a dual-port 100GbE card."""
    storage_nic_published: bool = False
    """The platform's published design names ``storage_nic_sku`` (the DGX user guides and
    datasheets, the GB200 / GB300 NVL72 trays); False: an assumed adapter of the platform's
    speed class, which the answer says (its vendors fit their own)."""
    storage_ports_per_server: int = 2
    """Storage-fabric ports per server (checkpoints and data loading use these)."""
    inband_ports_per_server: int = 0
    """In-band management ports on the same adapters, cabled to the same north-south leaves."""
    reference_design: str = ""
    """Name of the published design these facts come from."""
    integrated_scaleout: bool = False
    """Scale-out ports are built into the accelerator: no compute NICs are added."""
    compute_nics_on_board: bool = False
    """The platform's compute NICs (``reference_nic_sku`` and ``nic_options``) sit on its own
    boards and come with the servers (ConnectX-8 on the HGX / DGX B300 GPU board and on GB300
    NVL72's compute-tray mezzanines): a design on them buys no NIC card (:meth:`Nic.on_board`);
    other NICs are cards bought as before."""
    gpus_per_node_options: tuple[int, ...] = ()
    """GPUs per server the platform is built with (HGX boards: 4 or 8; NVL72 trays: 4;
    8-GPU UBB/OAM baseboards: 8); () = any count up to ``gpus_per_server``."""
    rack_gpus: int = 0
    """GPUs per rack when the platform is sold as whole racks (72 for NVL72); 0 = per server."""
    generation: str = ""
    """The compute architecture as its vendor names it (``volta``, ``ampere``, ``hopper``,
    ``blackwell``, ``ada``, ``cdna3``, ``cdna4``, ``gaudi3``); "" for a staff-added GPU not
    yet classified."""
    fp4_dense_tflops: float = 0.0
    """Dense NVFP4 tensor-core peak (serving only: NVIDIA Blackwell); 0 where there is none."""

    def job_domain_gpus(self, gpus: int, gpus_per_node: int) -> int:
        """GPUs of a job of ``gpus`` on servers of ``gpus_per_node`` that share one scale-up
        domain: the server, or on an NVL72 rack of trays as many of the job's whole servers as
        one rack holds (the one rule; ``plans.domain_gpus`` and
        ``serving.compute.scaleup_domain_gpus`` read it for a scenario)."""
        if self.scaleup_domain_gpus > gpus_per_node:
            dom = min(self.scaleup_domain_gpus, gpus)
            return max(gpus_per_node, dom - dom % gpus_per_node)
        return gpus_per_node

    @property
    def hopper_or_newer(self) -> bool:
        """An NVIDIA Hopper or Blackwell GPU (:data:`HOPPER_OR_NEWER`, by ``generation``)."""
        return self.generation in HOPPER_OR_NEWER

    # the value hash, computed once per object; the function itself, one call per hash
    __hash__ = cached_value_hash

    def __getstate__(self) -> dict[str, Any]:
        return state_without_value_hash(self)

    @property
    def on_board_nic_skus(self) -> tuple[str, ...]:
        """The compute NICs that come with this platform's servers (its reference NIC and
        published options, when :attr:`compute_nics_on_board`; ``Nic.as_bought``); ()."""
        if not self.compute_nics_on_board:
            return ()
        return tuple(sku for sku in (self.reference_nic_sku, *self.nic_options) if sku)

    @property
    def memory_bytes(self) -> float:
        """HBM capacity in bytes: ``memory_gb`` is the vendor's figure, which counts binary
        gigabytes (HBM stacks come in 16/24/36 GiB): nvidia-smi reports 81,559 MiB on an
        "80 GB" H100, 183,359 MiB on a "180 GB" B200 and 189,471 MiB on a "186 GB" GB200,
        i.e. the figure in GiB less a ~0.5 % driver reserve (docs/MODEL.md section 5.2)."""
        return self.memory_gb * GIB_BYTES

    @property
    def usable_bytes(self) -> float:
        """The engine's fit rule, for training and serving alike: ``MEMORY_USABLE_FRACTION``
        of :attr:`memory_bytes`, the capacity as the runtime reads it."""
        return self.memory_bytes * MEMORY_USABLE_FRACTION

    @property
    def slot_gbps(self) -> float:
        """What the x16 slot of a compute NIC carries per direction (Gb/s)."""
        return PCIE_X16_GBPS.get(self.host_pcie_gen or ASSUMED_PCIE_GEN, 504.0)

    def peak_tflops(self, precision: str) -> float:
        """Dense tensor-core peak for ``bf16`` | ``fp16`` | ``fp8`` | ``fp4``; 0 when
        unsupported."""
        if precision == "fp4":
            return self.fp4_dense_tflops
        if precision == "fp8":
            return self.fp8_dense_tflops
        if precision == "fp16":
            return self.fp16_dense_tflops
        return self.bf16_dense_tflops

    def supports(self, precision: str) -> bool:
        return self.peak_tflops(precision) > 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["sources"] = {name: src for name, src in self.sources}
        return d

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> GpuSpec:
        kwargs: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in raw:
                continue
            value = raw[f.name]
            if f.name == "nic_options":
                value = tuple(str(v) for v in (value or ()))
            elif f.name == "gpus_per_node_options":
                value = tuple(int(v) for v in (value or ()))
            elif f.name == "sources":
                if isinstance(value, dict):
                    value = tuple((str(k), str(v)) for k, v in value.items())
                else:
                    value = tuple((str(k), str(v)) for k, v in value)
            kwargs[f.name] = value
        return cls(**kwargs)


def _sources(
    compute: str, memory: str, scaleup: str, extra: str = ""
) -> tuple[tuple[str, str], ...]:
    items = [
        ("bf16_dense_tflops", compute),
        ("fp16_dense_tflops", compute),
        ("fp8_dense_tflops", compute),
        ("memory_gb", memory),
        ("memory_bw_gbytes_per_s", memory),
        ("scaleup_gbytes_per_s", scaleup),
        ("scaleup_efficiency", _SCALEUP_EFF),
        ("power_w", compute),
        ("price_usd", _PRICE),
        ("cloud_usd_per_hour", _CLOUD),
        ("achievable_compute_fraction", _EFF),
    ]
    if extra:
        items.append(("notes", extra))
    return tuple(items)


def _with_fp4(source: str, base: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """Sources plus the dense FP4 peak's."""
    return (*base, ("fp4_dense_tflops", source))


def _PLATFORM(base: tuple[tuple[str, str], ...], platform: str) -> tuple[tuple[str, str], ...]:
    """Sources plus the platform facts' source (host PCIe, NICs, storage adapters)."""
    return (*base, ("platform", platform))


GPUS: tuple[GpuSpec, ...] = (
    GpuSpec(
        id="a100-80gb-sxm",
        generation="ampere",
        name="NVIDIA A100 80GB SXM4",
        vendor="NVIDIA",
        bf16_dense_tflops=312.0,
        fp16_dense_tflops=312.0,
        fp8_dense_tflops=0.0,
        memory_gb=80.0,
        memory_bw_gbytes_per_s=2039.0,
        scaleup_kind="nvlink",
        scaleup_gbytes_per_s=300.0,
        scaleup_domain_gpus=8,
        gpus_per_server=8,
        gpus_per_node_options=(4, 8),
        nvlink_sharp=False,
        scaleup_efficiency=0.75,
        power_w=400.0,
        price_usd=15000.0,
        cloud_usd_per_hour=1.6,
        achievable_compute_fraction=0.62,
        price_is_estimate=True,
        host_pcie_gen=4,
        reference_nic_sku="cx6-hdr-200g",
        reference_nic_count=8,
        reference_fabric="infiniband",
        nic_options=(),
        storage_nic_sku="cx6-2x200g",
        storage_nic_published=True,
        storage_ports_per_server=2,
        inband_ports_per_server=2,
        reference_design=(
            "NVIDIA DGX SuperPOD (DGX A100): 8 x 200G HDR InfiniBand per server, rail-optimized, "
            "non-blocking"
        ),
        sources=_PLATFORM(
            _sources(_NV_A100, _NV_A100, _NV_A100 + ": NVLink 3, 600 GB/s total"),
            "NVIDIA DGX A100 user guide (8 x single-port ConnectX-6 HDR 200Gb/s for compute; "
            "2 x dual-port ConnectX-6 for storage / in-band; AMD EPYC 7742 host, PCIe Gen4); "
            "DGX SuperPOD (A100) RA",
        ),
    ),
    GpuSpec(
        id="v100-sxm2-32gb",
        generation="volta",
        name="NVIDIA V100 SXM2 32GB",
        vendor="NVIDIA",
        bf16_dense_tflops=0.0,
        fp16_dense_tflops=125.0,
        fp8_dense_tflops=0.0,
        memory_gb=32.0,
        memory_bw_gbytes_per_s=900.0,
        scaleup_kind="nvlink-mesh",
        scaleup_gbytes_per_s=150.0,
        scaleup_domain_gpus=8,
        gpus_per_server=8,
        gpus_per_node_options=(4, 8),
        nvlink_sharp=False,
        scaleup_efficiency=0.8,
        power_w=300.0,
        price_usd=2500.0,
        cloud_usd_per_hour=0.8,
        achievable_compute_fraction=0.45,
        price_is_estimate=True,
        host_pcie_gen=3,
        reference_nic_sku="cx6dx-100g",
        reference_nic_count=4,
        reference_fabric="roce",
        storage_nic_sku="cx6dx-100g",
        storage_ports_per_server=2,
        reference_design=(
            "NVIDIA DGX-1 (V100): 4 x 100G per server (EDR InfiniBand in the original; the "
            "catalog's 100G option is RoCE)"
        ),
        sources=_PLATFORM(
            _sources(
                _NV_V100,
                _NV_V100,
                _NV_V100 + ": NVLink 2, 300 GB/s total, hybrid cube mesh (DGX-1)",
                "no bf16 or fp8 tensor cores: train in fp16",
            ),
            "NVIDIA DGX-1 with V100 system architecture white paper (4 x 100G EDR InfiniBand,"
            " PCIe Gen3 host)",
        ),
    ),
    GpuSpec(
        id="h100-sxm",
        generation="hopper",
        name="NVIDIA H100 SXM5 80GB",
        vendor="NVIDIA",
        bf16_dense_tflops=989.0,
        fp16_dense_tflops=989.0,
        fp8_dense_tflops=1979.0,
        memory_gb=80.0,
        memory_bw_gbytes_per_s=3350.0,
        scaleup_kind="nvlink",
        scaleup_gbytes_per_s=450.0,
        scaleup_domain_gpus=8,
        gpus_per_server=8,
        gpus_per_node_options=(4, 8),
        nvlink_sharp=True,
        scaleup_efficiency=0.82,
        power_w=700.0,
        price_usd=27000.0,
        cloud_usd_per_hour=2.5,
        achievable_compute_fraction=0.55,
        price_is_estimate=True,
        host_pcie_gen=5,
        reference_nic_sku="cx7-400g",
        reference_nic_count=8,
        reference_fabric="infiniband",
        nic_options=("bf3-supernic-400g",),
        storage_nic_sku="cx7-2x400g-qsfp112",
        storage_nic_published=True,
        storage_ports_per_server=2,
        inband_ports_per_server=2,
        reference_design=(
            "NVIDIA DGX SuperPOD (DGX H100): 8 x 400G NDR InfiniBand per server, rail-optimized, "
            "non-blocking, 32-server scalable units"
        ),
        sources=_PLATFORM(
            _sources(_NV_H100, _NV_H100, _NV_H100 + ": NVLink 4, 900 GB/s total"),
            "NVIDIA DGX H100 datasheet (8 x single-port ConnectX-7 400Gb/s for compute; 2 x "
            "dual-port QSFP112 ConnectX-7 for storage / in-band; Xeon 8480C host, PCIe Gen5);"
            " DGX SuperPOD H100 RA; Spectrum-X RA (BlueField-3 SuperNIC option)",
        ),
    ),
    GpuSpec(
        id="h100-pcie",
        generation="hopper",
        name="NVIDIA H100 PCIe 80GB",
        vendor="NVIDIA",
        bf16_dense_tflops=756.0,
        fp16_dense_tflops=756.0,
        fp8_dense_tflops=1513.0,
        memory_gb=80.0,
        memory_bw_gbytes_per_s=2000.0,
        scaleup_kind="pcie",
        scaleup_gbytes_per_s=64.0,
        scaleup_domain_gpus=8,
        gpus_per_server=8,
        gpus_per_node_options=(1, 2, 4, 8),
        nvlink_sharp=False,
        scaleup_efficiency=PCIE_RING_EFFICIENCY,
        power_w=350.0,
        price_usd=25000.0,
        cloud_usd_per_hour=2.0,
        achievable_compute_fraction=0.55,
        price_is_estimate=True,
        host_pcie_gen=5,
        reference_nic_sku="cx7-400g",
        reference_nic_count=8,
        reference_fabric="infiniband",
        nic_options=("bf3-supernic-400g",),
        storage_nic_sku="cx7-2x400g-qsfp112",
        storage_ports_per_server=2,
        reference_design=(
            "NVIDIA-Certified H100 PCIe servers: one 400G ConnectX-7 per GPU (estimate from HGX "
            "practice)"
        ),
        sources=_PLATFORM(
            _sources(
                _NV_H100,
                _NV_H100,
                "PCIe Gen5 x16, 64 GB/s per direction (NVLink bridges join pairs only)",
            ),
            "NVIDIA H100 PCIe product brief (PCIe Gen5 x16); NIC count: HGX practice, estimate",
        ),
    ),
    GpuSpec(
        id="h200-sxm",
        generation="hopper",
        name="NVIDIA H200 SXM 141GB",
        vendor="NVIDIA",
        bf16_dense_tflops=989.0,
        fp16_dense_tflops=989.0,
        fp8_dense_tflops=1979.0,
        memory_gb=141.0,
        memory_bw_gbytes_per_s=4800.0,
        scaleup_kind="nvlink",
        scaleup_gbytes_per_s=450.0,
        scaleup_domain_gpus=8,
        gpus_per_server=8,
        gpus_per_node_options=(4, 8),
        nvlink_sharp=True,
        scaleup_efficiency=0.82,
        power_w=700.0,
        price_usd=32000.0,
        cloud_usd_per_hour=3.2,
        achievable_compute_fraction=0.55,
        price_is_estimate=True,
        host_pcie_gen=5,
        reference_nic_sku="cx7-400g",
        reference_nic_count=8,
        reference_fabric="infiniband",
        nic_options=("bf3-supernic-400g",),
        storage_nic_sku="cx7-2x400g-qsfp112",
        storage_nic_published=True,
        storage_ports_per_server=2,
        inband_ports_per_server=2,
        reference_design=(
            "NVIDIA DGX SuperPOD (DGX H200): 8 x 400G NDR InfiniBand per server, rail-optimized, "
            "non-blocking"
        ),
        sources=_PLATFORM(
            _sources(_NV_H200, _NV_H200, _NV_H200 + ": NVLink 4, 900 GB/s total"),
            "NVIDIA DGX H200 datasheet (8 x ConnectX-7 400Gb/s; 2 x dual-port QSFP112 "
            "ConnectX-7; PCIe Gen5); DGX SuperPOD RA",
        ),
    ),
    GpuSpec(
        id="h800-sxm",
        generation="hopper",
        name="NVIDIA H800 SXM5 80GB",
        vendor="NVIDIA",
        bf16_dense_tflops=989.0,
        fp16_dense_tflops=989.0,
        fp8_dense_tflops=1979.0,
        memory_gb=80.0,
        memory_bw_gbytes_per_s=3350.0,
        scaleup_kind="nvlink",
        scaleup_gbytes_per_s=200.0,
        scaleup_domain_gpus=8,
        gpus_per_server=8,
        gpus_per_node_options=(8,),
        nvlink_sharp=True,
        scaleup_efficiency=0.82,
        power_w=700.0,
        price_usd=30000.0,
        cloud_usd_per_hour=2.5,
        achievable_compute_fraction=0.55,
        price_is_estimate=True,
        host_pcie_gen=5,
        reference_nic_sku="cx7-400g",
        reference_nic_count=8,
        reference_fabric="infiniband",
        storage_nic_sku="cx7-2x400g-qsfp112",
        storage_ports_per_server=2,
        reference_design=(
            "DeepSeek H800 cluster: 8 x 400G InfiniBand per server (DeepSeek-V3 report, section "
            "3.1)"
        ),
        sources=_PLATFORM(
            _sources(_NV_H800, _NV_H800, _NV_H800),
            "DeepSeek-V3 technical report arXiv 2412.19437 section 3.1 (8 x 400Gb/s "
            "InfiniBand NICs per node); HGX H800 PCIe Gen5",
        ),
    ),
    GpuSpec(
        id="h20",
        generation="hopper",
        name="NVIDIA H20 96GB",
        vendor="NVIDIA",
        bf16_dense_tflops=148.0,
        fp16_dense_tflops=148.0,
        fp8_dense_tflops=296.0,
        memory_gb=96.0,
        memory_bw_gbytes_per_s=4000.0,
        scaleup_kind="nvlink",
        scaleup_gbytes_per_s=450.0,
        scaleup_domain_gpus=8,
        gpus_per_server=8,
        gpus_per_node_options=(8,),
        nvlink_sharp=True,
        scaleup_efficiency=0.82,
        power_w=400.0,
        price_usd=12000.0,
        cloud_usd_per_hour=1.2,
        achievable_compute_fraction=0.60,
        price_is_estimate=True,
        host_pcie_gen=5,
        reference_nic_sku="cx7-400g",
        reference_nic_count=8,
        reference_fabric="roce",
        nic_options=("bf3-supernic-400g",),
        storage_nic_sku="cx7-2x400g-qsfp112",
        storage_ports_per_server=2,
        reference_design=(
            "HGX H20 cloud clusters: 8 x 400G RoCE per server (third-party 64-GPU RoCE vs "
            "InfiniBand test: equal busbw)"
        ),
        sources=_PLATFORM(
            _sources(_NV_H20, _NV_H20, _NV_H20 + ": NVLink 900 GB/s total"),
            "HGX H20 product listings (PCIe Gen5, 8 x 400G NICs); third-party 64-GPU H20 "
            "test: RoCE 231.8 vs InfiniBand 230.7 GB/s busbw",
        ),
    ),
    GpuSpec(
        id="b200",
        generation="blackwell",
        name="NVIDIA B200 (HGX/DGX B200)",
        vendor="NVIDIA",
        bf16_dense_tflops=2250.0,
        fp16_dense_tflops=2250.0,
        fp8_dense_tflops=4500.0,
        memory_gb=180.0,
        memory_bw_gbytes_per_s=8000.0,
        scaleup_kind="nvlink",
        scaleup_gbytes_per_s=900.0,
        scaleup_domain_gpus=8,
        gpus_per_server=8,
        gpus_per_node_options=(8,),
        nvlink_sharp=True,
        scaleup_efficiency=0.82,
        power_w=1000.0,
        price_usd=37000.0,
        cloud_usd_per_hour=4.5,
        achievable_compute_fraction=0.50,
        price_is_estimate=True,
        host_pcie_gen=5,
        reference_nic_sku="cx7-400g",
        reference_nic_count=8,
        reference_fabric="infiniband",
        nic_options=("bf3-supernic-400g",),
        storage_nic_sku="bf3-dpu-2x400g",
        storage_nic_published=True,
        storage_ports_per_server=2,
        inband_ports_per_server=2,
        reference_design=(
            "NVIDIA DGX SuperPOD (DGX B200): 8 x 400G NDR InfiniBand per server, rail-optimized, "
            "non-blocking"
        ),
        fp4_dense_tflops=9000.0,
        sources=_with_fp4(
            _NV_FP4_B200,
            _PLATFORM(
                _sources(_NV_B200, _NV_B200, _NV_B200 + ": NVLink 5, 1.8 TB/s total"),
                "NVIDIA DGX B200 datasheet (4 OSFP serving 8 x single-port ConnectX-7 400Gb/s; 2 "
                "x dual-port QSFP112 BlueField-3; Xeon 8570 host, PCIe Gen5); DGX SuperPOD B200 "
                "RA",
            ),
        ),
    ),
    GpuSpec(
        id="gb200-nvl72",
        generation="blackwell",
        name="NVIDIA GB200 NVL72 (per Blackwell GPU)",
        vendor="NVIDIA",
        bf16_dense_tflops=2500.0,
        fp16_dense_tflops=2500.0,
        fp8_dense_tflops=5000.0,
        memory_gb=186.0,
        memory_bw_gbytes_per_s=8000.0,
        scaleup_kind="nvlink",
        scaleup_gbytes_per_s=900.0,
        scaleup_domain_gpus=72,
        gpus_per_server=4,
        gpus_per_node_options=(4,),
        rack_gpus=72,
        nvlink_sharp=True,
        scaleup_efficiency=0.82,
        power_w=1200.0,
        price_usd=45000.0,
        cloud_usd_per_hour=6.0,
        achievable_compute_fraction=0.50,
        price_is_estimate=True,
        host_pcie_gen=5,
        reference_nic_sku="cx7-400g",
        reference_nic_count=4,
        reference_fabric="infiniband",
        storage_nic_sku="bf3-dpu-2x400g",
        storage_nic_published=True,
        storage_ports_per_server=2,
        inband_ports_per_server=2,
        reference_design=(
            "NVIDIA DGX SuperPOD (DGX GB200): 4 x 400G InfiniBand per compute tray (one per GPU),"
            " 72-GPU NVLink racks"
        ),
        fp4_dense_tflops=10000.0,
        sources=_with_fp4(
            _NV_FP4_GB200,
            _PLATFORM(
                _sources(
                    _NV_GB200,
                    _NV_GB200 + ": 13.4 TB HBM3e and 576 TB/s per 72 GPUs",
                    _NV_GB200
                    + ": NVLink 5, 1.8 TB/s per GPU, 72-GPU NVLink domain; 4 GPUs per tray",
                ),
                "NVIDIA DGX SuperPOD GB200 RA (per compute tray: 4 x ConnectX-7 400Gb/s for "
                "compute, BlueField-3 for storage / in-band; Grace host PCIe Gen5)",
            ),
        ),
    ),
    GpuSpec(
        id="b300",
        generation="blackwell",
        name="NVIDIA B300 (HGX/DGX B300, Blackwell Ultra)",
        vendor="NVIDIA",
        bf16_dense_tflops=2250.0,
        fp16_dense_tflops=2250.0,
        fp8_dense_tflops=4500.0,
        memory_gb=288.0,
        memory_bw_gbytes_per_s=8000.0,
        scaleup_kind="nvlink",
        scaleup_gbytes_per_s=900.0,
        scaleup_domain_gpus=8,
        gpus_per_server=8,
        gpus_per_node_options=(8,),
        nvlink_sharp=True,
        scaleup_efficiency=0.82,
        power_w=1100.0,
        price_usd=42000.0,
        cloud_usd_per_hour=5.5,
        achievable_compute_fraction=0.50,
        price_is_estimate=True,
        host_pcie_gen=6,
        reference_nic_sku="cx8-800g",
        reference_nic_count=8,
        reference_fabric="infiniband",
        nic_options=("cx8-2x400g",),
        compute_nics_on_board=True,
        storage_nic_sku="bf3-dpu-2x400g",
        storage_nic_published=True,
        storage_ports_per_server=2,
        inband_ports_per_server=0,
        reference_design=(
            "NVIDIA DGX SuperPOD (DGX B300): 8 x 800G XDR InfiniBand per server (ConnectX-8 "
            "on the GPU board, Quantum-X800), rail-optimized, non-blocking; the Spectrum-X "
            "option runs each ConnectX-8 as 2 x 400GbE over two planes"
        ),
        fp4_dense_tflops=13500.0,
        sources=_with_fp4(
            _NV_FP4_B300,
            _PLATFORM(
                _sources(
                    _NV_B300,
                    _NV_B300,
                    _NV_B300 + ": NVLink 5, 1.8 TB/s per GPU",
                    "HGX B300 GPU board: 1,100 W per GPU (Blackwell Ultra technical brief)",
                ),
                "NVIDIA DGX B300 datasheet (8 OSFP ports serving 8 single-port ConnectX-8 VPI, up "
                "to 800Gb/s InfiniBand / Ethernet; 2 x dual-port QSFP112 BlueField-3 DPU up to "
                "400Gb/s for storage / in-band; the ConnectX-8 sits on the GPU board on PCIe "
                "Gen6); NVIDIA ConnectX-8 SuperNIC user manual (C8180: 1 x 800G XDR or 2 x "
                "400GbE)",
            ),
        ),
    ),
    GpuSpec(
        id="gb300-nvl72",
        generation="blackwell",
        name="NVIDIA GB300 NVL72 (per Blackwell Ultra GPU)",
        vendor="NVIDIA",
        bf16_dense_tflops=2500.0,
        fp16_dense_tflops=2500.0,
        fp8_dense_tflops=5000.0,
        memory_gb=288.0,
        memory_bw_gbytes_per_s=8000.0,
        scaleup_kind="nvlink",
        scaleup_gbytes_per_s=900.0,
        scaleup_domain_gpus=72,
        gpus_per_server=4,
        gpus_per_node_options=(4,),
        rack_gpus=72,
        nvlink_sharp=True,
        scaleup_efficiency=0.82,
        power_w=1400.0,
        price_usd=55000.0,
        cloud_usd_per_hour=7.0,
        achievable_compute_fraction=0.50,
        price_is_estimate=True,
        host_pcie_gen=6,
        reference_nic_sku="cx8-800g",
        reference_nic_count=4,
        reference_fabric="infiniband",
        nic_options=("cx8-2x400g",),
        compute_nics_on_board=True,
        storage_nic_sku="bf3-dpu-2x400g",
        storage_nic_published=True,
        storage_ports_per_server=2,
        inband_ports_per_server=0,
        reference_design=(
            "NVIDIA GB300 NVL72 (DGX SuperPOD GB300 / Enterprise RA): 72-GPU NVLink racks of 18 "
            "compute trays, 4 ConnectX-8 800G per tray (one per GPU) on Quantum-X800 "
            "InfiniBand or Spectrum-X Ethernet, one BlueField-3 per tray for storage / in-band"
        ),
        fp4_dense_tflops=15000.0,
        sources=_with_fp4(
            _NV_FP4_GB300,
            _PLATFORM(
                _sources(
                    _NV_GB300,
                    _NV_GB300 + ": 20 TB HBM3e (288 GB per GPU) and 576 TB/s per 72 GPUs",
                    _NV_GB300 + ": NVLink 5, 1.8 TB/s per GPU, 130 TB/s per 72-GPU domain",
                    "GB300 superchip: 1,400 W per Blackwell Ultra GPU (max TDP)",
                ),
                "NVIDIA Enterprise RA, GB300 NVL72 components (each compute tray: 4 Blackwell "
                "Ultra GPUs, 2 Grace CPUs, 2 mezzanine boards with 2 ConnectX-8 each = 4 HCAs; "
                "9 NVSwitch trays; up to 142 kW per rack); GB300 NVL72 datasheet (72 ConnectX-8, "
                "18 BlueField-3 per rack)",
            ),
        ),
    ),
    GpuSpec(
        id="l40s",
        generation="ada",
        name="NVIDIA L40S 48GB",
        vendor="NVIDIA",
        bf16_dense_tflops=362.0,
        fp16_dense_tflops=362.0,
        fp8_dense_tflops=733.0,
        memory_gb=48.0,
        memory_bw_gbytes_per_s=864.0,
        scaleup_kind="pcie",
        scaleup_gbytes_per_s=32.0,
        scaleup_domain_gpus=8,
        gpus_per_server=8,
        gpus_per_node_options=(1, 2, 4, 8),
        nvlink_sharp=False,
        scaleup_efficiency=PCIE_RING_EFFICIENCY,
        power_w=350.0,
        price_usd=8000.0,
        cloud_usd_per_hour=1.0,
        achievable_compute_fraction=0.50,
        price_is_estimate=True,
        host_pcie_gen=4,
        reference_nic_sku="cx6-hdr-200g",
        reference_nic_count=4,
        reference_fabric="roce",
        storage_nic_sku="cx6dx-100g",
        storage_ports_per_server=2,
        reference_design="L40S PCIe servers: one 200G NIC per two GPUs on PCIe Gen4 (estimate)",
        sources=_PLATFORM(
            _sources(_NV_L40S, _NV_L40S, "PCIe Gen4 x16, 32 GB/s per direction, no NVLink"),
            "NVIDIA L40S datasheet (PCIe Gen4 x16); NIC count: estimate",
        ),
    ),
    GpuSpec(
        id="mi300x",
        generation="cdna3",
        name="AMD Instinct MI300X 192GB",
        vendor="AMD",
        bf16_dense_tflops=1307.0,
        fp16_dense_tflops=1307.0,
        fp8_dense_tflops=2615.0,
        memory_gb=192.0,
        memory_bw_gbytes_per_s=5300.0,
        scaleup_kind="xgmi",
        scaleup_gbytes_per_s=448.0,
        scaleup_domain_gpus=8,
        gpus_per_server=8,
        gpus_per_node_options=(8,),
        nvlink_sharp=False,
        scaleup_efficiency=0.75,
        power_w=750.0,
        price_usd=15000.0,
        cloud_usd_per_hour=2.0,
        achievable_compute_fraction=0.40,
        price_is_estimate=True,
        host_pcie_gen=5,
        reference_nic_sku="cx7-400g",
        reference_nic_count=8,
        reference_fabric="infiniband",
        nic_options=("uec-400g",),
        storage_nic_sku="cx7-2x400g-qsfp112",
        storage_ports_per_server=2,
        reference_design=(
            "Azure ND MI300X v5: 8 x 400G InfiniBand per VM (one per GPU); AMD publishes 400G "
            "Ethernet NIC options (Pensando Pollara 400)"
        ),
        sources=_PLATFORM(
            _sources(
                _AMD_MI300X,
                _AMD_MI300X,
                _AMD_MI300X + ": 7 Infinity Fabric links x 64 GB/s per direction, full mesh of 8",
            ),
            "Microsoft Azure ND MI300X v5 documentation (8 x 400Gb/s ConnectX-7 InfiniBand); "
            "AMD Instinct MI300X platform (PCIe Gen5 x16 per GPU); AMD Pensando Pollara 400 "
            "product brief",
        ),
    ),
    GpuSpec(
        id="mi325x",
        generation="cdna3",
        name="AMD Instinct MI325X 256GB",
        vendor="AMD",
        bf16_dense_tflops=1307.0,
        fp16_dense_tflops=1307.0,
        fp8_dense_tflops=2615.0,
        memory_gb=256.0,
        memory_bw_gbytes_per_s=6000.0,
        scaleup_kind="xgmi",
        scaleup_gbytes_per_s=448.0,
        scaleup_domain_gpus=8,
        gpus_per_server=8,
        gpus_per_node_options=(8,),
        nvlink_sharp=False,
        scaleup_efficiency=0.75,
        power_w=1000.0,
        price_usd=20000.0,
        cloud_usd_per_hour=2.5,
        achievable_compute_fraction=0.40,
        price_is_estimate=True,
        host_pcie_gen=5,
        reference_nic_sku="uec-400g",
        reference_nic_count=8,
        reference_fabric="roce",
        nic_options=("cx7-400g",),
        storage_nic_sku="cx7-2x400g-qsfp112",
        storage_ports_per_server=2,
        reference_design=(
            "AMD Instinct MI325X platform: 8 x 400G Ethernet (AMD Pensando Pollara 400 AI NIC) "
            "per server"
        ),
        sources=_PLATFORM(
            _sources(
                _AMD_MI325X,
                _AMD_MI325X,
                _AMD_MI325X + ": 7 Infinity Fabric links x 64 GB/s per direction",
            ),
            "AMD Instinct MI325X platform and Pensando Pollara 400 launch materials (Oct "
            "2024: 8 x 400G AI NICs, PCIe Gen5)",
        ),
    ),
    GpuSpec(
        id="mi355x",
        generation="cdna4",
        name="AMD Instinct MI355X 288GB",
        vendor="AMD",
        bf16_dense_tflops=2516.6,
        fp16_dense_tflops=2516.6,
        fp8_dense_tflops=5033.2,
        memory_gb=288.0,
        memory_bw_gbytes_per_s=8000.0,
        scaleup_kind="xgmi",
        scaleup_gbytes_per_s=537.6,
        scaleup_domain_gpus=8,
        gpus_per_server=8,
        gpus_per_node_options=(8,),
        nvlink_sharp=False,
        scaleup_efficiency=0.75,
        power_w=1400.0,
        price_usd=25000.0,
        cloud_usd_per_hour=3.0,
        achievable_compute_fraction=0.40,
        price_is_estimate=True,
        host_pcie_gen=5,
        reference_nic_sku="uec-400g",
        reference_nic_count=8,
        reference_fabric="roce",
        nic_options=("cx7-400g", "thor2-400g"),
        storage_nic_sku="cx7-2x400g-qsfp112",
        storage_ports_per_server=2,
        reference_design=(
            "AMD Instinct MI355X platform (8-GPU UBB; OCI and AMD reference clusters): 8 x 400G "
            "Ethernet per server, one AMD Pensando Pollara 400 AI NIC per GPU, rail-optimized, "
            "non-blocking (Vulcano 800G is the MI400-series NIC, PCIe Gen6)"
        ),
        sources=_PLATFORM(
            _sources(
                _AMD_MI355X,
                _AMD_MI355X,
                _AMD_MI355X + ": 4th-gen Infinity Fabric, 7 links x 153.6 GB/s (1,075 GB/s "
                "total, 537.6 GB/s per direction), full mesh of 8",
                "MI355X: 1,400 W total board power (liquid-cooled); MI350X: 1,000 W",
            ),
            "AMD Instinct MI350 series platform (8 x MI355X on a UBB 2.0 baseboard, PCIe Gen5 "
            "x16 per GPU, 400 GbE scale-out per GPU); AMD Pensando Pollara 400 AI NIC product "
            "page (UEC-ready 400GbE, multi-plane Ethernet)",
        ),
    ),
    GpuSpec(
        id="gaudi3",
        generation="gaudi3",
        name="Intel Gaudi 3 (OAM HL-325L)",
        vendor="Intel",
        bf16_dense_tflops=1835.0,
        fp16_dense_tflops=1835.0,
        fp8_dense_tflops=1835.0,
        memory_gb=128.0,
        memory_bw_gbytes_per_s=3700.0,
        scaleup_kind="roce-mesh",
        scaleup_gbytes_per_s=525.0,
        scaleup_domain_gpus=8,
        gpus_per_server=8,
        gpus_per_node_options=(8,),
        nvlink_sharp=False,
        scaleup_efficiency=0.75,
        power_w=900.0,
        price_usd=15600.0,
        cloud_usd_per_hour=1.5,
        achievable_compute_fraction=0.45,
        price_is_estimate=True,
        host_pcie_gen=5,
        reference_nic_sku="gaudi3-scaleout-200g",
        reference_nic_count=24,
        reference_fabric="roce",
        storage_nic_sku="cx6dx-100g",
        storage_ports_per_server=2,
        integrated_scaleout=True,
        reference_design=(
            "Intel Gaudi 3 HLS: 24 x 200GbE RoCE integrated ports per server (3 per card, 4 x "
            "200G per OSFP) in three plies, each a separate Ethernet leaf/spine, no added NICs"
        ),
        sources=_PLATFORM(
            _sources(
                _INTEL_GAUDI3,
                _INTEL_GAUDI3,
                _INTEL_GAUDI3 + ": 24 x 200 GbE on die, 21 for the in-server mesh (21 x 25 GB/s)",
                "price: Intel's published 8-accelerator kit price of about $125,000 / 8",
            ),
            "Intel Gaudi 3 AI accelerator white paper (24 x 200GbE per card: 21 in-server, 3 "
            "scale-out; 6 OSFP 800G per baseboard); Intel Gaudi documentation, 'Network "
            "Configuration' (3 scale-out ports per card bundled 4 x 200G per OSFP to leaf "
            "switches) and 'Terminology' (a fabric rail or ply: a separate switch network per "
            "card NIC); host storage NICs: OEM-dependent, 2 x 100GbE estimate",
        ),
    ),
)

GPU_IDS: tuple[str, ...] = tuple(g.id for g in GPUS)
