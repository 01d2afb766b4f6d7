"""The recommendation: which network to buy, why, and what the alternatives would cost.

``recommend(s, w, catalog, progress)`` enumerates candidate designs (fabric class x NIC speed
x NICs per server x oversubscription x switch model), sizes the topology of each once, prunes
the impossible ones with their reason, evaluates each distinct performance design once,
prices each candidate (bill of materials, GPU time, power, skills) and chooses under the
customer's constraints.  The returned dict holds the result keys of docs/ENGINE_API.md:
recommendation, metrics, bom, cost, options, pruned, break_even, uncertainty, monitoring,
assumptions, scaling.

Constants and their sources are in the "Recommendation constants" block below and in
docs/MODEL.md, section "Recommendation".
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from advisor.engine.bom import (
    STORAGE_NIC_GBPS,
    STORAGE_OVERSUBSCRIPTION,
    STORAGE_PORTS_PER_SERVER,
    BomError,
    BomLine,
    NetworkParts,
    compute_fabric_lines,
    compute_fabric_totals,
    management_lines,
    storage_lines,
    storage_topology,
    totals,
)
from advisor.engine.catalog.network import ETHERNET, FABRICS, INFINIBAND, ROCE, Nic, Switch
from advisor.engine.cost import (
    HOURS_PER_YEAR,
    PRICE_UNCERTAINTY,
    SERVER_POWER_FACTOR,
    SERVER_PRICE_FACTOR,
    SERVING_DAYS,
    CostInputs,
    WorkCost,
    gpu_hour_cost_usd,
    serving_work,
    training_work,
    work_cost,
)
from advisor.engine.topology import (
    DAC_MAX_REACH_M,
    ROW_LINK_M,
    SERVERS_PER_RACK,
    SPINE_LINK_M,
    TopologyError,
    TopologySize,
    size_topology,
)

# --------------------------------------------------------------- Recommendation constants

NIC_COUNTS: tuple[int, ...] = (1, 2, 4, 8)
"""NICs per server tried, plus one per GPU (issue 4)."""
OVERSUBSCRIPTIONS: tuple[float, ...] = (1.0, 2.0, 3.0)
"""Leaf oversubscription ratios tried (r:1)."""
SKILL_GAP: dict[str, dict[str, tuple[float, float]]] = {
    # team_skills -> fabric -> (one-time ramp-up USD, risk as a fraction of GPU cost)
    "both": {ETHERNET: (0.0, 0.0), ROCE: (0.0, 0.0), INFINIBAND: (0.0, 0.0)},
    "ethernet": {ETHERNET: (0.0, 0.0), ROCE: (50_000.0, 0.03), INFINIBAND: (150_000.0, 0.10)},
    "infiniband": {ETHERNET: (0.0, 0.0), ROCE: (50_000.0, 0.04), INFINIBAND: (0.0, 0.0)},
    "none": {ETHERNET: (0.0, 0.0), ROCE: (100_000.0, 0.06), INFINIBAND: (100_000.0, 0.05)},
}
"""Operational cost of a fabric the team does not run today: training/professional services
(one-time, charged like capex by time share) plus a risk premium, the expected GPU time lost
to misconfiguration while the team learns (lossless Ethernet tuning for RoCE: PFC/ECN/DCQCN;
subnet manager, UFM and a new vendor ecosystem for InfiniBand).  Engineering estimates,
informed by Meta SIGCOMM'24 (months of RoCE tuning) and DOMAIN.md section 2."""
BALANCED_COST_BAND = 0.02
"""prefer=balanced: among designs within 2 % of the cheapest total cost, take the fastest."""
PERFORMANCE_TIE_BAND = 0.01
"""prefer=performance: designs within 1 % of the fastest count as equally fast; cheapest wins."""
SCALING_MAX_POINTS = 7
"""Points of the scaling chart (servers 1, 2, 4, ... up to the job's size)."""
SCALING_MIN_SERVERS = 8
"""The chart reaches at least this many servers, so a one-server job shows what scaling out
would cost in efficiency on each fabric class."""
PCIE_X16_GBPS: dict[int, float] = {3: 126.0, 4: 252.0, 5: 504.0, 6: 1008.0}
"""Usable x16 PCIe bandwidth per direction in Gb/s by generation (PCI-SIG: 8/16/32/64 GT/s
per lane, 128b/130b encoding; Gen6 FLIT mode).  A NIC faster than its slot cannot run at
line rate, so such designs are pruned."""
HOST_PCIE_GEN: dict[str, int] = {
    "v100-sxm2-32gb": 3,
    "a100-80gb-sxm": 4,
    "l40s": 4,
    "h100-sxm": 5,
    "h100-pcie": 5,
    "h200-sxm": 5,
    "h800-sxm": 5,
    "h20": 5,
    "gb200-nvl72": 5,
    "mi300x": 5,
    "mi325x": 5,
    "gaudi3": 5,
    "b200": 6,
}
"""PCIe generation between a server's GPUs/NICs (vendor datasheets: A100 and L40S Gen4,
Hopper, MI300 and Grace-attached NICs Gen5, Blackwell HGX Gen6).  Unknown GPUs: Gen5."""
DEFAULT_PCIE_GEN = 5

MONITORING_COMMON: tuple[str, ...] = (
    "NCCL collective time against step time per job: a rising communication share is the "
    "first sign of a network problem (faults look like slow training, not errors)",
    "Per-node step-time outliers: one slow node, NIC or link stalls every synchronous step",
    "Per-link throughput and utilisation on every NIC and switch port, correlated with jobs",
    "Symbol errors, CRC/FCS errors and pre-FEC bit error rate per link (rising counts "
    "precede failures)",
    "Link flaps and link-down events, with the job running at the time",
    "Optical module temperature and receive power (DDM) for every transceiver",
)
MONITORING_BY_FABRIC: dict[str, tuple[str, ...]] = {
    ROCE: (
        "PFC pause frames sent and received per port and priority (pause storms spread "
        "congestion backwards); PFC watchdog events",
        "ECN-marked packets and CNPs per queue: DCQCN congestion-control activity",
        "RDMA retransmissions, out-of-sequence and NAK counters, QP timeouts on the NICs",
        "Drops on the lossless traffic class (must stay at zero) and buffer occupancy",
        "Load spread across leaf uplinks (ECMP hash collisions, or adaptive routing health)",
    ),
    INFINIBAND: (
        "IB port counters via UFM / ibdiagnet: SymbolErrorCounter, LinkErrorRecoveryCounter, "
        "LinkDownedCounter, PortRcvErrors",
        "PortXmitWait and congestion counters per port (credit starvation, hot spots)",
        "Subnet manager health, failover and routing re-sweeps (OpenSM / UFM)",
        "SHARP aggregation manager status and SHARP usage by jobs",
        "Adaptive-routing activity and counter balance across spines",
    ),
    ETHERNET: (
        "TCP retransmissions and retransmission timeouts per host",
        "Switch interface drops and buffer discards (microbursts)",
        "Host CPU time in softirq / network stack (TCP copies compete with data loading)",
        "Achieved NCCL socket bandwidth against wire speed (40-60 % is normal for TCP)",
    ),
}
MONITORING_NORTH_SOUTH: tuple[str, ...] = (
    "Storage network throughput during checkpoints and data loading; checkpoint time "
    "against step time",
    "Management network: BMC reachability, switch management-port health",
)

Evaluator = Callable[["Candidate"], Mapping[str, Any]]
"""Performance of one candidate design: the metrics dict of docs/ENGINE_API.md."""


# ----------------------------------------------------------------------------- job facts


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
    network_budget_usd: float | None
    team_skills: str
    prefer: str
    gpu_id: str

    @property
    def inference(self) -> bool:
        return self.workload == "inference"

    @property
    def perf_key(self) -> str:
        return "ms_per_token" if self.inference else "step_time_s"


