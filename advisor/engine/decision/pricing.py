"""Pricing of one design: its life-cycle decision cost and the job's share.

The network is bought for the cluster's amortization life and all the work that will run on
it, so designs are ranked by their **life cost** (docs/MODEL.md "Decision cost"):

    life = network capex
         + network power over the life (W x PUE x $/kWh x years x 8766 h)
         + GPU time the network wastes over the life
           (GPUs x GPU-hour x years x 8766 h x utilization x gpu_idle_fraction)
         + operations (team ramp-up + risk premium over the first months)

The job's share (its run, or a month of serving) stays as a secondary, labelled figure:
:func:`advisor.engine.decision.cost.work_cost` (the result's ``cost.job_share`` record, whose
keys ``cost`` has always carried).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from advisor.engine.decision.candidates import Candidate
from advisor.engine.decision.cost import (
    HOURS_PER_YEAR,
    SERVING_DAYS,
    WorkCost,
    gpu_hour_cost_usd,
    work_cost,
)
from advisor.engine.decision.job_facts import JobFacts
from advisor.engine.decision.util import cents, num
from advisor.engine.facts.catalog.network import ETHERNET, INFINIBAND, ROCE
from advisor.engine.model.topology import TopologySize
from advisor.engine.result.records import Cost, JobShare, LifeCost, Metrics

SKILL_GAP: dict[str, dict[str, tuple[float, float]]] = {
    # team_skills -> fabric -> (one-time ramp-up USD, risk as a fraction of GPU cost)
    "both": {ETHERNET: (0.0, 0.0), ROCE: (0.0, 0.0), INFINIBAND: (0.0, 0.0)},
    "ethernet": {ETHERNET: (0.0, 0.0), ROCE: (50_000.0, 0.03), INFINIBAND: (150_000.0, 0.10)},
    "infiniband": {ETHERNET: (0.0, 0.0), ROCE: (50_000.0, 0.04), INFINIBAND: (0.0, 0.0)},
    "none": {ETHERNET: (0.0, 0.0), ROCE: (100_000.0, 0.06), INFINIBAND: (100_000.0, 0.05)},
}
"""Operational cost of a fabric the team does not run today: training/professional services
(one-time) plus a risk premium, the expected GPU time lost to misconfiguration while the
team learns (lossless Ethernet tuning for RoCE: PFC/ECN/DCQCN; subnet manager, UFM and a new
vendor ecosystem for InfiniBand).  Engineering estimates, informed by Meta SIGCOMM'24
(months of RoCE tuning) and the skills each fabric class asks for (RoCE: Ethernet plus
RDMA/lossless tuning; InfiniBand: a specialised skill set and a narrower vendor ecosystem)."""


def skill_cost(facts: JobFacts, fabric: str) -> tuple[float, float]:
    """(one-time ramp-up USD, risk as a fraction of GPU cost) of ``fabric`` for the job's team
    (:data:`SKILL_GAP`)."""
    return SKILL_GAP[facts.team_skills][fabric]


RAMP_UP_MONTHS: Final = 12.0
"""The risk premium applies to the GPU time of the first year (the learning period)."""


class LifeFigures:
    """:func:`life_cost`'s figures, unrounded, named as the result's :class:`LifeCost` record's
    (the result's ``cost.life`` is them rounded to cents, :func:`rounded_life`): a plain class,
    since every design priced gets one and a record costs three objects and an interpreted
    ``__init__``."""

    __slots__ = (
        "gpu_hours_wasted", "gpu_time_wasted_usd", "network_capex_usd", "network_power_usd",
        "operations_usd", "total_usd", "utilization", "years",
    )  # fmt: skip

    def __init__(
        self, years: float, utilization: float, network_capex_usd: float,
        network_power_usd: float, gpu_time_wasted_usd: float, gpu_hours_wasted: float,
        operations_usd: float, total_usd: float,
    ) -> None:  # fmt: skip
        self.years = years
        self.utilization = utilization
        self.network_capex_usd = network_capex_usd
        self.network_power_usd = network_power_usd
        self.gpu_time_wasted_usd = gpu_time_wasted_usd
        self.gpu_hours_wasted = gpu_hours_wasted
        self.operations_usd = operations_usd
        self.total_usd = total_usd

    def _value(self) -> tuple[float, ...]:
        return (
            self.years,
            self.utilization,
            self.network_capex_usd,
            self.network_power_usd,
            self.gpu_time_wasted_usd,
            self.gpu_hours_wasted,
            self.operations_usd,
            self.total_usd,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LifeFigures):
            return NotImplemented
        return self._value() == other._value()

    def __hash__(self) -> int:
        return hash(self._value())


def rounded_life(life: LifeFigures) -> LifeCost:
    """The result's ``cost.life``: the decision's life cost rounded to cents (years and
    utilization as given)."""
    return LifeCost(
        years=life.years,
        utilization=life.utilization,
        network_capex_usd=cents(life.network_capex_usd),
        network_power_usd=cents(life.network_power_usd),
        gpu_time_wasted_usd=cents(life.gpu_time_wasted_usd),
        gpu_hours_wasted=cents(life.gpu_hours_wasted),
        operations_usd=cents(life.operations_usd),
        total_usd=cents(life.total_usd),
    )


@dataclass
class Scored:
    cand: Candidate
    topo: TopologySize
    metrics: Metrics
    perf: float
    capex_usd: float
    power_w: float
    cost: WorkCost
    """The job's share, unrounded (the result's ``cost`` is it rounded to cents)."""
    life: LifeFigures
    """The life cost, unrounded (the result's ``cost.life`` is it rounded to cents)."""
    operations_risk_usd: float
    """The GPU-price-proportional part of ``life.operations_usd`` (the risk premium)."""
    violations: list[str] = field(default_factory=list)
    departures: list[str] = field(default_factory=list)
    """Ways the design departs from field practice (empty: it is field practice)."""

    # written out: mypyc runs the methods @dataclass generates interpreted (ARCHITECTURE.md)
    def __init__(
        self,
        cand: Candidate,
        topo: TopologySize,
        metrics: Metrics,
        perf: float,
        capex_usd: float,
        power_w: float,
        cost: WorkCost,
        life: LifeFigures,
        operations_risk_usd: float,
        violations: list[str] | None = None,
        departures: list[str] | None = None,
    ) -> None:
        self.cand = cand
        self.topo = topo
        self.metrics = metrics
        self.perf = perf
        self.capex_usd = capex_usd
        self.power_w = power_w
        self.cost = cost
        self.life = life
        self.operations_risk_usd = operations_risk_usd
        self.violations = [] if violations is None else violations
        self.departures = [] if departures is None else departures

    def __eq__(self, other: object) -> bool:
        """As the dataclass's own, which compares the field tuples: field by field in order,
        each identical or equal, stopping at the first that differs (the prose asks whether
        each option is among the tied, whose candidates differ in the first field)."""
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Scored)
        return (
            (self.cand is other.cand or self.cand == other.cand)
            and (self.topo is other.topo or self.topo == other.topo)
            and (self.metrics is other.metrics or self.metrics == other.metrics)
            and self.perf == other.perf
            and self.capex_usd == other.capex_usd
            and self.power_w == other.power_w
            and (self.cost is other.cost or self.cost == other.cost)
            and (self.life is other.life or self.life == other.life)
            and self.operations_risk_usd == other.operations_risk_usd
            and (self.violations is other.violations or self.violations == other.violations)
            and (self.departures is other.departures or self.departures == other.departures)
        )

    @property
    def feasible(self) -> bool:
        return not self.violations

    @property
    def decision_usd(self) -> float:
        return self.life.total_usd

    @property
    def ops_usd(self) -> float:
        return self.life.operations_usd

    @property
    def field_practice(self) -> bool:
        return not self.departures


