"""The memory record of every answer reads in one unit: capacity is the GPU's HBM in decimal GB
(the vendor's "288 GB" counts binary gigabytes), so a serving pool's usable figure (weights +
the runtime's KV room, sized on those bytes) never reads above it (the audit's memory-record
property)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from advisor.engine import evaluate_typed
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.tools.audit import memory_violations

SERVING = {"prompt_tokens": 2048, "output_tokens": 512, "requests_per_s": 50}


@pytest.mark.parametrize(
    ("gpu", "inference"),
    [
        ("b300", SERVING),  # a dense replica pool whose KV room fills the HBM
        ("h100-sxm", SERVING),
        ("mi355x", SERVING),
        ("h200-sxm", {**SERVING, "deployment": "disaggregated"}),
    ],
)
def test_serving_capacity_is_the_hbm_in_decimal_gb(gpu: str, inference: dict[str, Any]) -> None:
    _check_serving_record(
        {"workload": "inference", "model": "llama3-70b", "gpu": gpu, "gpus": 64,
         "inference": inference}
    )  # fmt: skip


def test_a_queued_given_replica_reads_in_the_same_unit() -> None:
    """The runtime's KV sizing of a given replica that queues (held_requests' record)."""
    r = _check_serving_record(
        {"workload": "inference", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 8,
         "precision": "fp8", "parallelism": {"tp": 1},
         "inference": {"prompt_tokens": 5000, "output_tokens": 500, "requests_per_s": 5,
                       "concurrent_requests": 200}}
    )  # fmt: skip
    assert any("KV cache memory of each replica holds" in n for n in r.workload.notes)


def _check_serving_record(raw: dict[str, Any]) -> Any:
    r = evaluate_typed(raw)
    gpu = raw["gpu"]
    spec = default_catalog().gpu(gpu)
    assert spec is not None
    mem = r.workload.memory
    assert mem.capacity_gb == pytest.approx(spec.memory_bytes / 1e9)
    assert 0.0 < mem.usable_gb <= mem.capacity_gb
    assert memory_violations("case", r) == []
    return r


def test_the_property_names_a_record_whose_usable_reads_above_its_capacity() -> None:
    r = evaluate_typed(
        {"workload": "inference", "model": "llama3-70b", "gpu": "b300", "gpus": 64,
         "inference": SERVING}
    )  # fmt: skip
    mem = r.workload.memory
    # the record as it read before: the vendor's 288 beside 290.6 GB usable
    vendor = replace(mem, capacity_gb=288.0, usable_gb=290.6)
    bad = replace(r, workload=replace(r.workload, memory=vendor))
    found = memory_violations("b300", bad)
    assert [v.prop for v in found] == ["memory-record"]
    assert "usable 290.6 GB of a 288.0 GB capacity" in found[0].detail
    over = replace(mem, total_gb=mem.usable_gb + 1.0, fits=True)
    assert memory_violations("b300", replace(r, workload=replace(r.workload, memory=over)))
