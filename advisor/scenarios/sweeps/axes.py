"""A sweep's axes: read what a person types, validate and complete them (web and API alike).

`normalise_axes` is the one validator: the web form's text goes through `axes_from_text`
and then through it, the API's JSON goes straight to it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings

from advisor.engine.errors import ScenarioError
from advisor.engine.facts.limits import GPUS_MAX
from advisor.engine.facts.vocabulary import FABRIC_IDS
from advisor.engine.input.scenario import Scenario as EngineScenario
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.tools.sweep import (
    AXES,
    MAX_NIC_GBPS,
    MAX_NICS_PER_NODE,
    MAX_OVERSUBSCRIPTION,
    MAX_VALUES_PER_AXIS,
    point_count,
)
from advisor.scenarios.catalog_store import catalog_current

# Axes typed as numbers on the web form (fabrics are ticked).
NUMBER_AXES: tuple[str, ...] = ("servers", "nic_gbps", "nics_per_node", "oversubscription")
WHOLE_NUMBER_AXES = frozenset({"servers", "nics_per_node"})


class InvalidSweep(Exception):
    """The sweep's axes break a rule; `field_errors` maps "axes.<name>" to messages."""

    def __init__(self, field_errors: dict[str, list[str]]) -> None:
        self.field_errors = field_errors
        super().__init__(
            "; ".join(f"{field}: {' '.join(messages)}" for field, messages in field_errors.items())
        )


_RANGE = re.compile(
    r"^\s*(?P<low>[0-9.]+)\s*(?:-|\.\.)\s*(?P<high>[0-9.]+)"
    r"\s*(?:(?:step|:|by|x)\s*(?P<step>[0-9.]+))?\s*$"
)


def scenario_servers(inputs: Any) -> int | None:
    """How many servers the scenario itself has (as the engine sizes it), or None when the
    engine refuses its inputs."""
    try:
        return parse_scenario(inputs, catalog_current()).nodes
    except (ScenarioError, TypeError, AttributeError):
        return None


def parse_axis_text(text: str) -> list[str | float]:
    """Read what a person types for one axis: "2, 4, 8", "1-64 step 1", "2..1024 x2".

    "a-b step s" adds s; "a..b x f" multiplies by f (a geometric series: 1, 2, 4, ...).
    Words (fabric ids) are kept as strings. Raises ValueError naming the part it cannot read.
    """
    values: list[str | float] = []
    for part in (piece.strip() for piece in text.split(",")):
        if not part:
            continue
        match = _RANGE.match(part)
        if match and ("-" in part or ".." in part):
            low, high = float(match["low"]), float(match["high"])
            step = float(match["step"]) if match["step"] else 1.0
            geometric = bool(re.search(r"\bx\s*[0-9.]+\s*$", part))
            if high < low or step <= 0 or (geometric and (step <= 1 or low <= 0)):
                raise ValueError(f"cannot read the range {part!r}")
            value = low
            while value <= high * (1 + 1e-9):
                values.append(round(value, 6))
                if len(values) > MAX_VALUES_PER_AXIS:
                    raise ValueError(f"{part!r} has more than {MAX_VALUES_PER_AXIS} values")
                value = value * step if geometric else value + step
            continue
        try:
            values.append(float(part))
        except ValueError:
            values.append(part.lower())
    return values


