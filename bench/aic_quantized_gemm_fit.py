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
held at its bound; either way the fixed part is refitted).

Prints the fitted pair and, per table, the mean |error| and mean signed error of the engine's
rule (``efficiency.QUANTIZED_INFERENCE_GEMM``), by M band.

``--wave`` also fits the wave term tried on NVFP4 and not kept (docs/MODEL.md 15.1, "NVFP4's
depth effect: whole waves of tiles over K, tried and not kept"; not in the engine): on Blackwell
NVFP4 (:data:`WAVE_GROUPS`) ``c`` is at least ``ceil(ceil(M / 128) x ceil(N / 256) / SMs) x
2 A SMs K / rate`` (the profile's tile and SMs, ``A`` outputs per SM and wave), ``A`` on a grid
(:data:`WAVE_TILE_GRID`) with the fixed part refitted at each, the least sum of squared relative
errors kept. Prints its fitted terms, the mean |error| by table without and with it, its mean
|error| and signed error by table and M band, and both mean |errors| per (N, K) at M 1-64 and
65-1,024 (N, K in :data:`GROUP_SIZES`)::

    /tmp/aic/bin/python bench/aic_quantized_gemm_fit.py --wave
"""

from __future__ import annotations

import json
import math
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
WAVE_GROUPS = (("blackwell", "fp4"),)
"""(generation, precision) whose tables read whole waves of tiles over K (TensorRT-LLM's NVFP4
kernels step at each wave boundary of 128 x 256 tiles on 148 SMs; its FP8 ones do not, and the
same term misses their N 1,024 x K 16,384 at M <= 64 by +27-35 %): ``--wave`` only."""
WAVE_TILE_GRID = tuple(float(a) for a in range(10000, 40001, 250))
GROUP_SIZES = (1024, 2048, 4096, 8192, 12288, 16384)


def _points(system: str, precision: str) -> list[tuple[int, int, int, float]]:
    """(M, N, K, measured seconds) of one table inside the decode domain."""
    import pandas as pd  # type: ignore[import-not-found]

    path = data_dir() / system / "gemm" / "trtllm" / "1.3.0rc20" / "gemm_perf.parquet"
    f = pd.read_parquet(path)
    f = f[(f.gemm_dtype == DTYPES[precision]) & (f.m <= MAX_M) & f.n.isin(SIZES) & f.k.isin(SIZES)]
    return [(int(r.m), int(r.n), int(r.k), float(r.latency) * 1e-3) for r in f.itertuples()]


def _fit(a, rhs, held: float | None):  # type: ignore[no-untyped-def]
    """(fixed, overlap, sum of squared relative errors) of the least squares on ``a`` (columns
    1/t and shorter/t) against ``rhs``; the overlap held at ``held`` or at its bound [0, 1]."""
    import numpy as np  # type: ignore[import-not-found]

    (fixed, overlap), *_ = np.linalg.lstsq(a, rhs, rcond=None)
    if held is not None or not 0.0 <= overlap <= 1.0:
        # the overlap is a share of the shorter phase: held, or at its bound; refit the fixed part
        overlap = held if held is not None else min(1.0, max(0.0, overlap))
        fixed = float(np.sum(a[:, 0] * (rhs - overlap * a[:, 1])) / np.sum(a[:, 0] ** 2))
    residual = rhs - a[:, 0] * fixed - a[:, 1] * overlap
    return float(fixed), float(overlap), float(np.sum(residual**2))


def main() -> None:
    import argparse

    import numpy as np  # type: ignore[import-not-found]

    from advisor.engine.model.efficiency import profile

    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--wave", action="store_true", help="fit the wave term tried on NVFP4 (not in the engine)"
    )
    args = ap.parse_args()
    catalog = default_catalog()
    for (generation, precision), systems in GROUPS.items():
        points = []
        for system in systems:
            gpu = catalog.gpu(CATALOG_GPU[system])
            p = profile(gpu)
            for m, n, k, t in _points(system, precision):
                g = InferenceGemm(gpu, precision, float(n), float(k))
                compute = 2.0 * m * n * k / g.flop_rate
                memory = (m * k + g.kn + m * n) * g.wbytes / g.hbm
                waves = math.ceil(math.ceil(m / p.tile_m) * math.ceil(n / p.tile_n) / p.sms)
                per_tile = 2.0 * p.sms * k / g.flop_rate  # a wave's seconds per output of a tile
                points.append((system, gpu, m, n, k, t, p.gemm_latency_s, compute, memory))
                points[-1] += (waves * per_tile,)
        t = np.array([q[5] for q in points])
        t0, c, mem, wave = (np.array([q[i] for q in points]) for i in (6, 7, 8, 9))
        held = HELD_OVERLAP.get((generation, precision))

        def solve(tile: float, t=t, t0=t0, c=c, mem=mem, wave=wave, held=held):  # type: ignore[no-untyped-def]
            cc = np.maximum(c, tile * wave)
            longer, shorter = np.maximum(cc, mem), np.minimum(cc, mem)
            a = np.column_stack([1.0 / t, shorter / t])
            fixed, overlap, sse = _fit(a, 1.0 - (t0 + longer) / t, held)
            return fixed, overlap, sse, t0 + fixed + longer + overlap * shorter

        fixed, overlap, _, before = solve(0.0)
        tables = {}
        for system in systems:
            errs: dict[str, list[float]] = {f"M {a}-{b}": [] for a, b in BANDS}
            for s, gpu, m, n, k, measured, *_ in points:
                if s == system:
                    e = gemm_time_s(gpu, precision, m, n, k, inference=True) / measured - 1.0
                    errs[_band(m)].append(e)
            tables[system] = _summary(errs)
        report: dict[str, object] = {
            "generation": generation,
            "precision": precision,
            "fitted": {"fixed_us": round(fixed * 1e6, 2), "overlap": round(overlap, 3)},
            "engine_rule_by_table": tables,
        }
        if args.wave and (generation, precision) in WAVE_GROUPS:
            tile = min(WAVE_TILE_GRID, key=lambda a: solve(a)[2])
            w_fixed, w_overlap, _, after = solve(tile)
            overall: dict[str, list[list[float]]] = {s: [[], []] for s in systems}
            bands: dict[str, dict[str, list[float]]] = {s: {} for s in systems}
            groups: dict[str, dict[str, list[list[float]]]] = {}
            for q, old, new in zip(points, before, after, strict=True):
                s, m, n, k, measured = q[0], q[2], q[3], q[4], q[5]
                overall[s][0].append(abs(old / measured - 1.0))
                overall[s][1].append(abs(new / measured - 1.0))
                bands[s].setdefault(_band(m), []).append(new / measured - 1.0)
                if n in GROUP_SIZES and k in GROUP_SIZES:
                    band = "M 1-64" if m <= 64 else "M 65-1024"
                    cell = groups.setdefault(band, {}).setdefault(f"{n}x{k}", [[], []])
                    cell[0].append(abs(old / measured - 1.0))
                    cell[1].append(abs(new / measured - 1.0))
            report["wave_term"] = {
                "fitted": {
                    "fixed_us": round(w_fixed * 1e6, 2),
                    "overlap": round(w_overlap, 3),
                    "wave_tile": tile,
                },
                # mean |error| by table: [without the wave term (the fixed part refitted alone),
                # with it]
                "mae_pct_by_table": {
                    s: [round(100 * float(np.mean(v)), 1) for v in pair]
                    for s, pair in overall.items()
                },
                "by_table": {s: _summary(v) for s, v in bands.items()},
                # per (N, K) at M 1-64 and 65-1,024: [without, with]
                "mae_pct_by_n_x_k": {
                    band: {
                        key: [round(100 * sum(v) / len(v), 1) for v in pair]
                        for key, pair in cells.items()
                    }
                    for band, cells in groups.items()
                },
            }
        print(json.dumps(report))


def _band(m: int) -> str:
    """The :data:`BANDS` label of ``m`` rows."""
    return next(f"M {a}-{b}" for a, b in BANDS if a <= m <= b)


def _summary(errs: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Points, mean |error| and mean signed error (%) of each band's relative errors."""
    return {
        band: {
            "points": len(v),
            "mae_pct": round(100 * sum(map(abs, v)) / len(v), 1),
            "signed_pct": round(100 * sum(v) / len(v), 1),
        }
        for band, v in errs.items()
        if v
    }


if __name__ == "__main__":
    main()
