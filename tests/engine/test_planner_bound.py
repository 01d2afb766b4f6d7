"""The planner's branch and bound on a contender's compute floor (MODEL.md 5.3, cost): the
floor (``training_step.plan_floor_s``) is never above the plan's full step, on any design and
in any bound's world, and pruning by it chooses what pricing every contender chooses; a
design evaluation that stops pricing a plan early picks what pricing every plan picks."""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import advisor.engine.model.planner as planner
import advisor.engine.model.training_step as training_step
from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import Design, Scenario, parse_scenario
from advisor.engine.model.memory import _fits, training_memory
from advisor.engine.model.performance import evaluate_design
from advisor.engine.model.plan_search import fewer_gpus_floor_s, sequence_gpu_seconds
from advisor.engine.model.planner import (
    RECOMPUTE_ORDER,
    REFERENCE_DESIGN,
    VIRTUAL_STAGES,
    _Candidate,
    _candidate_plan,
    _shape_rows,
    _training_workload,
    plan_workload,
)
from advisor.engine.model.stage_time import _stage_time_per_microbatch
from advisor.engine.model.training_step import (
    _compute_floor_s,
    _training_times,
    plan_floor_s,
    training_step_time_s,
)
from tests.support.engine_build import ran_on_source

MODELS = ("llama3-8b", "llama3-70b", "gpt3-175b", "mixtral-8x7b", "deepseek-v3", "llama3.1-405b")
GPUS = ("h100-sxm", "a100-80gb-sxm", "mi300x", "gb200-nvl72", "l40s", "b200")


def _scenario(model: str, gpu: str, servers: int, workload: str = "training") -> Scenario:
    raw: dict[str, Any] = {"workload": workload, "model": model, "gpu": gpu, "gpus": 8 * servers}
    return parse_scenario(raw, default_catalog())


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    model=st.sampled_from(MODELS),
    gpu=st.sampled_from(GPUS),
    servers=st.integers(min_value=1, max_value=96),
    pick=st.integers(min_value=0, max_value=10**6),
    sharding=st.sampled_from(("none", "zero1", "zero3")),
    recompute=st.sampled_from(RECOMPUTE_ORDER),
    vp_pick=st.integers(min_value=0, max_value=3),
    fabric=st.sampled_from(("ethernet", "roce", "infiniband")),
    nic_gbps=st.sampled_from((25.0, 100.0, 200.0, 400.0, 800.0)),
    nics=st.sampled_from((1, 2, 4, 8)),
    oversubscription=st.sampled_from((1.0, 2.0, 3.0)),
)
def test_the_floor_is_never_above_the_priced_step(
    model: str,
    gpu: str,
    servers: int,
    pick: int,
    sharding: str,
    recompute: str,
    vp_pick: int,
    fabric: str,
    nic_gbps: float,
    nics: int,
    oversubscription: float,
) -> None:
    # any shape the planner enumerates (fitting in memory or not: the floor does not read
    # memory), any sharding, recomputation and interleaving, priced on the reference design
    # and on a random one in the low, point and high worlds
    s = _scenario(model, gpu, servers)
    rows = list(_shape_rows(s))
    if not rows:
        return
    tp, cp, pp, ep, mb, dp, mcount, stages, _ = rows[pick % len(rows)]
    vps = [v for v in VIRTUAL_STAGES if stages[1] % v == 0] if pp > 1 else [1]
    vp = vps[vp_pick % len(vps)]
    mem = training_memory(s, tp, pp, dp, ep, mb, sharding, recompute, mcount, cp=cp, vp=vp,
                          stages=stages)  # fmt: skip
    c = _Candidate(tp, pp, cp, dp, ep, mb, vp, sharding, recompute, stages, mem, 0.0)
    plan = _candidate_plan(s, c, "planner")
    workload = _training_workload(s, plan, mem, notes=())
    assert workload.training is not None
    floor = plan_floor_s(s, plan)
    # the same float as the floor of the plan's own TrainingPlan
    assert floor == _compute_floor_s(workload.training, plan.pp, plan.virtual_stages)
    assert floor <= training_step_time_s(s, workload, REFERENCE_DESIGN)
    design = Design(
        fabric=fabric, nic_gbps=nic_gbps, nics_per_node=nics, oversubscription=oversubscription
    )
    for bound in ("low", "point", "high"):
        for d in (REFERENCE_DESIGN, design):
            step = _training_times(s, workload, workload.training, d, bound).step_s
            assert floor <= step, (bound, d, floor, step)


