"""Sweep throughput with 1 and 2 Celery worker processes -> bench/sweep.json.

Run inside the throwaway services (PostgreSQL + Redis on loopback):

    bash scripts/with_services.sh .venv/bin/python bench/sweep_bench.py

For each worker count it starts that many `celery worker --concurrency=1` processes, runs a
warm-up sweep, then times sweeps of 10,000 and 20,000 design points REPEATS times from the
sweep's creation to its last chunk's commit (both timestamps written by PostgreSQL-side
code paths: Sweep.created_at and Sweep.finished_at). Reported: the median seconds and design
points per second, with the machine's CPU count: on a 2-core machine two processes are the
ceiling, and the web process, PostgreSQL and Redis share those cores too.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "advisor.settings")

REPEATS = int(os.environ.get("SWEEP_BENCH_REPEATS", "3"))
WORKER_COUNTS = (1, 2)
SCENARIO = {
    "workload": "training",
    "model": "llama3-70b",
    "gpu": "h100-sxm",
    "gpus": 64,
    "training": {"global_batch_sequences": 1024, "total_tokens": 1e12},
}
BASE_AXES: dict[str, list[Any]] = {
    "fabric": ["roce", "infiniband"],
    "nic_gbps": [100, 200, 400, 800, 1600],
    "nics_per_node": [1, 2, 4, 8],
    "oversubscription": [1, 1.5, 2, 3, 4],
}
SIZES = {
    10_000: {**BASE_AXES, "servers": list(range(2, 101, 2))},
    20_000: {**BASE_AXES, "servers": list(range(2, 201, 2))},
}
WARM_UP = {"servers": [2, 4], "nic_gbps": [100, 200, 400, 800]}


def start_workers(count: int) -> list[subprocess.Popen[bytes]]:
    celery = str(Path(sys.executable).parent / "celery")
    workers = []
    for i in range(count):
        workers.append(
            subprocess.Popen(
                [
                    celery,
                    "-A",
                    "advisor.celery",
                    "worker",
                    "--loglevel=WARNING",
                    "--concurrency=1",
                    f"--hostname=bench{i}@%h",
                    "--without-gossip",
                    "--without-mingle",
                ],
                cwd=REPO,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        )
    return workers


def stop_workers(workers: list[subprocess.Popen[bytes]]) -> None:
    for worker in workers:
        os.killpg(worker.pid, signal.SIGTERM)
    for worker in workers:
        worker.wait(timeout=60)


def run_sweep(scenario: Any, axes: dict[str, list[Any]], timeout_s: float = 900) -> dict[str, Any]:
    from advisor.scenarios.models import Sweep, SweepStatus
    from advisor.scenarios.sweeps import sweep_create

    sweep = sweep_create(scenario=scenario, axes=axes)
    deadline = time.monotonic() + timeout_s
    while True:
        current = Sweep.objects.get(pk=sweep.pk)
        if current.is_finished:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"sweep {sweep.pk} did not finish in {timeout_s} s")
        time.sleep(0.05)
    if current.status != SweepStatus.SUCCEEDED:
        raise RuntimeError(f"sweep {sweep.pk} {current.status}: {current.error}")
    assert current.finished_at is not None
    seconds = (current.finished_at - current.created_at).total_seconds()
    return {
        "points": current.total_points,
        "chunks": current.total_chunks,
        "seconds": round(seconds, 3),
        "points_per_s": round(current.total_points / seconds, 1),
    }


def main() -> None:
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    from advisor.celery import app
    from advisor.scenarios.models import Scenario

    if settings.RUN_MODE != "services":
        raise SystemExit("run inside scripts/with_services.sh (needs PostgreSQL and Redis)")
    call_command("migrate", verbosity=0)
    app.control.purge()
    scenario = Scenario.objects.create(name="Sweep bench: 70B training", inputs=SCENARIO)

    results: dict[str, Any] = {}
    for count in WORKER_COUNTS:
        workers = start_workers(count)
        try:
            time.sleep(5)  # let the processes connect before the clock starts
            run_sweep(scenario, WARM_UP)
            per_size: dict[str, Any] = {}
            for points, axes in SIZES.items():
                runs = [run_sweep(scenario, axes) for _ in range(REPEATS)]
                median_s = statistics.median(r["seconds"] for r in runs)
                per_size[str(points)] = {
                    "chunks": runs[0]["chunks"],
                    "median_seconds": median_s,
                    "median_points_per_s": round(points / median_s, 1),
                    "runs": runs,
                }
                print(f"{count} worker(s), {points} points: median {median_s:.2f} s", flush=True)
            results[f"{count}_worker_processes"] = per_size
        finally:
            stop_workers(workers)

    speedup = {
        size: round(
            results["2_worker_processes"][size]["median_points_per_s"]
            / results["1_worker_processes"][size]["median_points_per_s"],
            2,
        )
        for size in results["1_worker_processes"]
    }
    report = {
        "what": "sensitivity sweep throughput, design points per second, creation to last commit",
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        "scenario": SCENARIO,
        "chunk_points": settings.SWEEP_CHUNK_POINTS,
        "worker_processes_concurrency": 1,
        "repeats": REPEATS,
        "results": results,
        "speedup_2_vs_1": speedup,
    }
    out = REPO / "bench" / "sweep.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}: speedup 2 vs 1 worker processes {speedup}")


if __name__ == "__main__":
    main()
