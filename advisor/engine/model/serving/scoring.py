"""Scoring serving deployments for the deployment search (docs/MODEL.md 15, 15.2): the rate
within the p95 targets of a plan on a network, its capacity, and the best of several plans."""

from __future__ import annotations

from typing import Final, TypeVar

from advisor.engine.facts.formatting import significant
from advisor.engine.facts.numbers import to_significant
from advisor.engine.input.scenario import Design, Scenario
from advisor.engine.model.performance import colocated_serving_plan
from advisor.engine.model.plans import WorkloadPlan
from advisor.engine.model.serving.compute import ServingPlan
from advisor.engine.model.serving.load import ServingModel, serving_model
from advisor.engine.model.serving.pools import reference_design
from advisor.engine.result.echo import replicas_shape

Deployment = TypeVar("Deployment", bound=WorkloadPlan | ServingPlan)
"""A deployment the search weighs: a whole plan, or only its serving plan (what every score
reads), whose plan is built only if it is chosen."""


def serving_of(wp: WorkloadPlan | ServingPlan) -> ServingPlan:
    """The serving plan of a deployment."""
    if isinstance(wp, ServingPlan):
        return wp
    assert wp.inference is not None and wp.inference.serving is not None
    return wp.inference.serving


class ServingScore:
    """A plan's score on a network: (requests/s within both p95 targets, meets both targets at
    the scenario's load, requests/s served at the load, -p95 TTFT at the load), compared as
    that tuple: one objective, the rate within the targets, and the scenario's own load only
    to break its ties (docs/MODEL.md 15).  Rates to 3 significant digits, so that near-equal
    rates are decided by the next key (and, walking server counts upward, by the smaller
    deployment: the cheaper one).  The load's keys are priced only when a tie asks for them
    (a closed loop's load is a bisection of its own, on the reference network)."""

    __slots__ = ("_load", "_model", "_plan", "_rate")

    def __init__(self, model: ServingModel, serving_plan: ServingPlan) -> None:
        self._model, self._plan = model, serving_plan
        self._rate: float | None = None
        self._load: tuple[float, float, float] | None = None

    @property
    def rate(self) -> float:
        """Requests/s within both p95 targets (3 significant digits)."""
        if self._rate is None:
            self._rate = self._model.rate_at_target_3g()
            assert self._rate is not None
        return self._rate

    @property
    def settled_rate(self) -> float | None:
        """:attr:`rate` if the search settled it, else None (proven below a rival only)."""
        return self._rate

    def beats(self, other: ServingScore) -> bool:
        """``self > other``, without settling a rate within the targets proven below
        ``other``'s (a plan that does not win the search is bisected only so far)."""
        if self._rate is None:
            bound = other.rate
            self._rate = self._model.rate_at_target_3g(lambda rate: rate < bound)
            if self._rate is None:
                return False
        return self > other

    def reaches(self, rate: float, factor: float) -> bool:
        """``rate <= self.rate * factor``, without settling a rate proven short of it."""
        if self._rate is None:
            self._rate = self._model.rate_at_target_3g(lambda mine: mine * factor < rate)
            if self._rate is None:
                return False
        return rate <= self._rate * factor

    def meets_load(self) -> bool:
        """Whether the plan meets both p95 targets at the scenario's own load, unsaturated."""
        return self.key()[1] == 1.0

    def key(self) -> tuple[float, float, float, float]:
        """The score as the tuple it compares as."""
        if self._load is None:
            point = self._model.operating_point()
            self._load = (
                1.0 if point.meets(self._plan) else 0.0,
                to_significant(point.requests_per_s, 3),
                -to_significant(point.ttft_p95_s, 3),
            )
        return (self.rate, *self._load)

    def __gt__(self, other: ServingScore) -> bool:
        if self.rate != other.rate:
            return self.rate > other.rate
        return self.key() > other.key()