def life_hours(facts: JobFacts) -> float:
    return max(facts.costs.amortization_years, 1e-9) * HOURS_PER_YEAR


def life_risk_usd(facts: JobFacts, fabric: str) -> float:
    """The risk premium of ``fabric`` over the life: GPU time lost while the team learns it
    (the first :data:`RAMP_UP_MONTHS`)."""
    hours = life_hours(facts)
    ramp_hours = min(hours, RAMP_UP_MONTHS / 12.0 * HOURS_PER_YEAR)
    risk = skill_cost(facts, fabric)[1]
    return risk * facts.gpus * ramp_hours * facts.utilization * gpu_hour_cost_usd(facts.costs)


def life_cost(
    facts: JobFacts,
    fabric: str,
    metrics: Metrics,
    capex_usd: float,
    power_w: float,
    risk_usd: float | None = None,
) -> LifeFigures:
    """The network's cost over the cluster's amortization life (the decision cost),
    unrounded.  ``risk_usd``: :func:`life_risk_usd` of ``fabric`` when the caller has it."""
    c = facts.costs
    hours = life_hours(facts)
    rate = gpu_hour_cost_usd(c)
    idle = min(1.0, max(0.0, num(metrics.gpu_idle_fraction)))
    busy_gpu_hours = facts.gpus * hours * facts.utilization
    power_usd = power_w / 1000.0 * c.pue * c.electricity_usd_per_kwh * hours
    wasted_usd = busy_gpu_hours * idle * rate
    if risk_usd is None:
        risk_usd = life_risk_usd(facts, fabric)
    operations_usd = skill_cost(facts, fabric)[0] + risk_usd
    return LifeFigures(
        c.amortization_years,
        facts.utilization,
        capex_usd,
        power_usd,
        wasted_usd,
        busy_gpu_hours * idle,
        operations_usd,
        capex_usd + power_usd + wasted_usd + operations_usd,
    )


