"""The MXFP4 experts' kernel constants (``serving.gemm.MXFP4_EXPERT_KERNELS``) fitted on
TensorRT-LLM's measured MoE kernels (docs/MODEL.md 15.1, "MXFP4 experts").

AIConfigurator 0.12.0 ships TensorRT-LLM 1.3.0rc20's fused-MoE latencies for MXFP4 experts
(``aiconfigurator_core/systems/data/<gpu>/moe/trtllm/1.3.0rc20/moe_perf.parquet``, balanced
routing): ``w4a8_mxfp4_mxfp8`` (MXFP4 weights, MXFP8 activations) on B200, GB200, B300 and
GB300 and ``w4a16_mxfp4`` (BF16 activations) on H100 and H200, the two paths the engine prices
(``serving.precision.expert_math_precision``).  The Blackwell path's three constants of
``serving.gemm.routed_experts_s`` (fixed seconds, seconds per wave of tiles, fraction of the
sustained FP8 peak, bounded by 1.0) minimise the squared log error over its points of one GPU
(tp 1, ep 1), scanned on a grid; the Hopper path keeps the shared constants and the 16-bit
fraction and is only read.  The peer is a tool beside the product, never a dependency: run it
with a scratch venv's Python::

    /tmp/aic/bin/python bench/aic_mxfp4_moe_fit.py
    /tmp/aic/bin/python bench/aic_mxfp4_moe_fit.py --hopper   # Hopper's own constants
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.model.serving import gemm
from advisor.engine.model.serving.compute import moe_layer_s
from bench.aic_systems import CATALOG_GPU, moe_elementwise_s, moe_point, moe_shape, moe_table

PATHS = {
    "w4a8_mxfp4_mxfp8": ("b200_sxm", "gb200", "b300_sxm", "gb300"),
    "w4a16_mxfp4": ("h100_sxm", "h200_sxm"),
}


def points() -> list[dict[str, Any]]:
    import pandas as pd  # type: ignore[import-not-found]

    out: list[dict[str, Any]] = []
    for dtype, systems in PATHS.items():
        for system in systems:
            frame = pd.read_parquet(moe_table(system))
            frame = frame[(frame.moe_dtype == dtype) & (frame.distribution == "balanced")]
            out.extend(moe_point(row, CATALOG_GPU[system]) for row in frame.itertuples())
    return out


def priced_s(point: dict[str, Any]) -> float:
    """The engine's MoE layer on one GPU as the kernel table times it: the routed experts and
    the element-wise passes the table's kernels include (permutation, gated activation)."""
    catalog = default_catalog()
    gpu = catalog.gpu(point["gpu"])
    assert gpu is not None
    base = catalog.model("gpt-oss-120b")
    model = moe_shape(base, point)
    tokens, tp, ep = float(point["tokens"]), point["tp"], point["ep"]
    per_gpu = max(1, point["experts"] // ep)
    t = moe_layer_s(gpu, "mxfp4", model, tokens / ep, tp, ep, per_gpu, tokens)
    return t.routed_s + moe_elementwise_s(gpu, point)


def errors(
    constants: tuple[float, float, float], data: list[dict[str, Any]], key: str = "fp8"
) -> list[float]:
    """The engine against each point with the path's (fixed, tile, fraction): ``key`` "fp8" the
    Blackwell path's, "bf16" a Hopper path of its own (``--hopper``, a proposal only)."""
    from advisor.engine.model.serving import compute

    gemm.MXFP4_EXPERT_KERNELS[key] = constants
    moe_layer_s.cache_clear()
    compute._moe_layer_gemms.cache_clear()
    return [priced_s(p) / p["measured_s"] - 1.0 for p in data]


def loss(
    constants: tuple[float, float, float], data: list[dict[str, Any]], key: str = "fp8"
) -> float:
    return sum(math.log(1.0 + e) ** 2 for e in errors(constants, data, key))


def summary(name: str, errs: list[float]) -> dict[str, Any]:
    absolute = sorted(abs(e) for e in errs)
    return {
        "points": name,
        "n": len(errs),
        "mean_abs_pct": round(100 * statistics.fmean(absolute), 1),
        "p90_abs_pct": round(100 * absolute[int(0.9 * (len(absolute) - 1))], 1),
        "signed_mean_pct": round(100 * statistics.fmean(errs), 1),
    }


def hopper_proposal(data: list[dict[str, Any]]) -> None:
    """``--hopper``: constants of their own for Hopper's BF16 x MXFP4 Triton kernels
    (``w4a16_mxfp4``, H100 / H200, tp 1, ep 1), the engine's ``MXFP4_EXPERT_KERNELS["bf16"]`` and
    ``MXFP4_EXPERT_TILE_M`` since 2026-12-06 (docs/MODEL.md 15.1, "A small-active MoE decode step
    op by op against the kernel tables", "MXFP4 experts"): the shared constants pad every
    expert's rows to 128-row tiles, which the table does not show (its small batches read 30-50 %
    faster, its large ones 20-42 % slower).  The rule of ``gemm.routed_experts_s`` is emulated
    here with the tile height as a fourth constant (``tile_s`` 0) and (tile rows, fixed seconds,
    fraction of the sustained BF16 peak) scanned on a grid."""
    from advisor.engine.model.serving import compute

    hopper = [p for p in data if p["dtype"] == "w4a16_mxfp4" and p["tp"] == p["ep"] == 1]
    print(json.dumps({"dtype": "w4a16_mxfp4", **summary("shared", errors_shared(hopper))}))
    shared_rule = compute.routed_experts_s
    tile = {"m": 128}

    def rule(up: Any, down: Any, rate: float, experts: float, rows: float, *args: float) -> float:
        if experts <= 0 or rows <= 0 or up.empty:
            return 0.0
        fixed_s = args[0] if args else gemm.MOE_KERNEL_FIXED_S
        params = up.kn + down.kn
        weights = experts * params * up.wbytes / up.hbm
        work = 2.0 * experts * math.ceil(rows / tile["m"]) * tile["m"] * params / rate
        return float(fixed_s + max(weights, work))

    compute.routed_experts_s = rule  # type: ignore[assignment]
    try:
        found = []
        for tile_m in (16, 32, 64, 128):
            tile["m"] = tile_m
            grid = [(f * 1e-6, 0.0, r / 80) for f in range(4, 100, 4) for r in range(4, 81, 2)]
            best = min(grid, key=lambda c: loss(c, hopper, "bf16"))
            found.append((loss(best, hopper, "bf16"), tile_m, best))
        _, tile["m"], best = min(found)
        errs = errors(best, hopper, "bf16")
        print(
            json.dumps(
                {"tile_m": tile["m"], "fixed_us": round(best[0] * 1e6, 1), "fraction": best[2]}
            )
        )
        print(json.dumps({"dtype": "w4a16_mxfp4", **summary("fitted", errs)}))
        by_tokens: dict[int, list[float]] = {}
        for p, e in zip(hopper, errs, strict=True):
            by_tokens.setdefault(p["tokens"], []).append(e)
        print(json.dumps({t: round(100 * statistics.fmean(v), 1) for t, v in by_tokens.items()}))
    finally:
        compute.routed_experts_s = shared_rule


def errors_shared(data: list[dict[str, Any]]) -> list[float]:
    """The engine against each point with the shared constants (no "bf16" key)."""
    from advisor.engine.model.serving import compute

    own = gemm.MXFP4_EXPERT_KERNELS.pop("bf16", None)
    tile = gemm.MXFP4_EXPERT_TILE_M.pop("bf16", None)
    moe_layer_s.cache_clear()
    compute._moe_layer_gemms.cache_clear()
    try:
        return [priced_s(p) / p["measured_s"] - 1.0 for p in data]
    finally:
        if own is not None:
            gemm.MXFP4_EXPERT_KERNELS["bf16"] = own
        if tile is not None:
            gemm.MXFP4_EXPERT_TILE_M["bf16"] = tile
        moe_layer_s.cache_clear()
        compute._moe_layer_gemms.cache_clear()


def main() -> int:
    data = points()
    if "--hopper" in sys.argv[1:]:
        hopper_proposal(data)
        return 0
    blackwell = [p for p in data if p["dtype"] == "w4a8_mxfp4_mxfp8" and p["tp"] == p["ep"] == 1]
    grid = [
        (fixed * 1e-6, tile * 1e-6, fraction / 20)
        for fixed in range(6, 40, 2)
        for tile in (0.0, 0.5, 1.0, 2.0, 3.0, 4.9)
        for fraction in range(4, 21)
    ]
    best = min(grid, key=lambda c: loss(c, blackwell))
    print(
        json.dumps(
            {"fixed_us": round(best[0] * 1e6, 1), "tile_us": best[1] * 1e6, "fraction": best[2]}
        )
    )
    print(
        json.dumps(
            {"dtype": "w4a8_mxfp4_mxfp8", **summary("tp 1, ep 1 (fitted)", errors(best, blackwell))}
        )
    )
    hopper = [p for p in data if p["dtype"] == "w4a16_mxfp4" and p["tp"] == p["ep"] == 1]
    print(
        json.dumps(
            {
                "dtype": "w4a16_mxfp4",
                **summary("tp 1, ep 1 (read, shared constants)", errors(best, hopper)),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
