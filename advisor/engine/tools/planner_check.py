"""The planner against the plans published runs used (docs/MODEL.md 5.3, "Planner against the
sources").

Each published training row that gives its own plan (Megatron-LM, Korthikanti, MLPerf, NeMo,
Llama 3, DeepSeek-V3) is priced twice on its own design: with the source's plan, and with the
planner's plan for the same job (the row's settings the planner does not search, such as FP8
weight gathering, kept, and the MoE dispatcher and all-to-all overlap the source's plan ran:
the row's, or Megatron-Core's defaults where it is silent, :func:`plans.moe_software`).  A
planner that searches well is never much slower than the source's plan by the engine's own
model; it may be faster, since it optimises the model it is priced by.  This checks the
search, not the model's accuracy (``validate`` does that).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.numbers import finite as num
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model.performance import evaluate_design
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.plans import moe_software
from advisor.engine.tools.validation import calibration_rows, run_design, training_scenario

PLANNER_CHOOSES: frozenset[str] = frozenset(
    {"tp", "pp", "cp", "dp", "ep", "virtual_stages", "micro_batch", "recompute", "zero"}
)
"""The ``parallelism`` keys the planner searches; the row's other keys are kept."""


@dataclass(frozen=True)
class PlannerAgainstSource:
    row_id: str
    source_step_s: float
    planner_step_s: float
    planner_plan: str

    @property
    def ratio(self) -> float:
        """The planner's step over the source's (above 1: the planner's plan is slower)."""
        return self.planner_step_s / self.source_step_s


def rows_with_plans() -> list[dict[str, Any]]:
    """The training rows whose source gives its tensor or pipeline parallelism."""
    out = []
    for row in calibration_rows():
        if row.get("kind") != "training":
            continue
        plan = row.get("config", {}).get("parallelism") or {}
        if plan.get("tp") or plan.get("pp"):
            out.append(row)
    return out


def compare(row: dict[str, Any]) -> PlannerAgainstSource:
    """The row's step with its source's plan and with the planner's, on the row's design."""
    catalog = default_catalog()
    given = training_scenario(row)
    source = parse_scenario(given, catalog)
    design = run_design(source)
    source_metrics = evaluate_design(source, plan_workload(source), design, bounds=False)
    source_step = num(source_metrics.step_time_s)
    free = copy.deepcopy(given)
    free["parallelism"] = {
        k: v for k, v in given["parallelism"].items() if k not in PLANNER_CHOOSES
    }
    # like with like: the MoE stack the source's plan was priced with, not the planner's own
    software = moe_software(source)
    free["parallelism"].setdefault("moe_dispatcher", software.dispatcher)
    free["parallelism"].setdefault("ep_overlap", software.overlap)
    planned = parse_scenario(free, catalog)
    workload = plan_workload(planned)
    planner_step = num(evaluate_design(planned, workload, design, bounds=False).step_time_s)
    p = workload.plan
    shape = (
        f"tp{p.tp} pp{p.pp} cp{p.cp} dp{p.dp} ep{p.ep} vp{p.virtual_stages} "
        f"mb{p.micro_batch} {p.recompute} {p.sharding}"
    )
    return PlannerAgainstSource(row["id"], source_step, planner_step, shape)
