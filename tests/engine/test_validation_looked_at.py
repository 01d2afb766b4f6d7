"""Held-out rows that were looked at (docs/VALIDATION_SOURCES.md): the mark is well-formed, only
held-out rows carry it, and the "never looked at" figures are computed from the rows without it;
every row has a use, and MODEL.md's fitted-constant table names the fitted rows."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from advisor.engine.tools.validation import (
    LOOKED_AT_FIELDS,
    calibration_rows,
    row_looked_at,
    serving_calibration_rows,
    serving_capacity_rows,
    summarise,
)

ROWS = calibration_rows() + serving_calibration_rows() + serving_capacity_rows()
MODEL_MD = Path(__file__).resolve().parents[2] / "docs" / "MODEL.md"


def test_every_looked_at_mark_is_well_formed_and_on_a_held_out_row() -> None:
    marked = 0
    for row in ROWS:
        entries = row_looked_at(row)  # raises on a malformed entry
        if "looked_at" in row:
            assert row["use"] == "held_out", row["id"]
            assert entries, f"{row['id']}: an empty looked_at says nothing; leave it out"
            marked += 1
        for entry in entries:
            assert set(entry) == set(LOOKED_AT_FIELDS)
            assert re.fullmatch(r"[0-9a-f]{7,40}", entry["commit"])
    # the rows docs/VALIDATION_SOURCES.md says were looked at carry the mark
    ids = {row["id"] for row in ROWS if row.get("looked_at")}
    assert marked == len(ids)
    assert {
        "nccl309-2n-h100-16M",
        "nccl290-1n-h100-128M",
        "oci-gb200-2rack-8B",
        "oci-gb200-2rack-128M",
        "oci-gb200-2rack-32G",
        "cw-gb200-nvl72-1rack-512M",
        "cw-gb200-nvl72-1rack-8G",
        "cw-gb200-nvl72-2rack-512M",
        "cw-gb200-nvl72-2rack-16G",
        "cw-gb200-nvl72-20rack-512M",
        "cw-gb200-nvl72-20rack-16G",
        "nccl322-128n-h100-ring-16G",
        "nemo2604-deepseek-v3-256-b200-fp8",
        "nemo2606-deepseek-v3-256-gb200-fp8",
        "nemo2511-deepseek-v3-256-b200-fp8-pp16",
    } <= ids
    # MODEL.md 15.1: the v0.17 serving rows were read again after the split-K blend
    serving = {
        row["id"]
        for row in serving_capacity_rows()
        if row["use"] == "held_out" and row["id"].startswith("trtllm017-")
    }
    assert serving and serving <= ids


def _entry(**changed: str) -> dict[str, str]:
    return {"change": "a", "commit": "abcdef1", "date": "2026-12-01", "why": "b", **changed}


@pytest.mark.parametrize(
    "row, message",
    [
        ({"id": "x", "use": "development", "looked_at": [{}]}, "held-out rows only"),
        ({"id": "x", "use": "held_out", "looked_at": {"change": "a"}}, "must be a list"),
        ({"id": "x", "use": "held_out", "looked_at": [{"change": "a"}]}, "exactly the fields"),
        (
            {
                "id": "x",
                "use": "held_out",
                "looked_at": [_entry(commit="HEAD")],
            },
            "7-40 hex digits",
        ),
        (
            {
                "id": "x",
                "use": "held_out",
                "looked_at": [_entry(date="1 Dec")],
            },
            "YYYY-MM-DD",
        ),
        (
            {
                "id": "x",
                "use": "held_out",
                "looked_at": [_entry(change=" ")],
            },
            "non-empty",
        ),
    ],
)
def test_a_malformed_mark_is_refused_naming_the_row(row: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        row_looked_at(row)
    assert "'x'" in str(info.value)


def _line(
    row_id: str, use: str, error: float, inside: bool, looked: bool, kind: str = "collective"
) -> dict[str, Any]:
    return {
        "id": row_id,
        "kind": kind,
        "use": use,
        "metric": "busbw_GBps",
        "error_pct": error,
        "passed": abs(error) <= 15.0,
        "loo_inside": inside,
        "looked_at": ["a change (abcdef1)"] if looked else [],
    }


def test_the_unseen_figures_come_from_the_held_out_rows_without_the_mark() -> None:
    lines = [
        _line("a", "held_out", 10.0, True, looked=False),
        _line("b", "held_out", -30.0, True, looked=False, kind="training"),
        _line("c", "held_out", 50.0, False, looked=True),
        _line("d", "held_out", -70.0, False, looked=True),
        _line("e", "held_out", 2.0, False, looked=False),
        _line("f", "development", 90.0, True, looked=False),
    ]
    summary = summarise(lines)
    # over every held-out row, as before
    assert summary["held_out_lines"] == 5
    assert summary["held_out_mae_pct"] == pytest.approx((10 + 30 + 50 + 70 + 2) / 5)
    assert summary["held_out_loo_inside"] == 2
    # over the held-out rows never looked at: a, b, e
    assert summary["held_out_unseen_lines"] == 3
    assert summary["held_out_unseen_rows"] == 3
    assert summary["held_out_unseen_mae_pct"] == pytest.approx((10 + 30 + 2) / 3)
    assert summary["held_out_unseen_loo_inside"] == 2
    assert summary["held_out_unseen_loo_coverage"] == pytest.approx(2 / 3)
    assert summary["held_out_looked_at_rows"] == 2
    assert summary["held_out_unseen_mae_by_kind"] == {
        "collective": {"mae_pct": pytest.approx(6.0), "lines": 2},
        "training": {"mae_pct": pytest.approx(30.0), "lines": 1},
    }


def test_with_nothing_unseen_the_unseen_figures_are_empty_not_zero() -> None:
    summary = summarise([_line("c", "held_out", 50.0, False, looked=True)])
    assert summary["held_out_unseen_lines"] == 0
    assert summary["held_out_unseen_mae_pct"] is None
    assert summary["held_out_unseen_loo_coverage"] is None
    assert summary["held_out_mae_pct"] == pytest.approx(50.0)


def test_every_row_is_fitted_development_or_held_out_or_topology_arithmetic() -> None:
    assert len(ROWS) > 200
    for row in ROWS:
        if row["kind"] == "topology":
            assert row.get("use") == "arithmetic", row["id"]
        else:
            assert row.get("use") in ("fitted", "development", "held_out"), row["id"]


def _fitted_table() -> list[tuple[str, set[str]]]:
    text = MODEL_MD.read_text("utf-8")
    start = text.index("**Fitted constants and the row each came from:**")
    out = []
    for line in text[start:].splitlines()[1:]:
        if not line.strip():
            if out:
                break
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("Constant", "---") or set(cells[0]) <= {"-"}:
            continue
        out.append((cells[0], set(re.findall(r"`([^`]+)`", cells[2]))))
    return out


def test_model_md_names_every_fitted_row_by_its_id_and_only_fitted_rows() -> None:
    table = _fitted_table()
    assert len(table) >= 9
    by_id = {row["id"]: row for row in ROWS}
    named: set[str] = set()
    for constant, ids in table:
        assert ids, f"MODEL.md: fitted constant {constant} names no row"
        for row_id in ids:
            assert row_id in by_id, f"MODEL.md: {constant} names {row_id!r}, not a row"
            assert by_id[row_id]["use"] == "fitted", f"{row_id} is not marked fitted"
        named |= ids
    fitted = {row["id"] for row in ROWS if row["use"] == "fitted"}
    assert fitted == named, f"fitted rows MODEL.md does not list: {sorted(fitted - named)}"
