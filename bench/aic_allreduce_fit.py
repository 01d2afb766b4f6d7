"""The serving engine's one-shot all-reduce, its two constants fitted per GPU generation on
TensorRT-LLM's measured all-reduce latencies (docs/MODEL.md 15.2, "The serving all-reduce").

NVIDIA AIConfigurator 0.12.0 ships the latencies of TensorRT-LLM 1.3.0rc20's own all-reduce
(``aiconfigurator_core/systems/data/<gpu>/comm/trtllm/1.3.0rc20/custom_allreduce_perf.parquet``:
``AllReduceStrategy.AUTO``, BF16, 2-8 GPUs of one NVLink domain, ``message_size`` in elements).
The peer is a tool beside the product, never a dependency of it: run this script with the
scratch venv's Python (``python3.11 -m venv /tmp/aic && /tmp/aic/bin/pip install
aiconfigurator==0.12.0``), which has pandas and numpy::

    /tmp/aic/bin/python bench/aic_allreduce_fit.py

The rule is ``t = t0 + (n - 1) x S / (f x NVLink rate)`` (every rank reads its n - 1 peers'
buffers over peer memory), linear in (t0, 1 / f): least squares on the relative error over
2 / 4 / 8 GPUs and 16-512 KB per rank (what a decode step's all-reduce moves), per generation
(Hopper: H100 SXM, H200 SXM; Blackwell: B200 SXM, GB200). Prints, per generation, the fitted
constants and the engine's (``serving/intra.py``), and per table the mean |error| and the
signed extremes of each.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.model.serving import intra
from bench.aic_systems import CATALOG_GPU, data_dir

GENERATIONS = {"hopper": ("h100_sxm", "h200_sxm"), "blackwell": ("b200_sxm", "gb200")}
VERSION = "1.3.0rc20"
MIN_BYTES, MAX_BYTES = 16384, 524288


def _points(system: str) -> list[tuple[int, float, float, float]]:
    """(GPUs, bytes per rank, NVLink bytes/s, measured seconds) of one table's fit domain."""
    import pandas as pd  # type: ignore[import-not-found]

    path = data_dir() / system / "comm" / "trtllm" / VERSION / "custom_allreduce_perf.parquet"
    f = pd.read_parquet(path)
    gpu = default_catalog().gpu(CATALOG_GPU[system])
    link = gpu.scaleup_gbytes_per_s * 1e9
    out = []
    for row in f.itertuples():
        nbytes = 2.0 * float(row.message_size)
        if MIN_BYTES <= nbytes <= MAX_BYTES and int(row.num_gpus) in (2, 4, 8):
            out.append((int(row.num_gpus), nbytes, link, float(row.latency) * 1e-3))
    return out


def fit(points: list[tuple[int, float, float, float]]) -> tuple[float, float]:
    """(t0 seconds, link fraction) minimising the squared relative error."""
    import numpy as np  # type: ignore[import-not-found]

    a = np.array([[1.0 / t, (n - 1) * s / link / t] for n, s, link, t in points])
    b = np.ones(len(points))
    (t0, inv_f), *_ = np.linalg.lstsq(a, b, rcond=None)
    return float(t0), float(1.0 / inv_f)


def errors(points: list[tuple[int, float, float, float]], t0: float, f: float) -> dict[str, float]:
    errs = [(t0 + (n - 1) * s / (f * link)) / t - 1.0 for n, s, link, t in points]
    return {
        "points": len(errs),
        "mae_pct": round(100 * sum(abs(e) for e in errs) / len(errs), 1),
        "min_pct": round(100 * min(errs), 1),
        "max_pct": round(100 * max(errs), 1),
    }


def main() -> None:
    for generation, systems in GENERATIONS.items():
        points = [p for s in systems for p in _points(s)]
        t0, f = fit(points)
        engine = getattr(intra, "CUSTOM_ALL_REDUCE", {}).get(generation)
        print(
            json.dumps(
                {
                    "generation": generation,
                    "fitted": {"t0_us": round(t0 * 1e6, 2), "link_fraction": round(f, 3)},
                    "engine": None
                    if engine is None
                    else {"t0_us": round(engine[0] * 1e6, 2), "link_fraction": engine[1]},
                    "tables": {s: errors(_points(s), t0, f) for s in systems},
                }
            )
        )


if __name__ == "__main__":
    main()
