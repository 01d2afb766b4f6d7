"""The decode attention's three constants, fitted on TensorRT-LLM's measured generation-attention
latencies (docs/MODEL.md 15.1, "Decode attention in closed form").

NVIDIA AIConfigurator 0.12.0 ships the generation-attention latencies its collector measured
with TensorRT-LLM 1.3.0rc20 (``aiconfigurator_core/systems/data/<gpu>/attention/trtllm/
1.3.0rc20/generation_attention_perf.parquet``: batch, step (the context less one), query heads,
KV heads, head dim, KV dtype, window, latency in ms).  The peer is a tool beside the product,
never a dependency of it: install it into a scratch venv (``python3.11 -m venv /tmp/aic &&
/tmp/aic/bin/pip install aiconfigurator``) and run this script with that venv's Python, which
has pandas and numpy::

    /tmp/aic/bin/python bench/aic_attention_fit.py

One call on one GPU reads ``S = batch x context x KV heads x head_dim x 2 x KV bytes`` and runs
``F = 4 x query heads x head_dim x batch x context`` FLOPs.  The rule is
``t = t0 + S / (e x HBM peak) + F / (r x 16-bit dense peak)``, linear in (t0, 1/e, 1/r), so the
constants are the least-squares solution on the relative error (each row divided by its
measured latency).  Fit domain, fixed before reading any serving row: the H100 SXM and H200 SXM
tables, FP8 KV cache (what an FP8 deployment keeps), head dim 64 or 128, no sliding window,
GQA with 2-32 query heads per KV head and at most 8 KV heads (the catalog's models per GPU),
at least 16 sequences and 512 tokens of context (a serving decode batch).  Prints the constants
and, for every table (FP8 and BF16 KV), the rule's and the roofline's (KV read at
``HBM_EFFICIENCY``) mean |error| and mean signed error, by query heads per KV head; the engine's
constants (``advisor/engine/model/serving/attention.py``) are printed beside them.

``--context`` reads the context-attention tables instead (``context_attention_perf.parquet``,
torch_flow kernels): per GPU, over head_dim 128, no window, 8+ query heads on at most 8 KV heads
(1-16 query heads per KV head), prompts of 1,024-16,384 tokens and batch x prompt <= 65,536, the
FLOP rate the BF16 and the FP8 (FP8 KV) kernels reach, time-weighted (causal FLOPs
``4 x batch x prompt^2 / 2 x heads x 128`` over the summed latencies), beside the engine's
prefill attention rate (the training attention rate of the 16-bit peak, and of the FP8 peak for
an fp8 / fp4 deployment), and the FP8 gain (BF16 time / FP8 time over the shapes both ran):
docs/MODEL.md 15.1, "FP8 context attention, read against the kernel tables".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import HBM_EFFICIENCY
from advisor.engine.model.serving import attention
from bench.aic_systems import CATALOG_GPU, data_dir

# AIConfigurator's system name -> the catalog's GPU (TensorRT-LLM 1.3.0rc20 tables)
TABLES = {s: CATALOG_GPU[s] for s in ("h100_sxm", "h200_sxm", "b200_sxm", "gb200")}
CONTEXT_TABLES = {**TABLES, **{s: CATALOG_GPU[s] for s in ("b300_sxm", "gb300", "l40s")}}
FITTED_ON = ("h100_sxm", "h200_sxm")
VERSION = "1.3.0rc20"
GROUPS = (2, 4, 5, 8, 16, 32)


def _rows(data: Path, system: str, kv_dtype: str) -> dict[str, Any]:
    import numpy as np  # type: ignore[import-not-found]
    import pandas as pd  # type: ignore[import-not-found]

    path = data / system / "attention" / "trtllm" / VERSION / "generation_attention_perf.parquet"
    f = pd.read_parquet(path)
    group = f.num_heads // f.num_key_value_heads
    f = f[
        f.head_dim.isin((64, 128))
        & (f.window_size == 0)
        & (f.kv_cache_dtype == kv_dtype)
        & (f.num_key_value_heads <= 8)
        & (group >= 2)
        & (group <= 32)
        & (f.batch_size >= 16)
        & (f.step + 1 >= 512)
    ]
    gpu = default_catalog().gpu(TABLES[system])
    width = 1.0 if kv_dtype == "fp8" else 2.0
    head_dim = f.head_dim.to_numpy(float)
    tokens = f.batch_size.to_numpy(float) * (f.step + 1).to_numpy(float)
    return {
        "S": tokens * f.num_key_value_heads.to_numpy(float) * head_dim * 2 * width,
        "F": 4.0 * f.num_heads.to_numpy(float) * head_dim * tokens,
        "t": f.latency.to_numpy(float) * 1e-3,
        "g": (f.num_heads // f.num_key_value_heads).to_numpy(),
        "hbm": gpu.memory_bw_gbytes_per_s * 1e9,
        "peak": (gpu.peak_tflops("bf16") or gpu.peak_tflops("fp16")) * 1e12,
        "np": np,
    }


def fit(tables: list[dict[str, Any]]) -> tuple[float, float, float]:
    np = tables[0]["np"]
    design = np.concatenate(
        [
            np.stack([1.0 / d["t"], d["S"] / d["hbm"] / d["t"], d["F"] / d["peak"] / d["t"]], 1)
            for d in tables
        ]
    )
    (t0, inv_e, inv_r), *_ = np.linalg.lstsq(design, np.ones(len(design)), rcond=None)
    return float(t0), 1.0 / float(inv_e), 1.0 / float(inv_r)


def fit_overlap(
    tables: list[dict[str, Any]], t0: float, start: tuple[float, float]
) -> tuple[float, float, float]:
    """(e, r, k) of ``t0 + ((S / (e HBM))^k + (F / (r peak))^k)^(1/k)`` with the sum's t0 held:
    least squares on the relative error (scipy), from the sum's (e, r) and k = 2."""
    np = tables[0]["np"]
    from scipy.optimize import least_squares  # type: ignore[import-not-found]

    s = np.concatenate([d["S"] / d["hbm"] for d in tables])
    f = np.concatenate([d["F"] / d["peak"] for d in tables])
    t = np.concatenate([d["t"] for d in tables])

    def residuals(x: Any) -> Any:
        e, r, k = x
        return (t0 + ((s / e) ** k + (f / r) ** k) ** (1.0 / k)) / t - 1.0

    fitted = least_squares(
        residuals, [start[0], start[1], 2.0], bounds=([0.05, 0.01, 1.0], [2.0, 2.0, 8.0])
    )
    e, r, k = fitted.x
    return float(e), float(r), float(k)


