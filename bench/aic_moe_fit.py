"""The shared MoE expert-kernel constants of ``serving.gemm.routed_experts_s``
(``MOE_KERNEL_FIXED_S``, ``MOE_KERNEL_TILE_S``, ``MOE_GROUPED_GEMM_FRACTION``) read and refitted
on TensorRT-LLM's measured fused-MoE kernels (docs/MODEL.md 15.1, "MoE expert kernels").

AIConfigurator 0.12.0 ships TensorRT-LLM 1.3.0rc20's fused-MoE latencies
(``aiconfigurator_core/systems/data/<gpu>/moe/trtllm/1.3.0rc20/moe_perf.parquet``).  The fit
reads the CUTLASS backend's points (``kernel_source`` ``moe_torch_flow_cutlass``: the backend
TensorRT-LLM's PyTorch runtime runs unless told otherwise, and the one its performance pages
run), balanced routing, BF16 / FP8 / NVFP4, H100 to GB300, every shape the tables hold, tp or ep
alone (the engine splits experts over tp or keeps them whole over ep, never both).  The other
kernel sources are printed beside it, not fitted: Blackwell's ``moe_torch_flow_min_latency``
(Llama 4's min-latency mode) and ``moe_torch_flow_nongated`` (experts without a gate, 2 h w
parameters; no catalog model has them).  Each point is priced once by the engine's own functions
(experts hit, rows per expert, tiles, weight bytes, the sustained peak, the element-wise passes
the kernels include), then the constants are scanned in numpy for the least squared log error;
the scan also tries a K-depth term on each grouped GEMM (``1 + K0 / K``, DeepGEMM's form of
docs/MODEL.md 5.1), which the engine does not have.  The peer is a tool beside the product,
never a dependency::

    /tmp/aic/bin/python bench/aic_moe_fit.py            # the engine's constants, then the fit
    /tmp/aic/bin/python bench/aic_moe_fit.py --current  # the engine's constants only
    /tmp/aic/bin/python bench/aic_moe_fit.py --fp8-block  # block-scaled FP8, read
    /tmp/aic/bin/python bench/aic_moe_fit.py --fp8-block --fit  # its kernels' own constants

``--fp8-block`` reads the block-scaled FP8 rows (128 x 128 weight scales, the published FP8
checkpoints of DeepSeek-V3 / R1 and Qwen3: Hopper's CUTLASS kernels, Blackwell's DeepGEMM) and,
beside them, the per-tensor FP8 rows, priced as FP8 by the engine's shared constants, by GPU and
by rows an expert (balanced); then the one rate (fraction) a Hopper block-scaled rule would take,
fitted on all Hopper block-scaled points and on those with 16 or more rows an expert
(docs/MODEL.md 15.1, "Hopper DEP decode steps op by op").  ``--fit`` fits kernels of their own
per generation (Hopper: H100, H200; Blackwell: B200, GB200, B300, GB300) in the form of
``gemm.routed_experts_s``: (fixed seconds, seconds per wave of tiles, fraction of the sustained
FP8 peak) and the rows per tile (32, 64 or 128), scanned on a grid for the least squared log
error, then at the chosen tile a cost per tile per 128-wide K block (the FP8 accumulators'
promotion through the CUDA cores, DeepSeek-V3 report section 3.3.2) beside them; before / after by
GPU and by rows an expert, and :data:`PROPOSED_FP8_BLOCK_KERNELS` read the same way.  The Hopper
kernel was put in the engine on 2026-12-06 and taken out again: it broke a fitted DeepSeek
prefill row (docs/MODEL.md 15.1, "Block-scaled FP8 experts, tried and not kept").
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.model.efficiency import gemm_peak_flops, profile
from advisor.engine.model.serving import gemm
from advisor.engine.model.serving.compute import _moe_layer_gemms, moe_layer_s
from bench.aic_systems import CATALOG_GPU, moe_elementwise_s, moe_point, moe_shape, moe_table

PRECISION = {"bfloat16": "bf16", "fp8": "fp8", "nvfp4": "fp4"}
FITTED_SOURCE = "moe_torch_flow_cutlass"
FITTED_GPUS = ("h100-sxm", "h200-sxm", "b200", "gb200-nvl72", "b300", "gb300-nvl72")
"""The GPUs of the first fit (2026-12-05); L40S's table, added since, is read, not fitted."""


