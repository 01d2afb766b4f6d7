"""Reads: who may see which scenario, and the latest run of each."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import QuerySet

from advisor.scenarios.models import Scenario, ScenarioRun


def user_is_sales(user: Any) -> bool:
    """Sales engineers are staff (or members of the 'sales' group); they see every scenario."""
    if user is None or not user.is_authenticated:
        return False
    return bool(user.is_staff or user.groups.filter(name="sales").exists())


def scenario_list(*, user: Any) -> QuerySet[Scenario]:
    qs = Scenario.objects.select_related("owner").order_by("-created_at")
    if user_is_sales(user):
        return qs
    if user is None or not user.is_authenticated:
        return qs.none()
    return qs.filter(owner=user)


def scenario_get(*, scenario_id: uuid.UUID | str, user: Any) -> Scenario | None:
    """A scenario the user may see. Anonymous owners' scenarios open by their link alone."""
    try:
        scenario = Scenario.objects.select_related("owner").get(pk=scenario_id)
    except (Scenario.DoesNotExist, ValueError, TypeError):
        return None
    if scenario.owner_id is None or user_is_sales(user):
        return scenario
    if user is not None and user.is_authenticated and scenario.owner_id == user.pk:
        return scenario
    return None


def run_latest(*, scenario: Scenario) -> ScenarioRun | None:
    return scenario.runs.order_by("-created_at").first()
