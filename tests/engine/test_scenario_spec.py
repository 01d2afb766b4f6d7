"""Scenario v1 is described once (advisor.engine.input.spec): every key the parser accepts is
described, every described key is accepted, and every stated default is the parser's."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.echo import scenario_echo
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.input.spec import FIELDS, scenario_json_schema, scenario_paths

CATALOG = default_catalog()
MINIMAL = {"model": "llama3-70b", "gpu": "h100-sxm", "gpus": 64}


def test_every_key_the_parser_accepts_is_described_and_nothing_else() -> None:
    assert scenario_paths() == set(FIELDS)


def _sample(path: str, schema: dict[str, Any]) -> Any:
    if "enum" in schema:
        return schema["enum"][-1]
    if schema.get("type") == "boolean":
        return True
    if schema.get("type") in ("integer", "number"):
        return schema.get("minimum", 1) or 1
    return "x"


def _leaves(schema: dict[str, Any], prefix: str = "") -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, field in (schema.get("properties") or {}).items():
        path = f"{prefix}{name}"
        if field.get("type") == "object":
            out.update(_leaves(field, f"{path}."))
        elif "oneOf" in field:
            for alternative in field["oneOf"]:
                out.update(_leaves(alternative, f"{path}."))
        else:
            out[path] = field
    return out


def _with(path: str, value: Any) -> dict[str, Any]:
    workload = "inference" if path.startswith("inference") else "training"
    raw: dict[str, Any] = {"workload": workload, **MINIMAL}
    node = raw
    *parents, leaf = path.split(".")
    for key in parents:
        node = node.setdefault(key, {}) if isinstance(node.get(key), dict | None) else {}
    node[leaf] = value
    return raw


@pytest.mark.parametrize("path", sorted(_leaves(scenario_json_schema())))
def test_every_published_field_is_one_the_parser_knows(path: str) -> None:
    schema = _leaves(scenario_json_schema())[path]
    try:
        parse_scenario(_with(path, _sample(path, schema)), CATALOG)
    except ScenarioError as exc:
        unknown = {k: v for k, v in exc.field_errors.items() if "unknown field" in v}
        assert not unknown, unknown


@pytest.mark.parametrize("workload", ["training", "inference"])
def test_every_stated_default_is_the_parsers(workload: str) -> None:
    # a serving scenario states its retrieval pipeline too (an empty rag: every default)
    rag = {"rag": {}} if workload == "inference" else {}
    parsed = scenario_echo(
        parse_scenario({"workload": workload, **MINIMAL, **rag}, CATALOG)
    ).to_dict()
    checked = 0
    for path, field in _leaves(scenario_json_schema()).items():
        if "default" not in field or path.startswith(("model.", "design.")):
            continue
        if path.split(".")[0] in ("training", "inference") and not path.startswith(workload):
            continue
        if path.startswith("rag.") and not rag:
            continue
        node: Any = parsed
        for key in path.split("."):
            node = node.get(key) if isinstance(node, dict) else None
        if path == "training.global_batch_tokens":
            continue  # stated as the default; the parser rounds it to whole sequences
        assert node == field["default"], path
        checked += 1
    assert checked >= 8


def test_design_defaults_are_the_parsers() -> None:
    parsed = scenario_echo(
        parse_scenario({"workload": "training", **MINIMAL, "design": {"fabric": "roce"}}, CATALOG)
    ).to_dict()["design"]
    for path, field in _leaves(scenario_json_schema()).items():
        if path.startswith("design.") and "default" in field:
            assert parsed[path.split(".")[1]] == field["default"], path
