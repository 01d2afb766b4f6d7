"""What a calibrated run says: its caps and poor fits as warnings, a finished comparison
table, a picker that proposes the scenario's own GPU and fabric, and cloud transports."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from advisor.engine.calibration.fabric_fit import SCALE_MAX, FabricFit
from advisor.engine.result.records import CalibrationComparison, CalibrationSummary
from advisor.measurements.models import Measurement, RunCalibration
from advisor.measurements.selectors import (
    POOR_FIT_RMS_PCT,
    calibration_warnings,
    measurements_for_scenario,
)
from frontend.templatetags.measurements_tags import calibration_rows
from tests.measurements.test_pages import DATA, H100_2, finished_scenario, signed_in


def _term(kind: str, scale: float, rms: float) -> dict[str, Any]:
    return {
        "kind": kind,
        "bandwidth_GBps": 40.0 * scale,
        "default_bandwidth_GBps": 40.0,
        "bandwidth_scale": scale,
        "latency_us": 10.0,
        "default_latency_us": 10.0,
        "bandwidth_identified": True,
        "latency_identified": False,
        "rms_residual_pct": rms,
        "default_rms_residual_pct": 80.0,
        "points": [],
    }


def _fit(scale: float, rms: float) -> dict[str, Any]:
    return {
        "gpu_id": "h100-sxm",
        "gpu_name": "NVIDIA H100 80GB HBM3",
        "hardware": {"fabric": "roce", "nic_gbps": 400.0, "nics_per_node": 8},
        "network": _term("network", scale, rms),
        "scaleup": None,
        "warnings": [],
    }


def test_a_capped_ratio_is_stated_with_the_measured_and_the_used_figure() -> None:
    fit = _fit(16.0, 5.0)
    used = FabricFit.from_dict(fit).calibration().net_bandwidth_scale
    assert used <= SCALE_MAX < 16.0

    warnings = calibration_warnings(fit=fit)

    assert len(warnings) == 1
    assert "16 times the default model's" in warnings[0]
    assert f"the calibration uses {used:.2f} times (its limit)" in warnings[0]


def test_a_poor_fit_is_stated_and_a_good_one_is_not() -> None:
    poor = calibration_warnings(fit=_fit(0.9, 50.0))
    good = calibration_warnings(fit=_fit(0.9, POOR_FIT_RMS_PCT / 2))

    assert good == []
    assert len(poor) == 1 and "misses the measured points by 50 %" in poor[0]


def test_the_comparison_table_is_in_words_units_and_money() -> None:
    comparison = CalibrationComparison(
        default=CalibrationSummary(
            fabric="roce",
            nic_gbps=400,
            nics_per_node=8,
            topology="leaf-spine",
            oversubscription=1.0,
            step_time_s=2.3456,
            total_cost_usd=372035.4,
        ),
        calibrated=CalibrationSummary(
            fabric="infiniband",
            nic_gbps=400,
            nics_per_node=8,
            topology="leaf-spine",
            oversubscription=2.0,
            step_time_s=2.1,
            total_cost_usd=380000,
        ),
    )

    rows = calibration_rows(comparison)

    assert rows == [
        (
            "Compute fabric",
            "RoCE v2, 8 × 400 Gb/s NICs per server",
            "InfiniBand, 8 × 400 Gb/s NICs per server",
        ),
        ("Topology", "leaf-spine, non-blocking", "leaf-spine, 2:1 oversubscribed"),
        ("Time per training step", "2.35 s", "2.1 s"),
        ("Total cost to finish the work", "$372,035", "$380,000"),
    ]


@pytest.mark.django_db
def test_the_picker_proposes_the_scenarios_gpu_first() -> None:
    from django.contrib.auth.models import User

    user = User.objects.create_user("ella", password="x-y-z-123456")
    mi300x = Measurement.objects.create(
        name="MI300X pair", text="-", owner=user, fit={"gpu_id": "mi300x", "gpu_name": "MI300X"}
    )
    h100 = Measurement.objects.create(
        name="H100 pair", text="-", owner=user, fabric="roce", fit={"gpu_id": "h100-sxm"}
    )
    newest = Measurement.objects.create(name="no GPU in the log", text="-", owner=user, fit={})
    assert list(Measurement.objects.all()) == [newest, h100, mi300x]  # newest first

    proposed = measurements_for_scenario(user=user, gpu_id="h100-sxm", fabric="roce")

    assert [(m.name, matches) for m, matches, _note in proposed] == [
        ("H100 pair", True),
        ("no GPU in the log", False),
        ("MI300X pair", False),
    ]
    assert proposed[2][2] == "measured on MI300X"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("transport", "fabric"),
    [("aws-efa", "roce"), ("gcp-tcpxo", "ethernet"), ("azure-infiniband", "infiniband")],
)
def test_a_cloud_transport_can_be_declared_for_a_measurement(
    db: Any, transport: str, fabric: str
) -> None:
    _user, client = signed_in(db)

    response = client.post(
        "/measurements/", {"name": "cloud pair", "text": H100_2.decode(), "transport": transport}
    )

    assert response.status_code == 302, response.content.decode()[:500]
    m = Measurement.objects.get()
    assert m.transport == transport
    assert m.fit["hardware"]["fabric"] == fabric
    page = client.get(response["Location"]).content.decode()
    assert m.get_transport_display() in page


@pytest.mark.django_db
def test_a_transport_that_contradicts_the_declared_fabric_is_refused(db: Any) -> None:
    _user, client = signed_in(db)
    response = client.post(
        "/measurements/",
        {"name": "x", "text": H100_2.decode(), "transport": "aws-efa", "fabric": "infiniband"},
    )
    assert response.status_code == 400
    assert not Measurement.objects.exists()


def test_the_results_page_picker_selects_the_matching_measurement(
    db: Any, run_tasks: Callable[[], Any]
) -> None:
    user, client = signed_in(db)
    client.post("/measurements/", {"name": "H100 pair", "text": H100_2.decode()})
    mi300x = (DATA / "amd_mi300x_2x8_all_reduce_roce.txt").read_text()
    client.post("/measurements/", {"name": "MI300X pair", "text": mi300x})
    scenario = finished_scenario(user, run_tasks)

    page = client.get(f"/s/{scenario.pk}/").content.decode()

    picker = page.split('id="calibrate-measurement"', 1)[1].split("</select>", 1)[0]
    assert picker.index("H100 pair") < picker.index("MI300X pair")
    assert "selected>H100 pair" in picker
    assert "MI300X pair: measured on" in picker
    assert RunCalibration.objects.count() == 0
