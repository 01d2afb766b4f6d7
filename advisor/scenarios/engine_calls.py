"""Calls into the pure engine from Django: evaluate and validate scenario inputs.

Engine errors become InvalidScenario, which names each field and rule.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from advisor import engine
from advisor.engine.calibration.fabric_fit import FabricFit
from advisor.engine.facts.catalog import Catalog, default_catalog
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model.planner import check_workload
from advisor.engine.result.records import EngineResult

logger = logging.getLogger(__name__)


class InvalidScenario(Exception):
    """The inputs break a rule of scenario v1; `field_errors` names each field and rule."""

    def __init__(self, field_errors: dict[str, list[str]]) -> None:
        self.field_errors = field_errors
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in field_errors.items()))


def evaluate_inputs(
    inputs: dict[str, Any],
    *,
    catalog: Catalog | None = None,
    progress: Callable[[int], None] | None = None,
    calibration: FabricFit | None = None,
) -> EngineResult:
    """Run the engine on scenario v1 inputs; bad inputs raise InvalidScenario.

    Returns the typed result; :func:`advisor.scenarios.results.result_json` is the JSON a run
    stores and the API serves. ``calibration``: a customer's nccl-tests fit
    (advisor.measurements) to evaluate with.
    """
    try:
        result = engine.evaluate_typed(
            inputs, catalog=catalog or default_catalog(), progress=progress, calibration=calibration
        )
    except engine.ScenarioError as exc:
        raise InvalidScenario(exc.field_errors) from exc
    return result


WARM_UP_SCENARIO: dict[str, Any] = {
    "workload": "training",
    "model": "llama3-8b",
    "gpu": "h100-sxm",
    "gpus": 8,
}
"""A small scenario a fresh process evaluates once at start (:func:`warm_up`)."""


def warm_up() -> None:
    """Pay the engine's process constants at start instead of in a first request: the
    built-in catalog, the model-error residuals behind every answer's bounds (the
    calibration rows run through the model, ~0.1-0.2 s) and the engine's lazy imports.
    Called by the web server (advisor/wsgi.py) and by each Celery worker process
    (advisor/celery.py); never fails the start (a failure is logged)."""
    try:
        engine.evaluate(WARM_UP_SCENARIO, catalog=default_catalog())
    except Exception:  # a warm-up never stops a server from starting
        logger.exception("engine warm-up failed")


def validate_inputs(inputs: Any, *, catalog: Catalog | None = None) -> None:
    """Check inputs without the full evaluation: parse them and check that the workload can
    be planned (the errors planning would raise; a searched training plan is not planned
    here, the worker plans it: :func:`advisor.engine.model.planner.check_workload`)."""
    if not isinstance(inputs, dict):
        raise InvalidScenario({"inputs": ["must be a JSON object (scenario v1)"]})
    try:
        check_workload(parse_scenario(inputs, catalog or default_catalog()))
    except engine.ScenarioError as exc:
        raise InvalidScenario(exc.field_errors) from exc
