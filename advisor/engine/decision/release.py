"""The publisher's smaller release as what would meet a serving answer's targets (docs/MODEL.md
15.2, "The publisher's smaller release as a remedy"): where a 16-bit answer falls short and the
publisher releases the model in a smaller format the GPU runs (Meta's FP8 Llama 3.1 405B on
H200), the headline names that release beside more servers, with what it serves within the
targets on the same servers and design."""

from __future__ import annotations

import dataclasses

from advisor.engine.decision.candidates import Candidate
from advisor.engine.decision.job_facts import JobFacts, ReleaseServed
from advisor.engine.decision.prose import serving_shortfall
from advisor.engine.decision.scaling import design_of
from advisor.engine.errors import ScenarioError
from advisor.engine.input.scenario import Scenario
from advisor.engine.model.performance import evaluate_design
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.plans import as_planned
from advisor.engine.result.records import Metrics


def with_release_rate(s: Scenario, facts: JobFacts, cand: Candidate, metrics: Metrics) -> JobFacts:
    """``facts`` with ``ServingAsk.release_served``: the requests/s the publisher's smaller release
    (``ServingAsk.release``) serves within both p95 targets when the scenario is planned in that
    format on the same servers (the engine's own deployment for it) and run on ``cand``, the
    design the answer recommends, and whether that deployment needs a compute fabric.
    Unchanged where the answer meets its targets, there is no such release, or the release
    cannot be planned on these servers."""
    ask = facts.serving
    if ask is None or not ask.release or not serving_shortfall(facts, metrics):
        return facts
    released = as_planned(dataclasses.replace(s, precision=ask.release))
    try:
        plan = plan_workload(released)
    except ScenarioError:
        return facts
    served = evaluate_design(released, plan, design_of(cand))
    release = ReleaseServed(
        rate=float(served.max_requests_per_s_at_target or 0.0),
        needs_fabric=plan.needs_compute_fabric,
    )
    return dataclasses.replace(facts, serving=dataclasses.replace(ask, release_served=release))