def job_facts(s: Any, w: Any) -> JobFacts:
    """Read the scenario and plan (attribute or mapping access, tolerant of missing parts)."""
    workload = str(_get(s, "workload", "training"))
    gpus = int(_get(s, "gpus", 1))
    gpus_per_node = int(_get(w, "gpus_per_node", _get(s, "gpus_per_node", 8)) or 8)
    nodes = int(_get(w, "nodes", max(1, math.ceil(gpus / gpus_per_node))))
    spans = bool(_get(w, "spans_servers", nodes > 1))
    inf = _get(s, "inference", None)
    # independent_replicas None means "decide": replicas are independent when one fits a server.
    independent = inf is not None and _get(inf, "independent_replicas", None) is not False
    plan = _get(w, "plan", None)
    tp = int(_get(plan, "tp", 1) or 1)
    pp = int(_get(plan, "pp", 1) or 1)
    ep = int(_get(plan, "ep", 1) or 1)
    replica_gpus = tp * pp * (ep if ep > 1 else 1)

    domain = int(_get(w, "domain_gpus", gpus_per_node) or gpus_per_node)
    replicas_fit = workload == "inference" and independent and replica_gpus <= domain
    needs = bool(_get(w, "needs_compute_fabric", spans and nodes > 1 and not replicas_fit))
    why = ""
    if not needs:
        if nodes <= 1:
            why = f"the job runs inside one server ({gpus} GPUs over NVLink/PCIe)"
        elif workload == "inference":
            why = (
                f"each inference replica fits one server or NVLink domain ({replica_gpus} of "
                f"{domain} GPUs), so the {nodes} servers serve requests independently"
            )
        elif gpus <= domain:
            why = f"all {gpus} GPUs share one NVLink domain of {domain} GPUs"
        else:
            why = "no traffic of the job crosses servers"

    training = _get(s, "training", None)
    total_tokens = float(_get(training, "total_tokens", 0.0) or 0.0) if training else 0.0
    target = _get(inf, "target_ms_per_token", None) if inf is not None else None

    cons = _get(s, "constraints", None)
    gpu = _get(s, "gpu", None)
    gpu_id = str(_get(gpu, "id", gpu if isinstance(gpu, str) else "gpu"))
    pricing = str(_get(cons, "gpu_pricing", "cloud") or "cloud")
    cloud_rate = _get(cons, "gpu_hour_usd", None)
    if cloud_rate is None:
        cloud_rate = _get(gpu, "cloud_usd_per_hour", 2.5)
    costs = CostInputs(
        gpu_pricing=pricing,
        gpu_hour_usd=float(cloud_rate),
        electricity_usd_per_kwh=float(_get(cons, "electricity_usd_per_kwh", 0.1) or 0.0),
        pue=float(_get(cons, "pue", 1.3) or 1.0),
        amortization_years=float(_get(cons, "amortization_years", 4.0) or 4.0),
        gpu_price_usd=float(_get(gpu, "price_usd", 30_000.0) or 0.0),
        gpu_power_w=float(_get(gpu, "power_w", 700.0) or 0.0),
    )
    budget = _get(cons, "network_budget_usd", None)
    return JobFacts(
        workload=workload,
        gpus=gpus,
        nodes=nodes,
        gpus_per_node=gpus_per_node,
        needs_compute_fabric=needs,
        why_no_fabric=why,
        total_tokens=total_tokens,
        target_ms_per_token=float(target) if target else None,
        costs=costs,
        network_budget_usd=float(budget) if budget is not None else None,
        team_skills=str(_get(cons, "team_skills", "both") or "both"),
        prefer=str(_get(cons, "prefer", "balanced") or "balanced"),
        gpu_id=gpu_id,
    )


def _get(obj: Any, name: str, default: Any) -> Any:
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


# ---------------------------------------------------------------------------- candidates


@dataclass(frozen=True)
class Candidate:
    fabric: str
    nic: Nic
    nics_per_node: int
    oversubscription: float
    switch: Switch
    adaptive_routing: bool | None
    in_network_reduction: bool

    @property
    def nic_gbps(self) -> int:
        return self.nic.port_gbps

    @property
    def design_key(self) -> tuple[str, int, int, float, bool | None, bool]:
        """What the performance model sees; candidates sharing it share one evaluation."""
        return (
            self.fabric,
            self.nic_gbps,
            self.nics_per_node,
            self.oversubscription,
            self.adaptive_routing,
            self.in_network_reduction,
        )

    def design_dict(self) -> dict[str, Any]:
        return {
            "fabric": self.fabric,
            "nic_gbps": self.nic_gbps,
            "nics_per_node": self.nics_per_node,
            "oversubscription": self.oversubscription,
            "switch_model": self.switch.sku,
            "nic_sku": self.nic.sku,
        }

    def label(self) -> str:
        return (
            f"{_FABRIC_NAME[self.fabric]} {self.nics_per_node} x {self.nic_gbps}G "
            f"({self.switch.sku}, {self.oversubscription:g}:1)"
        )


_FABRIC_NAME = {ETHERNET: "Ethernet (TCP)", ROCE: "RoCE v2", INFINIBAND: "InfiniBand"}
_IB_GEN = {100: "EDR", 200: "HDR", 400: "NDR", 800: "XDR"}


def fabric_title(fabric: str, gbps: int) -> str:
    if fabric == INFINIBAND:
        return f"InfiniBand {_IB_GEN.get(gbps, f'{gbps}G')}"
    return f"{_FABRIC_NAME[fabric]} {gbps}G"


def enumerate_candidates(
    facts: JobFacts, parts: NetworkParts
) -> tuple[list[Candidate], list[dict[str, Any]]]:
    """All candidate designs and the design classes pruned before sizing."""
    pruned: list[dict[str, Any]] = []
    counts = sorted({c for c in (*NIC_COUNTS, facts.gpus_per_node) if c <= facts.gpus_per_node})
    for c in NIC_COUNTS:
        if c > facts.gpus_per_node:
            pruned.append(
                {
                    "design": {"nics_per_node": c},
                    "reason": f"{c} NICs per server is more than its "
                    f"{facts.gpus_per_node} GPUs; one NIC per GPU is the maximum",
                }
            )
    gen = HOST_PCIE_GEN.get(facts.gpu_id, DEFAULT_PCIE_GEN)
    slot_gbps = PCIE_X16_GBPS[gen]
    too_fast = sorted({n.port_gbps for n in parts.nics if n.port_gbps > slot_gbps})
    if too_fast:
        pruned.append(
            {
                "design": {"nic_gbps": too_fast},
                "reason": f"{facts.gpu_id} servers have PCIe Gen{gen} x16 slots carrying about "
                f"{slot_gbps:.0f} Gb/s, too little to run a "
                f"{'/'.join(str(g) for g in too_fast)}G NIC at line rate",
            }
        )
    out: list[Candidate] = []
    for fabric in FABRICS:
        for switch in parts.switches:
            if not switch.serves(fabric) or switch.role == "management":
                continue
            for gbps in switch.speeds_gbps:
                if gbps > slot_gbps:
                    continue
                for nic, ar in _nic_choices(parts, fabric, gbps, switch):
                    inr = fabric == INFINIBAND and switch.in_network_reduction
                    for n in counts:
                        for r in OVERSUBSCRIPTIONS:
                            out.append(Candidate(fabric, nic, n, r, switch, ar, inr))
    return out, pruned


def _nic_choices(
    parts: NetworkParts, fabric: str, gbps: int, switch: Switch
) -> list[tuple[Nic, bool | None]]:
    nics = [
        n
        for n in parts.nics
        if n.port_gbps == gbps and n.serves(fabric) and (fabric == ETHERNET or n.rdma)
    ]
    if not nics:
        return []
    cheapest = min(nics, key=lambda n: n.unit_price_usd)
    if fabric == INFINIBAND:
        return [(cheapest, switch.adaptive_routing)]
    if fabric == ETHERNET:
        return [(cheapest, None)]
    choices: list[tuple[Nic, bool | None]] = []
    if switch.adaptive_routing:
        ar_nics = [n for n in nics if n.adaptive_routing or n.packet_spraying]
        if ar_nics:
            choices.append((min(ar_nics, key=lambda n: n.unit_price_usd), True))
    if not (choices and choices[0][0] is cheapest):
        choices.append((cheapest, cheapest.packet_spraying))
    return choices


