"""The engine beside NVIDIA's AIConfigurator on the twelve serving cases of docs/MODEL.md 15.2.

    .venv/bin/python bench/aic_side_by_side.py                      # the engine's side only
    .venv/bin/python bench/aic_side_by_side.py --aic /tmp/aic/bin/aiconfigurator

The engine's figure is ``tokens_per_s_per_gpu_at_target`` of its own choice (BF16, the case's
lengths and p95 targets, ``requests_per_s: 1000`` so that the choice is made by the rate within
the targets). The peer is a tool run beside the product, never a dependency of it: install it
into a scratch venv (``python3.11 -m venv /tmp/aic && /tmp/aic/bin/pip install aiconfigurator``)
and pass its executable with ``--aic``; its figure is the tokens/s per GPU of its best
configuration (``aiconfigurator cli default ... --backend trtllm``, SILICON database), read from
the "Best Experiment Chosen" line of its report (about two minutes a case on two cores).
Without ``--aic`` the peer's figures recorded in MODEL.md 15.2 (aiconfigurator 0.12.0) are used.
``--tpot-mean`` reads the time-per-token target on the engine's mean time per token instead of its
p95 (the TTFT target stays p95): the statistic the peer reads (its ``tpot`` is the mean step of a
steady batch, ``aiconfigurator_core/sdk/backends/base_backend.py`` ``run_agg``), for comparing the
physics at one statistic; the product reads p95 (MODEL.md 15.2, "What AIConfigurator reads as
'at target'"). Prints one JSON object per case.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.engine import evaluate
from advisor.engine.model.serving import load

# model, GPU, GPUs, ISL, OSL, TTFT ms, TPOT ms, the peer's figure recorded in MODEL.md 15.2
CASES: list[tuple[str, str, int, int, int, int, int, float]] = [
    ("70B", "h200", 8, 2048, 512, 2000, 50, 570),
    ("70B", "h100", 8, 2048, 512, 2000, 50, 484),
    ("8B", "h100", 8, 2048, 512, 2000, 50, 4336),
    ("8B", "h200", 8, 2048, 512, 2000, 50, 5544),
    ("70B", "h100", 32, 2048, 512, 2000, 50, 484),
    ("70B", "h200", 32, 2048, 512, 2000, 50, 624),
    ("70B", "h100", 64, 2048, 512, 2000, 50, 494),
    ("70B", "h200", 64, 2048, 512, 2000, 50, 624),
    ("70B", "h100", 16, 2048, 512, 2000, 50, 484),
    ("70B", "h100", 8, 4000, 1000, 1000, 20, 203),
    ("70B", "h200", 8, 4000, 1000, 1000, 20, 252),
    ("8B", "h100", 32, 2048, 512, 2000, 50, 4336),
]
MODELS = {"8B": "llama3-8b", "70B": "llama3-70b"}
BEST = re.compile(r"Best Experiment Chosen: (\w+) at ([0-9.,]+) tokens/s/gpu")


def case_scenario(
    size: str, gpu: str, gpus: int, isl: int, osl: int, ttft: int, tpot: int
) -> dict[str, Any]:
    """The engine's scenario for a case: the peer's model, GPU count, ISL / OSL and targets, at
    a request rate far above what any case serves (the engine answers its rate within them)."""
    return {
        "workload": "inference",
        "model": MODELS[size],
        "gpu": f"{gpu}-sxm",
        "gpus": gpus,
        "precision": "bf16",
        "inference": {
            "prompt_tokens": isl,
            "output_tokens": osl,
            "target_ttft_ms": ttft,
            "target_ms_per_token": tpot,
            "requests_per_s": 1000,
        },
    }


def engine_side(size: str, gpu: str, gpus: int, isl: int, osl: int, ttft: int, tpot: int) -> Any:
    result = evaluate(case_scenario(size, gpu, gpus, isl, osl, ttft, tpot))
    workload = result["workload"]
    return {
        "engine": result["metrics"].get("tokens_per_s_per_gpu_at_target"),
        "deployment": workload.get("serving", {}).get("deployment"),
        "plan": {k: workload["plan"].get(k) for k in ("tp", "pp", "dp")},
        "notes": [n for n in workload.get("notes", []) if "chosen by the load" in n],
    }


def read_tpot_on_the_mean() -> None:
    """Make the load model's rate within the targets read the mean time per token against the
    target (TTFT still at p95). For this comparison only: call before any evaluation (the load
    model keeps its rates)."""
    p95_meets_at = load.ServingModel.meets_at

    def meets_at(model: load.ServingModel, rate: float) -> bool:
        plan = model.serving_plan
        mean_target = dataclasses.replace(plan, target_tpot_s=math.inf)
        if model._decode_at(rate, None).tpot50 > plan.target_tpot_s:
            return False
        model.serving_plan = mean_target
        try:
            return p95_meets_at(model, rate)
        finally:
            model.serving_plan = plan

    def meets(point: load.LoadPoint, plan: Any) -> bool:
        return (
            not point.saturated
            and point.ttft_p95_s <= plan.target_ttft_s
            and point.tpot_p50_s <= plan.target_tpot_s
        )

    load.ServingModel.meets_at = meets_at  # type: ignore[method-assign,assignment]
    load.LoadPoint.meets = meets  # type: ignore[method-assign,assignment]


def peer_side(
    aic: str, size: str, gpu: str, gpus: int, isl: int, osl: int, ttft: int, tpot: int
) -> tuple[str | None, float | None]:
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run(
            [
                aic,
                "cli",
                "default",
                "--model-path",
                f"meta-llama/Meta-Llama-3.1-{size}",
                "--system",
                f"{gpu}_sxm",
                "--total-gpus",
                str(gpus),
                "--isl",
                str(isl),
                "--osl",
                str(osl),
                "--ttft",
                str(ttft),
                "--tpot",
                str(tpot),
                "--backend",
                "trtllm",
                "--save-dir",
                out,
            ],
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
    found = BEST.search(run.stdout + run.stderr)
    if found is None:
        return None, None
    return found.group(1), float(found.group(2).replace(",", ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aic", help="the aiconfigurator executable of a scratch venv")
    parser.add_argument(
        "--tpot-mean", action="store_true", help="read the time-per-token target on the mean"
    )
    args = parser.parse_args()
    if args.tpot_mean:
        read_tpot_on_the_mean()
    reached = 0
    for size, gpu, gpus, isl, osl, ttft, tpot, recorded in CASES:
        row: dict[str, Any] = {"model": size, "gpu": gpu, "gpus": gpus, "isl": isl, "osl": osl}
        row |= engine_side(size, gpu, gpus, isl, osl, ttft, tpot)
        experiment: str | None = None
        peer: float | None = recorded
        if args.aic:
            experiment, peer = peer_side(args.aic, size, gpu, gpus, isl, osl, ttft, tpot)
        row |= {"peer": peer, "peer_experiment": experiment, "peer_recorded": recorded}
        if peer and row["engine"] is not None:
            row["engine_over_peer"] = round(row["engine"] / peer, 3)
            reached += row["engine_over_peer"] >= 0.9
        print(json.dumps(row), flush=True)
    print(json.dumps({"cases": len(CASES), "at_least_90_percent": reached}))


if __name__ == "__main__":
    main()
