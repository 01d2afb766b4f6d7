"""A plan's step kept per design and bound (``training_step._Priced`` in the plan's memo):
asked again, in any order and with any bound to beat, it gives what pricing it afresh gives,
the same floats and the same None (a job series prices a smaller size's plan on the same
designs again as an alternative of every larger size's plan)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import Design, Scenario, parse_scenario
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.plans import WorkloadPlan
from advisor.engine.model.training_step import (
    _static,
    _times_below,
    _TrainingTimes,
    all_alternatives,
)


def _scenario(model: str, gpu: str, gpus: int) -> Scenario:
    raw: dict[str, Any] = {"workload": "training", "model": model, "gpu": gpu, "gpus": gpus}
    return parse_scenario(raw, default_catalog())


def _fresh(
    scenario: Scenario, plan: WorkloadPlan, design: Design, bound: str, above: float, factor: float
) -> _TrainingTimes | None:
    """The same question asked of a copy of the plan with nothing kept."""
    copy = dataclasses.replace(plan, memo={})
    assert copy.training is not None
    return _times_below(scenario, copy, copy.training, design, bound, above, factor=factor)


DESIGNS = (
    Design(fabric="infiniband", nic_gbps=400.0, nics_per_node=8, oversubscription=1.0),
    Design(fabric="roce", nic_gbps=200.0, nics_per_node=2, oversubscription=3.0),
    Design(fabric="ethernet", nic_gbps=100.0, nics_per_node=1, oversubscription=2.0),
)


@pytest.mark.parametrize(
    ("model", "gpu", "gpus"),
    [
        ("llama3-70b", "h100-sxm", 1024),
        ("deepseek-v3", "b200", 512),
        ("llama3-8b", "a100-80gb-sxm", 96),
    ],
)
def test_kept_step_answers_as_a_fresh_pricing(model: str, gpu: str, gpus: int) -> None:
    scenario = _scenario(model, gpu, gpus)
    top = plan_workload(scenario)
    plans = [p for p in (top, *all_alternatives(top)) if p.training is not None]
    crossing = 0
    for plan in plans:
        assert plan.training is not None
        st = _static(scenario, plan, plan.training)
        crossing += st.dp_net or st.edp_net
        for design in DESIGNS:
            for bound in ("point", "high"):
                full = _fresh(scenario, plan, design, bound, math.inf, 1.0)
                assert full is not None
                lower = _fresh(scenario, plan, design, bound, full.step_s * (1 - 1e-12), 1.0)
                step = full.step_s
                # bounds to beat on both sides of the step and of its lower bound, asked of
                # one plan object in an order that first keeps the step, then reads it
                aboves = [
                    (math.inf, 1.0), (step, 1.0), (math.nextafter(step, math.inf), 1.0),
                    (step * 0.5, 1.0), (step * 1.02, 1.05), (step * 0.999, 0.99),
                ]  # fmt: skip
                for above, factor in aboves[1:3] + aboves[:1] + aboves[3:]:
                    got = _times_below(
                        scenario, plan, plan.training, design, bound, above, factor=factor
                    )
                    want = _fresh(scenario, plan, design, bound, above, factor)
                    assert got == want, (plan.plan, design, bound, above, factor, lower)
    assert crossing, "no plan whose data-parallel gradients cross the network was checked"