# ------------------------------------------------------------------------------- scoring


@dataclass
class Scored:
    cand: Candidate
    topo: TopologySize
    metrics: dict[str, Any]
    perf: float
    capex_usd: float
    power_w: float
    ops_usd: float
    cost: WorkCost
    decision_usd: float
    violations: list[str]

    @property
    def feasible(self) -> bool:
        return not self.violations


def _ops_cost(facts: JobFacts, fabric: str, gpu_cost_usd: float, work_hours: float) -> float:
    table = SKILL_GAP.get(facts.team_skills, SKILL_GAP["both"])
    one_time, risk = table.get(fabric, (0.0, 0.0))
    life_h = max(facts.costs.amortization_years, 1e-9) * HOURS_PER_YEAR
    return one_time * min(1.0, work_hours / life_h) + risk * gpu_cost_usd


def _work_hours(facts: JobFacts, metrics: Mapping[str, Any]) -> float:
    if facts.inference:
        return SERVING_DAYS * 24.0
    return _num(metrics.get("run_time_s")) / 3600.0


@lru_cache(maxsize=64)
def _work_label(facts: JobFacts) -> str:
    return serving_work() if facts.inference else training_work(facts.total_tokens)


def _price(
    facts: JobFacts,
    cand: Candidate,
    metrics: Mapping[str, Any],
    capex_usd: float,
    power_w: float,
) -> tuple[WorkCost, float]:
    """The work's cost with this design, and the decision cost used to rank designs.

    Training: the total cost.  Inference (a fixed fleet for a month): the total plus the
    money of GPU time idling on the network, i.e. serving capacity lost to it.
    """
    hours = _work_hours(facts, metrics)
    idle = _num(metrics.get("gpu_idle_fraction"))
    gpu_cost = facts.gpus * hours * gpu_hour_cost_usd(facts.costs)
    cost = work_cost(
        facts.costs,
        gpus=facts.gpus,
        work_hours=hours,
        idle_fraction=idle,
        network_capex_usd=capex_usd,
        network_power_w=power_w,
        work=_work_label(facts),
        operations_usd=_ops_cost(facts, cand.fabric, gpu_cost, hours),
    )
    decision = cost.total_cost_usd + (cost.idle_cost_usd if facts.inference else 0.0)
    return cost, decision


# ---------------------------------------------------------------------------- entry point