def _priced(scenario: Scenario, wp: WorkloadPlan | ServingPlan, design: Design) -> ServingPlan:
    """The serving plan of ``wp`` as its answer prices it on ``design``: a colocated plan
    with its per-token communication (performance.colocated_serving_plan: pipeline hops,
    expert all-to-all, what crosses servers), which the serving model does not price."""
    sp = serving_of(wp)
    if isinstance(wp, WorkloadPlan) and sp.colocated:
        return colocated_serving_plan(scenario, wp, design)
    return sp


SHAPE_TIE = 0.01
"""Replica shapes whose rates within the targets lie within 1 % of each other serve alike (the
load model's bisection settles a rate to three significant digits, and a rate a few tenths of
a percent apart is no evidence either way): a larger replica that leaves GPUs idle must serve
more than this beyond the best so far (docs/MODEL.md 15.2)."""


def idle_note(
    scenario: Scenario,
    score: ServingScore,
    wp: WorkloadPlan,
    best: ServingScore,
    best_wp: WorkloadPlan,
) -> str:
    """Why replicas of ``wp`` that serve more within the targets than the best so far,
    ``best_wp``, do not replace it: they leave more of the cluster's GPUs idle and serve no more
    than :data:`SHAPE_TIE` beyond it ("" when they win or lose on their rate).  DeepSeek-V3 on
    one GB300 rack at 100 ms a token: EP32 replicas serve 236 requests/s on 64 GPUs, EP8 ones
    234 on all 72, which EP32 does not replace."""
    placed, best_placed = (serving_of(p).decode.placed_gpus for p in (wp, best_wp))
    if not score > best or placed >= best_placed or score.rate > best.rate * (1.0 + SHAPE_TIE):
        return ""
    return (
        f" on {placed:,} of the {scenario.gpus:,} GPUs, not {SHAPE_TIE:.0%} more than a shape "
        "on more of them"
    )


def serving_score(
    scenario: Scenario, wp: WorkloadPlan | ServingPlan, design: Design | None = None
) -> ServingScore:
    """:class:`ServingScore` of a plan on ``design``, by default the reference network
    (advisor.engine.model.serving.pools.reference_design)."""
    net = design or reference_design(scenario)
    sp = _priced(scenario, wp, net)
    return ServingScore(serving_model(scenario, sp, net, "point"), sp)


def capacity_rps(
    scenario: Scenario, wp: WorkloadPlan | ServingPlan, design: Design | None = None
) -> float:
    """Requests/s a plan sustains on ``design`` (by default the reference network): an upper
    bound of its rate within the targets (a few step times, where the rate within the targets
    bisects the load model)."""
    net = design or reference_design(scenario)
    return serving_model(scenario, _priced(scenario, wp, net), net, "point").capacity_rps()


def by_capacity(
    scenario: Scenario, plans: list[Deployment], design: Design | None = None
) -> list[Deployment]:
    """``plans`` by capacity, largest first (stable), so the search can stop at the first one
    whose capacity is below the best rate within the targets found so far."""
    return sorted(plans, key=lambda wp: -capacity_rps(scenario, wp, design))


def below(
    scenario: Scenario,
    wp: WorkloadPlan | ServingPlan,
    best_rate: float,
    design: Design | None = None,
) -> bool:
    """Whether ``wp`` cannot reach ``best_rate`` (3 significant digits) within the targets:
    its capacity bounds its rate within the targets from above."""
    return capacity_rps(scenario, wp, design) < best_rate * (1.0 - 5e-3)


def best_of(
    scenario: Scenario, plans: list[Deployment], design: Design | None = None
) -> Deployment:
    """The plan of ``plans`` with the highest :func:`serving_score` on ``design`` (by default
    the reference network; the first on a tie), largest capacity first, stopping where
    capacity falls below the best rate so far."""
    best: tuple[ServingScore, Deployment] | None = None
    for wp in by_capacity(scenario, plans, design):
        if best is not None and below(scenario, wp, best[0].rate, design):
            break
        score = serving_score(scenario, wp, design)
        if best is None or score.beats(best[0]):
            best = (score, wp)
    assert best is not None
    return best[1]


