"""``bench/audit.py`` (``make audit``) hands whole jobs to its worker processes and puts the
outcomes back in the grid's order: every case is evaluated exactly once and the report is the
one a plain run over the cases in order gives."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from advisor.engine.tools.audit import PLATFORM_CHECKS, audit, platform_check_violations, run_case
from advisor.engine.tools.audit_grid import grid

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_audit", ROOT / "bench" / "audit.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_audit"] = module
    spec.loader.exec_module(module)
    return module


def test_jobs_partition_the_grid_in_its_order(runner: ModuleType) -> None:
    cases = grid()
    jobs = runner.by_job(cases)
    assert sorted(c for job in jobs for c in job) == cases
    for job in jobs:
        assert job == sorted(job)
        assert len({(c.model, c.gpu, c.workload) for c in job}) == 1
    # a job holds every variant and size of its series, so series properties see them all
    series = {c.series for c in cases}
    assert {c.series for job in jobs for c in job} == series
    assert len(jobs) == len({(c.model, c.gpu, c.workload) for c in cases})


def test_the_pooled_report_is_the_in_order_report(runner: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "audit.json"
    argv = ["--every", "3", "--jobs-every", "150", "--processes", "2", "--out", str(out)]
    code = runner.main(argv)
    pooled = json.loads(out.read_text())
    cases = [c for job in runner.by_job(grid()[::3])[::150] for c in job]
    assert len(cases) > 10
    report = audit([run_case(c) for c in cases])
    report.cases += len(PLATFORM_CHECKS)
    report.violations.extend(platform_check_violations())
    plain = report.to_dict()
    for key in ("seconds", "slowest_case_s"):
        pooled.pop(key)
        plain.pop(key)
    pooled.pop("engine_version")
    assert pooled == plain
    assert code == (1 if report.violations else 0)


def test_timings_name_the_slowest_jobs_and_the_kinds_of_work(
    runner: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    jobs = runner.by_job(grid())
    training = next(job for job in jobs if job[0].workload == "training")
    serving = next(job for job in jobs if job[0].workload.startswith("inference"))
    text = runner.timings_text([(training, 1.0), (serving, 3.0)], 1)
    lines = text.splitlines()
    assert lines[0] == "CPU seconds by kind of work (4.0 s in 2 jobs):"
    # the kinds by their seconds, largest first, with their share
    assert lines[1].split() == [serving[0].workload, "3.0", "s", "75.0", "%", "(1", "jobs)"]
    assert lines[2].split()[:2] == ["training", "1.0"]
    assert lines[3] == "slowest 1 jobs:"
    assert lines[4].strip().startswith(f"3.00 s  {serving[0].model} on {serving[0].gpu}")
    assert f"{len(serving)} cases up to {max(c.servers for c in serving)} servers" in lines[4]
    assert len(lines) == 5

    out = tmp_path / "audit.json"
    argv = ["--every", "3", "--jobs-every", "150", "--processes", "1", "--out", str(out)]
    runner.main([*argv, "--timings", "2"])
    printed = capsys.readouterr().out
    ran = runner.by_job(grid()[::3])[::150]
    assert f"s in {len(ran)} jobs):" in printed
    for job in ran:
        assert f"  {job[0].workload} " in printed
    assert printed.count(" cases up to ") == min(2, len(ran))
