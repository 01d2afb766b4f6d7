"""Sweep throughput with 1 and 2 Celery worker processes -> bench/sweep.json.

Run inside the throwaway services (PostgreSQL + Redis on loopback):

    bash scripts/with_services.sh .venv/bin/python bench/sweep_bench.py

Two `celery worker --concurrency=1` processes are started once; "1 process" runs have the
second one stop consuming the sweeps queue (Celery's cancel_consumer remote control), "2
processes" runs have it consume again. The two configurations alternate, REPEATS times for
sweeps of 10,000 and 20,000 design points, so background load on the machine falls on both
alike. Timed from the sweep's creation to its last chunk's commit (Sweep.created_at ->
finished_at). Also reported per sweep: the load average when it started, and the chunks'
parallelism (sum of chunk durations / sweep duration: how many processes were busy on
average). On a 2-core machine, PostgreSQL, Redis and this process share the cores with the
workers, so two processes cannot reach 2x.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "advisor.settings")

REPEATS = int(os.environ.get("SWEEP_BENCH_REPEATS", "5"))
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
    return [
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
        for i in range(count)
    ]


def stop_workers(workers: list[subprocess.Popen[bytes]]) -> None:
    for worker in workers:
        os.killpg(worker.pid, signal.SIGTERM)
    for worker in workers:
        worker.wait(timeout=60)


def wait_for_workers(app: Any, names: list[str], timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        replies = app.control.ping(destination=names, timeout=1.0) or []
        if {name for reply in replies for name in reply} >= set(names):
            return
    raise RuntimeError(f"workers {names} did not answer")


def use_processes(app: Any, second: str, count: int) -> None:
    """1: the second worker stops taking sweep chunks; 2: it takes them again."""
    if count == 1:
        app.control.cancel_consumer("sweeps", destination=[second], reply=True, timeout=5)
    else:
        app.control.add_consumer("sweeps", destination=[second], reply=True, timeout=5)


def run_sweep(scenario: Any, axes: dict[str, list[Any]], timeout_s: float = 900) -> dict[str, Any]:
    from advisor.scenarios.models import Sweep, SweepStatus
    from advisor.scenarios.sweeps import sweep_create

    load = os.getloadavg()[0]
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
    busy = sum(
        (c.finished_at - c.started_at).total_seconds()
        for c in current.chunks.all()
        if c.finished_at and c.started_at
    )
    return {
        "points": current.total_points,
        "chunks": current.total_chunks,
        "seconds": round(seconds, 3),
        "points_per_s": round(current.total_points / seconds, 1),
        "chunk_parallelism": round(busy / seconds, 2),
        "load_average_1min": round(load, 2),
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
    host = socket.gethostname()
    names = [f"bench0@{host}", f"bench1@{host}"]

    workers = start_workers(2)
    runs: dict[tuple[int, int], list[dict[str, Any]]] = {}
    try:
        wait_for_workers(app, names)
        run_sweep(scenario, WARM_UP)
        for _ in range(REPEATS):
            for points, axes in SIZES.items():
                for count in WORKER_COUNTS:
                    use_processes(app, names[1], count)
                    result = run_sweep(scenario, axes)
                    runs.setdefault((points, count), []).append(result)
                    print(f"{count} process(es), {points} points: {result}", flush=True)
    finally:
        stop_workers(workers)

    results: dict[str, Any] = {}
    for (points, count), group in sorted(runs.items()):
        median_s = statistics.median(r["seconds"] for r in group)
        results.setdefault(f"{count}_worker_processes", {})[str(points)] = {
            "chunks": group[0]["chunks"],
            "median_seconds": median_s,
            "median_points_per_s": round(points / median_s, 1),
            "median_chunk_parallelism": statistics.median(r["chunk_parallelism"] for r in group),
            "runs": group,
        }
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
