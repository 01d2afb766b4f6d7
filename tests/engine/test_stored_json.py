"""JSON the engine stores and reads back by hand (a measurement's fit, a sweep's rows): a
stored value of the wrong type is refused where it is read, naming its path, and a value
the engine wrote reads back to the same record."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from advisor.engine.calibration.fabric_fit import FabricFit
from advisor.engine.result.base import ResultFormatError
from advisor.engine.result.records import Metrics
from advisor.engine.tools.sweep import SweepPoint
from tests.support.fits import roce_fit


def _stored_fit() -> dict[str, Any]:
    return roce_fit(0.8, 5e-6).to_dict()


def test_a_stored_fit_reads_back_to_the_fit_it_was() -> None:
    fit = roce_fit(0.8, 5e-6)
    assert FabricFit.from_dict(fit.to_dict()) == fit


@pytest.mark.parametrize(
    ("damage", "path"),
    [
        (lambda d: d["network"].update(latency_us="slow"), "fit.network.latency_us"),
        (
            lambda d: d["network"].update(bandwidth_identified="yes"),
            "fit.network.bandwidth_identified",
        ),
        (lambda d: d["network"].pop("rms_residual_pct"), "fit.network.rms_residual_pct: missing"),
        (lambda d: d["hardware"].update(nics_per_node=8.5), "fit.hardware.nics_per_node"),
        (lambda d: d.update(warnings=[3]), "fit.warnings[0]"),
        (lambda d: d.update(gpu_id=7), "fit.gpu_id"),
        (lambda d: d.update(network=["not", "an", "object"]), "fit.network: expected an object"),
    ],
)
def test_a_damaged_stored_fit_names_the_damaged_value(damage: Any, path: str) -> None:
    data = copy.deepcopy(_stored_fit())
    damage(data)
    with pytest.raises(ResultFormatError, match=path.replace("[", r"\[").replace("]", r"\]")):
        FabricFit.from_dict(data)


def _point() -> SweepPoint:
    return SweepPoint(
        i=3,
        servers=16,
        gpus=128,
        fabric="roce",
        nic_gbps=400,
        nics_per_node=8,
        oversubscription=1.0,
        reason=None,
        inference=False,
        metrics=Metrics(step_time_s=1.25, run_time_s=3600.0),
        network_capex_usd=1_000_000.0,
        decision_cost_usd=2_000_000.0,
        total_cost_usd=50_000.0,
    )


def test_a_stored_sweep_row_reads_back_unchanged() -> None:
    row = _point().to_dict()
    again = SweepPoint.from_dict(row)
    assert again.to_dict() == row
    assert isinstance(again.nic_gbps, int)  # 400 stays 400 in the JSON the API serves


@pytest.mark.parametrize(
    ("key", "value"),
    [("servers", "16"), ("fabric", 4), ("nic_gbps", "fast"), ("reason", 1), ("total_cost_usd", [])],
)
def test_a_damaged_sweep_row_names_the_column(key: str, value: Any) -> None:
    row = {**_point().to_dict(), key: value}
    with pytest.raises(ResultFormatError, match=rf"point\.{key}"):
        SweepPoint.from_dict(row)
