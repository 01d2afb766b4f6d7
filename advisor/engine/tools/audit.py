"""The audit grid: properties every answer must have, checked over the whole input space.

A network architect judges the engine on every job, not on examples.  The grid of scenarios
(:mod:`advisor.engine.tools.audit_grid`: every preset model x every GPU x sizes from 1 to 16,384
servers, odd sizes included; training, fine-tuning and three kinds of serving; default and
non-default constraints; overloaded fleets) is run through :func:`advisor.engine.evaluate`
and each answer, and each series of sizes, is checked here:

* ``exception``: anything but a :class:`ScenarioError` refusal escapes ``evaluate``;
* ``refusal-unnamed``: a refusal that names no field;
* ``step-slows``: with the same global batch, a larger cluster predicts a step more than
  ``STEP_SLOWDOWN_TOLERANCE`` slower than a smaller one;
* ``capex-falls``: network capex falls as servers are added;
* ``no-rdma``: multi-server training or a model split across servers without RDMA;
* ``placement``: the traffic report says a communicator crosses (or does not cross) the
  network where the plan's rank layout says otherwise;
* ``field-practice``: default training on 32 or more Hopper/Blackwell servers is not
  non-blocking with one NIC per GPU at 400G or more;
* ``fabric-flips``: more than ``MAX_FABRIC_CHANGES`` fabric-class changes along a doubling
  size ladder;
* ``bom``: a bill of materials that :func:`advisor.engine.decision.bom.check_bom` rejects;
* ``even-spines``: a non-blocking two-tier compute fabric whose spines do not divide each
  full leaf's uplinks (some leaf pairs below line rate);
* ``whole-cages``: a leaf whose server links split an integrated multi-link cage (Gaudi 3's
  4 x 200G OSFP) over leaves, which would need a breakout the BOM does not price;
* ``premium-unstated``: a cheaper feasible field-practice design (beyond the tie band) whose
  comparison with the pick does not state the premium in percent, or calls it tied;
* ``pick-is-answer``: the option marked recommended names another network than the answer
  (fabric, NICs, NIC part, leaf oversubscription, tiers, switch: none of ours on the existing
  network);
* ``budget-cut-order``: under a budget, fewer NICs per server while a feasible design with the
  full count exists, or the storage network left untrimmed while the compute fabric departs;
* ``platform-check``: a server shape or design the platform cannot build that is not refused
  naming its field, or a partial NVL72 rack without a warning (:data:`PLATFORM_CHECKS`);
* ``rag-unnamed`` / ``rag-fabric-without-split`` / ``rag-tier-network`` / ``rag-silent``: a
  RAG pipeline (``audit_grid.rag_grid``) whose headline or ``rag`` record does not name it,
  that buys a GPU compute fabric while every generation replica fits one scale-up domain, whose tier
  network is not Ethernet sized for its traffic and priced in the BOM, or whose first token
  (retrieval included) misses its target without the headline saying so;
* ``e-notation``: a figure written as "1.19e+04" in text a customer reads
  (:func:`.audit_text.customer_prose`, and a refusal's messages); ``internal-id``: a catalog id
  ("gb300-nvl72", "cx7-400g") in that text where a display name or part number belongs;
* ``serving-metrics-missing`` / ``serving-silent`` / ``serving-over-capacity`` /
  ``serving-closed-loop-unbounded`` / ``serving-tokens-served`` / ``serving-fabric-inside-domain`` /
  ``serving-breakdown`` /
  ``serving-worse-with-more-servers`` / ``headroom`` / ``memory-record``:
  :func:`serving_violations`, :func:`memory_violations` and the serving series (docs/MODEL.md
  19).

A second grid (``audit_grid.NEW_HARDWARE_GPUS``, ``audit_grid.NEW_MODELS``) runs the late-2026
platforms with every preset and the new presets on three established platforms.

Every case is evaluated without the scaling chart (``evaluate_typed(..., scaling_chart=False)``,
the what-if's evaluation): no property reads the chart, every other figure is the same with or
without it (``tests/engine/test_whatif.py``), and the chart never fails an evaluation
(``decision.scaling.scaling`` returns no points rather than raise), so no check is lost; the
chart re-plans the workload at up to six smaller sizes, each repeating the planner's (or the
serving deployment's) search (a third to a half of an isolated case's time; little along a
series, whose smaller sizes are mostly planned already: docs/MODEL.md).  The chart's figures are
checked finite under hypothesis in ``tests/engine/test_recommend_properties.py``.

Every property reads the typed answer (:class:`advisor.engine.result.records.EngineResult`,
what :func:`advisor.engine.evaluate_typed` returns), never its JSON, so mypy checks each field
a property reads; an :class:`Outcome` carries that record (picklable) back from a worker
process.

Pure Python like the rest of the engine; ``bench/audit.py`` (``make audit``) runs the whole
grid and ``tests/engine/test_audit_properties.py`` runs a random subset under hypothesis.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from advisor.engine import evaluate_typed
from advisor.engine.decision.bom import NetworkParts, check_bom
from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import Catalog, default_catalog
from advisor.engine.facts.catalog.network import Nic
from advisor.engine.facts.constants import SATURATED_S, over_capacity_ms
from advisor.engine.facts.vocabulary import scale_up_label
from advisor.engine.model.placement import whole_groups
from advisor.engine.model.plans import a2a_overlap_runs, deepep_runs_on
from advisor.engine.result.echo import Memory, Traffic
from advisor.engine.result.records import EngineResult, Metrics
from advisor.engine.tools.audit_grid import LADDER_SERVERS, AuditCase, scenario_for
from advisor.engine.tools.audit_text import customer_prose, scale_up_findings, text_findings

STEP_SLOWDOWN_TOLERANCE = 0.02
"""Adding servers must not slow training: a step may get at most 2 % slower when servers are
added (same batch)."""
CAPEX_TOLERANCE_USD = 0.01
"""Rounding slack when comparing network capex between sizes."""
MAX_FABRIC_CHANGES = 2
"""The answer is stable in size: at most two fabric-class changes along a doubling size
ladder."""
FIELD_PRACTICE_MIN_SERVERS = 32
"""Field practice: training on this many Hopper/Blackwell servers is built non-blocking, with
one NIC per GPU."""
FIELD_PRACTICE_MIN_NIC_GBPS = 400
RDMA_FABRICS = frozenset({"roce", "infiniband"})
HOPPER_BLACKWELL = frozenset(g.id for g in default_catalog().gpus if g.hopper_or_newer)
"""The catalog's Hopper and Blackwell GPUs (``GpuSpec.generation``), the field-practice rule's."""
TIE_BAND = 0.05
"""The recommendation's tie band (``recommend.policy.TIE_BAND``): beyond it a dearer pick
states its premium."""


@dataclass(frozen=True)
class Violation:
    prop: str
    case: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"property": self.prop, "case": self.case, "detail": self.detail}


@dataclass(frozen=True)
class SeriesFigures:
    """What the properties along a series read of one answer (:func:`series_violations`)."""

    step_s: float | None
    """Step time per 4M tokens (:func:`_step_s`)."""
    network_capex_usd: float
    fabric: str | None
    max_requests_per_s_at_target: float | None
    sized_for_serving: bool = False
    """Sized by its serving traffic (``reference_design.sized_for_serving``, or a serving
    answer's least-cost pick for ``prefer: cost``), which changes with the cluster's size."""
    carries_load: bool = False
    """A serving answer that meets both p95 targets at its load, unsaturated."""
    headroom_servers: int | None = None
    """The servers a headroom sentence says would carry the load (``prose.serving_headroom``)."""

    @classmethod
    def of(cls, result: EngineResult) -> SeriesFigures:
        ref = result.recommendation.reference_design
        cost_first = getattr(result.recommendation.decision, "mode", "") == "cost_preference"
        metrics = result.metrics
        return cls(
            step_s=_step_s(result),
            network_capex_usd=result.cost.network_capex_usd,
            fabric=result.recommendation.fabric,
            max_requests_per_s_at_target=metrics.max_requests_per_s_at_target,
            sized_for_serving=(ref is not None and ref.sized_for_serving)
            or (cost_first and result.scenario.workload == "inference"),
            carries_load=bool(metrics.meets_latency_targets) and not metrics.load_saturated,
            headroom_servers=_headroom_servers(result),
        )


HEADROOM_SERVERS = re.compile(r"^Headroom: .* about ([\d,]+) servers? of the same deployment")


def _headroom_servers(result: EngineResult) -> int | None:
    for sentence in result.recommendation.rationale:
        if match := HEADROOM_SERVERS.match(sentence):
            return int(match.group(1).replace(",", ""))
    return None


@dataclass
class Outcome:
    """What ``evaluate`` said about one case: a result, a refusal, or an exception.

    :func:`checked` turns it into what a worker process sends back: the single-answer
    properties already checked (``violations``) and the figures the series properties read
    (``figures``), without the result (~70 kB pickled)."""

    case: AuditCase
    result: EngineResult | None = None
    refusal: dict[str, list[str]] | None = None
    error: str | None = None
    seconds: float = 0.0
    violations: list[Violation] | None = None
    figures: SeriesFigures | None = None

    @property
    def answered(self) -> bool:
        return self.result is not None or self.figures is not None

    def series_figures(self) -> SeriesFigures | None:
        if self.figures is not None:
            return self.figures
        return SeriesFigures.of(self.result) if self.result is not None else None


def checked(outcome: Outcome) -> Outcome:
    """``outcome`` with its single-answer properties checked and the figures the series
    properties read, without the result: :func:`audit` reports the same of either."""
    return Outcome(
        outcome.case,
        refusal=outcome.refusal,
        error=outcome.error,
        seconds=outcome.seconds,
        violations=point_violations(outcome),
        figures=outcome.series_figures(),
    )


@dataclass
class AuditReport:
    cases: int = 0
    answered: int = 0
    refused: int = 0
    violations: list[Violation] = field(default_factory=list)
    refusal_reasons: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    slowest_case_s: float = 0.0

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for v in self.violations:
            out[v.prop] = out.get(v.prop, 0) + 1
        return out

    def to_dict(self, *, max_examples: int = 25) -> dict[str, Any]:
        examples: dict[str, list[dict[str, str]]] = {}
        for v in self.violations:
            bucket = examples.setdefault(v.prop, [])
            if len(bucket) < max_examples:
                bucket.append(v.to_dict())
        return {
            "cases": self.cases,
            "answered": self.answered,
            "refused": self.refused,
            "violations": len(self.violations),
            "violations_by_property": self.counts(),
            "refusals_by_field": dict(sorted(self.refusal_reasons.items())),
            "examples": examples,
            "seconds": round(self.seconds, 1),
            "slowest_case_s": round(self.slowest_case_s, 3),
        }


def run_case(case: AuditCase, catalog: Catalog | None = None) -> Outcome:
    started = time.perf_counter()
    outcome = Outcome(case)
    try:
        # no property reads the scaling chart (see the module docstring): evaluated without it
        outcome.result = evaluate_typed(
            scenario_for(case, catalog), catalog=catalog, scaling_chart=False
        )
    except ScenarioError as err:
        outcome.refusal = dict(err.field_errors)
    except Exception as err:  # the audit's whole point is to catch these
        outcome.error = f"{type(err).__name__}: {err}"
    outcome.seconds = time.perf_counter() - started
    return outcome


# --- properties of one answer --------------------------------------------------------------


def _splits_model(result: EngineResult) -> bool:
    """Inference whose one model copy spans servers (not independent replicas)."""
    scen = result.scenario
    if scen.workload != "inference":
        return False
    serving = scen.inference
    if serving is not None and (
        serving.independent_replicas is True
        or serving.deployment
        in (
            "replicas",
            "disaggregated",  # only the KV cache crosses: RDMA when its transfer misses the target
        )
    ):
        return False
    plan = result.workload.plan
    group = plan.tp * plan.pp * (plan.ep or 1)
    return group > _domain_gpus(result)


def _spans_domains(result: EngineResult) -> bool:
    """The job's GPUs span more than one scale-up domain (server, or NVL72 rack)."""
    return result.scenario.gpus > _domain_gpus(result)


def _straddles(block: int, domain: int, used: int) -> bool:
    """Whether some aligned block of ``block`` consecutive ranks spans two scale-up domains."""
    if block <= 1 or used <= domain:
        return False
    if block > domain:
        return True
    blocks = used // block
    return any((k * block) % domain + block > domain for k in range(min(blocks, domain)))


def _domain_gpus(result: EngineResult, catalog: Catalog | None = None) -> int:
    """GPUs per scale-up domain as the workload planner counts them (a server or NVL72 rack)."""
    per_server = result.workload.gpus_per_node
    gpu = (catalog or default_catalog()).gpu(result.scenario.gpu)
    if gpu is None or gpu.scaleup_domain_gpus <= per_server:
        return per_server
    dom = min(gpu.scaleup_domain_gpus, result.scenario.gpus)
    return max(per_server, dom - dom % per_server)


def expected_crossings(result: EngineResult) -> dict[str, bool]:
    """Which communicators must send some bytes between scale-up domains, from the plan alone.

    Megatron order: tp fastest, then cp, dp, pp; the experts fold over a stage's tp x cp x dp
    ranks (MoE parallel folding, expert TP 1).  A communicator's groups are aligned blocks of
    consecutive ranks (tp: ``tp``; ep: ``ep``; dp: ``tp*cp*dp``);
    bytes cross the network when some block spans two domains.  Pipeline stages are blocks of
    ``tp*cp*dp`` ranks; with more than one stage and more than one domain in use, some stage
    edge joins two domains.
    """
    plan = result.workload.plan
    domain = _domain_gpus(result)
    tp, pp, dp, cp, ep = (n or 1 for n in (plan.tp, plan.pp, plan.dp, plan.cp, plan.ep))
    # serving runs attention tensor-parallel inside the expert group and training folds the
    # experts over the tp x cp x dp ranks: either way an EP group is consecutive GPUs
    serving = result.scenario.workload == "inference"
    used = tp * cp * dp * pp if not serving else max(tp * pp * dp, ep * dp)
    gpus = result.scenario.gpus
    record = result.workload.serving
    # a colocated replica is tp x pp GPUs, or an expert group of ep (attention data-parallel)
    replicas = serving and (ep <= 1 or (record is not None and record.deployment == "replicas"))
    replica = max(tp * pp, ep)
    if replicas and replica <= domain and dp <= whole_groups(replica, domain, gpus):
        # independent serving replicas sit whole inside a scale-up domain (whole_groups)
        return dict.fromkeys(("tensor_parallel", "data_parallel", "expert", "pipeline"), False)
    copies = (record.copies or 1) if serving and record is not None else 1
    copy_gpus = (record.copy_servers if record is not None else 0) * result.workload.gpus_per_node
    if copies > 1 and 0 < copy_gpus <= domain and copies <= whole_groups(copy_gpus, domain, gpus):
        # copies of a disaggregated deployment sit whole inside a scale-up domain (whole_groups)
        # and every communicator of a copy with them
        return dict.fromkeys(("tensor_parallel", "data_parallel", "expert", "pipeline"), False)
    return {
        "tensor_parallel": _straddles(tp, domain, used),
        "data_parallel": dp > 1 and _straddles(tp * cp * dp, domain, used),
        "expert": ep > 1 and _straddles(ep, domain, used),
        "pipeline": pp > 1 and used > domain,
    }


def _plan_text(result: EngineResult) -> str:
    plan = result.workload.plan
    return "/".join(str(n) for n in (plan.tp, plan.cp, plan.dp, plan.ep, plan.pp))


def _traffic_said(traffic: Traffic) -> dict[str, tuple[bool | None, float]]:
    """What the traffic report says of each communicator: crosses the network, and bytes per
    GPU per step."""
    return {
        "tensor_parallel": (
            traffic.tensor_parallel_crosses_network,
            traffic.tensor_parallel_bytes,
        ),
        "data_parallel": (
            traffic.data_parallel_crosses_network,
            traffic.data_parallel_bytes or 0.0,
        ),
        "expert": (traffic.expert_crosses_network, traffic.expert_all_to_all_bytes),
        "pipeline": (traffic.pipeline_crosses_network, traffic.pipeline_bytes),
    }


def placement_violations(case: str, result: EngineResult) -> list[Violation]:
    said_by_comm = _traffic_said(result.workload.traffic)
    out: list[Violation] = []
    for comm, must_cross in expected_crossings(result).items():
        said, nbytes = said_by_comm[comm]
        if said is None or nbytes <= 0.0:
            continue
        if said != must_cross:
            out.append(
                Violation(
                    "placement",
                    case,
                    f"{comm}: traffic says crosses_network={said} with {nbytes:.3g} B/GPU/step, "
                    f"plan tp/cp/dp/ep/pp {_plan_text(result)} on {_domain_gpus(result)}-GPU "
                    f"domains says {must_cross}",
                )
            )
    return out


def rdma_violations(case: str, result: EngineResult) -> list[Violation]:
    fabric = result.recommendation.fabric
    workload = result.scenario.workload
    multi_server_training = workload in ("training", "fine_tuning") and _spans_domains(result)
    if (multi_server_training or _splits_model(result)) and fabric not in RDMA_FABRICS:
        kind = "multi-server training" if multi_server_training else "split-model inference"
        return [
            Violation("no-rdma", case, f"{kind} on {result.workload.nodes} servers gets {fabric}")
        ]
    return []


def field_practice_violations(case: AuditCase, result: EngineResult) -> list[Violation]:
    if case.variant != "default" or case.gpu not in HOPPER_BLACKWELL:
        return []
    if case.workload not in ("training", "fine_tuning"):
        return []
    if result.workload.nodes < FIELD_PRACTICE_MIN_SERVERS:
        return []
    rec = result.recommendation
    per_server = result.workload.gpus_per_node
    nics = rec.nics_per_node
    gbps = float(rec.nic_gbps)
    oversub = float(rec.topology.oversubscription or 1.0)
    if nics >= per_server and gbps >= FIELD_PRACTICE_MIN_NIC_GBPS and oversub <= 1.0:
        return []
    return [
        Violation(
            "field-practice",
            case.label(),
            f"{nics} x {gbps:g}G per {per_server}-GPU server at {oversub:g}:1",
        )
    ]


def bom_violations(case: str, result: EngineResult) -> list[Violation]:
    return [Violation("bom", case, problem) for problem in check_bom(result.bom)]


def even_spine_violations(case: str, result: EngineResult) -> list[Violation]:
    """A non-blocking two-tier fabric spreads every full leaf's uplinks evenly over the spines
    of its plane."""
    topo = result.recommendation.topology
    if topo.tiers != 2:
        return []
    if (topo.oversubscription or 1.0) > 1.0:
        return []
    planes = topo.planes or 1
    spines = topo.spine_switches // max(1, planes)
    up = topo.leaf_uplinks or 0
    pair = topo.links_per_leaf_spine or 0
    if spines and up and (up % spines or pair * spines != up):
        return [
            Violation(
                "even-spines",
                case,
                f"{up} uplinks per full leaf over {spines} spines per plane "
                f"({pair} links per pair)",
            )
        ]
    return []


def whole_cage_violations(case: str, result: EngineResult) -> list[Violation]:
    """Every leaf of a fabric on integrated multi-link cages (Gaudi 3: 4 x 200G per OSFP)
    takes whole cages: a full leaf's server links are a multiple of the cage's links, as the
    BOM's straight cage-to-cage cabling assumes (docs/MODEL.md 11, "Plies")."""
    rec = result.recommendation
    topo = rec.topology
    if not rec.nic_sku or topo.tiers < 2:
        return []
    try:
        nic = NetworkParts().find(rec.nic_sku)
    except KeyError:
        return []
    if not isinstance(nic, Nic) or not nic.integrated or nic.links_per_port <= 1:
        return []
    down = topo.leaf_downlinks or 0
    if down % nic.links_per_port:
        return [
            Violation(
                "whole-cages",
                case,
                f"a full leaf takes {down} of {nic.sku}'s links, not whole "
                f"{nic.links_per_port}-link cages",
            )
        ]
    return []


def premium_violations(case: str, result: EngineResult) -> list[Violation]:
    """Every feasible field-practice option cheaper over the life than the pick beyond the tie
    band is compared in words that state the premium in percent, never as a tie."""
    options = result.options
    pick = next((o for o in options if o.recommended), None)
    if pick is None:
        return []
    best = pick.cost.decision_cost_usd
    if best is None:
        return []
    out: list[Violation] = []
    for o in options:
        if o is pick or not o.feasible or o.departures:
            continue
        life = o.cost.decision_cost_usd
        if life is None or best - life <= TIE_BAND * max(best, life):
            continue
        text = o.why_not or ""
        if "%" not in text or text.startswith("Tied"):
            out.append(
                Violation(
                    "premium-unstated",
                    case,
                    f"{o.nic_sku} on {o.switch_model} is {best - life:,.0f} USD "
                    f"cheaper over the life; said: {text[:120]!r}",
                )
            )
    return out


def cost_first_violations(case: str, result: EngineResult) -> list[Violation]:
    """``cost-first``: a pick made for ``prefer: cost`` with oversubscription allowed (mode
    ``cost_preference``) is no dearer over the life than a feasible design at least as fast."""
    decision = result.recommendation.decision
    pick = next((o for o in result.options if o.recommended), None)
    if decision is None or decision.mode != "cost_preference" or pick is None:
        return []

    def time(m: Metrics) -> float | None:  # per unit of work: a step, or a token served
        return m.step_time_s if m.step_time_s is not None else m.ms_per_token

    best, speed = pick.cost.decision_cost_usd, time(pick.metrics)
    return [
        Violation("cost-first", case, f"{o.fabric} {o.nics_per_node} x {o.nic_gbps:g}G "
                  f"{o.oversubscription:g}:1 on {o.switch_model}: {life:,.0f} against {best:,.0f}")
        for o in result.options
        if best is not None and speed is not None and o.feasible
        and (life := o.cost.decision_cost_usd) is not None and life < best * (1 - 1e-6)
        and (t := time(o.metrics)) is not None and t <= speed
    ]  # fmt: skip


def pick_violations(case: str, result: EngineResult) -> list[Violation]:
    """The recommended option describes the recommended network: the options table and the
    answer above it name one design (a single switch read "2:1" in the table beside a
    non-blocking single switch in the answer)."""
    pick = next((o for o in result.options if o.recommended), None)
    if pick is None:
        return []
    rec = result.recommendation
    said = {
        "fabric": (pick.fabric, rec.fabric),
        "nic_gbps": (pick.nic_gbps, rec.nic_gbps),
        "nics_per_node": (pick.nics_per_node, rec.nics_per_node),
        "nic_sku": (pick.nic_sku, rec.nic_sku),
        "oversubscription": (pick.oversubscription, rec.topology.oversubscription),
        "tiers": (pick.tiers, rec.topology.tiers),
        "switch_model": (pick.switch_model, rec.topology.switch_model),
    }
    return [
        Violation("pick-is-answer", case, f"{key}: option {option!r}, answer {answer!r}")
        for key, (option, answer) in said.items()
        if option != answer
    ]


def budget_cut_violations(case: AuditCase, result: EngineResult) -> list[Violation]:
    """Under a budget: one NIC per GPU is the last thing cut, and the storage network is
    trimmed before the compute fabric departs."""
    if case.variant != "tight-budget":
        return []
    rec = result.recommendation
    if not rec.within_budget or not rec.needs_compute_fabric:
        return []
    out: list[Violation] = []

    def fewer(departures: Iterable[str]) -> bool:
        return any(" compute NIC port" in d for d in departures)

    if fewer(rec.departures):
        full = [o for o in result.options if o.feasible and not fewer(o.departures)]
        if full:
            out.append(
                Violation(
                    "budget-cut-order",
                    case.label(),
                    f"{rec.nics_per_node} NIC ports per server while "
                    f"{full[0].nics_per_node} x {full[0].nic_gbps}G "
                    f"({full[0].nic_sku}, {full[0].oversubscription}:1) fits",
                )
            )
    if rec.departures and not any("cut first" in t for t in rec.rationale):
        storage = rec.storage
        if storage is not None and storage.ports_per_server > 1:
            out.append(
                Violation(
                    "budget-cut-order",
                    case.label(),
                    "the compute fabric departs from field practice while the storage network "
                    f"keeps {storage.ports_per_server} ports per server",
                )
            )
    return out


PLATFORM_CHECKS: tuple[tuple[str, dict[str, Any], str], ...] = (
    (
        "3-gpus-per-hgx-server",
        {"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 48,
         "gpus_per_node": 3},
        "gpus_per_node",
    ),
    (
        "16-gpus-per-hgx-server",
        {"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 64,
         "gpus_per_node": 16},
        "gpus_per_node",
    ),
    (
        "72-gpus-per-gb200-tray",
        {"workload": "training", "model": "llama3-70b", "gpu": "gb200-nvl72", "gpus": 144,
         "gpus_per_node": 72},
        "gpus_per_node",
    ),
    (
        "infiniband-on-gaudi3",
        {"workload": "training", "model": "llama3-70b", "gpu": "gaudi3", "gpus": 64,
         "design": {"fabric": "infiniband", "nic_gbps": 200, "nics_per_node": 24}},
        "design.fabric",
    ),
    (
        "800g-nic-in-pcie-gen5-host",
        {"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 64,
         "design": {"fabric": "infiniband", "nic_gbps": 800, "nics_per_node": 8}},
        "design.nic_gbps",
    ),
    (
        "part-of-a-gb300-rack",
        {"workload": "training", "model": "llama3-70b", "gpu": "gb300-nvl72", "gpus": 100},
        "warning",
    ),
)  # fmt: skip
"""Inputs the platform cannot build (refused naming the field) or is not sold as (warned)."""


def platform_check_violations(catalog: Catalog | None = None) -> list[Violation]:
    """Run :data:`PLATFORM_CHECKS`: each is refused naming its field, or answered with a
    warning."""
    out: list[Violation] = []
    for label, scenario, expected in PLATFORM_CHECKS:
        try:
            result = evaluate_typed(scenario, catalog=catalog)
        except ScenarioError as err:
            if expected == "warning" or expected not in err.field_errors:
                out.append(Violation("platform-check", label, f"refused: {err}"))
            continue
        except Exception as err:  # the audit's whole point is to catch these
            out.append(Violation("platform-check", label, f"{type(err).__name__}: {err}"))
            continue
        if expected != "warning":
            out.append(Violation("platform-check", label, f"answered; {expected} not refused"))
        elif not result.warnings:
            out.append(Violation("platform-check", label, "answered without a warning"))
    return out


SERVING_SHORTFALL_WORDS = "Serving falls short"
"""What the headline says when a serving answer saturates or misses a target
(decision/prose.serving_shortfall)."""
SERVING_METRICS = ("max_requests_per_s_at_target", "tokens_per_s_per_gpu_at_target")
SERVING_RATE_TOLERANCE = 0.02
"""More servers may serve up to 2 % fewer requests/s within the targets (rounding of the
deployment search's 3-significant-digit scores) before the audit calls it worse."""


SERVED_TOKENS_TOLERANCE = 0.01
"""Relative gap allowed between a serving answer's output tokens per second and the tokens its
served requests emit (the load model's Little's-law batch is solved to a tolerance)."""


def serving_violations(case: str, result: EngineResult) -> list[Violation]:
    """A serving answer states its capacity: both at-target metrics present; a saturated or
    target-missing answer says so in its headline; it never serves more than its capacity, and
    an unbounded queue is a saturated answer; its output tokens per second are what the
    requests it serves emit (requests/s x output tokens), saturated or not; a job inside one
    scale-up domain buys no compute fabric (its traffic, KV cache included, stays on NVLink)."""
    metrics = result.metrics
    if metrics.requests_per_s is None:
        return []
    out: list[Violation] = []
    at_target = (
        ("max_requests_per_s_at_target", metrics.max_requests_per_s_at_target),
        ("tokens_per_s_per_gpu_at_target", metrics.tokens_per_s_per_gpu_at_target),
    )
    missing = [key for key, value in at_target if value is None]
    if missing:
        out.append(Violation("serving-metrics-missing", case, ", ".join(missing)))
    short = bool(metrics.load_saturated) or (
        metrics.meets_latency_targets is not None and not metrics.meets_latency_targets
    )
    head = result.recommendation.headline
    if short and SERVING_SHORTFALL_WORDS not in head:
        out.append(
            Violation(
                "serving-silent",
                case,
                f"saturated={metrics.load_saturated} "
                f"meets_targets={metrics.meets_latency_targets}: {head[:160]}",
            )
        )
    capacity = metrics.capacity_requests_per_s
    if capacity is not None and metrics.requests_per_s > capacity * (1.0 + 1e-9):
        out.append(
            Violation(
                "serving-over-capacity",
                case,
                f"serves {metrics.requests_per_s:.4g} requests/s over its capacity {capacity:.4g}",
            )
        )
    ttft = metrics.ttft_ms_p95
    asked = result.scenario.inference
    # an open queue at the stand-in is over capacity; a closed loop's users reach it unsaturated
    # where their cycle passes the hour (_closed_loop_stand_ins)
    open_loop = asked is not None and asked.requests_per_s is not None
    if open_loop and ttft is not None and over_capacity_ms(ttft) and not metrics.load_saturated:
        out.append(
            Violation(
                "serving-over-capacity",
                case,
                "its queue for a first token grows without bound, yet it is not saturated",
            )
        )
    if asked is not None and not open_loop:
        out.extend(_closed_loop_stand_ins(case, result, float(asked.concurrent_requests or 0)))
    emitted = metrics.requests_per_s * (asked.output_tokens if asked is not None else 0)
    tokens = metrics.tokens_per_s
    if tokens is not None and abs(tokens - emitted) > SERVED_TOKENS_TOLERANCE * emitted:
        out.append(
            Violation(
                "serving-tokens-served",
                case,
                f"{tokens:.4g} output tokens/s, but its {metrics.requests_per_s:.4g} requests/s "
                f"served emit {emitted:.4g}",
            )
        )
    out.extend(_breakdown_violations(case, result))
    gpus = result.scenario.gpus
    domain = result.workload.scaleup_domain_gpus
    if domain is not None and gpus <= domain and result.recommendation.needs_compute_fabric:
        out.append(
            Violation(
                "serving-fabric-inside-domain",
                case,
                f"{gpus:.0f} GPUs in one {domain:.0f}-GPU scale-up domain buy a compute fabric",
            )
        )
    return out


def _named_metrics(result: EngineResult) -> list[tuple[str, Metrics]]:
    """The answer's metrics and every weighed design's, each with the label a violation
    names it by ("the answer", "option 3")."""
    return [("the answer", result.metrics)] + [
        (f"option {option.rank}", option.metrics) for option in result.options
    ]


def _breakdown_violations(case: str, result: EngineResult) -> list[Violation]:
    """The time per token's breakdown (the chart's bar, the scaling chart's compute share) is
    one decode step at the answer's load, of the answer and of every design it weighed: its
    compute and communication sum to no more than the p95 per token they explain, and the
    network's part is part of the communication (docs/MODEL.md 15)."""
    out: list[Violation] = []
    for label, m in _named_metrics(result):
        if m.ms_per_token is None or m.compute_ms_per_token is None or m.comm_ms_per_token is None:
            continue
        step = m.compute_ms_per_token + m.comm_ms_per_token
        network = m.network_ms_per_token or 0.0
        if step > m.ms_per_token * (1.0 + 1e-6) or network > m.comm_ms_per_token * (1.0 + 1e-6):
            out.append(
                Violation(
                    "serving-breakdown",
                    case,
                    f"{label}: compute {m.compute_ms_per_token:.4g} + communication "
                    f"{m.comm_ms_per_token:.4g} (network {network:.4g}) ms against "
                    f"{m.ms_per_token:.4g} ms per token",
                )
            )
    return out


def _closed_loop_stand_ins(case: str, result: EngineResult, users: float) -> list[Violation]:
    """A closed loop's users wait their turn, never without bound: a first token at the
    over-capacity stand-in, on the answer or any design it weighed, only where they cycle past
    its hour at the rate the design serves (a design whose KV links bind read it for 64 users
    who wait 2.13 min, docs/MODEL.md 15)."""
    out: list[Violation] = []
    for label, metrics in _named_metrics(result):
        ttft, served = metrics.ttft_ms_p95, metrics.requests_per_s
        if ttft is None or not served or not over_capacity_ms(ttft):
            continue
        cycle_s = users / served
        if cycle_s < SATURATED_S * (1.0 - 1e-6):
            out.append(
                Violation(
                    "serving-closed-loop-unbounded",
                    case,
                    f"{label}: {users:,.0f} users read the over-capacity stand-in, yet they "
                    f"cycle in {cycle_s:,.0f} s at the {served:.4g} requests/s it serves",
                )
            )
    return out


def memory_violations(case: str, result: EngineResult) -> list[Violation]:
    """The memory record reads in one unit: its usable figure (the fit rule's share, or a
    serving pool's weights + the runtime's KV room) is positive and within the capacity it
    reports, and a plan that fits holds no more than it. A record left at its defaults (no
    estimate: every figure 0, as in a result made up by hand) is not read."""
    mem = result.workload.memory
    if mem == Memory():
        return []
    problems = []
    if not 0.0 < mem.usable_gb <= mem.capacity_gb:
        problems.append(f"usable {mem.usable_gb:.1f} GB of a {mem.capacity_gb:.1f} GB capacity")
    if mem.fits and mem.total_gb > mem.usable_gb:
        problems.append(f"fits, with {mem.total_gb:.1f} GB over {mem.usable_gb:.1f} GB usable")
    return [Violation("memory-record", case, problem) for problem in problems]


def moe_stack_violations(case: str, result: EngineResult) -> list[Violation]:
    """A planned training plan with expert parallelism runs the MoE stack where it can run
    (``plans.moe_software``): the 1F1B all-to-all overlap exactly where Megatron-Core runs it
    (``plans.a2a_overlap_runs``) when the scenario left the overlap open, never where it does
    not; DeepEP, when the scenario left the dispatcher open, only on NVIDIA Hopper or Blackwell
    GPUs joined by NVLink (a user may name it anywhere)."""
    plan = result.workload.plan
    training = result.scenario.workload in ("training", "fine_tuning")
    if not training or plan.ep <= 1 or plan.source != "planner":
        return []
    given = result.scenario.parallelism
    runs = a2a_overlap_runs(plan.ep, plan.pp, plan.virtual_stages, plan.recompute)
    problems = []
    if plan.ep_overlap == "a2a_1f1b" and not runs:
        problems.append(f"a2a_1f1b on pp {plan.pp} vp {plan.virtual_stages} {plan.recompute}")
    if given.get("ep_overlap") is None and runs and plan.ep_overlap != "a2a_1f1b":
        problems.append(f"overlap left open, {plan.ep_overlap} on a plan Megatron overlaps")
    gpu = default_catalog().gpu(result.scenario.gpu)  # None: a GPU the scenario describes
    chosen_deepep = plan.moe_dispatcher == "deepep" and given.get("moe_dispatcher") is None
    if gpu is not None and chosen_deepep and not deepep_runs_on(gpu):
        problems.append(f"deepep on the {gpu.name}")
    return [Violation("moe-stack", case, problem) for problem in problems]


RAG_HEADLINE_WORDS = "RAG pipeline"
"""How a retrieval pipeline's headline opens (decision/rag.add_rag_answer)."""
RAG_LATE_WORDS = "With retrieval the first token comes after"
"""What the headline says when retrieval plus generation misses the first-token target."""


def _replica_gpus(result: EngineResult) -> int:
    """GPUs of the largest model instance of the serving deployment (any pool)."""
    serving = result.workload.serving
    if serving is None:
        return 0
    pools = (serving.pools.prefill, serving.pools.decode, serving.pools.serve)
    return max((p.gpus_per_instance for p in pools if p is not None), default=0)


def rag_violations(case: str, result: EngineResult) -> list[Violation]:
    """A RAG pipeline is answered as one: named in the headline with its ``rag`` record; no
    GPU compute fabric when every generation instance fits one scale-up domain and the
    deployment is replicas (or disaggregated pools inside every server); its tier network
    Ethernet with a port at least twice the busiest tier server's traffic, and its parts in
    the BOM at the price the record states."""
    if result.scenario.rag is None:
        return []
    rag = result.rag
    head = result.recommendation.headline
    if rag is None or not head.startswith(RAG_HEADLINE_WORDS):
        return [Violation("rag-unnamed", case, head[:160])]
    out: list[Violation] = []
    serving = result.workload.serving
    fits = 0 < _replica_gpus(result) <= _domain_gpus(result)
    if (
        result.recommendation.needs_compute_fabric
        and fits
        and serving is not None
        and (serving.deployment == "replicas" or serving.kv_inside_domain is True)
    ):
        out.append(
            Violation(
                "rag-fabric-without-split",
                case,
                f"replicas of {_replica_gpus(result)} GPUs in a {_domain_gpus(result)}-GPU "
                "domain buy a compute fabric",
            )
        )
    first = rag.first_token_ms
    if first is not None and rag.meets_target is False and RAG_LATE_WORDS not in head:
        out.append(Violation("rag-silent", case, f"first token {first:,.0f} ms: {head[:160]}"))
    net = rag.network
    port = float(net.port_gbps or 0.0)
    busiest = net.busiest_gbits_per_s or 0.0
    lines = [ln for ln in result.bom if ln.network == "retrieval"]
    priced = sum(ln.extended_price_usd for ln in lines)
    short_said = "Retrieval tiers fall short" in head
    if (port < 2 * busiest and not short_said) or not lines or abs(priced - net.capex_usd) > 0.01:
        out.append(
            Violation(
                "rag-tier-network",
                case,
                f"{port:g}G ports for {busiest:.3g} Gb/s; {len(lines)} BOM lines for "
                f"${priced:,.2f} against ${net.capex_usd}",
            )
        )
    return out


def text_violations(case: str, result: EngineResult) -> list[Violation]:
    """The text properties (:func:`.audit_text.text_findings`) of an answer's prose, and the
    scale-up links it names (:func:`.audit_text.scale_up_findings`)."""
    texts = tuple(customer_prose(result))
    gpu = default_catalog().gpu(result.scenario.gpu)  # None: a GPU the scenario describes
    own = [] if gpu is None else scale_up_findings(texts, scale_up_label(gpu.scaleup_kind))
    return [*prose_violations(case, texts), *(Violation(p, case, d) for p, d in own)]


def prose_violations(case: str, texts: Sequence[str]) -> list[Violation]:
    """The text properties of any text a customer reads: an answer's prose, or the messages
    of a refusal (which name the field and the rule in the same words)."""
    return [Violation(prop, case, detail) for prop, detail in text_findings(texts)]


def point_violations(outcome: Outcome) -> list[Violation]:
    """Every single-answer property of one case (checked already by :func:`checked`)."""
    if outcome.violations is not None:
        return list(outcome.violations)
    label = outcome.case.label()
    if outcome.error is not None:
        return [Violation("exception", label, outcome.error)]
    if outcome.refusal is not None:
        named = all(key and messages for key, messages in outcome.refusal.items())
        if outcome.refusal and named:
            said = [message for messages in outcome.refusal.values() for message in messages]
            return prose_violations(label, said)
        return [Violation("refusal-unnamed", label, repr(outcome.refusal))]
    result = outcome.result
    assert result is not None
    return [
        *rdma_violations(label, result),
        *placement_violations(label, result),
        *field_practice_violations(outcome.case, result),
        *bom_violations(label, result),
        *even_spine_violations(label, result),
        *whole_cage_violations(label, result),
        *premium_violations(label, result),
        *pick_violations(label, result),
        *cost_first_violations(label, result),
        *budget_cut_violations(outcome.case, result),
        *serving_violations(label, result),
        *memory_violations(label, result),
        *moe_stack_violations(label, result),
        *rag_violations(label, result),
        *text_violations(label, result),
    ]


# --- properties along a series (same job, growing cluster) ---------------------------------


def _step_s(result: EngineResult) -> float | None:
    """Step time per 4M tokens: the default batch grows with the cluster (1,024 tokens per
    GPU above 4,096 GPUs), so the same work is compared per token, not per step."""
    step = result.metrics.step_time_s
    training = result.scenario.training
    tokens = training.global_batch_tokens if training is not None else 0
    if step is None or not tokens:
        return step
    return step * 4_194_304 / tokens


def series_violations(outcomes: Sequence[Outcome]) -> list[Violation]:
    """Monotonicity and fabric flips along one series, sizes ascending."""
    answered = [(o, f) for o in outcomes if (f := o.series_figures()) is not None]
    out: list[Violation] = []
    best_step: tuple[float, int] | None = None
    top_capex: tuple[float, int] | None = None
    for o, figures in answered:
        servers = o.case.servers
        step = figures.step_s
        if step is not None and o.case.workload in ("training", "fine_tuning"):
            if best_step is not None and step > best_step[0] * (1 + STEP_SLOWDOWN_TOLERANCE):
                out.append(
                    Violation(
                        "step-slows",
                        o.case.label(),
                        f"{step:.4g} s per 4M tokens on {servers} servers vs {best_step[0]:.4g} s "
                        f"on {best_step[1]}",
                    )
                )
            if best_step is None or step < best_step[0]:
                best_step = (step, servers)
        capex = figures.network_capex_usd
        if figures.sized_for_serving:
            # sized by the deployment's own traffic, which more servers can lighten (shorter
            # pipelines, more replicas): its series keeps serving-worse-with-more-servers
            continue
        if top_capex is not None and capex < top_capex[0] - CAPEX_TOLERANCE_USD:
            out.append(
                Violation(
                    "capex-falls",
                    o.case.label(),
                    f"${capex:,.0f} on {servers} servers vs ${top_capex[0]:,.0f} on {top_capex[1]}",
                )
            )
        if top_capex is None or capex > top_capex[0]:
            top_capex = (capex, servers)
    out.extend(_serving_series_violations(answered))
    out.extend(_headroom_violations(answered))
    # a fabric sized by a serving deployment's traffic follows it as it changes with the size
    ladder = [
        f.fabric
        for o, f in answered
        if o.case.servers in LADDER_SERVERS and not f.sized_for_serving
    ]
    changes = sum(1 for a, b in itertools.pairwise(ladder) if a != b)
    if changes > MAX_FABRIC_CHANGES and answered:
        out.append(
            Violation(
                "fabric-flips",
                answered[0][0].case.label().rsplit("/", 1)[0],
                f"{changes} fabric changes along the ladder: {' -> '.join(map(str, ladder))}",
            )
        )
    return out


def _serving_series_violations(
    answered: Sequence[tuple[Outcome, SeriesFigures]],
) -> list[Violation]:
    """The engine's serving deployment never serves fewer requests/s within the targets on
    more servers of the same job (it may leave servers idle, as the deployment search does)."""
    out: list[Violation] = []
    best: tuple[float, int] | None = None
    for o, figures in answered:
        if not o.case.workload.startswith("inference"):
            continue
        rate = figures.max_requests_per_s_at_target
        if rate is None:
            continue
        if best is not None and rate < best[0] * (1 - SERVING_RATE_TOLERANCE):
            out.append(
                Violation(
                    "serving-worse-with-more-servers",
                    o.case.label(),
                    f"{rate:.4g} requests/s within the targets on {o.case.servers} servers vs "
                    f"{best[0]:.4g} on {best[1]}",
                )
            )
        if best is None or rate > best[0]:
            best = (rate, o.case.servers)
    return out


def _headroom_violations(
    answered: Sequence[tuple[Outcome, SeriesFigures]],
) -> list[Violation]:
    """A headroom sentence's fleet carries the load: the engine's own answer on the series'
    first size of at least the servers it names meets both targets at the same load."""
    out: list[Violation] = []
    for o, figures in answered:
        named = figures.headroom_servers
        if named is None:
            continue
        if named >= o.case.servers:
            out.append(Violation("headroom", o.case.label(), f"names {named} servers of its own"))
            continue
        larger = [(p, f) for p, f in answered if named <= p.case.servers < o.case.servers]
        if larger and not larger[0][1].carries_load:
            out.append(
                Violation(
                    "headroom",
                    o.case.label(),
                    f"about {named} servers would carry the load, yet "
                    f"{larger[0][0].case.servers} servers of the same job miss it",
                )
            )
    return out


def by_series(outcomes: Iterable[Outcome]) -> Iterator[list[Outcome]]:
    groups: dict[tuple[str, str, str, str], list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault(o.case.series, []).append(o)
    for group in groups.values():
        yield sorted(group, key=lambda o: o.case.servers)


def audit(outcomes: Sequence[Outcome]) -> AuditReport:
    """Check every property over already-evaluated outcomes."""
    report = AuditReport(cases=len(outcomes))
    for o in outcomes:
        if o.answered:
            report.answered += 1
        elif o.refusal is not None:
            report.refused += 1
            for name in o.refusal:
                report.refusal_reasons[name] = report.refusal_reasons.get(name, 0) + 1
        report.slowest_case_s = max(report.slowest_case_s, o.seconds)
        report.violations.extend(point_violations(o))
    for series in by_series(outcomes):
        report.violations.extend(series_violations(series))
    return report