def read(d: dict[str, Any], t0: float, e: float, r: float, k: float = 1.0) -> dict[str, Any]:
    np = d["np"]
    memory, math = d["S"] / (e * d["hbm"]), d["F"] / (r * d["peak"])
    rule = (t0 + (memory**k + math**k) ** (1.0 / k)) / d["t"] - 1.0
    roof = d["S"] / (HBM_EFFICIENCY * d["hbm"]) / d["t"] - 1.0

    def stats(err: Any, mask: Any) -> dict[str, float | int]:
        sel = err[mask]
        if not len(sel):
            return {"calls": 0}
        return {
            "calls": len(sel),
            "mae_pct": round(100 * float(np.mean(np.abs(sel))), 1),
            "bias_pct": round(100 * float(np.mean(sel)), 1),
        }

    every = np.ones(len(d["t"]), dtype=bool)
    return {
        "rule": stats(rule, every),
        "roofline": stats(roof, every),
        "rule_by_group": {str(g): stats(rule, d["g"] == g) for g in GROUPS},
        "roofline_by_group": {str(g): stats(roof, d["g"] == g) for g in GROUPS},
    }


def context_rates(data: Path, system: str) -> dict[str, Any]:
    """The context-attention rates of one GPU's table against the engine's (``--context``)."""
    import pandas as pd  # type: ignore[import-not-found]

    from advisor.engine.model.efficiency import profile

    path = data / system / "attention" / "trtllm" / VERSION / "context_attention_perf.parquet"
    f = pd.read_parquet(path)
    group = f.num_heads // f.num_key_value_heads
    f = f[
        (f.head_dim == 128)
        & (f.window_size == 0)
        & (f.kernel_source == "torch_flow")
        & (f.num_heads % f.num_key_value_heads == 0)
        & group.between(1, 16)
        & (f.num_key_value_heads <= 8)
        & (f.num_heads >= 8)
        & f.isl.between(1024, 16384)
        & (f.batch_size * f.isl <= 65536)
    ]
    shape = ["batch_size", "isl", "num_heads", "num_key_value_heads"]
    by_dtype = {
        dtype: f[(f.attn_dtype == dtype) & (f.kv_cache_dtype == dtype)].set_index(shape).latency
        for dtype in ("bfloat16", "fp8")
    }
    both = pd.concat([by_dtype["bfloat16"].rename("b"), by_dtype["fp8"].rename("f")], axis=1)
    both = both.dropna().reset_index()
    flops = 4.0 * both.batch_size * both.isl * both.isl / 2.0 * both.num_heads * 128
    gpu = default_catalog().gpu(CONTEXT_TABLES[system])
    p = profile(gpu)
    sixteen = gpu.peak_tflops("bf16") or gpu.peak_tflops("fp16")
    return {
        "system": system,
        "shapes": len(both),
        "bf16_tflops": round(float(flops.sum() / (both.b.sum() * 1e-3)) / 1e12),
        "fp8_tflops": round(float(flops.sum() / (both.f.sum() * 1e-3)) / 1e12),
        "fp8_gain": round(float(both.b.sum() / both.f.sum()), 3),
        "engine_bf16_tflops": round(p.attention_fraction * p.sustained_ratio * sixteen),
        "engine_fp8_tflops": round(
            p.attention_fraction * p.sustained_ratio * gpu.peak_tflops("fp8")
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="AIConfigurator's systems/data directory")
    parser.add_argument(
        "--kv",
        choices=("fp8", "bfloat16"),
        default="fp8",
        help="fit on the FP8-KV calls (the engine's constants) or the BF16-KV calls (Hopper's "
        "16-bit KV constants, attention.DECODE_ATTENTION_HOPPER_16BIT_KV)",
    )
    parser.add_argument(
        "--overlap",
        action="store_true",
        help="fit the p-norm form (the sum's t0 held; e, r and the exponent k by least squares: "
        "the engine's, attention.DECODE_ATTENTION_NORM) instead of the sum",
    )
    parser.add_argument(
        "--context",
        action="store_true",
        help="read the context-attention (prefill) tables: BF16 and FP8 rates, FP8 gain",
    )
    args = parser.parse_args()
    try:
        data = args.data or data_dir()
    except ImportError:
        sys.exit("aiconfigurator is not installed here: run with the scratch venv's Python")
    if args.context:
        for system in CONTEXT_TABLES:
            print(json.dumps(context_rates(data, system)))
        return
    tables = [_rows(data, s, args.kv) for s in FITTED_ON]
    t0, e, r = fit(tables)
    k = 1.0
    if args.overlap:
        e, r, k = fit_overlap(tables, t0, (e, r))
    engine = (
        attention.DECODE_ATTENTION_HOPPER_16BIT_KV
        if args.kv == "bfloat16"
        else (
            attention.DECODE_ATTENTION_FIXED_S,
            attention.DECODE_ATTENTION_HBM_FRACTION,
            attention.DECODE_ATTENTION_FLOP_FRACTION,
            attention.DECODE_ATTENTION_NORM,
        )
    )
    print(
        json.dumps(
            {
                "fitted": {
                    "fixed_us": round(t0 * 1e6, 2),
                    "hbm_fraction": round(e, 3),
                    "flop_fraction": round(r, 4),
                    "norm": round(k, 2),
                },
                "engine": {
                    "fixed_us": round(engine[0] * 1e6, 2),
                    "hbm_fraction": engine[1],
                    "flop_fraction": engine[2],
                    "norm": engine[3],
                },
            }
        )
    )
    for system in TABLES:
        for kv_dtype in ("fp8", "bfloat16"):
            out = {"system": system, "kv": kv_dtype} | read(_rows(data, system, kv_dtype), *engine)
            print(json.dumps(out))


if __name__ == "__main__":
    main()
