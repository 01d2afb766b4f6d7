"""The inference GEMM rule against the GEMM latencies TensorRT-LLM measured (docs/MODEL.md 15.1,
"16-bit inference GEMMs").

NVIDIA AIConfigurator ships the GEMM latencies its collectors measured with each framework
(``aiconfigurator_core/systems/data/<gpu>/gemm/<framework>/<version>/gemm_perf.parquet``).
The peer is a tool beside the product, never a dependency of it: install it into a scratch venv
(``python3.11 -m venv /tmp/aic && /tmp/aic/bin/pip install aiconfigurator``) and run this
script with that venv's Python, which has pandas to read the tables::

    /tmp/aic/bin/python bench/aic_gemm_table.py
    /tmp/aic/bin/python bench/aic_gemm_table.py --gpu h100_sxm --dtype fp8
    /tmp/aic/bin/python bench/aic_gemm_table.py --fixed

``--fixed`` prints, per table, what docs/MODEL.md 15.1 ("NVFP4 GEMMs, read against
TensorRT-LLM's kernels") read: each precision's fixed part (the M = 1 latency less the weight read
at ``HBM_EFFICIENCY``, median over N, K in {1,024 ... 16,384}; the cast tried and not kept) and,
for NVFP4, the median achieved rate of its compute-bound GEMMs (M, N, K >= 4,096) over FP8's
(``ComputeProfile.fp4_over_fp8``).

For each table: the mean |error| and mean signed error (model / measured - 1) over the grid's
N, K in {1,024 ... 16,384} x {4,096, 8,192, 16,384}, for M >= 256 and for M = 129-448, of three
rules without the fixed per-GEMM cost: the training wave rule (tiles of the GPU profile over its
SMs), the split-K blend (no wave loss below one tile of rows, the training loss from two: every
inference GEMM's rule before the 16-bit change, FP8's still), no wave loss, and the engine's
``gemm_time_s(..., inference=True)``. Each measured latency
is taken less its fixed part (its M = 1 latency less the weight read at ``HBM_EFFICIENCY``).
Prints one JSON object per table.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import HBM_EFFICIENCY, QUANTIZED_PRECISIONS, WEIGHT_BYTES
from advisor.engine.model.efficiency import gemm_time_s, profile
from bench.aic_systems import CATALOG_GPU, data_dir

# AIConfigurator's system name -> the catalog's GPU, and the TensorRT-LLM table read
TABLES = {
    system: (gpu, "1.0.0" if system == "a100_sxm" else "1.3.0rc20")
    for system, gpu in CATALOG_GPU.items()
}
DTYPES = {"bf16": "bfloat16", "fp8": "fp8", "fp4": "nvfp4"}
NS = (1024, 2048, 3072, 4096, 6144, 8192, 16384)
KS = (4096, 8192, 16384)
LARGE_M = (256, 512, 768, 1024, 1536, 2048, 3072, 4096)
SMALL_M = (129, 160, 192, 224, 257, 320, 384, 448)


def _read(path: Path, dtype: str) -> dict[tuple[int, int, int], float]:
    import pandas as pd  # type: ignore[import-not-found]

    frame = pd.read_parquet(path)
    frame = frame[frame.gemm_dtype == DTYPES[dtype]]
    return {
        (int(m), int(n), int(k)): float(lat) * 1e-3
        for m, n, k, lat in zip(frame.m, frame.n, frame.k, frame.latency, strict=True)
    }


def _stats(errors: list[float]) -> dict[str, float | int]:
    if not errors:
        return {"shapes": 0}
    return {
        "shapes": len(errors),
        "mae_pct": round(100 * sum(abs(e) for e in errors) / len(errors), 1),
        "bias_pct": round(100 * sum(errors) / len(errors), 1),
    }


def compare(system: str, dtype: str, data: Path) -> dict[str, Any]:
    gpu_id, version = TABLES[system]
    path = data / system / "gemm" / "trtllm" / version / "gemm_perf.parquet"
    measured = _read(path, dtype)
    gpu = default_catalog().gpu(gpu_id)
    p = profile(gpu)
    frac = p.mamf_fp8 if dtype in QUANTIZED_PRECISIONS and p.mamf_fp8 > 0 else p.mamf_bf16
    rate = frac * p.sustained_ratio * gpu.peak_tflops(dtype) * 1e12
    hbm = gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
    width = WEIGHT_BYTES[dtype]

    def wave(m: int, n: int) -> float:
        tiles = math.ceil(m / p.tile_m) * math.ceil(n / p.tile_n)
        return math.ceil(tiles / p.sms) * p.sms / tiles

    rules = {
        "training_wave": lambda m, n, k: 2.0 * m * n * k / rate * wave(m, n),
        "split_k_blend": lambda m, n, k: (
            2.0
            * m
            * n
            * k
            / rate
            * (1.0 + (wave(m, n) - 1.0) * min(1.0, max(0.0, m / p.tile_m - 1.0)))
        ),
        "no_wave": lambda m, n, k: 2.0 * m * n * k / rate,
        "engine": lambda m, n, k: gemm_time_s(gpu, dtype, m, n, k, True) - p.gemm_latency_s,
    }
    out: dict[str, Any] = {"system": system, "gpu": gpu_id, "trtllm": version, "dtype": dtype}
    for name, rule in rules.items():
        for label, ms in (("m_ge_256", LARGE_M), ("m_129_448", SMALL_M)):
            errors = []
            for n in NS:
                for k in KS:
                    if (1, n, k) not in measured:
                        continue
                    fixed = max(0.0, measured[(1, n, k)] - k * n * width / hbm)
                    for m in ms:
                        if (m, n, k) not in measured:
                            continue
                        memory = (m * k + k * n + m * n) * width / hbm
                        model = rule(m, n, k) if name == "engine" else max(rule(m, n, k), memory)
                        errors.append(model / (measured[(m, n, k)] - fixed) - 1.0)
            out[f"{name}_{label}"] = _stats(errors)
    return out


FIXED_NK = (1024, 2048, 4096, 8192, 16384)


def fixed_parts(system: str, data: Path) -> dict[str, Any]:
    """Per precision, the median fixed part (us) of the table's GEMMs and, for NVFP4, the median
    achieved TFLOP/s of its compute-bound GEMMs over FP8's (``--fixed``)."""
    import statistics

    gpu_id, version = TABLES[system]
    path = data / system / "gemm" / "trtllm" / version / "gemm_perf.parquet"
    gpu = default_catalog().gpu(gpu_id)
    hbm = gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
    out: dict[str, Any] = {"system": system, "gpu": gpu_id, "trtllm": version}
    rates: dict[str, float] = {}
    for dtype in DTYPES:
        table = _read(path, dtype)
        if not table or gpu.peak_tflops(dtype) <= 0:
            continue
        width = WEIGHT_BYTES[dtype]
        fixed = [
            (lat - k * n * width / hbm) * 1e6
            for (m, n, k), lat in table.items()
            if m == 1 and n in FIXED_NK and k in FIXED_NK
        ]
        out[f"{dtype}_fixed_us"] = round(statistics.median(fixed), 2)
        rates[dtype] = statistics.median(
            2.0 * m * n * k / lat / 1e12 for (m, n, k), lat in table.items() if min(m, n, k) >= 4096
        )
        out[f"{dtype}_tflops"] = round(rates[dtype], 1)
    if "fp4" in rates and "fp8" in rates:
        out["fp4_over_fp8"] = round(rates["fp4"] / rates["fp8"], 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", action="append", choices=sorted(TABLES))
    parser.add_argument("--dtype", action="append", choices=sorted(DTYPES))
    parser.add_argument("--data", type=Path, help="AIConfigurator's systems/data directory")
    parser.add_argument("--fixed", action="store_true", help="fixed parts and NVFP4 / FP8 rates")
    args = parser.parse_args()
    try:
        data = args.data or data_dir()
    except ImportError:
        sys.exit("aiconfigurator is not installed here: run with the scratch venv's Python")
    if args.fixed:
        for system in args.gpu or sorted(TABLES):
            print(json.dumps(fixed_parts(system, data)))
        return
    for system in args.gpu or sorted(TABLES):
        for dtype in args.dtype or ["bf16", "fp8"]:
            gpu = default_catalog().gpu(TABLES[system][0])
            if gpu is None or gpu.peak_tflops(dtype) <= 0:
                continue  # no tensor cores of that precision (A100 FP8, every FP4 but Blackwell)
            print(json.dumps(compare(system, dtype, data)))


if __name__ == "__main__":
    main()
