"""The calibration report: every published row within its tolerance."""

from __future__ import annotations

import pytest

from advisor.engine.tools.validation import (
    calibration_rows,
    serving_calibration_rows,
    tolerance_pct,
    validation_report,
)

PUBLISHED_IDS = {
    "nvlink-h100-ring",
    "ndr-2node-h100-ring",
    "hdr-4nic-2node-ring",
    "tcp-wire-fraction",
    "megatron-1t",
    "deepep-ll-dispatch-ep8",
    "deepep-ll-dispatch-ep16",
    "deepep-normal-internode-ep16",
    "superpod-2su",
    "superpod-8su",
}

REPORT = validation_report()


def test_all_shared_calibration_rows_are_shipped_with_the_engine() -> None:
    ids = {row["id"] for row in calibration_rows()}
    assert ids >= PUBLISHED_IDS
    assert len(ids) > len(PUBLISHED_IDS)  # plus rows the engine team added
    assert all(row.get("source") for row in calibration_rows())


def test_every_row_is_reported_with_the_documented_fields() -> None:
    reported = {line["id"] for line in REPORT["rows"]}
    shipped = calibration_rows() + serving_calibration_rows()
    assert reported == {row["id"] for row in shipped}
    for line in REPORT["rows"]:
        assert {
            "id",
            "kind",
            "source",
            "confidence",
            "metric",
            "predicted",
            "measured",
            "error_pct",
            "tolerance_pct",
            "passed",
        } <= line.keys()


def test_tolerances_are_15_35_and_exact() -> None:
    assert tolerance_pct("collective", "busbw_GBps") == 15
    assert tolerance_pct("all_to_all", "latency_us") == 35
    assert tolerance_pct("topology", "leaf_switches") == 0


@pytest.mark.parametrize("line", REPORT["rows"], ids=lambda r: f"{r['id']}:{r['metric']}")
def test_row_is_within_tolerance(line: dict[str, object]) -> None:
    assert line["passed"], line


def test_the_report_passes_as_a_whole() -> None:
    assert REPORT["passed"] is True