def axes_from_text(
    texts: Mapping[str, str], fabrics: Sequence[str]
) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The web form's axes (a text per number axis, the ticked fabrics) as values, and the
    errors of reading them; their rules are checked by `normalise_axes`."""
    axes: dict[str, Any] = {}
    errors: dict[str, list[str]] = {}
    for name in NUMBER_AXES:
        try:
            values = parse_axis_text(texts.get(name, "")[:2000])
        except ValueError as exc:
            errors[f"axes.{name}"] = [str(exc)]
            continue
        if any(isinstance(value, str) for value in values):
            errors[f"axes.{name}"] = ["numbers only, e.g. 2, 4, 8 or 2..64 x2"]
            continue
        axes[name] = [
            int(value) if name in WHOLE_NUMBER_AXES and value == int(value) else value
            for value in values
        ]
    if not fabrics:
        errors["axes.fabric"] = ["pick at least one fabric"]
    axes["fabric"] = list(fabrics)
    return axes, errors


def _numbers(
    errors: dict[str, list[str]],
    name: str,
    raw: Sequence[Any],
    *,
    low: float,
    top: float,
    whole: bool,
) -> list[Any]:
    """The values of one number axis within [low, top] (whole numbers if `whole`); each
    refused value adds a message to errors["axes.<name>"]."""
    kept: list[Any] = []
    for value in raw:
        between = f"between {low:g} and {top:g}"
        number = isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))
        if isinstance(value, bool) or not number or (whole and value != int(value)):
            rule = "a whole number" if whole else f"a number {between}"
            errors.setdefault(f"axes.{name}", []).append(f"{value!r} is not {rule}")
        elif not low <= value <= top:
            rule = between if whole else f"a number {between}"
            errors.setdefault(f"axes.{name}", []).append(f"{value!r} is not {rule}")
        else:
            kept.append(int(value) if whole else float(value))
    return kept


def _unique(values: Sequence[Any]) -> list[Any]:
    return sorted(set(values), key=lambda value: (str(type(value)), value))


def normalise_axes(raw: Any, *, base: EngineScenario) -> dict[str, list[Any]]:
    """Validate the axes and fill the missing ones from the scenario (or its defaults).

    Returns {"servers": [int], "fabric": [str], "nic_gbps": [float], "nics_per_node": [int],
    "oversubscription": [float]}, each sorted and without duplicates. Raises InvalidSweep.
    """
    errors: dict[str, list[str]] = {}
    if not isinstance(raw, dict):
        raise InvalidSweep({"axes": ["must be an object of axis name -> list of values"]})
    for key in raw:
        if key not in AXES:
            errors.setdefault(f"axes.{key}", []).append(f"unknown axis; known: {', '.join(AXES)}")
    design = base.design
    defaults: dict[str, list[Any]] = {
        "servers": [base.nodes],
        "fabric": [design.fabric if design else "roce"],
        "nic_gbps": [design.nic_gbps if design else 400.0],
        "nics_per_node": [design.nics_per_node if design else base.gpus_per_node],
        "oversubscription": [design.oversubscription if design else 1.0],
    }
    axes: dict[str, list[Any]] = {}
    for name in AXES:
        values = raw.get(name)
        if values is None or values == []:
            axes[name] = defaults[name]
            continue
        if not isinstance(values, list):
            errors.setdefault(f"axes.{name}", []).append("must be a list of values")
            continue
        if len(values) > MAX_VALUES_PER_AXIS:
            errors.setdefault(f"axes.{name}", []).append(
                f"has {len(values)} values; at most {MAX_VALUES_PER_AXIS}"
            )
            continue
        if name == "servers":
            # Whole servers of the scenario's size, up to the engine's largest job.
            max_servers = GPUS_MAX // max(1, base.gpus_per_node)
            axes[name] = _numbers(errors, name, values, low=1, top=max_servers, whole=True)
        elif name == "nics_per_node":
            axes[name] = _numbers(errors, name, values, low=1, top=MAX_NICS_PER_NODE, whole=True)
        elif name == "nic_gbps":
            axes[name] = _numbers(errors, name, values, low=1, top=MAX_NIC_GBPS, whole=False)
        elif name == "oversubscription":
            axes[name] = _numbers(
                errors, name, values, low=1, top=MAX_OVERSUBSCRIPTION, whole=False
            )
        else:
            unknown = [value for value in values if value not in FABRIC_IDS]
            if unknown:
                errors.setdefault("axes.fabric", []).append(
                    f"unknown fabric {', '.join(map(repr, unknown))}; "
                    f"known: {', '.join(FABRIC_IDS)}"
                )
            axes[name] = [value for value in values if value in FABRIC_IDS]
    if errors:
        raise InvalidSweep(errors)
    axes = {name: _unique(values) for name, values in axes.items()}
    total = point_count(axes)
    if total > settings.SWEEP_MAX_POINTS:
        raise InvalidSweep(
            {"axes": [f"{total:,} design points; at most {settings.SWEEP_MAX_POINTS:,} per sweep"]}
        )
    return axes