def _clear_planner_caches() -> None:
    planner._PLAN_CACHE.clear()
    planner._CONTENDERS_CACHE.clear()


def _plan_summary(s: Scenario) -> tuple[Any, ...]:
    w = plan_workload(s)
    others = training_step.all_alternatives(w)
    return (w.plan, w.memory, w.notes, tuple((a.plan, a.memory) for a in others))


@pytest.mark.parametrize(
    "model, gpu, servers, workload",
    [
        ("gpt3-175b", "h100-sxm", 128, "training"),
        ("llama3-70b", "h100-sxm", 125, "training"),
        ("llama3-8b", "a100-80gb-sxm", 2, "training"),
        ("llama3.1-405b", "mi300x", 129, "training"),
        ("mixtral-8x7b", "h100-sxm", 13, "fine_tuning"),
        ("deepseek-v3", "h800-sxm", 256, "training"),
        ("llama3-70b", "l40s", 40, "training"),
    ],
)
def test_pruning_chooses_what_pricing_every_contender_chooses(
    model: str,
    gpu: str,
    servers: int,
    workload: str,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    # counted and made exhaustive by replacing planner's functions, which compiled planner
    # calls directly: on the compiled build the test runs again on the source
    if ran_on_source(request):
        return
    s = _scenario(model, gpu, servers, workload)
    _clear_planner_caches()
    priced: list[float] = []
    real_step = planner.training_step_time_s

    def counting(*args: Any) -> float:
        step = real_step(*args)
        priced.append(step)
        return step

    monkeypatch.setattr(planner, "training_step_time_s", counting)
    pruned = _plan_summary(s)
    pruned_count = len(priced)
    # exhaustive: a floor of 0 prices every contender
    _clear_planner_caches()
    priced.clear()
    monkeypatch.setattr(planner, "plan_floor_s", lambda scenario, plan: 0.0)
    exhaustive = _plan_summary(s)
    _clear_planner_caches()
    assert pruned == exhaustive
    assert pruned_count <= len(priced)
    assert all(math.isfinite(x) for x in priced)


def test_pruning_skips_the_clusters_slower_contenders(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    # GPT-3 175B on 128 H100 servers: some of the cluster's own contenders compute longer than
    # the best step priced, so their full steps are not priced (counted by replacing
    # planner._priced_steps, which compiled planner calls directly: on the compiled build the
    # test runs again on the source)
    if ran_on_source(request):
        return
    s = _scenario("gpt3-175b", "h100-sxm", 128)
    counts = [0, 0]
    real = planner._priced_steps

    def spy(*args: Any, **kwargs: Any) -> list[float]:
        steps = real(*args, **kwargs)
        counts[0] += sum(1 for x in steps if math.isfinite(x))
        counts[1] += len(steps)
        return steps

    _clear_planner_caches()
    monkeypatch.setattr(planner, "_priced_steps", spy)
    plan_workload(s)
    _clear_planner_caches()
    assert 0 < counts[0] < counts[1], counts


def test_a_smaller_size_is_searched_only_when_it_can_win(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    # GPT-3 175B on 128 H100 servers: every plan of 64 servers or fewer computes longer than
    # the cluster's best step on the reference (the bound of plan_search.fewer_gpus_floor_s
    # says so without searching them), so planning searches the cluster's own size only; a
    # design on one 25G Ethernet NIC per server, whose step is far longer, searches the sizes
    # it needs when it is evaluated (counted by replacing planner._ranked_contenders, which
    # compiled planner calls directly: on the compiled build the test runs again on the
    # source)
    if ran_on_source(request):
        return
    s = _scenario("gpt3-175b", "h100-sxm", 128)
    searched: list[int] = []
    real = planner._ranked_contenders

    def spy(scenario: Scenario) -> Any:
        searched.append(scenario.gpus)
        return real(scenario)

    _clear_planner_caches()
    monkeypatch.setattr(planner, "_ranked_contenders", spy)
    w = plan_workload(s)
    assert searched == [1024]
    assert w.fewer is not None
    assert [n for _, n in w.fewer.bounds] == [512, 256, 128, 64, 32, 16, 8]
    evaluate_design(s, w, REFERENCE_DESIGN)
    assert searched == [1024]
    slow = Design(fabric="ethernet", nic_gbps=25.0, nics_per_node=1)
    evaluate_design(s, w, slow)
    assert len(searched) > 1
    assert searched[1:] == [512, 256, 128, 64, 32, 16, 8][: len(searched) - 1]
    _clear_planner_caches()


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    model=st.sampled_from(MODELS),
    gpu=st.sampled_from(GPUS),
    servers=st.integers(min_value=1, max_value=96),
    pick=st.integers(min_value=0, max_value=10**6),
    sharding=st.sampled_from(("none", "zero1", "zero3")),
    recompute=st.sampled_from(RECOMPUTE_ORDER),
    vp_pick=st.integers(min_value=0, max_value=3),
)
def test_the_search_fits_a_plan_exactly_as_the_memory_model(
    model: str, gpu: str, servers: int, pick: int, sharding: str, recompute: str, vp_pick: int
) -> None:
    # the search's memo composes the fit from the weights/optimizer half and the activation
    # half, each kept per size: the same answer as memory._fits and training_memory
    s = _scenario(model, gpu, servers)
    rows = list(_shape_rows(s))
    if not rows:
        return
    memo = planner._SizeMemo(s)
    for tp, cp, pp, ep, mb, dp, mcount, stages, _ in (rows[pick % len(rows)], rows[0], rows[-1]):
        vps = [v for v in VIRTUAL_STAGES if stages[1] % v == 0] if pp > 1 else [1]
        vp = vps[vp_pick % len(vps)]
        args = (tp, pp, dp, ep, mb, sharding, recompute, mcount, cp, vp, stages)
        expected = _fits(s, *args)
        assert memo.fit_of(*args) is expected
        assert memo.fit_of(*args) is expected  # and from the halves it kept
        mem = training_memory(s, tp, pp, dp, ep, mb, sharding, recompute, mcount, cp=cp, vp=vp,
                              stages=stages)  # fmt: skip
        assert mem.fits is expected


@pytest.mark.parametrize(
    ("model", "gpu", "servers"),
    [
        ("llama3-70b", "h100-sxm", 128),
        ("gpt3-175b", "a100-80gb-sxm", 96),
        ("mixtral-8x7b", "h100-sxm", 32),
    ],
)
@pytest.mark.parametrize(
    "design",
    [
        Design(fabric="infiniband", nic_gbps=400.0, nics_per_node=8),
        Design(fabric="roce", nic_gbps=200.0, nics_per_node=2, oversubscription=3.0),
        Design(fabric="ethernet", nic_gbps=25.0, nics_per_node=1),
    ],
)
def test_a_design_evaluation_stopping_early_picks_what_pricing_every_plan_picks(
    model: str, gpu: str, servers: int, design: Design
) -> None:
    # _fastest_plan prices an alternative's network-crossing data-parallel gradients only
    # while its step without them is below the best so far (MODEL.md 5.3): it picks the
    # first plan of the least step, as a min over every plan's full step does, and a plan
    # it stops early has a full step at least the best
    s = _scenario(model, gpu, servers)
    w = plan_workload(s)
    assert w.weighs_other_plans()
    plans = (w, *(alt for _, alt in training_step.alternatives_below(w)))
    steps = []
    for p in plans:
        assert p.training is not None
        steps.append(_training_times(s, p, p.training, design, "point").step_s)
    least = min(steps)
    chosen, times = training_step._fastest_plan(s, w, design)
    assert times.step_s == least
    assert chosen is plans[steps.index(least)]
    for p, step in zip(plans, steps, strict=True):
        assert p.training is not None
        below = training_step._times_below(s, p, p.training, design, "point", least)
        assert (below is None) <= (step >= least)
        if below is not None:
            assert below.step_s == step


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    model=st.sampled_from(MODELS),
    gpu=st.sampled_from(GPUS),
    servers=st.integers(min_value=2, max_value=300),
    size_pick=st.integers(min_value=0, max_value=10),
)
def test_the_smaller_size_bound_is_below_every_plan_the_size_can_find(
    model: str, gpu: str, servers: int, size_pick: int
) -> None:
    # plan_search.fewer_gpus_floor_s, from the cluster's scenario, is at most the compute
    # floor of every shape the search of a smaller size enumerates, under every recomputation
    # and the shallowest bubble (fitting in memory or not): each plan it can find has a floor
    # at least that
    s = _scenario(model, gpu, servers)
    sizes = planner._smaller_sizes(s)
    if not sizes:
        return
    gpus = sizes[size_pick % len(sizes)]
    bound = fewer_gpus_floor_s(s, sequence_gpu_seconds(s), gpus)
    level = replace(s, gpus=gpus)
    rows = list(_shape_rows(level))
    for tp, cp, pp, ep, mb, dp, mcount, stages, _ in rows:
        assert tp * cp * pp * dp <= gpus
        for rc in RECOMPUTE_ORDER:
            per_mb = _stage_time_per_microbatch(level, tp, cp, ep, mb, rc, stages, pp)[0]
            assert bound <= mcount * per_mb, (tp, cp, pp, ep, mb, dp, rc)
    # and the bound is close: within 30 % of the least such floor on the 8-GPU servers here
    if rows and s.gpus_per_node == 8 and not s.model.is_moe:
        least = min(
            mcount * _stage_time_per_microbatch(level, tp, cp, ep, mb, "none", stages, pp)[0]
            for tp, cp, pp, ep, mb, dp, mcount, stages, _ in rows
        )
        assert bound >= 0.7 * least


@pytest.mark.parametrize(
    ("model", "gpu", "servers"),
    [
        ("gpt3-175b", "h100-sxm", 128),
        ("llama3-70b", "a100-80gb-sxm", 16),
        ("mixtral-8x7b", "h100-sxm", 32),
        ("llama3-8b", "l40s", 20),
    ],
)
def test_sizes_searched_when_needed_answer_as_every_size_searched(
    model: str, gpu: str, servers: int
) -> None:
    # a design evaluated on a plan whose smaller sizes are searched as the design needs them
    # gets the same metrics, to the bit, as on the same plan with every size searched first
    s = _scenario(model, gpu, servers)
    designs = [
        REFERENCE_DESIGN,
        Design(fabric="roce", nic_gbps=200.0, nics_per_node=2, oversubscription=3.0),
        Design(fabric="ethernet", nic_gbps=25.0, nics_per_node=1),
        Design(fabric="infiniband", nic_gbps=100.0, nics_per_node=1),
    ]
    _clear_planner_caches()
    lazy = plan_workload(s)
    _clear_planner_caches()
    every = plan_workload(s)
    assert every is not lazy
    training_step.all_alternatives(every)
    for design in designs:
        assert evaluate_design(s, lazy, design) == evaluate_design(s, every, design)
    _clear_planner_caches()


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    model=st.sampled_from(MODELS),
    gpu=st.sampled_from(GPUS),
    servers=st.integers(min_value=2, max_value=96),
    fabric=st.sampled_from(("ethernet", "roce", "infiniband")),
    nic_gbps=st.sampled_from((25.0, 100.0, 200.0, 400.0, 800.0)),
    nics=st.sampled_from((1, 2, 4, 8)),
    oversubscription=st.sampled_from((1.0, 2.0, 3.0)),
)
def test_any_design_on_sizes_searched_when_needed_answers_as_every_size_searched(
    model: str,
    gpu: str,
    servers: int,
    fabric: str,
    nic_gbps: float,
    nics: int,
    oversubscription: float,
) -> None:
    # the same check over random clusters and designs, bounds included
    s = _scenario(model, gpu, servers)
    design = Design(
        fabric=fabric, nic_gbps=nic_gbps, nics_per_node=nics, oversubscription=oversubscription
    )
    _clear_planner_caches()
    try:
        lazy = plan_workload(s)
    except ScenarioError:
        return  # the model does not fit this cluster
    _clear_planner_caches()
    every = plan_workload(s)
    training_step.all_alternatives(every)
    assert evaluate_design(s, lazy, design) == evaluate_design(s, every, design)
    _clear_planner_caches()


def test_threads_sharing_a_plan_search_each_size_once_and_answer_alike() -> None:
    # the web's threads share cached plans: designs evaluated at once on one plan, each
    # searching the smaller sizes it needs, answer as on a plan with every size searched
    s = _scenario("llama3-70b", "a100-80gb-sxm", 64)
    designs = [
        Design(fabric=f, nic_gbps=g, nics_per_node=n)
        for f in ("ethernet", "roce")
        for g in (25.0, 100.0)
        for n in (1, 2)
    ]
    _clear_planner_caches()
    every = plan_workload(s)
    training_step.all_alternatives(every)
    expected = [evaluate_design(s, every, d) for d in designs]
    _clear_planner_caches()
    shared = plan_workload(s)
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(lambda d: evaluate_design(s, shared, d), designs))
    assert shared.fewer is not None
    assert shared.memo["floors"][1] > 0  # the slow designs searched smaller sizes
    assert got == expected
    assert [a.plan for a in training_step.all_alternatives(shared)] == [
        a.plan for a in training_step.all_alternatives(every)
    ]
    _clear_planner_caches()
