"""The boundary where engine results are stored and served: the one place that turns the
typed result (:class:`advisor.engine.result.records.EngineResult`) into the JSON a run stores
and the API serves, and a stored run's JSON back into the typed result the pages read.

- Stored: ``ScenarioRun.result`` holds :func:`result_json` of the typed result (the JSON of
  docs/ENGINE_API.md, "Result (output)").
- Read: :func:`stored_result` (pages, PDF, CSV, the API's BOM) parses it once per run object;
  results stored by older engine versions load with defaults for keys added since.
- Served: :func:`served_result` is what the API returns as ``result``: the stored JSON read
  through the types and written back, so its shape is today's whatever version stored it.
"""

from __future__ import annotations

from typing import Any

from advisor.engine.result.records import (
    Cost,
    EngineResult,
    Recommendation,
    ResultFormatError,
)
from advisor.scenarios.models import ScenarioRun

_CACHE_ATTR = "_typed_result"

UNREADABLE_MESSAGE = "This result cannot be read; compute it again."
# What reading a damaged stored result raises (a wrong-typed or missing part).
READ_ERRORS = (ResultFormatError, TypeError, ValueError, KeyError, AttributeError)


class UnreadableResult(Exception):
    """A run's stored result cannot be read (damaged, or written by a broken engine): its
    pages and the API say so and offer to compute it again, instead of failing with a 500."""

    def __init__(self, run: ScenarioRun) -> None:
        self.run_id = run.pk
        self.scenario_id = run.scenario_id
        super().__init__(UNREADABLE_MESSAGE)


def result_json(result: EngineResult) -> dict[str, Any]:
    """The JSON a run stores and the API serves (``EngineResult.to_dict``)."""
    return result.to_dict()


def result_from_json(data: dict[str, Any]) -> EngineResult:
    """A stored result's JSON as the typed result (missing newer keys take defaults)."""
    return EngineResult.from_dict(data)


def stored_result(run: ScenarioRun | None) -> EngineResult | None:
    """The run's stored result, typed; None while the run has none. Parsed once per run
    object (the results page, its charts and its PDF read the same object)."""
    if run is None or not isinstance(run.result, dict) or not run.result:
        return None
    cached = run.__dict__.get(_CACHE_ATTR)
    if cached is not None and cached[0] is run.result:
        return cached[1]  # type: ignore[no-any-return]
    try:
        typed = result_from_json(run.result)
    except READ_ERRORS as exc:
        raise UnreadableResult(run) from exc
    run.__dict__[_CACHE_ATTR] = (run.result, typed)
    return typed


def stored_summary(run: ScenarioRun | None) -> tuple[Recommendation, Cost] | None:
    """The recommendation and cost of a run's stored result, without reading the rest (the
    scenario list shows these for up to 200 runs; the whole result takes ~7 ms to read).
    Raises UnreadableResult when they cannot be read."""
    if run is None or not isinstance(run.result, dict) or not run.result:
        return None
    typed = run.__dict__.get(_CACHE_ATTR)
    if typed is not None and typed[0] is run.result:
        return typed[1].recommendation, typed[1].cost
    try:
        return (
            Recommendation.from_dict(run.result.get("recommendation")),
            Cost.from_dict(run.result.get("cost")),
        )
    except READ_ERRORS as exc:
        raise UnreadableResult(run) from exc


def served_result(run: ScenarioRun | None) -> dict[str, Any] | None:
    """The result the API serves for a run (None while it has none)."""
    typed = stored_result(run)
    return result_json(typed) if typed is not None else None
