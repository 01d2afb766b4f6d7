"""Reads: which measurements a user may see, and the fit a calibrated run uses."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import QuerySet

from advisor.engine.calibration.fabric_fit import FabricFit, fit_measurement
from advisor.engine.calibration.nccl_tests import parse_text
from advisor.engine.facts.catalog import Catalog
from advisor.measurements.models import Measurement, RunCalibration
from advisor.scenarios.models import ScenarioRun
from advisor.scenarios.selectors import user_is_sales


def measurement_list(*, user: Any, customer: str | None = None) -> QuerySet[Measurement]:
    """Own measurements; sales engineers (staff or the sales group) see every one."""
    qs = Measurement.objects.select_related("owner").order_by("-created_at")
    if user is None or not user.is_authenticated:
        return qs.none()
    if not user_is_sales(user):
        qs = qs.filter(owner=user)
    if customer:
        qs = qs.filter(customer=customer)
    return qs


def measurement_get(*, user: Any, measurement_id: uuid.UUID | str) -> Measurement | None:
    try:
        return measurement_list(user=user).filter(pk=measurement_id).first()
    except (ValueError, TypeError):
        return None


def measurement_fit(*, measurement: Measurement, catalog: Catalog | None = None) -> FabricFit:
    """The fit of a stored measurement, recomputed with the current engine from its text."""
    return fit_measurement(
        parse_text(measurement.text),
        catalog=catalog,
        fabric=measurement.fabric or None,
        nic_gbps=measurement.nic_gbps,
        nics_per_node=measurement.nics_per_node,
    )


def run_calibration_fit(*, run: ScenarioRun, catalog: Catalog | None = None) -> FabricFit | None:
    """The fit a run must be evaluated with, or None for a default run."""
    link = RunCalibration.objects.select_related("measurement").filter(run=run).first()
    if link is None:
        return None
    return measurement_fit(measurement=link.measurement, catalog=catalog)


def run_measurement(*, run: ScenarioRun) -> Measurement | None:
    link = RunCalibration.objects.select_related("measurement").filter(run=run).first()
    return link.measurement if link else None