def recommend(
    s: Any,
    w: Any,
    catalog: Any,
    progress: Callable[[int], None] | None = None,
    *,
    evaluator: Evaluator | None = None,
) -> dict[str, Any]:
    """Choose the network for scenario ``s`` with plan ``w``; see the module docstring.

    ``evaluator`` overrides the performance model (tests); by default each distinct design
    is evaluated once with :func:`advisor.engine.performance.evaluate_design`.
    """
    facts = job_facts(s, w)
    parts = _parts(catalog)
    evaluate = evaluator or _performance_evaluator(s, w)
    _report(progress, 0)
    north_south = storage_lines(parts, nodes=facts.nodes)
    ns_topo, ns_switch = storage_topology(parts, nodes=facts.nodes)
    if not facts.needs_compute_fabric:
        result = _no_fabric(facts, parts, evaluate, north_south, ns_topo, ns_switch)
        result["scaling"] = _scaling(s, w, facts, _representatives(facts, parts))
        _report(progress, 100)
        return result

    candidates, pruned = enumerate_candidates(facts, parts)
    ns_capex, ns_power = totals(north_south)
    ns_switches = ns_topo.total_switches
    metrics_cache: dict[tuple[str, int, int, float, bool | None, bool], dict[str, Any]] = {}
    mgmt_cache: dict[int, tuple[float, float]] = {}
    scored: list[Scored] = []
    seen_single: set[tuple[str, str, str, int]] = set()
    single_dupes = 0
    step = max(1, len(candidates) // 20)
    for i, cand in enumerate(candidates):
        if i % step == 0:
            _report(progress, min(90, 5 + 85 * i // max(1, len(candidates))))
        endpoints = facts.nodes * cand.nics_per_node
        radix = cand.switch.radix_at(cand.nic_gbps) or 0
        try:
            topo = size_topology(endpoints, radix, cand.oversubscription, rails=cand.nics_per_node)
        except TopologyError as exc:
            pruned.append({"design": cand.design_dict(), "reason": str(exc)})
            continue
        if topo.tiers == 1:
            key = (cand.fabric, cand.nic.sku, cand.switch.sku, cand.nics_per_node)
            if key in seen_single:
                single_dupes += 1
                continue
            seen_single.add(key)
            cand = dataclasses.replace(cand, oversubscription=1.0)
        try:
            capex, power = compute_fabric_totals(
                parts,
                fabric=cand.fabric,
                nic=cand.nic,
                nics_per_node=cand.nics_per_node,
                nodes=facts.nodes,
                switch=cand.switch,
                topo=topo,
            )
            managed = topo.total_switches + ns_switches
            mgmt_totals = mgmt_cache.get(managed)
            if mgmt_totals is None:
                mgmt_totals = totals(
                    management_lines(parts, nodes=facts.nodes, managed_switches=managed)
                )
                mgmt_cache[managed] = mgmt_totals
        except BomError as exc:
            pruned.append({"design": cand.design_dict(), "reason": str(exc)})
            continue
        capex += ns_capex + mgmt_totals[0]
        power += ns_power + mgmt_totals[1]
        metrics = metrics_cache.get(cand.design_key)
        if metrics is None:
            metrics = _clean(evaluate(cand))
            metrics_cache[cand.design_key] = metrics
        cost, decision = _price(facts, cand, metrics, capex, power)
        ops = cost.operations_cost_usd
        perf = _num(metrics.get(facts.perf_key), math.inf)
        scored.append(Scored(cand, topo, metrics, perf, capex, power, ops, cost, decision, []))
    _report(progress, 90)
    if single_dupes:
        pruned.append(
            {
                "design": {"oversubscription": [r for r in OVERSUBSCRIPTIONS if r > 1.0]},
                "reason": f"{single_dupes} designs whose NIC ports fit one switch: a single "
                "switch is non-blocking, so oversubscription does not apply (kept at 1:1)",
            }
        )
    if not scored:
        result = _no_fabric(facts, parts, evaluate, north_south, ns_topo, ns_switch)
        result["pruned"] = pruned + result["pruned"]
        result["scaling"] = _scaling(s, w, facts, _representatives(facts, parts))
        _report(progress, 100)
        return result

    notes = _check_constraints(facts, scored)
    best = _choose(facts, scored)
    result = _build(facts, parts, best, scored, pruned, north_south, notes)
    reps = {f: sc.cand for f, sc in _best_per_fabric(scored).items()}
    result["scaling"] = _scaling(s, w, facts, reps)
    _report(progress, 100)
    return result


_PARTS_CACHE: dict[int, tuple[Any, NetworkParts]] = {}


def _parts(catalog: Any) -> NetworkParts:
    """NetworkParts of a catalog, reused while the same catalog object is alive (keeps the
    link-kit and cabling caches warm across evaluations)."""
    hit = _PARTS_CACHE.get(id(catalog))
    if hit is not None and hit[0] is catalog:
        return hit[1]
    parts = NetworkParts.from_catalog(catalog)
    if len(_PARTS_CACHE) > 16:
        _PARTS_CACHE.clear()
    _PARTS_CACHE[id(catalog)] = (catalog, parts)
    return parts


def _report(progress: Callable[[int], None] | None, pct: int) -> None:
    if progress is not None:
        progress(pct)


def _performance_evaluator(s: Any, w: Any) -> Evaluator:
    from advisor.engine.performance import Design, evaluate_design

    def run(cand: Candidate) -> Mapping[str, Any]:
        design = Design(
            fabric=cand.fabric,
            nic_gbps=float(cand.nic_gbps),
            nics_per_node=cand.nics_per_node,
            oversubscription=cand.oversubscription,
            adaptive_routing=cand.adaptive_routing,
            in_network_reduction=cand.in_network_reduction,
        )
        metrics: Mapping[str, Any] = evaluate_design(s, w, design).to_dict()
        return metrics

    return run


# ------------------------------------------------------------------------- constraints


def _check_constraints(facts: JobFacts, scored: list[Scored]) -> list[str]:
    """Mark hard-constraint violations; return notes for constraints nothing can meet.

    A latency target that no design reaches (the GPUs' own decode time is above it) cannot
    tell designs apart, so it is reported instead of ruling everything out.
    """
    notes: list[str] = []
    budget = facts.network_budget_usd
    target = facts.target_ms_per_token
    latency_applies = facts.inference and target is not None
    if latency_applies and target is not None and all(sc.perf > target for sc in scored):
        fastest = min(scored, key=lambda sc: sc.perf)
        compute_ms = _num(fastest.metrics.get("compute_ms_per_token"))
        notes.append(
            f"No network design reaches the {target:g} ms per token target: the fastest "
            f"decodes at {fastest.perf:.1f} ms, of which {compute_ms:.1f} ms is GPU compute "
            "and memory time, so the target needs more or faster GPUs per replica rather "
            "than a faster network."
        )
        latency_applies = False
    for sc in scored:
        if not math.isfinite(sc.perf):
            sc.violations.append("the performance model found no valid timing for it")
        if budget is not None and sc.capex_usd > budget:
            sc.violations.append(
                f"its network costs {_usd(sc.capex_usd)}, over the {_usd(budget)} budget"
            )
        if latency_applies and target is not None and sc.perf > target:
            sc.violations.append(f"{sc.perf:.1f} ms per token misses the {target:g} ms target")
    if budget is not None and not any(sc.feasible for sc in scored):
        cheapest = min(scored, key=lambda sc: sc.capex_usd)
        notes.append(
            f"No design fits the {_usd(budget)} network budget; the least expensive network "
            f"that can run the job costs {_usd(cheapest.capex_usd)}."
        )
    return notes


def _choose(facts: JobFacts, scored: list[Scored]) -> Scored:
    """Pick the design: hard constraints first, then the customer's preference.

    When nothing meets every hard constraint, the designs that break the fewest are kept,
    and among them the least network capex (an unmeetable budget) decides.
    """
    pool = [sc for sc in scored if sc.feasible]
    if not pool:
        fewest = min(len(sc.violations) for sc in scored)
        pool = [sc for sc in scored if len(sc.violations) == fewest]
        if facts.network_budget_usd is not None:
            least = min(sc.capex_usd for sc in pool)
            pool = [sc for sc in pool if sc.capex_usd <= least * (1 + 1e-9)]
    if facts.prefer == "performance":
        fastest_perf = min(sc.perf for sc in pool)
        band = [sc for sc in pool if sc.perf <= fastest_perf * (1 + PERFORMANCE_TIE_BAND)]
        return min(band, key=lambda sc: (sc.decision_usd, sc.perf))
    cheapest_usd = min(sc.decision_usd for sc in pool)
    if facts.prefer == "cost":
        band = [sc for sc in pool if sc.decision_usd <= cheapest_usd * (1 + 1e-9)]
    else:
        band = [sc for sc in pool if sc.decision_usd <= cheapest_usd * (1 + BALANCED_COST_BAND)]
    return min(band, key=lambda sc: (sc.perf, sc.decision_usd))


def _best_per_fabric(scored: list[Scored]) -> dict[str, Scored]:
    """Each fabric class's representative: its cheapest feasible design, or, when none is
    feasible, the one closest to feasible (least capex over a budget, else the fastest)."""
    best: dict[str, Scored] = {}
    for sc in scored:
        cur = best.get(sc.cand.fabric)
        if cur is None or _class_key(sc) < _class_key(cur):
            best[sc.cand.fabric] = sc
    return best


def _class_key(sc: Scored) -> tuple[int, float]:
    if sc.feasible:
        return (0, sc.decision_usd)
    if any("budget" in v for v in sc.violations):
        return (len(sc.violations), sc.capex_usd)
    return (len(sc.violations), sc.perf)


# ------------------------------------------------------------------------------ output


def _build(
    facts: JobFacts,
    parts: NetworkParts,
    best: Scored,
    scored: list[Scored],
    pruned: list[dict[str, Any]],
    north_south: list[BomLine],
    notes: list[str],
) -> dict[str, Any]:
    cand = best.cand
    lines = compute_fabric_lines(
        parts,
        fabric=cand.fabric,
        nic=cand.nic,
        nics_per_node=cand.nics_per_node,
        nodes=facts.nodes,
        switch=cand.switch,
        topo=best.topo,
    )
    ns_topo, _ = storage_topology(parts, nodes=facts.nodes)
    mgmt = management_lines(
        parts, nodes=facts.nodes, managed_switches=best.topo.total_switches + ns_topo.total_switches
    )
    bom = [ln.to_dict() for ln in (*lines, *north_south, *mgmt)]
    rationale = _rationale(facts, best, scored) + notes
    headline = (
        f"{fabric_title(cand.fabric, cand.nic_gbps)} with {cand.nics_per_node} x "
        f"{cand.nic_gbps}G NIC{'s' if cand.nics_per_node > 1 else ''} per server on a "
        f"{_topo_phrase(best.topo)} of {cand.switch.description.split(' (')[0]}: "
        f"{_usd(best.cost.total_cost_usd)} {_for_work(facts, best.cost.work)}."
    )
    ranked = sorted(scored, key=lambda sc: (sc is not best, not sc.feasible, sc.decision_usd))
    options = [_option(facts, i + 1, sc, best) for i, sc in enumerate(ranked)]
    return {
        "recommendation": {
            "fabric": cand.fabric,
            "needs_compute_fabric": True,
            "nic_gbps": cand.nic_gbps,
            "nics_per_node": cand.nics_per_node,
            "nic_sku": cand.nic.sku,
            "topology": _topology_dict(best.topo, cand.switch.sku),
            "headline": headline,
            "rationale": rationale,
        },
        "metrics": best.metrics,
        "bom": bom,
        "cost": _cost_dict(best),
        "options": options,
        "pruned": pruned,
        "break_even": _break_even(facts, best, scored),
        "uncertainty": _uncertainty(facts, best),
        "monitoring": _monitoring(cand.fabric, True),
        "assumptions": _assumptions(facts),
    }


def _topology_dict(topo: TopologySize, switch_sku: str) -> dict[str, Any]:
    return {
        "kind": topo.kind,
        "tiers": topo.tiers,
        "leaf_switches": topo.leaf_switches,
        "spine_switches": topo.spine_switches,
        "core_switches": topo.core_switches,
        "oversubscription": topo.oversubscription if topo.tiers > 1 else 1.0,
        "rail_optimized": topo.rail_optimized,
        "switch_model": switch_sku,
    }


def _for_work(facts: JobFacts, work: str) -> str:
    """'to finish the training run of 1T tokens' or 'for 30 days of serving'."""
    if facts.inference:
        return f"for {SERVING_DAYS:g} days of serving"
    return f"to finish the {work}"


def _the_work(facts: JobFacts, work: str) -> str:
    return f"a month ({SERVING_DAYS:g} days) of serving" if facts.inference else f"the {work}"


def _switch_counts(topo: TopologySize) -> str:
    if topo.tiers == 1:
        return ""
    if topo.tiers == 2:
        return f" with {topo.leaf_switches} leaf and {topo.spine_switches} spine switches"
    return (
        f" with {topo.leaf_switches} leaf, {topo.spine_switches} spine and "
        f"{topo.core_switches} core switches"
    )


def _topo_phrase(topo: TopologySize) -> str:
    if topo.tiers == 1:
        return "single switch"
    rail = "rail-optimized " if topo.rail_optimized else ""
    ratio = "non-blocking" if topo.oversubscription <= 1.0 else f"{topo.oversubscription:g}:1"
    kind = "leaf-spine" if topo.tiers == 2 else "three-tier fat tree"
    return f"{ratio} {rail}{kind}"


def _cost_dict(sc: Scored) -> dict[str, Any]:
    return sc.cost.to_dict()


def _option(facts: JobFacts, rank: int, sc: Scored, best: Scored) -> dict[str, Any]:
    c = sc.cand
    return {
        "rank": rank,
        "fabric": c.fabric,
        "nic_gbps": c.nic_gbps,
        "nics_per_node": c.nics_per_node,
        "oversubscription": c.oversubscription,
        "switch_model": c.switch.sku,
        "nic_sku": c.nic.sku,
        "feasible": sc.feasible,
        "recommended": sc is best,
        "metrics": _option_metrics(facts, sc.metrics),
        "cost": _cost_dict(sc),
        "why_not": None if sc is best else _why_not(facts, sc, best),
    }


OPTION_METRICS_TRAINING: tuple[str, ...] = (
    "step_time_s",
    "compute_s",
    "exposed_comm_s",
    "bubble_s",
    "straggler_s",
    "tflops_per_gpu",
    "scaling_efficiency",
    "gpu_idle_fraction",
    "run_time_s",
    "gpu_hours",
)
OPTION_METRICS_INFERENCE: tuple[str, ...] = (
    "ms_per_token",
    "ttft_ms",
    "tokens_per_s_per_server",
    "comm_ms_per_token",
    "compute_ms_per_token",
    "gpu_idle_fraction",
)
"""Options carry the ENGINE_API metric keys only (the recommendation's ``metrics`` has all)."""


def _option_metrics(facts: JobFacts, metrics: Mapping[str, Any]) -> dict[str, Any]:
    keys = OPTION_METRICS_INFERENCE if facts.inference else OPTION_METRICS_TRAINING
    return {k: metrics[k] for k in keys if k in metrics}


def _why_not(facts: JobFacts, sc: Scored, best: Scored) -> str:
    if sc.violations:
        return "Ruled out: " + "; ".join(sc.violations) + "."
    diff = sc.decision_usd - best.decision_usd
    what = "per month of serving" if facts.inference else "to finish the run"
    speed = _speed_phrase(facts, sc.perf, best.perf)
    if diff > 0.5:
        return f"Costs {_usd(diff)} more {what} ({_usd(sc.decision_usd)} vs " + (
            f"{_usd(best.decision_usd)}){speed}."
        )
    if diff < -0.5:
        if facts.prefer == "performance" or sc.perf > best.perf * (1 + 0.005):
            return (
                f"{_usd(-diff)} cheaper {what} but {speed.lstrip(', ')}; "
                f"prefer={facts.prefer} favours the faster design."
            )
        return (
            f"{_usd(-diff)} cheaper {what}{speed}; within the "
            f"{BALANCED_COST_BAND * 100:.0f}% cost band of prefer=balanced the design "
            "with the shortest time wins."
        )
    return f"Same cost as the recommended design within a dollar{speed}."


def _speed_phrase(facts: JobFacts, perf: float, best_perf: float) -> str:
    if not (math.isfinite(perf) and math.isfinite(best_perf)) or best_perf <= 0:
        return ""
    pct = (perf / best_perf - 1.0) * 100.0
    if abs(pct) < 0.5:
        return ", with the same speed"
    word = "slower" if pct > 0 else "faster"
    return f", {abs(pct):.0f}% {word} ({_perf_str(facts, perf)} vs {_perf_str(facts, best_perf)})"


def _perf_str(facts: JobFacts, perf: float) -> str:
    return f"{perf:.1f} ms/token" if facts.inference else f"{perf:.2f} s/step"


# --------------------------------------------------------------------------- rationale


def _rationale(facts: JobFacts, best: Scored, scored: list[Scored]) -> list[str]:
    c = best.cand
    out: list[str] = []
    if facts.inference:
        out.append(
            f"The model is split across servers ({facts.nodes} servers, {facts.gpus} GPUs), "
            f"so every generated token crosses the network: the recommended design decodes "
            f"at {best.perf:.1f} ms per token"
            + (
                f" against the {facts.target_ms_per_token:g} ms target."
                if facts.target_ms_per_token
                else "."
            )
        )
    else:
        out.append(
            f"The job spans {facts.nodes} servers ({facts.gpus} GPUs), so it needs a GPU "
            f"compute fabric: the recommended design runs a step in {best.perf:.2f} s and "
            f"finishes the {best.cost.work} in {best.cost.gpu_hours:,.0f} GPU-hours "
            f"({_usd(best.cost.gpu_cost_usd)} of GPU time)."
        )
    per_fabric = _best_per_fabric(scored)
    for fabric, alt in sorted(per_fabric.items(), key=lambda kv: kv[1].decision_usd):
        if fabric == c.fabric:
            continue
        out.append(_compare_sentence(facts, best, alt))
    out.extend(_nic_count_sentence(facts, best, scored))
    out.extend(_oversub_sentence(facts, best, scored))
    topo = best.topo
    out.append(
        f"{topo.endpoints} NIC ports on {c.switch.sku} switches "
        f"({c.switch.radix_at(c.nic_gbps)} ports at {c.nic_gbps}G): {_topo_phrase(topo)}"
        f"{_switch_counts(topo)}; network capex {_usd(best.capex_usd)}, of which "
        f"{_usd(best.cost.network_capex_share_usd)} is charged {_for_work(facts, best.cost.work)}"
        f" (its time share over a "
        f"{facts.costs.amortization_years:g}-year life)."
    )
    if best.ops_usd > 0:
        out.append(
            f"Team skills ({facts.team_skills}): {_FABRIC_NAME[c.fabric]} adds "
            f"{_usd(best.ops_usd)} of ramp-up and risk, already included in the total."
        )
    skills_losers = [
        alt
        for alt in per_fabric.values()
        if alt.cand.fabric != c.fabric
        and alt.ops_usd > 0
        and alt.cost.total_cost_usd - alt.ops_usd < best.cost.total_cost_usd
    ]
    for alt in skills_losers:
        saving = best.cost.total_cost_usd - (alt.cost.total_cost_usd - alt.ops_usd)
        out.append(
            f"{_FABRIC_NAME[alt.cand.fabric]} would be {_usd(saving)} "
            f"cheaper on hardware and GPU time alone, but for {_team(facts)} it carries "
            f"{_usd(alt.ops_usd)} of ramp-up and risk."
        )
    if facts.network_budget_usd is not None:
        over = sum(1 for sc in scored if sc.capex_usd > facts.network_budget_usd)
        out.append(
            f"The {_usd(facts.network_budget_usd)} network budget rules out {over} of "
            f"{len(scored)} designs; the recommended network costs {_usd(best.capex_usd)}."
        )
    return out


def _compare_sentence(facts: JobFacts, best: Scored, alt: Scored) -> str:
    b, a = best.cand, alt.cand
    bname = fabric_title(b.fabric, b.nic_gbps)
    aname = fabric_title(a.fabric, a.nic_gbps)
    if alt.violations:
        return f"The best {aname} design is ruled out: " + "; ".join(alt.violations) + "."
    cost_diff = alt.cost.total_cost_usd - best.cost.total_cost_usd
    capex_diff = best.capex_usd - alt.capex_usd
    if facts.inference:
        return (
            f"{bname} decodes at {best.perf:.1f} ms per token vs {alt.perf:.1f} ms on "
            f"{aname} ({a.nics_per_node} x {a.nic_gbps}G); GPUs idle on the network "
            f"{_pct(best.metrics.get('gpu_idle_fraction'))} vs "
            f"{_pct(alt.metrics.get('gpu_idle_fraction'))} of the time; the month costs "
            f"{_usd(best.decision_usd)} vs {_usd(alt.decision_usd)} including idle GPUs."
        )
    hours_diff = alt.cost.gpu_hours - best.cost.gpu_hours
    money_diff = alt.cost.gpu_cost_usd - best.cost.gpu_cost_usd
    if abs(capex_diff) < 0.5:
        net = f"its network costs the same ({_usd(best.capex_usd)})"
    else:
        net = (
            f"{'its' if capex_diff >= 0 else 'but its'} network costs {_usd(abs(capex_diff))} "
            f"{'more' if capex_diff >= 0 else 'less'} ({_usd(best.capex_usd)} vs "
            f"{_usd(alt.capex_usd)})"
        )
    verdict = (
        f"{_the_work(facts, best.cost.work)} costs {_usd(abs(cost_diff))} "
        f"{'less' if cost_diff >= 0 else 'more'} in total with {bname}"
    )
    if alt.ops_usd > best.ops_usd + 0.5:
        verdict += (
            f", counting {_usd(alt.ops_usd)} of ramp-up and risk for {aname} with {_team(facts)}"
        )
    alt_desc = f"{aname} ({a.nics_per_node} x {a.nic_gbps}G)"
    if _same(best.perf, alt.perf):
        return (
            f"{bname} and {alt_desc} run a step in the same {best.perf:.2f} s; {bname}'s "
            f"{net.replace('but its ', '').replace('its ', '', 1)}, so {verdict}."
        )
    if best.perf < alt.perf:
        return (
            f"{bname} cuts step time from {alt.perf:.2f} s to {best.perf:.2f} s compared "
            f"with {alt_desc}, saving {hours_diff:,.0f} GPU-hours ({_usd(money_diff)}); "
            f"{net}, so {verdict}."
        )
    return (
        f"{alt_desc} would run a step in {alt.perf:.2f} s instead of {best.perf:.2f} s, "
        f"saving {-hours_diff:,.0f} GPU-hours ({_usd(-money_diff)}), but {bname}'s "
        f"{net.replace('but its ', '').replace('its ', '', 1)}, so {verdict}."
    )


_TEAM = {
    "ethernet": "an Ethernet-only team",
    "infiniband": "an InfiniBand-only team",
    "none": "a team without RDMA experience",
    "both": "a team that runs both",
}


def _team(facts: JobFacts) -> str:
    return _TEAM.get(facts.team_skills, f"a team with {facts.team_skills} skills")


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 0.005 * max(abs(a), abs(b), 1e-12)


def _delta(x: float, *, plural: bool = False) -> str:
    """'saves $X' or 'costs $X more' for a saving x (positive = saving)."""
    if plural:
        return f"save {_usd(x)}" if x >= 0 else f"cost {_usd(-x)} more"
    return f"saves {_usd(x)}" if x >= 0 else f"costs {_usd(-x)} more"


def _nic_count_sentence(facts: JobFacts, best: Scored, scored: list[Scored]) -> list[str]:
    c = best.cand
    same = [
        sc
        for sc in scored
        if sc.cand.fabric == c.fabric
        and sc.cand.nic.sku == c.nic.sku
        and sc.cand.switch.sku == c.switch.sku
        and sc.cand.oversubscription == c.oversubscription
        and sc.cand.nics_per_node != c.nics_per_node
        and sc.feasible
    ]
    if not same:
        return []
    fewer = [sc for sc in same if sc.cand.nics_per_node < c.nics_per_node]
    more = [sc for sc in same if sc.cand.nics_per_node > c.nics_per_node]
    out: list[str] = []
    if fewer:
        alt = max(fewer, key=lambda sc: sc.cand.nics_per_node)
        out.append(
            f"{c.nics_per_node} NICs per server rather than {alt.cand.nics_per_node}: "
            f"{_perf_str(facts, best.perf)} instead of {_perf_str(facts, alt.perf)}; the "
            f"extra NICs and optics cost {_usd(best.capex_usd - alt.capex_usd)} and the "
            f"choice {_delta(alt.decision_usd - best.decision_usd)} overall."
        )
    if more:
        alt = min(more, key=lambda sc: sc.cand.nics_per_node)
        out.append(
            f"{alt.cand.nics_per_node} NICs per server would give "
            f"{_perf_str(facts, alt.perf)} but add {_usd(alt.capex_usd - best.capex_usd)} of "
            f"network and {_delta(best.decision_usd - alt.decision_usd, plural=True)}"
            f" overall, so {c.nics_per_node} is the better buy."
        )
    return out


def _oversub_sentence(facts: JobFacts, best: Scored, scored: list[Scored]) -> list[str]:
    c = best.cand
    if best.topo.tiers == 1:
        return []
    alts = [
        sc
        for sc in scored
        if sc.cand.fabric == c.fabric
        and sc.cand.nic.sku == c.nic.sku
        and sc.cand.switch.sku == c.switch.sku
        and sc.cand.nics_per_node == c.nics_per_node
        and sc.cand.oversubscription != c.oversubscription
        and sc.feasible
    ]
    if not alts:
        return []
    alt = min(alts, key=lambda sc: abs(sc.cand.oversubscription - c.oversubscription))
    if alt.cand.oversubscription > c.oversubscription:
        return [
            f"Keeping the leaves at {c.oversubscription:g}:1: {alt.cand.oversubscription:g}:1 "
            f"would save {_usd(best.capex_usd - alt.capex_usd)} of switches and optics but "
            f"slow the job to {_perf_str(facts, alt.perf)} (from {_perf_str(facts, best.perf)})"
            f"; overall it {_delta(best.decision_usd - alt.decision_usd)}."
        ]
    return [
        f"{c.oversubscription:g}:1 leaves instead of {alt.cand.oversubscription:g}:1 save "
        f"{_usd(alt.capex_usd - best.capex_usd)} of network for "
        f"{_perf_str(facts, best.perf)} instead of {_perf_str(facts, alt.perf)}."
    ]


# -------------------------------------------------------------------- break-even and co.


def _break_even(facts: JobFacts, best: Scored, scored: list[Scored]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    rate = gpu_hour_cost_usd(facts.costs)
    per_fabric = _best_per_fabric(scored)
    for fabric, alt in per_fabric.items():
        if fabric == best.cand.fabric or alt.violations:
            continue
        fixed_best = best.decision_usd - best.cost.gpu_cost_usd
        fixed_alt = alt.decision_usd - alt.cost.gpu_cost_usd
        hours_diff = alt.cost.gpu_hours - best.cost.gpu_hours
        if abs(hours_diff) < 1e-9:
            continue
        price = (fixed_best - fixed_alt) / hours_diff
        if not math.isfinite(price) or not rate / 10 <= price <= rate * 10:
            continue  # no crossover within a plausible price range
        name = fabric_title(fabric, alt.cand.nic_gbps)
        saving = best.decision_usd - alt.decision_usd
        side = "above" if hours_diff > 0 else "below"
        if saving > 0:
            stmt = (
                f"At {_usd2(rate)} per GPU-hour {name} would cost {_usd(saving)} less overall "
                f"but run slower, so prefer={facts.prefer} keeps the faster design; "
                f"{side} {_usd2(price)} per GPU-hour the recommendation is also the cheaper."
            )
        else:
            flip = "Below" if hours_diff > 0 else "Above"
            stmt = (
                f"{flip} {_usd2(price)} per GPU-hour (now {_usd2(rate)}), {name} would "
                f"cost less overall than the recommendation."
            )
        out.append({"statement": stmt, "parameter": "gpu_hour_usd", "value": round(price, 4)})
    if (
        facts.inference
        and facts.target_ms_per_token is not None
        and best.perf <= facts.target_ms_per_token
    ):
        slower_cheaper = [
            sc
            for sc in scored
            if sc.perf > facts.target_ms_per_token
            and sc.decision_usd < best.decision_usd
            and not any("budget" in v for v in sc.violations)
        ]
        if slower_cheaper:
            alt = min(slower_cheaper, key=lambda sc: sc.decision_usd)
            out.append(
                {
                    "statement": f"With a latency target of {alt.perf:.1f} ms per token or "
                    f"more (now {facts.target_ms_per_token:g} ms), {alt.cand.label()} would "
                    f"do and save {_usd(best.decision_usd - alt.decision_usd)} per month.",
                    "parameter": "target_ms_per_token",
                    "value": round(alt.perf, 3),
                }
            )
    feasible = [sc for sc in scored if sc.feasible and sc is not best]
    runner = min(feasible, key=lambda sc: sc.decision_usd, default=None)
    share = best.cost.network_capex_share_usd
    if runner is not None and share > 0 and runner.decision_usd > best.decision_usd:
        factor = 1.0 + (runner.decision_usd - best.decision_usd) / share
        out.append(
            {
                "statement": f"The recommendation holds until its network prices rise "
                f"{(factor - 1) * 100:.0f}% (x{factor:.2f}); then {runner.cand.label()} "
                "becomes cheaper.",
                "parameter": "network_price_factor",
                "value": round(factor, 4),
            }
        )
    return out


def _uncertainty(facts: JobFacts, best: Scored) -> dict[str, Any]:
    key = facts.perf_key
    low, high = _range(best.metrics, key, best.perf)
    cost = best.cost
    gpu_var = cost.gpu_cost_usd
    if not facts.inference and best.perf > 0:
        gpu_low = gpu_var * low / best.perf
        gpu_high = gpu_var * high / best.perf
    else:
        gpu_low = gpu_high = gpu_var
    net = cost.network_capex_share_usd + cost.network_power_cost_usd
    other = cost.total_cost_usd - gpu_var - net
    return {
        key: {"low": _r(low), "high": _r(high)},
        "total_cost_usd": {
            "low": _r(gpu_low + net * (1 - PRICE_UNCERTAINTY) + other),
            "high": _r(gpu_high + net * (1 + PRICE_UNCERTAINTY) + other),
        },
    }


def _range(metrics: Mapping[str, Any], key: str, point: float) -> tuple[float, float]:
    for lo_key, hi_key in ((f"{key}_low", f"{key}_high"), ("low", "high")):
        if lo_key in metrics and hi_key in metrics:
            return _num(metrics[lo_key], point), _num(metrics[hi_key], point)
    rng = metrics.get("range")
    if isinstance(rng, Mapping):
        sub = rng.get(key)
        if isinstance(sub, Mapping):
            return _num(sub.get("low"), point), _num(sub.get("high"), point)
        if isinstance(sub, list | tuple) and len(sub) == 2:
            return _num(sub[0], point), _num(sub[1], point)
    return point, point


def _monitoring(fabric: str, compute_fabric: bool) -> list[str]:
    items: list[str] = []
    if compute_fabric:
        items.extend(MONITORING_COMMON)
        items.extend(MONITORING_BY_FABRIC.get(fabric, ()))
    else:
        items.extend(
            (
                "Per-link throughput and errors on the front-end/storage ports",
                "GPU utilisation: with no compute fabric, low utilisation points at data "
                "loading or storage, not the network between GPUs",
            )
        )
    items.extend(MONITORING_NORTH_SOUTH)
    return items


def _assumptions(facts: JobFacts) -> list[dict[str, Any]]:
    c = facts.costs
    rate = gpu_hour_cost_usd(c)
    items: list[tuple[str, Any, str, str]] = [
        (
            "gpu_hour_cost",
            round(rate, 4),
            "USD/GPU-hour",
            "cloud rate from constraints.gpu_hour_usd (or the GPU's catalog cloud price)"
            if c.gpu_pricing == "cloud"
            else "owned: GPU catalog price x server factor / amortization life + power x PUE",
        ),
        ("gpu_pricing", c.gpu_pricing, "", "constraints.gpu_pricing"),
        ("amortization_years", c.amortization_years, "years", "constraints.amortization_years"),
        ("pue", c.pue, "", "constraints.pue"),
        (
            "electricity",
            c.electricity_usd_per_kwh,
            "USD/kWh",
            "constraints.electricity_usd_per_kwh",
        ),
        ("server_price_factor", SERVER_PRICE_FACTOR, "x GPU price", "estimate, docs/MODEL.md Cost"),
        (
            "server_power_factor",
            SERVER_POWER_FACTOR,
            "x GPU TDP",
            "DGX H100 10.2 kW for 8 x 700 W GPUs (NVIDIA DGX H100 user guide)",
        ),
        (
            "network_prices",
            "indicative street prices",
            "USD",
            f"catalog estimates, +-{PRICE_UNCERTAINTY * 100:.0f}% (editable in the catalog)",
        ),
        (
            "servers_per_rack",
            SERVERS_PER_RACK,
            "servers",
            "8-GPU HGX/DGX servers per ~40 kW rack (NVIDIA DGX SuperPOD RA)",
        ),
        ("dac_reach", DAC_MAX_REACH_M, "m", "passive copper reach at 100-400G (vendor specs)"),
        ("server_to_leaf_length", ROW_LINK_M, "m", "rail-optimized leaves in a row rack"),
        ("switch_to_switch_length", SPINE_LINK_M, "m", "SuperPOD RA: SR optics, 50 m on OM4"),
        (
            "storage_network",
            f"{STORAGE_PORTS_PER_SERVER} x {STORAGE_NIC_GBPS}GbE per server, "
            f"{STORAGE_OVERSUBSCRIPTION:g}:1",
            "",
            "separate storage / in-band network (DGX SuperPOD RA); oversubscribed (DOMAIN.md §3)",
        ),
        (
            "management_network",
            "1 GbE out-of-band per server and switch",
            "",
            "DGX SuperPOD RA out-of-band management network",
        ),
        (
            "network_cost_allocation",
            "time share of capex over the amortization life",
            "",
            "docs/MODEL.md Cost: both GPUs and network outlive one job",
        ),
        (
            "team_skills",
            facts.team_skills,
            "",
            "operational ramp-up and risk per fabric: engineering estimates (docs/MODEL.md)",
        ),
        ("prefer", facts.prefer, "", "constraints.prefer"),
    ]
    if facts.inference:
        items.append(("serving_period", SERVING_DAYS, "days", "one month of serving"))
    else:
        items.append(("total_tokens", facts.total_tokens, "tokens", "training.total_tokens"))
    return [{"name": n, "value": v, "unit": u, "source": src} for n, v, u, src in items]


# ----------------------------------------------------------------------- no fabric needed


def _no_fabric(
    facts: JobFacts,
    parts: NetworkParts,
    evaluate: Evaluator,
    north_south: list[BomLine],
    ns_topo: TopologySize,
    ns_switch: Switch,
) -> dict[str, Any]:
    nic = next(
        (ln for ln in north_south if ln.category == "nic"),
        None,
    )
    nic_item = parts.find(nic.sku) if nic else None
    nic_ports = nic_item.ports if isinstance(nic_item, Nic) else 1
    cand = Candidate(
        fabric=ETHERNET,
        nic=nic_item if isinstance(nic_item, Nic) else parts.nics[0],
        nics_per_node=max(1, STORAGE_PORTS_PER_SERVER // max(1, nic_ports)),
        oversubscription=STORAGE_OVERSUBSCRIPTION,
        switch=ns_switch,
        adaptive_routing=None,
        in_network_reduction=False,
    )
    metrics = _clean(evaluate(cand))
    mgmt = management_lines(parts, nodes=facts.nodes, managed_switches=ns_topo.total_switches)
    lines = [*north_south, *mgmt]
    capex, power = totals(lines)
    cost, decision = _price(facts, cand, metrics, capex, power)
    ops = cost.operations_cost_usd
    perf = _num(metrics.get(facts.perf_key), 0.0)
    sc = Scored(cand, ns_topo, metrics, perf, capex, power, ops, cost, decision, [])
    if facts.network_budget_usd is not None and capex > facts.network_budget_usd:
        sc.violations.append(
            f"even the storage and management networks cost {_usd(capex)}, over the "
            f"{_usd(facts.network_budget_usd)} budget"
        )
    reason = facts.why_no_fabric or "no traffic of the job crosses servers"
    rationale = [
        f"No GPU compute fabric: {reason}; GPU-to-GPU traffic stays on "
        f"{'NVLink/PCIe inside each server' if facts.nodes > 1 else 'NVLink/PCIe'}.",
        f"Standard Ethernet carries data loading, checkpoints and users: "
        f"{STORAGE_PORTS_PER_SERVER} x {STORAGE_NIC_GBPS}GbE per server on "
        f"{ns_topo.total_switches} x {ns_switch.sku} ({_topo_phrase(ns_topo)}), plus 1 GbE "
        f"out-of-band management; network capex {_usd(capex)}.",
        f"A compute fabric would add NICs, switches and optics (e.g. 8 x 400G per server) "
        f"without speeding up this job; {_the_work(facts, cost.work)} costs "
        f"{_usd(cost.total_cost_usd)}, "
        f"of which {_usd(cost.gpu_cost_usd)} is GPU time ({cost.gpu_hours:,.0f} GPU-hours).",
    ]
    if sc.violations:
        rationale.append("Note: " + "; ".join(sc.violations) + ".")
    if facts.inference and facts.nodes > 1:
        rationale.append(
            f"Scale by adding replicas: each of the {facts.nodes} servers serves whole "
            "requests, so throughput grows linearly without east-west traffic."
        )
    headline = (
        f"No GPU compute fabric needed: standard Ethernet ({STORAGE_PORTS_PER_SERVER} x "
        f"{STORAGE_NIC_GBPS}GbE per server) for storage and front end, "
        f"{_usd(capex)} of network."
    )
    option = _option(facts, 1, sc, sc)
    bound = facts.gpus_per_node
    return {
        "recommendation": {
            "fabric": ETHERNET,
            "needs_compute_fabric": False,
            "nic_gbps": STORAGE_NIC_GBPS,
            "nics_per_node": cand.nics_per_node,
            "nic_sku": cand.nic.sku,
            "topology": _topology_dict(ns_topo, ns_switch.sku),
            "headline": headline,
            "rationale": rationale,
        },
        "metrics": metrics,
        "bom": [ln.to_dict() for ln in lines],
        "cost": _cost_dict(sc),
        "options": [option],
        "pruned": [
            {
                "design": {"fabric": "compute fabric"},
                "reason": f"not needed: {reason}",
            }
        ],
        "break_even": [
            {
                "statement": f"A GPU compute fabric (RoCE or InfiniBand) becomes necessary "
                f"once one job or one model replica needs more than {bound} GPUs, i.e. spans "
                "more than one server.",
                "parameter": "gpus_per_job",
                "value": bound,
            }
        ],
        "uncertainty": _uncertainty(facts, sc),
        "monitoring": _monitoring(ETHERNET, False),
        "assumptions": _assumptions(facts),
    }


# ----------------------------------------------------------------------------- scaling


def _scaling(
    s: Any, w: Any, facts: JobFacts, per_fabric: dict[str, Candidate] | None
) -> list[dict[str, Any]]:
    """Scaling efficiency vs servers for one design per fabric class (chart data)."""
    try:
        return _scaling_points(s, facts, per_fabric or {})
    except Exception:  # the chart is optional; never fail the evaluation
        return []


def _representatives(facts: JobFacts, parts: NetworkParts) -> dict[str, Candidate]:
    """Per fabric class, its fastest NIC with one NIC per GPU, non-blocking (for the chart
    when no candidate was scored, e.g. a single-server job)."""
    candidates, _ = enumerate_candidates(facts, parts)
    per_gpu = min(facts.gpus_per_node, max(NIC_COUNTS))
    out: dict[str, Candidate] = {}
    for c in candidates:
        if c.nics_per_node != per_gpu or c.oversubscription != 1.0:
            continue
        cur = out.get(c.fabric)
        if cur is None or (c.nic_gbps, bool(c.adaptive_routing)) > (
            cur.nic_gbps,
            bool(cur.adaptive_routing),
        ):
            out[c.fabric] = c
    return out


def _scaling_points(
    s: Any, facts: JobFacts, per_fabric: dict[str, Candidate]
) -> list[dict[str, Any]]:
    from advisor.engine.performance import Design, evaluate_design
    from advisor.engine.workload import plan_workload

    if not per_fabric:
        return []
    max_nodes = max(SCALING_MIN_SERVERS, facts.nodes)
    node_counts: list[int] = []
    n = 1
    while n < max_nodes and len(node_counts) < SCALING_MAX_POINTS - 1:
        node_counts.append(n)
        n *= 2
    node_counts.append(max_nodes)
    out: list[dict[str, Any]] = []
    for nodes in node_counts:
        try:
            sized = _resize(s, nodes * facts.gpus_per_node)
            plan = plan_workload(sized)
        except Exception:  # noqa: S112 - a size the planner cannot place is skipped
            continue
        for fabric, c in sorted(per_fabric.items()):
            d = Design(
                fabric=fabric,
                nic_gbps=float(c.nic_gbps),
                nics_per_node=c.nics_per_node,
                oversubscription=c.oversubscription,
                adaptive_routing=c.adaptive_routing,
                in_network_reduction=c.in_network_reduction,
            )
            m = evaluate_design(sized, plan, d).to_dict()
            if "scaling_efficiency" in m:
                eff = _num(m.get("scaling_efficiency"), math.nan)
            else:
                # inference: share of the token time the GPUs compute (as for training,
                # compute / total), i.e. what the network and collectives leave
                token_ms = _num(m.get("ms_per_token"), math.nan)
                compute_ms = _num(m.get("compute_ms_per_token"), math.nan)
                eff = min(1.0, compute_ms / token_ms) if token_ms > 0 else math.nan
            if math.isfinite(eff):
                out.append({"fabric": fabric, "nodes": nodes, "scaling_efficiency": _r(eff)})
    return out


def _resize(s: Any, gpus: int) -> Any:
    """The scenario with ``gpus`` GPUs and the data-parallel degree adjusted."""
    changes: dict[str, Any] = {"gpus": gpus}
    par = getattr(s, "parallelism", None)
    if (
        par is not None
        and dataclasses.is_dataclass(par)
        and not isinstance(par, type)
        and getattr(par, "dp", None) is not None
    ):
        tp = int(getattr(par, "tp", 1) or 1)
        pp = int(getattr(par, "pp", 1) or 1)
        if gpus % (tp * pp):
            raise ValueError("size incompatible with the explicit plan")
        changes["parallelism"] = dataclasses.replace(par, dp=gpus // (tp * pp))
    return dataclasses.replace(s, **changes)


# ------------------------------------------------------------------------------- helpers


def _num(x: Any, default: float = 0.0) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return default
    return v if math.isfinite(v) else default


def _r(x: float) -> float:
    return round(x, 6) if math.isfinite(x) else 0.0


def _clean(m: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the metrics without NaN/inf (JSON-safe)."""
    out = dict(m)
    for k, v in out.items():
        if isinstance(v, float):
            if not math.isfinite(v):
                out[k] = None
        elif isinstance(v, Mapping):
            out[k] = _clean(v)
    return out


def _pct(x: Any) -> str:
    return f"{_num(x) * 100:.1f}%"


def _usd(x: float) -> str:
    if abs(x) >= 1e6:
        return f"${x / 1e6:,.2f}M"
    return f"${x:,.0f}"


def _usd2(x: float) -> str:
    return f"${x:,.2f}"
