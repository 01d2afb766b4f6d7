"""What the recommendation needs from the scenario, the workload plan and the catalog.

Typed inputs only: :class:`~advisor.engine.scenario.Scenario`,
:class:`~advisor.engine.workload.WorkloadPlan` and :class:`~advisor.engine.catalog.Catalog`.
The GPU's platform facts (host PCIe generation, reference compute NIC and count, integrated
scale-out ports, storage adapters; docs/MODEL.md "Platform facts") are resolved here once.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from advisor.engine.bom import NetworkParts, StorageSpec
from advisor.engine.catalog import Catalog
from advisor.engine.catalog.gpus import GpuSpec
from advisor.engine.catalog.network import FABRICS, INFINIBAND, ROCE, Nic
from advisor.engine.cost import CostInputs
from advisor.engine.scenario import Scenario
from advisor.engine.workload import WorkloadPlan

PCIE_X16_GBPS: dict[int, float] = {3: 126.0, 4: 252.0, 5: 504.0, 6: 1008.0}
"""Usable x16 PCIe bandwidth per direction in Gb/s by generation (PCI-SIG: 8/16/32/64 GT/s
per lane, 128b/130b encoding; Gen6 FLIT mode).  A NIC faster than its slot cannot run at
line rate, so such designs are pruned."""
ASSUMED_PCIE_GEN = 5
"""Used only when a GPU's platform facts leave ``host_pcie_gen`` unset; the result says so."""
HOPPER_OR_NEWER: frozenset[str] = frozenset(
    {"h100-sxm", "h100-pcie", "h200-sxm", "h800-sxm", "h20", "b200", "gb200-nvl72"}
)


@dataclass(frozen=True)
class Platform:
    """The GPU server's network facts (from the GPU catalog entry)."""

    gpu_id: str
    gpu_name: str
    vendor: str
    pcie_gen: int
    pcie_known: bool
    reference_nic: Nic | None
    reference_count: int
    reference_fabric: str
    nic_options: tuple[str, ...]
    integrated: bool
    reference_design: str
    storage: StorageSpec

    @property
    def slot_gbps(self) -> float:
        return PCIE_X16_GBPS.get(self.pcie_gen, PCIE_X16_GBPS[ASSUMED_PCIE_GEN])

    @property
    def reference_gbps(self) -> int:
        return self.reference_nic.port_gbps if self.reference_nic else 400

    def nic_standing(self, nic: Nic) -> int:
        """0: the platform's reference NIC; 1: a NIC its vendor publishes; 2: another."""
        if self.reference_nic is not None and nic.sku == self.reference_nic.sku:
            return 0
        if nic.sku in self.nic_options:
            return 1
        return 2


def platform_of(gpu: GpuSpec, parts: NetworkParts, gpus_per_node: int) -> Platform:
    ref: Nic | None = None
    if gpu.reference_nic_sku:
        with contextlib.suppress(KeyError):
            item = parts.find(gpu.reference_nic_sku)
            if isinstance(item, Nic):
                ref = item
    count = gpu.reference_nic_count or gpus_per_node
    if gpus_per_node != gpu.gpus_per_server and not gpu.integrated_scaleout:
        # a smaller server than the platform's: keep one NIC per GPU
        count = max(1, round(count * gpus_per_node / max(1, gpu.gpus_per_server)))
    fabric = gpu.reference_fabric if gpu.reference_fabric in FABRICS else INFINIBAND
    if ref is not None and not ref.serves(fabric):
        fabric = ROCE
    return Platform(
        gpu_id=gpu.id,
        gpu_name=gpu.name,
        vendor=gpu.vendor,
        pcie_gen=gpu.host_pcie_gen or ASSUMED_PCIE_GEN,
        pcie_known=gpu.host_pcie_gen > 0,
        reference_nic=ref,
        reference_count=count,
        reference_fabric=fabric,
        nic_options=tuple(gpu.nic_options),
        integrated=gpu.integrated_scaleout and ref is not None,
        reference_design=gpu.reference_design
        or f"one {ref.port_gbps if ref else 400}G NIC per GPU, rail-optimized, non-blocking "
        "(HGX practice; no published design recorded for this GPU)",
        storage=StorageSpec.for_gpu(gpu),
    )


