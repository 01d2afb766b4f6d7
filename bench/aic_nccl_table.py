"""The engine's one-server NCCL collectives against the latencies AIConfigurator's collectors
measured (docs/MODEL.md 3, "NVLink steps by generation").

NVIDIA AIConfigurator 0.12.0 ships NCCL's one-server all-reduce, all-gather, reduce-scatter and
all-to-all as its collectors timed them (``aiconfigurator_core/systems/data/<gpu>/comm/nccl/
<version>/nccl_perf.parquet``: op, dtype, GPUs, ``message_size`` in elements, latency in ms).
The peer is a tool beside the product, never a dependency of it: install it into a scratch venv
(``python3.11 -m venv /tmp/aic && /tmp/aic/bin/pip install aiconfigurator``) and run this
script with that venv's Python, which has pandas::

    /tmp/aic/bin/python bench/aic_nccl_table.py

Prints one JSON object per table (GPU and NCCL release) and GPU count: for the all-reduce and
the all-gather of 64 KB or less (half-precision buffers), the median of measured less the
engine's time (us) and that over the ring's steps (2(n-1) for an all-reduce, n-1 for an
all-gather), the figure ``constants.NVLINK_HOP_EXTRA_S`` was read from (on the engine before
it, Hopper's steps read within 1 us); and the all-reduce's mean signed error (engine /
measured - 1) by size band.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from advisor.engine.model.collectives import collective
from advisor.engine.tools.validation import _domain_for
from bench.aic_systems import CATALOG_GPU, data_dir

SYSTEMS = {s: gpu for s, gpu in CATALOG_GPU.items() if s != "l40s"}  # NVLink servers
SMALL_BYTES = 65536
BANDS = (
    (0, 65536),
    (65536, 1 << 20),
    (1 << 20, 16 << 20),
    (16 << 20, 256 << 20),
    (256 << 20, 1 << 40),
)
STEPS = {"all_reduce": lambda n: 2 * (n - 1), "all_gather": lambda n: n - 1}


def compare(system: str, version: str, data: Path) -> list[dict[str, Any]]:
    import pandas as pd  # type: ignore[import-not-found]

    frame = pd.read_parquet(data / system / "comm" / "nccl" / version / "nccl_perf.parquet")
    frame = frame[frame.nccl_dtype == "half"]
    out = []
    for gpus in sorted(int(g) for g in frame.num_gpus.unique()):
        row: dict[str, Any] = {"system": system, "nccl": version, "gpus": gpus}
        for op, steps in STEPS.items():
            config = {"gpu": SYSTEMS[system], "gpus_per_node": gpus, "nodes": 1, "op": op}
            # a release the engine names (2.23 has no patch number: priced as 2.23.4)
            config["nccl_version"] = version if version.count(".") == 2 else f"{version}.4"
            _, domain = _domain_for(config)
            table = frame[(frame.op_name == op) & (frame.num_gpus == gpus)]
            measured = [
                (float(n) * 2.0, float(ms) * 1e-3)
                for n, ms in zip(table.message_size, table.latency, strict=True)
            ]
            small = [
                (t - collective(op, b, domain).time_s) * 1e6
                for b, t in measured
                if b <= SMALL_BYTES
            ]
            if small:
                row[f"{op}_small_us"] = round(statistics.median(small), 2)
                row[f"{op}_per_step_us"] = round(statistics.median(small) / steps(gpus), 2)
            if op == "all_reduce":
                for lo, hi in BANDS:
                    errors = [
                        collective(op, b, domain).time_s / t - 1.0
                        for b, t in measured
                        if lo <= b < hi
                    ]
                    if errors:
                        row[f"all_reduce_{lo >> 10}K_{hi >> 10}K_pct"] = round(
                            100 * sum(errors) / len(errors), 1
                        )
        out.append(row)
    return out


def main() -> None:
    try:
        data = data_dir()
    except ImportError:
        sys.exit("aiconfigurator is not installed here: run with the scratch venv's Python")
    for system in SYSTEMS:
        root = data / system / "comm" / "nccl"
        for version in sorted(p.name for p in root.iterdir() if (p / "nccl_perf.parquet").exists()):
            for row in compare(system, version, data):
                print(json.dumps(row))


if __name__ == "__main__":
    main()
