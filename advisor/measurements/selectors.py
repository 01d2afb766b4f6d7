"""Reads: which measurements a user may see, and the fit a calibrated run uses."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import QuerySet

from advisor.engine.calibration.fabric_fit import FabricFit, fit_measurement
from advisor.engine.calibration.nccl_tests import parse_text
from advisor.engine.facts.catalog import Catalog
from advisor.engine.facts.vocabulary import fabric_label
from advisor.measurements.models import Measurement, RunCalibration
from advisor.scenarios.models import ScenarioRun
from advisor.scenarios.selectors import as_uuid, user_is_sales


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
    pk = as_uuid(measurement_id)
    if pk is None:
        return None
    return measurement_list(user=user).filter(pk=pk).first()


def measurement_fit(*, measurement: Measurement, catalog: Catalog | None = None) -> FabricFit:
    """The fit of a stored measurement, recomputed with the current engine from its text."""
    return fit_measurement(
        parse_text(measurement.text),
        catalog=catalog,
        fabric=measurement_fabric(measurement)
        if measurement.fabric or measurement.transport
        else None,
        nic_gbps=measurement.nic_gbps,
        nics_per_node=measurement.nics_per_node,
    )


def run_calibration_fit(*, run: ScenarioRun, catalog: Catalog | None = None) -> FabricFit | None:
    """The fit a run must be evaluated with, or None for a default run."""
    link = RunCalibration.objects.select_related("measurement").filter(run=run).first()
    if link is None:
        return None
    return measurement_fit(measurement=link.measurement, catalog=catalog)


CALIBRATIONS_LISTED = 20
"""How many of a scenario's calibrated runs its page lists (:func:`scenario_calibrations`)."""


def run_calibration_link(
    *, run: ScenarioRun, scenario_links: list[RunCalibration] | None = None
) -> RunCalibration | None:
    """The run's calibration (with its measurement), or None for a default run.

    ``scenario_links``: the run's scenario's :func:`scenario_calibrations`, when the caller
    has them (the scenario page does): the answer is read from them, without a query, unless
    the list was cut at CALIBRATIONS_LISTED and does not hold the run."""
    if scenario_links is not None:
        for link in scenario_links:
            if link.run_id == run.pk:
                return link
        if len(scenario_links) < CALIBRATIONS_LISTED:
            return None  # the whole list: the run has no calibration
    return RunCalibration.objects.select_related("measurement").filter(run=run).first()


def run_measurement(
    *, run: ScenarioRun, scenario_links: list[RunCalibration] | None = None
) -> Measurement | None:
    link = run_calibration_link(run=run, scenario_links=scenario_links)
    return link.measurement if link else None


DEFAULT_MODEL_LABEL = "Default model (not calibrated with a measurement)"


def run_calibration_label(
    *, run: ScenarioRun | None, scenario_links: list[RunCalibration] | None = None
) -> str:
    """Which answer a page, PDF or CSV shows: the default model's, or "Calibrated with
    “<measurement>” (<its date>)" for a run evaluated with a customer's measurement.
    ``scenario_links``: as for :func:`run_calibration_link`."""
    if run is None:
        return DEFAULT_MODEL_LABEL
    link = run_calibration_link(run=run, scenario_links=scenario_links)
    if link is None:
        return DEFAULT_MODEL_LABEL
    m = link.measurement
    return f"Calibrated with “{m.name}” (measured {m.created_at:%d %B %Y})"


def scenario_calibrations(*, scenario_id: Any) -> list[RunCalibration]:
    """The scenario's calibrated runs, newest first, with their measurement and run (the
    run's status and dates: its large result and error columns stay in the database)."""
    return list(
        RunCalibration.objects.select_related("measurement", "run")
        .defer("run__result", "run__error_fields")
        .filter(run__scenario_id=scenario_id)
        .order_by("-created_at")[:CALIBRATIONS_LISTED]
    )


def measurement_fabric(m: Measurement) -> str | None:
    """The fabric class a measurement was made on: declared, its transport's, or the fit's."""
    from advisor.measurements.models import TRANSPORTS

    if m.fabric:
        return m.fabric
    if m.transport in TRANSPORTS:
        return TRANSPORTS[m.transport][1]
    hardware = (m.fit or {}).get("hardware") or {}
    fabric = hardware.get("fabric")
    return str(fabric) if fabric else None


def measurements_for_scenario(
    *, user: Any, gpu_id: str | None, fabric: str | None
) -> list[tuple[Measurement, bool, str]]:
    """The user's measurements for a scenario's picker: those of the scenario's GPU and
    fabric first (`matches`), each with a note saying how it differs when it does not."""
    out: list[tuple[int, int, Measurement, bool, str]] = []
    for i, m in enumerate(measurement_list(user=user)[:50]):
        m_gpu = (m.fit or {}).get("gpu_id")
        m_fabric = measurement_fabric(m)
        notes = []
        if gpu_id and m_gpu and m_gpu != gpu_id:
            notes.append(f"measured on {(m.fit or {}).get('gpu_name') or m_gpu}")
        if fabric and m_fabric and m_fabric != fabric:
            notes.append(f"{fabric_label(m_fabric)} fabric")
        unknown = not m_gpu
        rank = len(notes) * 2 + (1 if unknown else 0)
        out.append((rank, i, m, not notes and not unknown, ", ".join(notes)))
    out.sort(key=lambda row: (row[0], row[1]))
    return [(m, matches, note) for _rank, _i, m, matches, note in out]


POOR_FIT_RMS_PCT = 25.0
"""A fit whose points miss the measurement by more than this (root mean square) is stated as
poor: repeated nccl-tests runs on one cluster vary by a few percent, so a quarter off means
the model's shape does not describe this cluster (another transport, congestion, a fault)."""

_TERM_PLACE = {"network": "between servers", "scaleup": "inside one server"}


def calibration_warnings(*, fit: dict[str, Any]) -> list[str]:
    """What a calibrated run must say about its fit: ratios the calibration capped, and terms
    that fit the measurement poorly (the engine's own fit warnings come with them)."""
    if not fit:
        return []
    parsed = FabricFit.from_dict(fit)
    applied = parsed.calibration()
    out: list[str] = []
    for term, used in (
        (parsed.network, applied.net_bandwidth_scale),
        (parsed.scaleup, applied.scaleup_bandwidth_scale),
    ):
        if term is None:
            continue
        place = _TERM_PLACE.get(term.kind, term.kind)
        raw = term.bandwidth_scale
        if term.bandwidth_identified and abs(raw - used) > 0.005 * max(raw, used):
            out.append(
                f"Measured bandwidth {place} is {_times(raw)} the default model's; the "
                f"calibration uses {_times(used)} (its limit), so the calibrated answer "
                "understates the difference. A ratio this far off usually means the "
                "measurement is of another machine or fabric: check it before relying on it."
            )
        if term.rms_residual_pct > POOR_FIT_RMS_PCT:
            out.append(
                f"The fit {place} misses the measured points by {term.rms_residual_pct:.0f} % "
                f"(root mean square; the default model missed them by "
                f"{term.default_rms_residual_pct:.0f} %): treat the calibrated numbers with care."
            )
    out.extend(str(w) for w in fit.get("warnings") or ())
    return out


def _times(ratio: float) -> str:
    return f"{ratio:.2f} times" if ratio < 10 else f"{ratio:,.0f} times"
