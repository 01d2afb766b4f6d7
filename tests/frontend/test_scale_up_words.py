"""An answer without a compute fabric names the platform's own GPU-to-GPU links and where they
reach, on the first screen and in the topology picture (they read "NVLink / PCIe" and "inside
the server" whatever the platform: AMD's Infinity Fabric, a GB300 NVL72 rack's 72 GPUs)."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine import evaluate_typed
from advisor.reports.charts import topology_layout
from advisor.reports.presenters import headline


def _serving(gpu: str, gpus: int, **extra: Any) -> dict[str, Any]:
    return {
        "workload": "inference",
        "model": "llama3-70b",
        "gpu": gpu,
        "gpus": gpus,
        "precision": "fp8",
        "inference": {"requests_per_s": 5},
        **extra,
    }


@pytest.mark.parametrize(
    ("scenario", "links", "where"),
    [
        (_serving("h100-sxm", 16), "NVLink", "each server"),
        (_serving("mi355x", 8), "Infinity Fabric", "the server"),
        (_serving("gb300-nvl72", 72, gpus_per_node=4), "NVLink", "the 72-GPU NVLink domain"),
    ],
)
def test_the_platforms_own_links_are_named(
    scenario: dict[str, Any], links: str, where: str
) -> None:
    result = evaluate_typed(scenario, scaling_chart=False)
    assert result.recommendation.needs_compute_fabric is False
    (fabric,) = [f for f in headline(result)["facts"] if f.key == "Compute fabric"]
    assert fabric.sub == f"GPUs talk over {links} inside {where}"
    picture = topology_layout(result)
    assert picture.title == f"No GPU compute fabric: the GPUs talk inside {where}"
    assert picture.layer_labels[0][1].endswith(f"GPUs talk over {links}")
