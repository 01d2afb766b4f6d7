"""Write every result of the bench grid and the validation scenarios as JSON, one per line,
so a refactor of how the engine builds its answer can be checked byte for byte:

    .venv/bin/python bench/result_identity.py /tmp/before.jsonl     # on the old commit
    .venv/bin/python bench/result_identity.py /tmp/after.jsonl      # on the new one
    .venv/bin/python bench/result_identity.py --compare /tmp/before.jsonl /tmp/after.jsonl

Each line is ``name<TAB>json.dumps(result)`` (keys in the engine's order, not sorted): the
grid of ``bench/grid.py``, the training and serving scenarios of the published rows
(``advisor.engine.tools.validation``), two calibrated evaluations (a customer's RoCE
measurement applied, which adds ``calibration`` to the result) and two RAG pipelines.
``--only NAME`` (repeatable) limits the run; ``--skip-large`` leaves out grid scenarios above
20,000 GPUs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from grid import SCENARIOS

from advisor.engine import ScenarioError, evaluate
from advisor.engine.calibration.fabric_fit import FabricFit, FitHardware, TermFit
from advisor.engine.model.serving.results import published_scenario
from advisor.engine.tools.validation import (
    calibration_rows,
    serving_calibration_rows,
    serving_capacity_rows,
    training_scenario,
)


def _roce_fit(scale: float, latency_s: float) -> FabricFit:
    net = TermFit(
        kind="network",
        bytes_per_s=368e9 * scale,
        default_bytes_per_s=368e9,
        latency_s=latency_s,
        default_latency_s=1e-6,
        bandwidth_identified=True,
        latency_identified=True,
        rms_residual_pct=5.0,
        default_rms_residual_pct=20.0,
        points=(),
    )
    return FabricFit(
        gpu_id="h100-sxm",
        gpu_name="NVIDIA H100 80GB HBM3",
        hardware=FitHardware(fabric="roce", nic_gbps=400, nics_per_node=8),
        network=net,
        scaleup=None,
        warnings=(),
    )


_CALIBRATED: dict[str, dict[str, Any]] = {
    "calibrated-design-h100-256": {
        "workload": "training",
        "model": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": 256,
        "design": {"fabric": "roce", "nic_gbps": 400, "nics_per_node": 8},
    },
    "calibrated-h100-1024": {
        "workload": "training",
        "model": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": 1024,
    },
}


_RAG: dict[str, dict[str, Any]] = {
    "rag-llama3-70b-h100-16": {
        "workload": "inference",
        "model": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": 16,
        "inference": {"requests_per_s": 5},
        "rag": {},
    },
    "rag-llama3.1-405b-h100-32-split": {
        "workload": "inference",
        "model": "llama3.1-405b",
        "gpu": "h100-sxm",
        "gpus": 32,
        "precision": "bf16",
        "inference": {"requests_per_s": 1, "prompt_tokens": 8192},
        "rag": {"top_k": 8, "chunk_tokens": 512},
    },
}
"""Retrieval pipelines (a serving fleet with embedding and vector-search tiers in front)."""


def scenarios(skip_large: bool) -> Iterator[tuple[str, dict[str, Any], FabricFit | None]]:
    for name, scenario in SCENARIOS.items():
        if skip_large and int(scenario.get("gpus", 0)) > 20_000:
            continue
        yield f"grid:{name}", scenario, None
    for row in calibration_rows():
        if row.get("kind") == "training":
            yield f"validation:{row['id']}", training_scenario(row), None
    for row in (*serving_calibration_rows(), *serving_capacity_rows()):
        yield f"validation:{row['id']}", published_scenario(row), None
    for name, scenario in _CALIBRATED.items():
        yield name, scenario, _roce_fit(0.25, 50e-6)
    for name, scenario in _RAG.items():
        yield name, scenario, None


def compare(before: Path, after: Path) -> int:
    """Results equal byte for byte, and equal as JSON values (keys sorted); 1 on a difference
    of value, type or presence."""
    old = [line.rstrip("\n").split("\t", 1) for line in before.open(encoding="utf-8")]
    new = [line.rstrip("\n").split("\t", 1) for line in after.open(encoding="utf-8")]
    if [n for n, _ in old] != [n for n, _ in new]:
        print("the two files hold different scenarios")
        return 1
    exact = same = 0
    for (name, a), (_, b) in zip(old, new, strict=True):
        exact += a == b
        if json.dumps(json.loads(a), sort_keys=True) == json.dumps(json.loads(b), sort_keys=True):
            same += 1
        else:
            print(f"differs: {name}")
    print(f"{len(old)} results: {exact} byte-identical, {same} identical as JSON values")
    return 0 if same == len(old) else 1


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        return compare(Path(sys.argv[2]), Path(sys.argv[3]))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--skip-large", action="store_true")
    args = parser.parse_args()
    seen: set[str] = set()
    with args.out.open("w", encoding="utf-8") as out:
        for name, scenario, fit in scenarios(args.skip_large):
            if name in seen or (args.only and name not in args.only):
                continue
            seen.add(name)
            try:
                result = evaluate(scenario, calibration=fit)
                text = json.dumps(result, allow_nan=False)
            except ScenarioError as err:
                text = json.dumps({"scenario_error": err.field_errors})
            out.write(f"{name}\t{text}\n")
            out.flush()
            print(name, len(text), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