def table_points() -> list[dict[str, Any]]:
    import pandas as pd  # type: ignore[import-not-found]

    out: list[dict[str, Any]] = []
    for system, gpu in CATALOG_GPU.items():
        path = moe_table(system)
        if not path.exists():
            continue
        frame = pd.read_parquet(path)
        frame = frame[frame.moe_dtype.isin(list(PRECISION)) & (frame.distribution == "balanced")]
        # the engine splits experts over tp or keeps them whole over ep, never both
        frame = frame[(frame.moe_tp_size == 1) | (frame.moe_ep_size == 1)]
        for row in frame.itertuples():
            point = moe_point(row, gpu)
            out.append(point | {"precision": PRECISION[point["dtype"]]})
    return out


def features(points: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """What the rule needs of each point, from the engine's own functions: the experts hit and
    their rows (``compute.moe_layer_s``), the two GEMMs' shapes
    and tiles, the weight read, the sustained peak, and the element-wise passes the table's
    kernels include (permutation, gated activation)."""
    catalog = default_catalog()
    base = catalog.model("qwen3-30b-a3b")
    assert base is not None
    cols: dict[str, list[float]] = {
        k: []
        for k in (
            "weights_s",
            "tile_rows",
            "tile_m",
            "kn_up",
            "kn_down",
            "k_up",
            "k_down",
            "tiles",
            "sms",
            "peak",
            "extra_s",
            "measured_s",
            "experts",
            "rows_per_expert",
            "tiles_n",
            "kblock_tiles",
        )
    }
    for p in points:
        gpu = catalog.gpu(p["gpu"])
        assert gpu is not None
        model = moe_shape(base, p)
        tp, ep = p["tp"], p["ep"]
        tokens = float(p["tokens"])
        layer = _moe_layer_gemms(gpu, p["precision"], model, tp, ep > 1)
        # the experts hit and their rows as the engine's layer counts them
        times = moe_layer_s(
            gpu, p["precision"], model, tokens / ep, tp, ep, max(1, p["experts"] // ep), tokens
        )
        experts = times.experts_run
        up, down = layer.up, layer.down
        tile_rows = experts * math.ceil(times.rows_per_expert / up.tile_m)
        # the sustained peak itself (the layer's rate is a block-scaled model's own on Hopper)
        prof = profile(gpu)
        peak = prof.sustained_ratio * gemm_peak_flops(gpu, prof, p["precision"])
        cols["weights_s"].append(experts * (up.kn + down.kn) * up.wbytes / up.hbm)
        cols["tile_rows"].append(tile_rows)
        cols["tile_m"].append(up.tile_m)
        cols["kn_up"].append(up.kn)
        cols["kn_down"].append(down.kn)
        cols["k_up"].append(up.k)
        cols["k_down"].append(down.k)
        cols["tiles"].append(tile_rows * (up.tiles_n + down.tiles_n))
        cols["sms"].append(up.sms)
        cols["peak"].append(peak)
        cols["extra_s"].append(moe_elementwise_s(gpu, p))
        cols["measured_s"].append(p["measured_s"])
        cols["experts"].append(experts)
        cols["rows_per_expert"].append(times.rows_per_expert)
        cols["tiles_n"].append(up.tiles_n + down.tiles_n)
        # output tiles along N times 128-wide K blocks, a row tile of each GEMM
        blocks = up.tiles_n * math.ceil(up.k / 128) + down.tiles_n * math.ceil(down.k / 128)
        cols["kblock_tiles"].append(blocks)
    return {k: np.asarray(v, dtype=float) for k, v in cols.items()}


def priced(
    f: dict[str, np.ndarray],
    fraction: np.ndarray,
    fixed_s: float,
    tile_s: float,
    depth_k: float,
) -> np.ndarray:
    """:func:`gemm.routed_experts_s` for every point (plus the element-wise passes)."""
    rate = fraction * f["peak"]
    work = 2.0 * f["tile_rows"] * f["tile_m"]
    compute = work * (
        f["kn_up"] * (1.0 + depth_k / f["k_up"]) + f["kn_down"] * (1.0 + depth_k / f["k_down"])
    )
    compute = compute / rate + tile_s * f["tiles"] / f["sms"]
    out: np.ndarray = fixed_s + np.maximum(f["weights_s"], compute) + f["extra_s"]
    return out


def summary(errs: np.ndarray) -> dict[str, Any]:
    a = np.abs(errs)
    return {
        "n": len(errs),
        "mean_abs_pct": round(100 * float(a.mean()), 1) if len(a) else None,
        "p90_abs_pct": round(100 * float(np.quantile(a, 0.9)), 1) if len(a) else None,
        "signed_mean_pct": round(100 * float(errs.mean()), 1) if len(a) else None,
    }


def report(
    points: list[dict[str, Any]], f: dict[str, np.ndarray], constants: dict[str, Any]
) -> dict[str, Any]:
    fraction = np.asarray([constants["fraction"][p["precision"]] for p in points])
    errs = priced(f, fraction, constants["fixed_s"], constants["tile_s"], constants["depth_k"])
    errs = errs / f["measured_s"] - 1.0
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(points):
        shape = f"h{p['hidden']} w{p['inter']} E{p['experts']} k{p['topk']}"
        for key in (
            f"source {p['source']}",
            f"gpu {p['gpu']} {p['source'][15:]}",
            f"{p['source'][15:]} {p['precision']}",
            f"{p['source'][15:]} {shape}",
        ):
            groups.setdefault(key, []).append(i)
    return {k: summary(errs[np.asarray(v)]) for k, v in sorted(groups.items())}


def _log_loss(
    part: dict[str, np.ndarray], fraction: float, fixed_s: float, tile_s: float, depth_k: float
) -> float:
    full = np.full(len(part["measured_s"]), fraction)
    ratio = priced(part, full, fixed_s, tile_s, depth_k) / part["measured_s"]
    return float(np.sum(np.log(ratio) ** 2))


def fit(points: list[dict[str, Any]], f: dict[str, np.ndarray]) -> dict[str, Any]:
    """Least squared log error over the fitted source's points: a grid over the fixed cost,
    the cost per wave of tiles and the depth term, each precision's fraction solved on a grid
    inside."""
    keep = np.asarray([p["source"] == FITTED_SOURCE and p["gpu"] in FITTED_GPUS for p in points])
    sub = {k: v[keep] for k, v in f.items()}
    precisions = np.asarray([p["precision"] for p, k in zip(points, keep, strict=True) if k])
    fractions = np.arange(0.2, 1.21, 0.02)
    best: tuple[float, dict[str, Any]] | None = None
    for fixed_us, tile_us, depth_k in itertools.product(
        range(14, 60, 4), (0.0, 1.0, 2.0, 3.0, 4.9, 7.0), (0.0, 128.0, 256.0, 512.0, 768.0, 1024.0)
    ):
        chosen: dict[str, float] = {}
        loss = 0.0
        for precision in sorted(set(precisions)):
            mask = precisions == precision
            part = {k: v[mask] for k, v in sub.items()}
            losses = [
                _log_loss(part, fr, fixed_us * 1e-6, tile_us * 1e-6, depth_k) for fr in fractions
            ]
            i = int(np.argmin(losses))
            chosen[precision] = round(float(fractions[i]), 2)
            loss += losses[i]
        if best is None or loss < best[0]:
            best = (
                loss,
                {
                    "fixed_s": fixed_us * 1e-6,
                    "tile_s": tile_us * 1e-6,
                    "depth_k": depth_k,
                    "fraction": chosen,
                },
            )
    assert best is not None
    return best[1]


def current() -> dict[str, Any]:
    return {
        "fixed_s": gemm.MOE_KERNEL_FIXED_S,
        "tile_s": gemm.MOE_KERNEL_TILE_S,
        "depth_k": 0.0,  # the engine has no depth term
        "fraction": dict(gemm.MOE_GROUPED_GEMM_FRACTION),
    }


BANDS = ((0.0, 16.0), (16.0, 64.0), (64.0, 256.0), (256.0, math.inf))
"""Rows an expert (balanced: tokens x top_k / experts) the block-scaled reading is split by."""
HOPPER = ("h100-sxm", "h200-sxm")


def fp8_points(dtypes: tuple[str, ...] = ("fp8", "fp8_block")) -> list[dict[str, Any]]:
    """The balanced FP8 points of the fitted GPUs (tp or ep alone; CUTLASS, and Blackwell's
    block-scaled DeepGEMM), ``dtypes`` of them."""
    import pandas as pd  # type: ignore[import-not-found]

    points: list[dict[str, Any]] = []
    for system, gpu in CATALOG_GPU.items():
        path = moe_table(system)
        if gpu not in FITTED_GPUS or not path.exists():
            continue
        frame = pd.read_parquet(path)
        frame = frame[frame.moe_dtype.isin(list(dtypes)) & (frame.distribution == "balanced")]
        frame = frame[(frame.moe_tp_size == 1) | (frame.moe_ep_size == 1)]
        frame = frame[frame.kernel_source.isin([FITTED_SOURCE, "deepgemm"])]
        points += [moe_point(row, gpu) | {"precision": "fp8"} for row in frame.itertuples()]
    return points


def fp8_block() -> int:
    """The block-scaled FP8 rows read against the engine's FP8 constants (see the docstring)."""
    points = fp8_points()
    f = features(points)
    now = current()
    rows = np.asarray([p["tokens"] * p["topk"] / p["experts"] for p in points])

    def errors(mask: np.ndarray, fraction: float) -> np.ndarray:
        part = {k: v[mask] for k, v in f.items()}
        full = np.full(int(mask.sum()), fraction)
        out: np.ndarray = (
            priced(part, full, now["fixed_s"], now["tile_s"], 0.0) / part["measured_s"]
        )
        return out - 1.0

    def bands(mask: np.ndarray, fraction: float) -> dict[str, Any]:
        errs = errors(mask, fraction)
        out: dict[str, Any] = {"all": summary(errs)}
        for lo, hi in BANDS:
            band = (rows[mask] >= lo) & (rows[mask] < hi)
            out[f"rows {lo:g}-{hi:g}"] = summary(errs[band])
        return out

    fp8 = now["fraction"]["fp8"]
    for gpu in sorted({p["gpu"] for p in points}):
        for dtype in ("fp8", "fp8_block"):
            mask = np.asarray([p["gpu"] == gpu and p["dtype"] == dtype for p in points])
            if mask.any():
                print(json.dumps({"gpu": gpu, "dtype": dtype, **bands(mask, fp8)}))
    hopper = np.asarray([p["gpu"] in HOPPER and p["dtype"] == "fp8_block" for p in points])
    grid = np.arange(0.2, 1.205, 0.01)
    for label, mask in (("all", hopper), ("16+ rows", hopper & (rows >= 16.0))):
        part = {k: v[mask] for k, v in f.items()}
        losses = [_log_loss(part, x, now["fixed_s"], now["tile_s"], 0.0) for x in grid]
        best = round(float(grid[int(np.argmin(losses))]), 2)
        print(json.dumps({"hopper fp8_block fraction fitted on": label, "fraction": best}))
        print(json.dumps(bands(hopper, best)))
    return 0


GENERATIONS = {"hopper": HOPPER, "blackwell": ("b200", "gb200-nvl72", "b300", "gb300-nvl72")}
PROPOSED_FP8_BLOCK_KERNELS: dict[str, tuple[tuple[float, float, float], float]] = {
    "hopper": ((32e-6, 9e-6, 0.76), 32.0)
}
"""((fixed seconds, seconds per wave of tiles, fraction of the sustained FP8 peak), rows per tile)
of the block-scaled FP8 experts' kernels ``--fit`` finds, where they read the tables clearly
better than the shared constants (Hopper: 24.0 -> 13.7 % mean |error|; Blackwell's own fit,
17.7 -> 16.4 %, is not listed); not in the engine (docs/MODEL.md 15.1, "Block-scaled FP8
experts, tried and not kept")."""


def block_priced(
    f: dict[str, np.ndarray],
    constants: tuple[float, float, float],
    tile_m: float,
    kblock_s: float = 0.0,
) -> np.ndarray:
    """:func:`gemm.routed_experts_s` with (fixed, tile, fraction) and ``tile_m`` rows a tile for
    every point (plus the element-wise passes), and ``kblock_s`` seconds per row tile per output
    tile per 128-wide K block (the promotion's cost, a wave of them per SM)."""
    fixed_s, tile_s, fraction = constants
    tile_rows = f["experts"] * np.ceil(f["rows_per_expert"] / tile_m)
    compute = 2.0 * tile_rows * tile_m * (f["kn_up"] + f["kn_down"]) / (fraction * f["peak"])
    compute += (tile_s * f["tiles_n"] + kblock_s * f["kblock_tiles"]) * tile_rows / f["sms"]
    out: np.ndarray = fixed_s + np.maximum(f["weights_s"], compute) + f["extra_s"]
    return out


def by_band(f: dict[str, np.ndarray], errs: np.ndarray, rows: np.ndarray) -> dict[str, Any]:
    out: dict[str, Any] = {"all": summary(errs)}
    for lo, hi in BANDS:
        band = (rows >= lo) & (rows < hi)
        out[f"rows {lo:g}-{hi:g}"] = summary(errs[band])
    return out


def kernel_label(c: tuple[float, float, float], tile_m: float) -> str:
    return f"{c[0] * 1e6:g} us + {c[1] * 1e6:g} us a wave, {c[2]:g} of peak, tile {tile_m:g}"


def fp8_block_fit() -> int:
    """``--fp8-block --fit``: block-scaled FP8 experts' kernels of their own, per generation."""
    points = fp8_points(("fp8_block",))
    f = features(points)
    rows = np.asarray([p["tokens"] * p["topk"] / p["experts"] for p in points])
    gpus = np.asarray([p["gpu"] for p in points])
    shared = (
        gemm.MOE_KERNEL_FIXED_S,
        gemm.MOE_KERNEL_TILE_S,
        gemm.MOE_GROUPED_GEMM_FRACTION["fp8"],
    )
    fractions = np.arange(0.3, 1.205, 0.02)
    for generation, members in GENERATIONS.items():
        mask = np.isin(gpus, members)
        part = {k: v[mask] for k, v in f.items()}

        def loss(c: tuple[float, float, float], tile_m: float, kb: float = 0.0) -> float:
            r = np.log(block_priced(part, c, tile_m, kb) / part["measured_s"])  # noqa: B023
            return float(np.sum(r * r))

        found: list[tuple[float, float, tuple[float, float, float]]] = []
        for tile_m in (32.0, 64.0, 128.0):
            grid = itertools.product(range(10, 60, 2), range(0, 17), fractions)
            c = min(
                ((a * 1e-6, b * 1e-6, round(float(x), 2)) for a, b, x in grid),
                key=lambda c: loss(c, tile_m),
            )
            found.append((loss(c, tile_m), tile_m, c))
            print(
                json.dumps(
                    {
                        generation: f"tile_m {tile_m:g}",
                        "loss": round(found[-1][0], 1),
                        "fixed_us": round(c[0] * 1e6),
                        "tile_us": round(c[1] * 1e6),
                        "fraction": c[2],
                        "mean_abs_pct": summary(
                            block_priced(part, c, tile_m) / part["measured_s"] - 1
                        )["mean_abs_pct"],
                    }
                )
            )
        _, tile_m, best = min(found)
        # the promotion: a cost per tile per 128-wide K block, scanned at the chosen tile
        promo = min(
            (
                (loss(c, tile_m, kb * 1e-6), kb, c)
                for kb in (0.0, 0.1, 0.2, 0.4, 0.8)
                for c in (
                    (a * 1e-6, b * 1e-6, round(float(x), 2))
                    for a, b, x in itertools.product(
                        range(10, 60, 4), range(0, 17, 2), fractions[::2]
                    )
                )
            ),
            key=lambda t: t[0],
        )
        print(
            json.dumps(
                {
                    generation: "with a cost per 128-wide K block",
                    "kblock_us": promo[1],
                    "loss": round(promo[0], 1),
                }
            )
        )
        proposed = PROPOSED_FP8_BLOCK_KERNELS.get(generation)
        for gpu in (*members, "all"):
            sub = mask & ((gpus == gpu) | (gpu == "all"))
            g = {k: v[sub] for k, v in f.items()}
            read = {
                "before (shared FP8)": block_priced(g, shared, 128.0),
                f"fitted {kernel_label(best, tile_m)}": block_priced(g, best, tile_m),
            }
            if proposed is not None:
                read[f"proposed {kernel_label(*proposed)}"] = block_priced(g, *proposed)
            for label, t in read.items():
                errs = t / g["measured_s"] - 1.0
                print(json.dumps({"gpu": gpu, "constants": label, **by_band(g, errs, rows[sub])}))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--current", action="store_true", help="report the engine's constants")
    parser.add_argument("--fp8-block", action="store_true", help="read block-scaled FP8")
    parser.add_argument("--fit", action="store_true", help="with --fp8-block: fit its kernels")
    args = parser.parse_args(argv)
    if args.fp8_block:
        return fp8_block_fit() if args.fit else fp8_block()
    points = table_points()
    f = features(points)
    now = current()
    print(json.dumps({"constants": "engine", **{k: v for k, v in now.items()}}))
    print(json.dumps(report(points, f, now), indent=1))
    if not args.current:
        best = fit(points, f)
        print(json.dumps({"constants": "fitted", **best}))
        print(json.dumps(report(points, f, best), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
