"""nccl-tests' one-process mode (docs/MODEL.md section 3, ``model/launch_mode.py``): a validation
row stating ``-g N`` takes the larger of the device time and one thread's enqueueing of N kernels;
every other row, and the product, keep the device time."""

from __future__ import annotations

import copy

import pytest

from advisor.engine.model.launch_mode import (
    ONE_PROCESS_FIXED_S,
    ONE_PROCESS_PER_GPU_S,
    benchmark_time_s,
    one_process_host_s,
)
from advisor.engine.tools.validation import calibration_rows, predict_collective

ROWS = {row["id"]: row for row in calibration_rows()}
FIT_ROWS = [ROWS[f"nccl123-a100-g{n}"] for n in range(2, 9)]


def test_the_constants_are_the_least_squares_line_through_the_fitted_rows() -> None:
    xs = [float(row["config"]["gpus_per_process"]) for row in FIT_ROWS]
    ys = [float(row["measured"]["time_us"]) for row in FIT_ROWS]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    intercept = my - slope * mx
    # the constants are the fit rounded to the figures MODEL.md states
    assert abs(ONE_PROCESS_PER_GPU_S * 1e6 - slope) <= 0.005
    assert abs(ONE_PROCESS_FIXED_S * 1e6 - intercept) <= 0.05
    for row in FIT_ROWS:
        assert row["use"] == "fitted"
        assert row["config"]["gpus_per_process"] == row["config"]["gpus_per_node"]


def test_the_fitted_rows_are_host_bound_so_the_fit_is_the_host_time() -> None:
    for row in FIT_ROWS:
        device = copy.deepcopy(row)
        del device["config"]["gpus_per_process"]
        n = int(row["config"]["gpus_per_process"])
        device_us = predict_collective(device)["time_us"]
        assert device_us < one_process_host_s(n) * 1e6
        assert predict_collective(row)["time_us"] == pytest.approx(one_process_host_s(n) * 1e6)


def test_one_process_per_gpu_keeps_the_device_time_exactly() -> None:
    for device_s in (1e-6, 3.0e-5, 0.25):
        assert benchmark_time_s(device_s, 1) == device_s
    row = copy.deepcopy(ROWS["azure-1n-a100-64K"])
    with_one = copy.deepcopy(row)
    with_one["config"]["gpus_per_process"] = 1
    del row["config"]["gpus_per_process"]
    assert predict_collective(row) == predict_collective(with_one)


def test_the_host_time_binds_only_below_it_and_grows_with_gpus() -> None:
    host = one_process_host_s(8)
    assert host == pytest.approx(33.28e-6)
    assert benchmark_time_s(10e-6, 8) == host
    assert benchmark_time_s(1e-3, 8) == 1e-3
    assert [one_process_host_s(n) for n in range(1, 9)] == sorted(
        one_process_host_s(n) for n in range(1, 9)
    )


def test_a_mode_row_slows_busbw_by_the_same_factor_as_its_time() -> None:
    row = ROWS["azure-1n-h100-64K"]
    assert row["config"]["gpus_per_process"] == 8
    device = copy.deepcopy(row)
    del device["config"]["gpus_per_process"]
    slow, fast = predict_collective(row), predict_collective(device)
    assert slow["time_us"] > fast["time_us"]
    ratio = fast["time_us"] / slow["time_us"]
    assert slow["busbw_GBps"] == pytest.approx(fast["busbw_GBps"] * ratio)
    assert slow["algbw_GBps"] == pytest.approx(fast["algbw_GBps"] * ratio)
    # a bandwidth-bound row of the same source does not move
    big = ROWS["azure-1n-h100-8G"]
    big_device = copy.deepcopy(big)
    del big_device["config"]["gpus_per_process"]
    assert predict_collective(big) == predict_collective(big_device)


@pytest.mark.parametrize("bad", [0, -2, "8", 2.5])
def test_a_bad_gpus_per_process_is_refused_naming_the_field(bad: object) -> None:
    row = copy.deepcopy(ROWS["azure-1n-a100-64K"])
    row["config"]["gpus_per_process"] = bad
    with pytest.raises(ValueError, match="gpus_per_process"):
        predict_collective(row)
    if isinstance(bad, int):
        with pytest.raises(ValueError, match="gpus_per_process"):
            one_process_host_s(bad)
