"""Every catalog GPU runs on a compute profile of its own (docs/MODEL.md 5, "Blackwell Ultra and
MI355X profiles"): none falls back to the custom profile that only staff-added GPUs use, and a
GPU whose measured matmul and attention rates are at least its predecessor's at the same peaks
is never priced slower for the same job."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine import evaluate
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.model.efficiency import hopper_or_newer, profile

CATALOG = default_catalog()


@pytest.mark.parametrize("gpu", [g.id for g in CATALOG.gpus])
def test_every_catalog_gpu_has_a_measured_profile(gpu: str) -> None:
    spec = CATALOG.gpu(gpu)
    p = profile(spec)
    assert p.generation != "custom", f"{gpu} falls back to the custom profile"
    assert 0.0 < p.mamf_bf16 <= 1.0 and 0.0 <= p.mamf_fp8 <= 1.0
    assert 0.0 < p.attention_fraction <= 1.0


@pytest.mark.parametrize("gpu", ["b300", "gb300-nvl72"])
def test_blackwell_ultra_reads_as_blackwell(gpu: str) -> None:
    spec = CATALOG.gpu(gpu)
    assert spec.generation == "blackwell"
    assert profile(spec).generation == "blackwell"
    assert hopper_or_newer(spec)


def _step_s(gpu: str, gpus: int, precision: str) -> float:
    scenario: dict[str, Any] = {
        "workload": "training",
        "model": "llama3-70b",
        "gpu": gpu,
        "gpus": gpus,
        "precision": precision,
        "parallelism": {"tp": 1, "pp": 4, "cp": 1, "dp": gpus // 4, "micro_batch": 1},
        "training": {"global_batch_sequences": 256, "total_tokens": 1e12},
    }
    step = evaluate(scenario)["metrics"]["step_time_s"]
    assert isinstance(step, float) and step > 0
    return step


@pytest.mark.parametrize("precision", ["bf16", "fp8"])
@pytest.mark.parametrize(
    ("ultra", "base", "gpus"), [("b300", "b200", 64), ("gb300-nvl72", "gb200-nvl72", 64)]
)
def test_blackwell_ultra_is_no_slower_than_blackwell(
    ultra: str, base: str, gpus: int, precision: str
) -> None:
    """Same dense peaks, higher measured MAMF and attention rate: the same plan on the same
    count of GPUs steps no slower (the custom fallback priced B300 ~14 % slower than B200)."""
    assert _step_s(ultra, gpus, precision) <= _step_s(base, gpus, precision)