def reaches(
    scenario: Scenario, plans: list[WorkloadPlan | ServingPlan], rate: float, factor: float
) -> bool:
    """Whether one of ``plans`` serves at least ``rate`` / ``factor`` within the targets on the
    reference network (``rate`` <= its rate x ``factor``), so that the best of them does too:
    scored largest capacity first, stopping at the first whose capacity cannot reach it."""
    for wp in by_capacity(scenario, plans):
        if below(scenario, wp, rate / factor):
            return False
        if serving_score(scenario, wp).reaches(rate, factor):
            return True
    return False


def describe_deployment(scenario: Scenario, wp: WorkloadPlan, score: ServingScore) -> str:
    """A deployment the search weighed, for its note: its shape, what it serves within the
    p95 targets (when the search settled it; else only that it serves less) and, at the
    asked load, its p95 time to first token."""
    assert wp.inference is not None and wp.inference.serving is not None
    sp = wp.inference.serving
    if sp.colocated:
        p = wp.plan
        replicas = replicas_shape(p.dp, p.tp, p.pp, p.ep, split=True)
        shape = f"{replicas} on {sp.prefill.servers:,} servers"
    else:
        shape = (
            f"disaggregated {sp.prefill.servers:,} prefill + {sp.decode.servers:,} decode servers"
        )
    rate = score.settled_rate
    within = f"{significant(rate)}" if rate is not None else "fewer"
    point = serving_model(scenario, sp, reference_design(scenario), "point").operating_point()
    at_load = (
        "saturated at the asked load"
        if point.saturated
        else f"p95 time to first token {point.ttft_p95_s * 1e3:,.0f} ms at the asked load"
    )
    return f"{shape}: {within} requests/s within the targets ({at_load})"


def chosen_note(
    scenario: Scenario,
    chosen: tuple[ServingScore, WorkloadPlan],
    beaten: list[tuple[ServingScore, WorkloadPlan]],
    nodes: int,
) -> tuple[str, ...]:
    """The note of a deployment chosen over others on ``nodes`` servers (none when every
    other one reads the same as the choice)."""
    mine = describe_deployment(scenario, chosen[1], chosen[0])
    others = [d for d in (describe_deployment(scenario, wp, sc) for sc, wp in beaten) if d != mine]
    if not others:
        return ()
    which = (
        f"the other plan on all {nodes:,} servers serves"
        if len(others) == 1
        else f"the other plans on all {nodes:,} servers serve"
    )
    return (
        "deployment chosen by the requests/s it serves within the p95 targets on the "
        f"reference network: {mine}; {which} no more ({'; '.join(others)})",
    )


def not_weighed_note(what: str, kind: str, rate: float) -> str:
    """The note of a no-fabric answer that meets the asked load: the deployments across servers
    it did not weigh (``what``, then "would need a compute fabric") and why (docs/MODEL.md 15.2,
    "Pools only where the load needs them")."""
    return (
        f"{what} would need a compute fabric, not weighed: the {kind} meet the asked load "
        f"within both p95 targets without one ({significant(rate)} requests/s within the "
        "targets)"
    )


DENSE_NOT_WEIGHED: Final = "whole-server disaggregated pools, whose KV cache"
MOE_NOT_WEIGHED: Final = (
    "deployments across servers (experts spread over servers, disaggregated pools), which"
)


def unit_shape(wp: WorkloadPlan) -> str:
    """'4 x TP1 prefill + 1 x TP4 decode' of one server's disaggregated unit."""
    assert wp.inference is not None and wp.inference.serving is not None
    sp = wp.inference.serving
    if not sp.kv_inside_domain:
        return f"{sp.prefill.servers:,} prefill + {sp.decode.servers:,} decode servers"
    per = max(1, wp.nodes)
    return (
        f"{sp.prefill.units // per} x {sp.prefill.shape} prefill + "
        f"{sp.decode.units // per} x {sp.decode.shape} decode"
    )
