"""The routed experts' load imbalance, fitted on TensorRT-LLM's measured fused-MoE kernels and
tried in the model, not kept (docs/MODEL.md 15.1, "Expert load imbalance, tried and not kept":
``serving/routing.py`` of 6bab147, reverted by 549c0ac).

AIConfigurator 0.12.0 ships each fused-MoE latency of TensorRT-LLM 1.3.0rc20 three times: with
the tokens routed evenly (``balanced``, the rows the engine's MoE rule was fitted on) and routed
by a power law over the experts (``power_law_1.01``, ``power_law_1.2``), its collector measuring
the expert-parallel group that receives the most tokens (``collector/trtllm/collect_moe.py``,
"EP Group Selection": the busiest rank sets a synchronous step).  AIConfigurator's own docs give
the exponents as latency-matched estimates of real traffic: 1.01 for DeepSeek-V3 / R1 and 1.2
for Qwen3-235B on CNN-DailyMail / OpenOrca, "typical production"; its estimator takes 1.2 for
every MoE family but DeepSeek's.

The engine keeps its rule and prices the imbalance as the busiest GPU's (and, inside a GPU, the
hot experts') rows being ``L`` times the mean: ``routed_experts_s`` at ``rows_per_expert x L``,
so a weight-bound layer (few rows an expert) is unchanged and a compute-bound one grows.  For
each expert-parallel degree this script finds the ``L`` whose ratio (the engine's layer at ``L``
over the engine's at 1) best matches the table's (power law over balanced) in squared log error,
over every tp-1 point of the GPUs and precisions the engine prices (BF16, FP8, NVFP4 CUTLASS;
MXFP4: MXFP8 x MXFP4 on Blackwell, BF16 x MXFP4 on Hopper) with 16 or more rows an expert, then
fits ``L(ep) = a + b log2(ep)`` on those (printed, not used: the engine reads the fitted
degrees).  The engine's rule's own error on the balanced rows is not in the ratio.  Run it with
a scratch venv's Python (the peer is never a dependency of the product)::

    /tmp/aic/bin/python bench/aic_moe_imbalance_fit.py            # alpha 1.2
    /tmp/aic/bin/python bench/aic_moe_imbalance_fit.py --alpha 1.01
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.aic_systems import CATALOG_GPU, moe_elementwise_s, moe_point, moe_shape, moe_table

SYSTEMS = ("h100_sxm", "h200_sxm", "b200_sxm", "gb200", "b300_sxm")
PRECISION = {
    "bfloat16": "bf16",
    "fp8": "fp8",
    "nvfp4": "fp4",
    "w4a8_mxfp4_mxfp8": "mxfp4",
    "w4a16_mxfp4": "mxfp4",
}
SOURCES = ("moe_torch_flow_cutlass", "moe_torch_flow")
GRID = [1.0 + i / 20 for i in range(0, 121)]  # L from 1.00 to 7.00
MIN_ROWS_PER_EXPERT = 16.0
"""Points fitted: those whose experts on the GPU get at least this many rows each on average
(balanced), where the grouped GEMMs' FLOPs, not their weights, can set the time."""


def points(alpha: str) -> list[dict[str, Any]]:
    import pandas as pd  # type: ignore[import-not-found]

    out: list[dict[str, Any]] = []
    for system in SYSTEMS:
        try:
            frame = pd.read_parquet(moe_table(system))
        except FileNotFoundError:
            continue
        frame = frame[
            frame.moe_dtype.isin(list(PRECISION))
            & frame.kernel_source.isin(SOURCES)
            & (frame.moe_tp_size == 1)
        ]
        if system.startswith("h"):  # Hopper runs MXFP4 experts with BF16 activations only
            frame = frame[frame.moe_dtype != "w4a8_mxfp4_mxfp8"]
        else:
            frame = frame[frame.moe_dtype != "w4a16_mxfp4"]
        keys = ["moe_dtype", "kernel_source", "num_tokens", "hidden_size", "inter_size"]
        keys += ["topk", "num_experts", "moe_tp_size", "moe_ep_size"]
        wide = frame.pivot_table(index=keys, columns="distribution", values="latency")
        wide = wide.dropna(subset=["balanced", f"power_law_{alpha}"]).reset_index()
        for row in wide.itertuples():
            point = moe_point(
                _Row(row, latency=row.balanced, distribution="balanced"),
                CATALOG_GPU[system],
            )
            point["precision"] = PRECISION[point["dtype"]]
            point["ratio"] = float(wide.loc[row.Index, f"power_law_{alpha}"]) / float(row.balanced)
            if point["tokens"] * point["topk"] / point["experts"] >= MIN_ROWS_PER_EXPERT:
                out.append(point)
    return out


