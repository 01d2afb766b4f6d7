"""The front page's real answer: the wizard's own answers, through the wizard's own engine call.

The answers are the questionnaire's defaults with the few changes listed here, turned into
scenario v1 by the same `answers_to_inputs` and evaluated by the same `evaluate_inputs` as a
submitted scenario; the page lists every input the engine used (defaults included), so
entering them in the wizard gives the same answer. Cached per catalog and engine version.
"""

from __future__ import annotations

from typing import Any

from django.core.cache import cache

from advisor.engine import ENGINE_VERSION
from advisor.engine.facts.formatting import percent, usd_compact
from advisor.engine.facts.vocabulary import ETHERNET, fabric_label
from advisor.reports import presenters
from advisor.scenarios.catalog_store import catalog_current
from advisor.scenarios.engine_calls import InvalidScenario, evaluate_inputs
from frontend import questionnaire as qn

# What differs from the questionnaire's defaults (the rest is shown on the page too).
EXAMPLE_CHANGES: dict[str, str] = {
    "workload": "training",
    "scale": "many",
    "model_choice": "llama3-70b",
    "gpu": "h100-sxm",
    "gpus": "512",
    "team_skills": "ethernet",
}
CACHE_S = 7 * 24 * 3600


def example_answers() -> dict[str, str]:
    steps = qn.build_steps(catalog_current())
    return {**qn.default_answers(steps), **EXAMPLE_CHANGES}


def _compute() -> dict[str, Any] | None:
    catalog = catalog_current()
    answers = example_answers()
    try:
        inputs = qn.answers_to_inputs(answers, catalog)
        result = evaluate_inputs(inputs, catalog=catalog)
    except InvalidScenario:
        return None
    rec = result.recommendation
    cost = result.cost
    # Against the best standard-Ethernet design, on the cost the engine ranked designs by.
    chosen, basis = presenters.decision_cost(cost)
    ethernet = [presenters.decision_cost(o.cost)[0] for o in result.options if o.fabric == ETHERNET]
    saving = min(ethernet) - chosen if ethernet and rec.fabric != ETHERNET else 0.0
    idle = float(result.metrics.gpu_idle_fraction or 0)
    names = {g.id: g.name for g in catalog.gpus}
    return {
        "title": (
            f"{fabric_label(rec.fabric)} · "
            f"{rec.nics_per_node} × {rec.nic_gbps}G per server · "
            f"{presenters.topology_text(rec).split(',')[0]}"
        ),
        "inputs": presenters.input_summary(result, names),
        "costs": presenters.cost_figures(cost)["rows"],
        "idle": percent(idle, digits=1),
        "saving": usd_compact(saving) if saving > 0 else "",
        "saving_basis": basis.lower(),
        "saving_against": fabric_label(ETHERNET),
        "catalog_version": catalog.version,
        "engine_version": ENGINE_VERSION,
    }


def home_example() -> dict[str, Any] | None:
    """The example's figures, computed once per catalog and engine version."""
    key = f"frontend:home-example:v2:{catalog_current().version}:{ENGINE_VERSION}"
    found = cache.get(key)
    if found is None:
        found = _compute() or {}
        cache.set(key, found, CACHE_S)
    return found or None
