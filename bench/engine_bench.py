"""Engine benchmark: collective predictions per second and the full evaluate() time.

Run with ``.venv/bin/python bench/engine_bench.py`` (``make bench``); writes
``bench/results.json`` and prints it.  Target: evaluate of the 1024-GPU llama3-70b training
scenario (every candidate design) under 50 ms median and 100 ms p95 on one core, repeated in
one process; the cold figures evaluate 40 sizes the process has not planned before.
"""

from __future__ import annotations

import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from advisor.engine import ENGINE_VERSION, evaluate  # noqa: E402
from advisor.engine.catalog import default_catalog  # noqa: E402
from advisor.engine.collectives import OPS, collective, make_domain  # noqa: E402
from advisor.engine.performance import Design, evaluate_design  # noqa: E402
from advisor.engine.scenario import parse_scenario  # noqa: E402
from advisor.engine.workload import plan_workload  # noqa: E402

SCENARIO: dict[str, Any] = {
    "workload": "training",
    "model": "llama3-70b",
    "gpu": "h100-sxm",
    "gpus": 1024,
    "gpus_per_node": 8,
    "precision": "bf16",
    "sequence_length": 8192,
    "training": {"global_batch_sequences": 512, "total_tokens": 1e12},
}
RESULTS = ROOT / "bench" / "results.json"


def collectives_per_second(duration_s: float = 1.0) -> float:
    domains = [
        make_domain(
            nodes=nodes,
            ranks_per_node=8,
            scaleup_kind="nvlink",
            scaleup_gbytes_per_s=450,
            nvls=True,
            fabric_id=fabric,
            nic_gbps=400,
            nics_per_node=8,
        )
        for nodes in (1, 2, 16, 128)
        for fabric in ("ethernet", "roce", "infiniband")
    ]
    sizes = [2.0**k for k in range(10, 34, 3)]
    calls = 0
    start = time.perf_counter()
    while time.perf_counter() - start < duration_s:
        for d in domains:
            for op in OPS:
                for nbytes in sizes:
                    collective(op, nbytes, d)
                    calls += 1
    return calls / (time.perf_counter() - start)


def timings_ms(fn: Any, repeats: int) -> list[float]:
    fn()  # warm caches
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return times


def median_ms(fn: Any, repeats: int) -> float:
    return statistics.median(timings_ms(fn, repeats))


def p95(times: list[float]) -> float:
    return statistics.quantiles(times, n=20)[-1]


def cold_evaluate_ms(sizes: range) -> list[float]:
    """evaluate() of scenarios the process has not seen (no planner cache for their size)."""
    times = []
    for servers in sizes:
        start = time.perf_counter()
        evaluate({**SCENARIO, "gpus": 8 * servers})
        times.append((time.perf_counter() - start) * 1e3)
    return times


def main() -> int:
    catalog = default_catalog()
    s = parse_scenario(SCENARIO, catalog)
    w = plan_workload(s)
    design = Design(fabric="roce", nic_gbps=400, nics_per_node=8)
    result = evaluate(SCENARIO)
    evaluate_ms = timings_ms(lambda: evaluate(SCENARIO), 40)
    cold_ms = cold_evaluate_ms(range(129, 169))
    results = {
        "engine_version": ENGINE_VERSION,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "scenario": "llama3-70b training on 1024 x h100-sxm",
        "collective_predictions_per_s": round(collectives_per_second(), 1),
        "evaluate_design_median_ms": round(
            median_ms(lambda: evaluate_design(s, w, design), 200), 4
        ),
        "plan_workload_median_ms": round(median_ms(lambda: plan_workload(s), 50), 4),
        "evaluate_median_ms": round(statistics.median(evaluate_ms), 3),
        "evaluate_p95_ms": round(p95(evaluate_ms), 3),
        "evaluate_cold_median_ms": round(statistics.median(cold_ms), 3),
        "evaluate_cold_p95_ms": round(p95(cold_ms), 3),
        "evaluate_candidates": len(result.get("options", [])) + len(result.get("pruned", [])),
        "evaluate_target_ms": 50.0,
        "evaluate_p95_target_ms": 100.0,
    }
    results["evaluate_meets_target"] = (
        results["evaluate_median_ms"] < results["evaluate_target_ms"]
        and results["evaluate_p95_ms"] < results["evaluate_p95_target_ms"]
    )
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