class _Row:
    """A pivoted row as :func:`bench.aic_systems.moe_point` reads one."""

    def __init__(self, row: Any, latency: float, distribution: str) -> None:
        self.moe_dtype = row.moe_dtype
        self.kernel_source = row.kernel_source
        self.num_tokens = row.num_tokens
        self.hidden_size = row.hidden_size
        self.inter_size = row.inter_size
        self.topk = row.topk
        self.num_experts = row.num_experts
        self.moe_tp_size = row.moe_tp_size
        self.moe_ep_size = row.moe_ep_size
        self.latency = latency
        self.distribution = distribution


def layer_s(point: dict[str, Any], load: float) -> float:
    """The engine's MoE layer on one GPU as the table times it (routed experts, permutation,
    activation), its rows an expert ``load`` times the mean."""
    from advisor.engine.facts.catalog import default_catalog
    from advisor.engine.model.efficiency import experts_hit_fraction
    from advisor.engine.model.serving import compute, gemm

    catalog = default_catalog()
    gpu = catalog.gpu(point["gpu"])
    assert gpu is not None
    model = moe_shape(catalog.model("gpt-oss-120b"), point)
    tp, ep, tokens = point["tp"], point["ep"], float(point["tokens"])
    layer = compute._moe_layer_gemms(gpu, point["precision"], model, tp, ep > 1)
    per_gpu = max(1, point["experts"] // ep)
    hit = experts_hit_fraction(model, tokens)
    run = per_gpu * hit if ep > 1 else model.moe_experts * hit
    copies = tokens / ep * model.moe_top_k / tp if ep > 1 else tokens * model.moe_top_k
    routed = gemm.routed_experts_s(
        layer.up,
        layer.down,
        layer.expert_rate,
        run,
        copies / max(run, 1e-9) * load,
        layer.expert_fixed_s,
        layer.expert_tile_s,
    )
    return float(routed + moe_elementwise_s(gpu, point))


def best_load(data: list[dict[str, Any]]) -> tuple[float, float]:
    """(L, mean |log error| of the ratio) minimising the squared log error over ``data``."""
    base = [layer_s(p, 1.0) for p in data]

    def loss(load: float) -> float:
        return sum(
            math.log(layer_s(p, load) / b / p["ratio"]) ** 2
            for p, b in zip(data, base, strict=True)
        )

    best = min(GRID, key=loss)
    mean = statistics.fmean(
        abs(math.log(layer_s(p, best) / b / p["ratio"])) for p, b in zip(data, base, strict=True)
    )
    return best, mean


def balanced_error(data: list[dict[str, Any]]) -> float:
    """Mean |log| of the measured ratio: the error of pricing every point balanced."""
    return statistics.fmean(abs(math.log(p["ratio"])) for p in data)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alpha", default="1.2", choices=("1.2", "1.01"))
    args = parser.parse_args()
    data = points(args.alpha)
    by_ep: dict[int, list[dict[str, Any]]] = {}
    for p in data:
        by_ep.setdefault(p["ep"], []).append(p)
    fitted: dict[int, float] = {}
    for ep in sorted(by_ep):
        load, err = best_load(by_ep[ep])
        fitted[ep] = load
        print(
            json.dumps(
                {"alpha": args.alpha, "ep": ep, "n": len(by_ep[ep]), "load": load,
                 "mean_abs_log_err": round(err, 3),
                 "balanced_mean_abs_log_err": round(balanced_error(by_ep[ep]), 3)}
            ),
            flush=True,
        )  # fmt: skip
    xs = [math.log2(ep) for ep in fitted]
    ys = list(fitted.values())
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    print(json.dumps({"alpha": args.alpha, "a": round(my - slope * mx, 3), "b": round(slope, 3)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