def work_hours(facts: JobFacts, metrics: Metrics) -> float:
    if facts.inference:
        return SERVING_DAYS * 24.0
    return num(metrics.run_time_s) / 3600.0


def job_cost(
    facts: JobFacts, fabric: str, metrics: Metrics, capex_usd: float, power_w: float
) -> WorkCost:
    """The job's share: its time share of capex, its power, its GPU time and operations."""
    hours = work_hours(facts, metrics)
    rate = gpu_hour_cost_usd(facts.costs)
    gpu_cost = facts.gpus * hours * rate
    one_time, risk = skill_cost(facts, fabric)
    share = min(1.0, hours / life_hours(facts))
    return work_cost(
        facts.costs,
        gpus=facts.gpus,
        work_hours=hours,
        idle_fraction=num(metrics.gpu_idle_fraction),
        network_capex_usd=capex_usd,
        network_power_w=power_w,
        work=facts.work,
        operations_usd=one_time * share + risk * gpu_cost,
    )


def price(
    facts: JobFacts,
    cand: Candidate,
    topo: TopologySize,
    metrics: Metrics,
    capex_usd: float,
    power_w: float,
) -> Scored:
    perf = num(metrics.ms_per_token if facts.inference else metrics.step_time_s, float("inf"))
    risk_usd = life_risk_usd(facts, cand.fabric)
    return Scored(
        cand=cand,
        topo=topo,
        metrics=metrics,
        perf=perf,
        capex_usd=capex_usd,
        power_w=power_w,
        cost=job_cost(facts, cand.fabric, metrics, capex_usd, power_w),
        life=life_cost(facts, cand.fabric, metrics, capex_usd, power_w, risk_usd),
        operations_risk_usd=risk_usd,
    )


def job_share_note(job: WorkCost, capex_usd: float, share_pct: float, years: float) -> str:
    """Why the job's share and the network's price differ: a short job carries a sliver of the
    capex, so its total is below the price; a long or GPU-heavy one is mostly GPU time (the
    note said "can be smaller" beside a share $100k above the price)."""
    carries = (
        f"The {job.work} carries {share_pct:.1f}% of the network capex "
        f"({job.work_hours:,.0f} h of a {years:g}-year life)"
    )
    if job.total_usd < capex_usd:
        return f"{carries}, so its total is smaller than the network's price."
    if job.total_usd > 0 and job.gpu_cost_usd >= job.total_usd / 2:
        gpu_share = 100.0 * job.gpu_cost_usd / job.total_usd
        return f"{carries}; GPU time is {gpu_share:.0f}% of its total."
    return f"{carries}."


def cost_record(facts: JobFacts, sc: Scored) -> Cost:
    """Result ``cost``: the job-share figures (kept for compatibility), ``life`` (the decision
    cost, over the amortization life) and ``job_share`` (the same job figures, labelled), all
    rounded to cents."""
    job = sc.cost
    capex = sc.capex_usd
    share_pct = 100.0 * job.network_capex_share_usd / capex if capex > 0 else 0.0
    share = JobShare(
        network_capex_usd=cents(job.network_capex_usd),
        network_capex_share_usd=cents(job.network_capex_share_usd),
        network_power_w=cents(job.network_power_w),
        network_power_cost_usd=cents(job.network_power_cost_usd),
        gpu_cost_usd=cents(job.gpu_cost_usd),
        idle_cost_usd=cents(job.idle_cost_usd),
        operations_cost_usd=cents(job.operations_cost_usd),
        work=job.work,
        gpu_hours=cents(job.gpu_hours),
        work_hours=cents(job.work_hours),
        total_usd=cents(job.total_usd),
        note=job_share_note(job, capex, share_pct, facts.costs.amortization_years),
    )
    return Cost(
        network_capex_usd=share.network_capex_usd,
        network_capex_share_usd=share.network_capex_share_usd,
        network_power_w=share.network_power_w,
        network_power_cost_usd=share.network_power_cost_usd,
        gpu_cost_usd=share.gpu_cost_usd,
        idle_cost_usd=share.idle_cost_usd,
        operations_cost_usd=share.operations_cost_usd,
        total_cost_usd=share.total_usd,
        work=share.work,
        gpu_hours=share.gpu_hours,
        work_hours=share.work_hours,
        decision_cost_usd=cents(sc.life.total_usd),
        decision_basis="life",
        life=rounded_life(sc.life),
        job_share=share,
    )
