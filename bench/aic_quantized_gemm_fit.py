"""The fixed part and the compute / memory overlap of 8- and 4-bit inference GEMMs, fitted per
GPU generation on TensorRT-LLM's measured GEMM latencies (docs/MODEL.md 15.1, "The decode step
at the kernel tables' own costs").

NVIDIA AIConfigurator 0.12.0 ships TensorRT-LLM 1.3.0rc20's measured GEMM latencies
(``aiconfigurator_core/systems/data/<gpu>/gemm/trtllm/1.3.0rc20/gemm_perf.parquet``; timed as
``Linear.forward`` under CUDA graphs, the activation's cast included). The peer is a tool beside
the product, never a dependency of it: run this script with the scratch venv's Python
(``python3.11 -m venv /tmp/aic && /tmp/aic/bin/pip install aiconfigurator==0.12.0``)::

    /tmp/aic/bin/python bench/aic_quantized_gemm_fit.py

The rule (``efficiency.gemm_time_s(..., inference=True)`` for a quantized GEMM on Hopper and
Blackwell) is ``t = t0 + f + max(c, m) + o x min(c, m)``: ``c`` the FLOPs at the FP8 GEMMs'
measured fraction of the precision's peak (``ComputeProfile.mamf_fp8``, the sustained clock; NVFP4
at ``fp4_over_fp8`` of FP8's rate), ``m`` the operands' bytes at ``HBM_EFFICIENCY``, ``t0`` the
profile's per-kernel latency. Given ``c`` and ``m`` it is linear in ``(f, o)``: least squares on
the relative error over the decode domain, M = 1-1,024 rows and N, K in {1,024 ... 16,384} (a
dense decode layer's GEMMs on 1-8 GPUs), per (generation, precision) over every table of the
generation (NVFP4's overlap held at 0.5, :data:`HELD_OVERLAP`; an overlap outside [0, 1] would be
held at its bound; either way the fixed part is refitted). Prints
the fitted pair and, per table, the mean |error| and mean signed error of the engine's rule
(``efficiency.QUANTIZED_INFERENCE_GEMM``), by M band.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.model.efficiency import gemm_time_s
from advisor.engine.model.serving.gemm import InferenceGemm
from bench.aic_systems import CATALOG_GPU, data_dir

GROUPS = {
    ("hopper", "fp8"): ("h100_sxm", "h200_sxm"),
    ("blackwell", "fp8"): ("b200_sxm", "gb200", "b300_sxm", "gb300"),
    ("blackwell", "fp4"): ("b200_sxm", "gb200", "b300_sxm", "gb300"),
}
DTYPES = {"fp8": "fp8", "fp4": "nvfp4"}
SIZES = (1024, 2048, 3072, 4096, 5120, 6144, 7168, 8192, 10240, 12288, 14336, 16384)
MAX_M = 1024
HELD_OVERLAP = {("blackwell", "fp4"): 0.5}
"""NVFP4 keeps the half overlap its compute-bound GEMMs (M >= 2,048) read within 6.5 % with
(docs/MODEL.md 15.1, "NVFP4 GEMMs"): on the decode domain the free fit runs past 1.0 and no
overlap reads it better than another (20.4-21.1 % mean |error| for 0.5-1.0), so only the fixed
part is fitted."""
BANDS = ((1, 64), (65, 256), (257, 1024))


def _points(system: str, precision: str) -> list[tuple[int, int, int, float]]:
    """(M, N, K, measured seconds) of one table inside the decode domain."""
    import pandas as pd  # type: ignore[import-not-found]

    path = data_dir() / system / "gemm" / "trtllm" / "1.3.0rc20" / "gemm_perf.parquet"
    f = pd.read_parquet(path)
    f = f[(f.gemm_dtype == DTYPES[precision]) & (f.m <= MAX_M) & f.n.isin(SIZES) & f.k.isin(SIZES)]
    return [(int(r.m), int(r.n), int(r.k), float(r.latency) * 1e-3) for r in f.itertuples()]


def main() -> None:
    import numpy as np  # type: ignore[import-not-found]

    from advisor.engine.model.efficiency import profile

    catalog = default_catalog()
    for (generation, precision), systems in GROUPS.items():
        rows, rhs, keep = [], [], []
        for system in systems:
            gpu = catalog.gpu(CATALOG_GPU[system])
            t0 = profile(gpu).gemm_latency_s
            for m, n, k, t in _points(system, precision):
                g = InferenceGemm(gpu, precision, float(n), float(k))
                compute = 2.0 * m * n * k / g.flop_rate
                memory = (m * k + g.kn + m * n) * g.wbytes / g.hbm
                longer, shorter = max(compute, memory), min(compute, memory)
                rows.append([1.0 / t, shorter / t])
                rhs.append(1.0 - (t0 + longer) / t)
                keep.append((system, gpu, m, n, k, t))
        a, b = np.array(rows), np.array(rhs)
        (fixed, overlap), *_ = np.linalg.lstsq(a, b, rcond=None)
        if (generation, precision) in HELD_OVERLAP:
            overlap = HELD_OVERLAP[(generation, precision)]
            fixed = float(np.sum(a[:, 0] * (b - overlap * a[:, 1])) / np.sum(a[:, 0] ** 2))
        elif not 0.0 <= overlap <= 1.0:
            # the overlap is a share of the shorter phase: at its bound, refit the fixed part
            overlap = min(1.0, max(0.0, overlap))
            fixed = float(np.sum(a[:, 0] * (b - overlap * a[:, 1])) / np.sum(a[:, 0] ** 2))
        tables = {}
        for system in systems:
            errs: dict[str, list[float]] = {f"M {a}-{b}": [] for a, b in BANDS}
            for s, gpu, m, n, k, t in keep:
                if s != system:
                    continue
                e = gemm_time_s(gpu, precision, m, n, k, inference=True) / t - 1.0
                for a, b in BANDS:
                    if a <= m <= b:
                        errs[f"M {a}-{b}"].append(e)
            tables[system] = {
                band: {
                    "points": len(v),
                    "mae_pct": round(100 * sum(map(abs, v)) / len(v), 1),
                    "signed_pct": round(100 * sum(v) / len(v), 1),
                }
                for band, v in errs.items()
                if v
            }
        print(
            json.dumps(
                {
                    "generation": generation,
                    "precision": precision,
                    "fitted": {"fixed_us": round(fixed * 1e6, 2), "overlap": round(overlap, 3)},
                    "engine_rule_by_table": tables,
                }
            )
        )


if __name__ == "__main__":
    main()
