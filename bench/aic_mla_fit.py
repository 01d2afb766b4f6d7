"""Multi-head latent attention's decode constants on Blackwell, fitted on TensorRT-LLM's measured
MLA generation kernels (docs/MODEL.md 15.1, "MLA decode attention on Blackwell").

NVIDIA AIConfigurator 0.12.0 ships the MLA generation latencies its collector measured with
TensorRT-LLM 1.3.0rc20 (``aiconfigurator_core/systems/data/<gpu>/mla/trtllm/1.3.0rc20/
generation_mla_perf.parquet``: query heads, tensor-parallel size, batch, step (the context
less one), KV-cache dtype, latency in ms; DeepSeek's 576-wide latent).  The peer is a tool
beside the product, never a dependency of it; run this with the scratch venv's Python
(``/tmp/aic/bin/python bench/aic_mla_fit.py``; ``bench/aic_systems.py``).

One call on one GPU reads the latent cache once, ``S = batch x context x 576 x KV bytes``, and
runs ``F = 2 x heads per GPU x (576 + 512) x batch x context`` FLOPs (absorbed projections,
:func:`serving.compute.decode_attention_flops_per_context_token`). The rule is the decode
roofline with a fixed time, ``t = t0 + max(S / (e x HBM peak), F / (r x 16-bit dense peak))``
(the kernel overlaps its latent read and its math), e and r on a grid and t0 the median
remainder, the least mean |relative error|, one fit per KV dtype. Fit domain, fixed before any
serving row was read against it: the B200 SXM and GB200 tables, 16-128 query heads per GPU, at
least 16 sequences and 512 tokens of context (a serving decode batch). Prints the constants
and, per table (Hopper's too, for comparison), the rule's and the engine's current pricing's
mean |error| and signed error (the engine keeps FlashMLA's roofline on Hopper: ``max(S / (0.8
HBM), F / (0.67 x 16-bit peak))``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import HBM_EFFICIENCY
from advisor.engine.model.serving import attention
from bench.aic_systems import CATALOG_GPU, data_dir

TABLES = {s: CATALOG_GPU[s] for s in ("h100_sxm", "h200_sxm", "b200_sxm", "gb200")}
FITTED_ON = ("b200_sxm", "gb200")
VERSION = "1.3.0rc20"
LATENT = 576
VALUE = 512


def _rows(data: Path, system: str, kv_dtype: str) -> dict[str, Any]:
    import numpy as np  # type: ignore[import-not-found]
    import pandas as pd  # type: ignore[import-not-found]

    path = data / system / "mla" / "trtllm" / VERSION / "generation_mla_perf.parquet"
    f = pd.read_parquet(path)
    heads = f.num_heads // f.tp_size
    f = f[
        (f.kv_cache_dtype == kv_dtype)
        & (heads >= 16)
        & (heads <= 128)
        & (f.batch_size >= 16)
        & (f.step + 1 >= 512)
    ]
    gpu = default_catalog().gpu(TABLES[system])
    assert gpu is not None
    width = 1.0 if kv_dtype == "fp8" else 2.0
    tokens = f.batch_size.to_numpy(float) * (f.step + 1).to_numpy(float)
    return {
        "S": tokens * LATENT * width,
        "F": 2.0 * (f.num_heads // f.tp_size).to_numpy(float) * (LATENT + VALUE) * tokens,
        "t": f.latency.to_numpy(float) * 1e-3,
        "hbm": gpu.memory_bw_gbytes_per_s * 1e9,
        "peak": (gpu.peak_tflops("bf16") or gpu.peak_tflops("fp16")) * 1e12,
        "np": np,
    }


def fit(tables: list[dict[str, Any]]) -> tuple[float, float, float]:
    """(t0, e, r) of ``t0 + max(S / (e x HBM), F / (r x 16-bit peak))`` with the least mean
    |relative error| over the tables: e and r on a grid (0.01 steps), t0 the median of what the
    measured latency leaves above the max at each grid point."""
    np = tables[0]["np"]
    s = np.concatenate([d["S"] / d["hbm"] for d in tables])
    f = np.concatenate([d["F"] / d["peak"] for d in tables])
    t = np.concatenate([d["t"] for d in tables])
    best: tuple[float, float, float, float] | None = None
    for e in np.arange(0.30, 1.21, 0.01):
        memory = s / e
        for r in np.arange(0.20, 2.51, 0.01):
            body = np.maximum(memory, f / r)
            t0 = max(0.0, float(np.median(t - body)))
            err = float(np.mean(np.abs((t0 + body) / t - 1.0)))
            if best is None or err < best[0]:
                best = (err, t0, float(e), float(r))
    assert best is not None
    return best[1], best[2], best[3]


def _stats(np: Any, err: Any) -> dict[str, float | int]:
    return {
        "calls": len(err),
        "mae_pct": round(100 * float(np.mean(np.abs(err))), 1),
        "bias_pct": round(100 * float(np.mean(err)), 1),
    }


def read(d: dict[str, Any], t0: float, e: float, r: float) -> dict[str, Any]:
    np = d["np"]
    rule = (t0 + np.maximum(d["S"] / (e * d["hbm"]), d["F"] / (r * d["peak"]))) / d["t"] - 1.0
    roof = (
        np.maximum(
            d["S"] / (HBM_EFFICIENCY * d["hbm"]),
            d["F"] / (attention.ATTENTION_DECODE_EFFICIENCY * d["peak"]),
        )
        / d["t"]
        - 1.0
    )
    return {"rule": _stats(np, rule), "flashmla_roofline": _stats(np, roof)}


def main() -> None:
    data = data_dir()
    out: dict[str, Any] = {}
    for kv in ("fp8", "bfloat16"):
        fitted = fit([_rows(data, s, kv) for s in FITTED_ON])
        engine = attention.MLA_DECODE_ATTENTION_BLACKWELL.get(1.0 if kv == "fp8" else 2.0)
        out[kv] = {
            "fit": {"t0_s": fitted[0], "hbm_share": fitted[1], "flop_share": fitted[2]},
            "engine": engine,
            "tables": {s: read(_rows(data, s, kv), *fitted) for s in TABLES},
        }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
