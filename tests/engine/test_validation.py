"""The calibration report: every published row within its tolerance."""

from __future__ import annotations

import pytest

from advisor.engine.tools.validation import (
    HELD_OUT_REGRESSION_POINTS,
    USES,
    calibration_rows,
    is_bound,
    serving_calibration_rows,
    serving_capacity_rows,
    tolerance_pct,
    validation_baseline,
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
ALL_ROWS = calibration_rows() + serving_calibration_rows()


def test_all_shared_calibration_rows_are_shipped_with_the_engine() -> None:
    ids = {row["id"] for row in calibration_rows()}
    assert ids >= PUBLISHED_IDS
    assert len(ids) > len(PUBLISHED_IDS)  # plus rows the engine team added
    assert all(row.get("source") for row in calibration_rows())


def test_every_row_is_reported_with_the_documented_fields() -> None:
    reported = {line["id"] for line in REPORT["rows"]}
    shipped = calibration_rows() + serving_calibration_rows() + serving_capacity_rows()
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


@pytest.mark.parametrize(
    "line",
    [line for line in REPORT["rows"] if line["use"] != "held_out"],
    ids=lambda r: f"{r['id']}:{r['metric']}",
)
def test_fitted_development_and_arithmetic_rows_are_within_tolerance(
    line: dict[str, object],
) -> None:
    assert line["passed"], line


def test_every_row_says_what_it_was_used_for() -> None:
    for row in ALL_ROWS:
        assert row.get("use") in USES, row["id"]
        if row["use"] == "fitted":
            assert row.get("fitted"), f"{row['id']}: a fitted row names the constant set on it"
        else:
            assert not row.get("fitted"), f"{row['id']}: only fitted rows name constants"
        assert (row["kind"] == "topology") == (row["use"] == "arithmetic"), row["id"]


def test_thirty_held_out_rows_over_several_kinds_each_with_a_source() -> None:
    held = [row for row in ALL_ROWS if row["use"] == "held_out"]
    assert len(held) >= 30
    assert {row["kind"] for row in held} >= {"collective", "all_to_all", "training"}
    assert all(row.get("source") for row in held)


def test_summary_is_the_mean_absolute_error_of_its_lines() -> None:
    summary = REPORT["summary"]
    held = [
        abs(line["error_pct"])
        for line in REPORT["rows"]
        if line["use"] == "held_out" and not is_bound(line["metric"])
    ]
    assert summary["held_out_lines"] == len(held)
    assert summary["held_out_mae_pct"] == pytest.approx(sum(held) / len(held))
    for use, entry in summary["mae_by_use"].items():
        errors = [
            abs(line["error_pct"])
            for line in REPORT["rows"]
            if line["use"] == use and not is_bound(line["metric"])
        ]
        assert entry["lines"] == len(errors)
        assert entry["mae_pct"] == pytest.approx(sum(errors) / len(errors))
    topology = [line for line in REPORT["rows"] if line["kind"] == "topology"]
    assert summary["arithmetic_checks"] == {"passed": len(topology), "total": len(topology)}
    assert "topology" not in summary["mae_by_kind"]


def test_the_never_looked_at_figures_are_over_the_held_out_rows_without_the_mark() -> None:
    shipped = ALL_ROWS + serving_capacity_rows()
    marked = {row["id"] for row in shipped if row.get("looked_at")}
    assert marked, "docs/VALIDATION_SOURCES.md names held-out rows that were looked at"
    for line in REPORT["rows"]:
        assert bool(line["looked_at"]) == (line["id"] in marked), line["id"]
    held = [
        line
        for line in REPORT["rows"]
        if line["use"] == "held_out" and not is_bound(line["metric"])
    ]
    unseen = [line for line in held if line["id"] not in marked]
    summary = REPORT["summary"]
    assert 0 < summary["held_out_unseen_lines"] == len(unseen) < summary["held_out_lines"]
    assert summary["held_out_unseen_mae_pct"] == pytest.approx(
        sum(abs(line["error_pct"]) for line in unseen) / len(unseen)
    )
    assert summary["held_out_unseen_loo_inside"] == sum(1 for line in unseen if line["loo_inside"])
    assert summary["held_out_looked_at_rows"] == len(marked)


def test_held_out_error_is_reported_per_residual_pool_with_moe_serving_apart() -> None:
    """Each line names the residual pool its range reads (the serving rows of MoE models their
    own), and the summary's per-pool held-out MAE is the mean over exactly those lines."""
    from advisor.engine.facts.catalog import default_catalog

    catalog = default_catalog()
    shipped = {row["id"]: row for row in ALL_ROWS + serving_capacity_rows()}
    for line in REPORT["rows"]:
        model = catalog.model(str((shipped[line["id"]].get("config") or {}).get("model", "")))
        moe_serving = line["kind"] == "serving" and model is not None and model.is_moe
        assert line["pool"] == ("serving-moe" if moe_serving else line["kind"]), line["id"]
    held = [
        line
        for line in REPORT["rows"]
        if line["use"] == "held_out" and not is_bound(line["metric"])
    ]
    by_pool = REPORT["summary"]["held_out_mae_by_pool"]
    assert {"serving", "serving-moe"} <= set(by_pool)
    assert sum(entry["lines"] for entry in by_pool.values()) == len(held)
    for pool, entry in by_pool.items():
        members = [line for line in held if line["pool"] == pool]
        assert entry["lines"] == len(members) > 0
        assert entry["rows"] == len({line["id"] for line in members})
        assert entry["within_tolerance"] == sum(1 for line in members if line["passed"])
        assert entry["mae_pct"] == pytest.approx(
            sum(abs(line["error_pct"]) for line in members) / len(members)
        )
    # the split says something: the MoE serving rows read worse than the dense ones
    assert by_pool["serving-moe"]["mae_pct"] > by_pool["serving"]["mae_pct"]


def test_held_out_error_has_not_grown_past_the_committed_baseline() -> None:
    baseline = validation_baseline()
    held = {
        f"{line['id']}:{line['metric']}"
        for line in REPORT["rows"]
        if line["use"] == "held_out" and not is_bound(line["metric"])
    }
    # a new held-out row changes the baseline on purpose (validate --write-baseline)
    assert set(baseline["lines"]) == held
    assert REPORT["summary"]["held_out_mae_pct"] <= (
        baseline["held_out_mae_pct"] + HELD_OUT_REGRESSION_POINTS
    )
    assert REPORT["summary"]["held_out_regression_ok"] is True


def test_the_report_passes_as_a_whole() -> None:
    assert REPORT["passed"] is True


def test_a_whole_job_ring_over_many_leaves_leaves_them_only_at_their_boundaries() -> None:
    from advisor.engine.facts.constants import RAIL_GROUP_NODES
    from advisor.engine.model.network_rate import cross_leaf_fraction
    from advisor.engine.tools.validation import _whole_job_leaf_load

    ring = {"op": "all_reduce"}
    # inside one leaf: no boundary, the fallback (nothing leaves) stands
    assert _whole_job_leaf_load(ring, RAIL_GROUP_NODES, 8, "point") == (None, 1)
    # 128 servers in rank order: 4 of the ring's 128 server-to-server edges leave a leaf
    load, hops = _whole_job_leaf_load(ring, 128, 8, "point")
    assert load == pytest.approx(4 / 128)
    assert hops == 3
    assert load < cross_leaf_fraction(128) == pytest.approx(0.75)
    # the high bound keeps random server order (the product's scattered high bound)
    assert _whole_job_leaf_load(ring, 128, 8, "high") == (None, 1)
    # an all-to-all sends most of its bytes out of the leaf, placed or not: peers outside
    # the leaf over peers outside the server
    a2a, _ = _whole_job_leaf_load({"op": "all_to_all"}, 128, 8, "point")
    assert a2a == pytest.approx((1024 - 256) / (1024 - 8))


def test_a_row_whose_source_switched_nvls_off_is_priced_without_it() -> None:
    """A source job that exports NCCL_NVLS_ENABLE=0 ran ring or tree, not NVLS / NVLS-tree: its
    rows say ``nvls: false`` and the engine prices them without NVLink SHARP; a job that exports
    NCCL_NVLS_ENABLE=1 is left on the GPU's default (docs/VALIDATION_SOURCES.md)."""
    from advisor.engine.model.collectives import collective
    from advisor.engine.tools.validation import _domain_for

    # collective rows only: a training row's scenario has no NVLS setting (the MLPerf rows' notes
    # say their jobs exported NCCL_NVLS_ENABLE=0; docs/VALIDATION_SOURCES.md)
    off = {
        row["id"]
        for row in calibration_rows()
        if row["kind"] == "collective"
        and "NCCL_NVLS_ENABLE=0" in row.get("source", "") + row.get("note", "")
    }
    # CoreWeave's 20-rack GB200 log was published (coreweave/nccl-tests bee97e7) while its
    # GB200 example jobs exported NCCL_NVLS_ENABLE=0; the OCI rows' manifest did the same
    assert {
        "cw-gb200-nvl72-20rack-512M",
        "cw-gb200-nvl72-20rack-16G",
        "oci-gb200-2rack-8B",
        "oci-gb200-2rack-128M",
        "oci-gb200-2rack-32G",
    } <= off
    for row in calibration_rows():
        config = row["config"]
        if row["id"] in off:
            assert config.get("nvls") is False, row["id"]
            _, domain = _domain_for(config)
            result = collective(config["op"], float(config["bytes"]), domain, "auto")
            assert result.algorithm in ("ring", "tree"), (row["id"], result.algorithm)
        elif row["kind"] == "collective" and "NCCL_NVLS_ENABLE=1" in row.get("source", ""):
            assert config.get("nvls") is not False, row["id"]
