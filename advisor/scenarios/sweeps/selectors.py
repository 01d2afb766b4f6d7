"""Reads of sweeps: who may see one, and the design points evaluated so far."""

from __future__ import annotations

import uuid
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from advisor.engine.tools.sweep import SweepPoint
from advisor.scenarios.models import RunStatus, Scenario, Sweep
from advisor.scenarios.selectors import scenario_get


def sweeps_of(scenarios: QuerySet[Scenario]) -> QuerySet[Sweep]:
    """The sweeps of these scenarios, newest first (the web and the API list them so)."""
    return Sweep.objects.filter(scenario__in=scenarios.values("pk")).order_by("-created_at", "-pk")


def sweep_get(*, sweep_id: uuid.UUID | str, user: Any) -> Sweep | None:
    """A sweep `user` may see: the rule of its scenario (advisor.scenarios.selectors)."""
    try:
        sweep = Sweep.objects.select_related("scenario").get(pk=sweep_id)
    except (Sweep.DoesNotExist, ValueError, TypeError, ValidationError):
        return None
    if scenario_get(scenario_id=sweep.scenario_id, user=user) is None:
        return None
    return sweep


def unpack_rows(packed: dict[str, Any] | None) -> list[SweepPoint]:
    """A chunk's points from {"columns": [...], "rows": [[...], ...]} (services.pack_rows)."""
    if not packed:
        return []
    columns = packed.get("columns") or []
    return [
        SweepPoint.from_dict(dict(zip(columns, values, strict=True)))
        for values in packed.get("rows") or []
    ]


def sweep_results(sweep: Sweep) -> list[SweepPoint]:
    """Every evaluated design point, in point order (the chunks that succeeded so far)."""
    rows: list[SweepPoint] = []
    for results in (
        sweep.chunks.filter(status=RunStatus.SUCCEEDED)
        .order_by("index")
        .values_list("results", flat=True)
    ):
        rows.extend(unpack_rows(results))
    return rows
