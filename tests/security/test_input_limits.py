"""Issue 12, findings on unbounded input: every number in a scenario has a finite range,
checked before any planning, by the engine's parser and so by every path that reaches it
(the API, the questionnaire, sweeps); an engine call inside a request has a wall-time limit.

Findings covered here:
- `"gpus": 8000000000000000` answered 413 after 38 s (planning ran during validation);
- `"gpus": 1e308` never returned;
- `gpu_hour_usd=1e308` and `nic_gbps=1e-300` passed validation and failed in the engine;
- no wall-time limit on engine calls made inside a request.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from advisor.engine.errors import ScenarioError
from advisor.engine.facts import limits
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.limits import LIMITS, limit_errors
from advisor.engine.input.scenario import parse_scenario
from advisor.scenarios.models import RunStatus, ScenarioRun
from advisor.scenarios.services import scenario_submit
from advisor.scenarios.timelimit import Deadline, EvaluationTimeout, wall_time_limit
from api.serializers import SCENARIO_V1_SCHEMA
from tests.api.conftest import Caller, token_caller

BASE: dict[str, Any] = {
    "workload": "training",
    "model": "llama3-8b",
    "gpu": "h100-sxm",
    "gpus": 16,
}


def with_value(path: str, value: Any, base: dict[str, Any] | None = None) -> dict[str, Any]:
    raw: dict[str, Any] = {**(base or BASE)}
    parts = path.split(".")
    if parts[0] == "model":
        raw["model"] = {"params_b": 8, "layers": 32, "hidden": 4096, "heads": 32}
    if parts[0] == "design":
        raw["design"] = {"fabric": "roce"}
    if parts[0] == "inference":
        raw["workload"] = "inference"
    node = raw
    for part in parts[:-1]:
        node[part] = dict(node.get(part) or {})
        node = node[part]
    node[parts[-1]] = value
    return raw


@pytest.fixture
def client_a(db: None) -> Caller:
    """A quoting system with its own token."""
    return token_caller("quotes-a")


def errors_of(raw: dict[str, Any]) -> dict[str, list[str]]:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(raw, default_catalog())
    return info.value.field_errors


# --- The engine's parser: one set of limits -------------------------------------------------


@pytest.mark.parametrize("path", sorted(LIMITS))
def test_every_limited_field_refuses_a_value_above_its_range(path: str) -> None:
    limit = LIMITS[path]
    too_big = limit.high * 2 if limit.high else 1
    errors = errors_of(with_value(path, int(too_big) if limit.integer else too_big))
    assert path in errors
    assert errors[path] == [f"must be {limit.describe()}"]


@pytest.mark.parametrize("path", sorted(LIMITS))
@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_every_limited_field_refuses_non_finite_numbers(path: str, value: float) -> None:
    errors = errors_of(with_value(path, value))
    assert any("finite" in message for message in errors[path])


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("gpus", 8_000_000_000_000_000),
        ("gpus", 1e308),
        ("gpus", 10**400),  # JSON integers have no size limit in Python
        ("constraints.gpu_hour_usd", 1e308),
        ("design.nic_gbps", 1e-300),
        ("training.total_tokens", 1e300),
        ("sequence_length", -(10**400)),
    ],
)
def test_the_reported_values_are_refused_naming_the_field(path: str, value: Any) -> None:
    errors = errors_of(with_value(path, value))
    assert path in errors


def test_the_limits_run_before_any_other_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """A value out of range never reaches the parsers of its section, nor the planner."""
    import advisor.engine.input.scenario as scenario_module

    def must_not_run(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("parsed an out-of-range value")

    monkeypatch.setattr(scenario_module, "_positive_int", must_not_run)
    with pytest.raises(ScenarioError) as info:
        # The second parse (without the refused field) finds gpus missing: never reported.
        parse_scenario(with_value("gpus", 1e308), default_catalog())
    assert list(info.value.field_errors) == ["gpus"]


def test_other_problems_are_still_listed_with_a_range_error() -> None:
    raw = with_value("gpus", 1e308)
    raw["gpu"] = "h999"
    errors = errors_of(raw)
    assert set(errors) == {"gpus", "gpu"}


def test_numbers_in_fields_without_a_limit_must_still_be_finite_and_bounded() -> None:
    assert limit_errors({**BASE, "version": float("inf")}) == {
        "version": ["must be a finite number"]
    }
    assert limit_errors({**BASE, "version": 10**30}) == {
        "version": [f"must be at most {limits.ANY_NUMBER_MAX:g} in magnitude"]
    }


def test_deep_nesting_is_refused_without_recursing_into_it() -> None:
    deep: Any = 1
    for _ in range(100_000):
        deep = {"a": deep}
    errors = limit_errors({**BASE, "name": deep})
    assert any("nested more than" in m for msgs in errors.values() for m in msgs)


def test_values_inside_the_ranges_still_parse() -> None:
    for path, limit in LIMITS.items():
        if path.startswith(("parallelism.", "model.moe", "model.kv_heads", "gpus_per_node")):
            continue  # these must also fit the rest of the scenario; covered by engine tests
        value: Any = int(limit.high) if limit.integer else limit.high
        if path == "gpus":
            value = 8 * 16_384
        limit_problems = limit_errors(with_value(path, value))
        assert limit_problems == {}, path


def test_every_number_the_api_documents_has_a_limit() -> None:
    """The API schema and the engine share one set of limits: no number left unbounded."""

    def numeric(schema: dict[str, Any], prefix: str = "") -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        for alternative in schema.get("oneOf", ()):
            found.update(numeric(alternative, prefix))
        for name, field in (schema.get("properties") or {}).items():
            path = f"{prefix}{name}"
            if field.get("type") == "object" or "oneOf" in field:
                found.update(numeric(field, f"{path}."))
            elif field.get("type") in ("integer", "number") and "enum" not in field:
                found[path] = field
        return found

    paths = {p: f for p, f in numeric(SCENARIO_V1_SCHEMA).items() if p != "version"}
    assert len(paths) > 40
    for path, field in paths.items():
        if path == "constraints.utilization":
            assert (field["minimum"], field["maximum"]) == (0, 1)  # (0, 1], checked by the engine
            continue
        assert path in LIMITS, path
        assert field["maximum"] == LIMITS[path].high, path
        assert field["minimum"] == LIMITS[path].low, path


# --- The API: a 400 naming the field, never minutes of CPU ----------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("gpus", 8_000_000_000_000_000),
        ("gpus", 1e308),
        ("constraints.gpu_hour_usd", 1e308),
        ("design.nic_gbps", 1e-300),
    ],
)
def test_evaluate_answers_400_naming_the_field_without_planning(
    client_a: Caller, monkeypatch: pytest.MonkeyPatch, path: str, value: Any
) -> None:
    from advisor.engine.model import planner

    def must_not_plan(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("planned an out-of-range scenario")

    monkeypatch.setattr(planner, "plan_workload", must_not_plan)
    response = client_a.http.post(
        "/api/v1/evaluate/", {"inputs": with_value(path, value)}, format="json"
    )
    assert response.status_code == 400
    body = response.json()["error"]
    assert body["code"] == "validation_error"
    assert f"inputs.{path}" in body["fields"]


@pytest.mark.django_db
def test_submitting_an_out_of_range_scenario_is_refused_and_saves_nothing(
    client_a: Caller,
) -> None:
    response = client_a.http.post(
        "/api/v1/scenarios/",
        {"name": "huge", "inputs": with_value("gpus", 8_000_000_000_000_000)},
        format="json",
    )
    assert response.status_code == 400
    assert "inputs.gpus" in response.json()["error"]["fields"]
    assert ScenarioRun.objects.count() == 0


@pytest.mark.django_db
def test_a_large_but_valid_cluster_still_gets_the_413_for_the_async_path(
    client_a: Caller,
) -> None:
    response = client_a.http.post(
        "/api/v1/evaluate/", {"inputs": with_value("gpus", 1024)}, format="json"
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "too_large_for_sync"


# --- Wall time of engine calls inside a request ---------------------------------------------


def spin_forever(*args: Any, **kwargs: Any) -> Any:
    """An evaluation that never ends and never reports progress (like planning 1e308 GPUs)."""
    while True:
        time.monotonic()


@pytest.mark.django_db
def test_evaluate_stops_an_endless_evaluation_with_a_clear_error(
    client_a: Caller, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    from advisor import engine

    settings.ENGINE_IN_REQUEST_TIME_LIMIT_S = 1
    monkeypatch.setattr(engine, "evaluate_typed", spin_forever)  # what the shell calls
    response = client_a.http.post("/api/v1/evaluate/", {"inputs": BASE}, format="json")
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "evaluation_timeout"
    assert "longer than the 1 s" in error["message"]


@pytest.mark.django_db
def test_an_embedded_run_that_never_ends_fails_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from advisor import engine

    settings.ENGINE_IN_REQUEST_TIME_LIMIT_S = 1
    settings.CELERY_TASK_ALWAYS_EAGER = True
    monkeypatch.setattr(engine, "evaluate_typed", spin_forever)  # what the shell calls
    with django_capture_on_commit_callbacks(execute=True):
        run = scenario_submit(name="endless", inputs=BASE)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "longer than the 1 s a web process allows" in run.error


def test_outside_the_main_thread_the_limit_holds_at_each_progress_report() -> None:
    import threading

    outcome: list[BaseException] = []

    def evaluate() -> None:
        try:
            with wall_time_limit(0.05) as deadline:
                report = deadline.progress(None)
                while True:
                    report(1)
        except EvaluationTimeout as exc:
            outcome.append(exc)

    thread = threading.Thread(target=evaluate)
    thread.start()
    thread.join(timeout=30)
    assert outcome and isinstance(outcome[0], EvaluationTimeout)


def test_a_deadline_that_has_passed_refuses_the_next_report() -> None:
    deadline = Deadline(0)
    with pytest.raises(EvaluationTimeout):
        deadline.progress(None)(50)


# --- Sweeps: the same limits on every axis ---------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("axis", "value", "message"),
    [
        ("servers", float("inf"), "inf is not a whole number"),
        ("servers", 1e309, "inf is not a whole number"),
        ("servers", 16_385, "16385 is not between 1 and 16384"),  # 8 GPUs each > GPUS_MAX
        ("nic_gbps", 1e-300, "1e-300 is not a number between 1 and 3200"),
        ("nics_per_node", 10**400, "is not between 1 and 32"),
    ],
)
def test_a_sweep_axis_outside_the_engine_limits_is_refused(
    axis: str, value: Any, message: str
) -> None:
    from advisor.scenarios.sweeps.axes import InvalidSweep
    from advisor.scenarios.sweeps.services import sweep_create

    run = scenario_submit(name="base", inputs={**BASE, "gpus_per_node": 8})
    with pytest.raises(InvalidSweep) as refused:
        sweep_create(scenario=run.scenario, axes={axis: [value]})
    assert any(message in m for m in refused.value.field_errors[f"axes.{axis}"])