@dataclass(frozen=True)
class JobFacts:
    """What the recommendation needs from the scenario and the workload plan."""

    workload: str
    gpus: int
    nodes: int
    gpus_per_node: int
    needs_compute_fabric: bool
    why_no_fabric: str
    total_tokens: float
    target_ms_per_token: float | None
    costs: CostInputs
    utilization: float
    allow_oversubscription: bool
    network_budget_usd: float | None
    team_skills: str
    prefer: str
    gpu_id: str
    params: float
    weight_bytes_per_param: float
    platform: Platform
    kv_only: bool = False
    """Disaggregated serving whose prefill and decode instances each fit one NVLink domain:
    only the KV cache crosses the network (once per request), not every generated token."""

    @property
    def inference(self) -> bool:
        return self.workload == "inference"

    @property
    def perf_key(self) -> str:
        return "ms_per_token" if self.inference else "step_time_s"

    @property
    def large_modern_training(self) -> bool:
        """Training on 32 or more Hopper/Blackwell servers (the audit's field-practice rule)."""
        return not self.inference and self.nodes >= 32 and self.gpu_id in HOPPER_OR_NEWER


def job_facts(s: Scenario, w: WorkloadPlan, catalog: Catalog, parts: NetworkParts) -> JobFacts:
    nodes = w.nodes
    needs = w.needs_compute_fabric and nodes > 1
    why = ""
    if not needs:
        plan = w.plan
        replica = plan.tp * plan.pp * max(1, plan.ep)
        if nodes <= 1:
            why = f"the job runs inside one server ({s.gpus} GPUs over NVLink/PCIe)"
        elif s.workload == "inference":
            why = (
                f"each inference replica fits one server or NVLink domain ({replica} of "
                f"{w.domain_gpus} GPUs), so the {nodes} servers serve requests independently"
            )
        elif s.gpus <= w.domain_gpus:
            why = f"all {s.gpus} GPUs share one NVLink domain of {w.domain_gpus} GPUs"
        else:
            why = "no traffic of the job crosses servers"
    c = s.constraints
    costs = CostInputs(
        gpu_pricing=c.gpu_pricing,
        gpu_hour_usd=c.gpu_hour_usd,
        electricity_usd_per_kwh=c.electricity_usd_per_kwh,
        pue=c.pue,
        amortization_years=c.amortization_years,
        gpu_price_usd=s.gpu.price_usd,
        gpu_power_w=s.gpu.power_w,
    )
    target = s.inference.target_ms_per_token if s.inference is not None else None
    bytes_per_param = 1.0 if s.precision == "fp8" else 2.0
    return JobFacts(
        workload=s.workload,
        gpus=s.gpus,
        nodes=nodes,
        gpus_per_node=s.gpus_per_node,
        needs_compute_fabric=needs,
        why_no_fabric=why,
        total_tokens=s.training.total_tokens if s.training is not None else 0.0,
        target_ms_per_token=float(target) if target else None,
        costs=costs,
        utilization=float(getattr(c, "utilization", 0.8)),
        allow_oversubscription=bool(getattr(c, "allow_oversubscription", False)),
        network_budget_usd=c.network_budget_usd,
        team_skills=c.team_skills,
        prefer=c.prefer,
        gpu_id=s.gpu.id,
        params=s.model.params,
        weight_bytes_per_param=bytes_per_param,
        platform=platform_of(s.gpu, parts, s.gpus_per_node),
        kv_only=_kv_only(w),
    )


def _kv_only(w: WorkloadPlan) -> bool:
    """True when only the KV cache crosses servers (disaggregated, instances inside a domain)."""
    sp = w.inference.serving if w.inference is not None else None
    if sp is None:
        return False
    return all(pool.gpus_per_instance <= w.domain_gpus for pool in (sp.prefill, sp.decode))
