"""The audit grid (``make audit``): every preset model x GPU x size through ``evaluate``, the
late-2026 hardware grid and the platform checks.

Writes ``bench/audit.json`` (counts, violations by property, examples) and exits 1 when any
property is violated (see ``advisor/engine/tools/audit.py`` for the properties).  Options:
``--processes N`` (default: all cores), ``--every K`` (every K-th case only, for a quick look;
series properties then compare the sizes that remain), ``--jobs-every K`` (every K-th job, a
model on a GPU for one kind of work, with all its variants and sizes: series properties compare
the same sizes as the whole audit), ``--serving`` (the inference cases only), ``--timings N``
(CPU seconds by kind of work and the N slowest jobs, to see where the wall time goes).  Cases are
evaluated without the scaling chart, which no property reads (see
``advisor/engine/tools/audit.py``).

A worker process evaluates one job at a time (all its variants and sizes, in the grid's order),
so what the engine keeps by value for a job (its plans of smaller clusters, the deployment
searches of fewer servers, the design networks) serves every case of the job in that process;
the largest jobs go first, so no worker is left with a long one at the end.  A worker checks
each answer's own properties and sends back only the violations and the few figures the series
properties read, not the ~70 kB answer for the main process to unpickle.  The outcomes are
put back in the grid's order before the properties are checked: the report is the same.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from advisor.engine import ENGINE_VERSION  # noqa: E402
from advisor.engine.tools.audit import (  # noqa: E402
    PLATFORM_CHECKS,
    Outcome,
    audit,
    checked,
    platform_check_violations,
    run_case,
)
from advisor.engine.tools.audit_grid import AuditCase, grid  # noqa: E402

OUT = ROOT / "bench" / "audit.json"


def by_job(cases: list[AuditCase]) -> list[list[AuditCase]]:
    """The cases of each job (model, GPU, kind of work), in the grid's order."""
    jobs: dict[tuple[str, str, str], list[AuditCase]] = {}
    for case in cases:
        jobs.setdefault((case.model, case.gpu, case.workload), []).append(case)
    return list(jobs.values())


def _job_size(job: list[AuditCase]) -> tuple[int, int]:
    return (len(job), max(c.servers for c in job))


def run_job(job: list[AuditCase]) -> list[Outcome]:
    """The job's outcomes as a worker sends them back: checked where they were evaluated,
    without their results (:func:`advisor.engine.tools.audit.checked`)."""
    return [checked(run_case(case)) for case in job]


def run_timed_job(job: list[AuditCase]) -> tuple[list[Outcome], float]:
    """:func:`run_job` and the CPU seconds the worker spent on it."""
    started = time.process_time()
    outcomes = run_job(job)
    return outcomes, time.process_time() - started


def timings_text(timed: list[tuple[list[AuditCase], float]], slowest: int) -> str:
    """CPU seconds by kind of work and the ``slowest`` jobs (model, GPU, kind, cases, largest
    cluster), for ``--timings``: which workloads the audit's wall time goes to."""
    by_kind: dict[str, list[float]] = {}
    for job, seconds in timed:
        by_kind.setdefault(job[0].workload, []).append(seconds)
    total = sum(seconds for _, seconds in timed)
    lines = [f"CPU seconds by kind of work ({total:.1f} s in {len(timed)} jobs):"]
    for kind, values in sorted(by_kind.items(), key=lambda kv: -sum(kv[1])):
        share = 100 * sum(values) / total if total > 0 else 0.0
        lines.append(f"  {kind:26s} {sum(values):8.1f} s {share:5.1f} % ({len(values)} jobs)")
    lines.append(f"slowest {slowest} jobs:")
    for job, seconds in sorted(timed, key=lambda js: -js[1])[:slowest]:
        first = job[0]
        lines.append(
            f"  {seconds:7.2f} s  {first.model} on {first.gpu}, {first.workload}: "
            f"{len(job)} cases up to {max(c.servers for c in job)} servers"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--processes", type=int, default=multiprocessing.cpu_count())
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--jobs-every", type=int, default=1)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--serving", action="store_true", help="serving (inference) cases only, no platform checks"
    )
    parser.add_argument(
        "--timings",
        type=int,
        default=0,
        metavar="N",
        help="print CPU seconds by kind of work and the N slowest jobs",
    )
    args = parser.parse_args(argv)
    cases = [c for c in grid() if not args.serving or c.workload.startswith("inference")]
    cases = cases[:: max(1, args.every)]
    jobs = by_job(cases)[:: max(1, args.jobs_every)]
    started = time.perf_counter()
    outcomes: list[Outcome] = []
    timed: list[tuple[list[AuditCase], float]] = []
    with multiprocessing.Pool(max(1, args.processes)) as pool:
        ordered = sorted(jobs, key=_job_size, reverse=True)
        # imap keeps the jobs' order, so each job's time pairs with its job
        done = pool.imap(run_timed_job, ordered)
        for job, (job_outcomes, seconds) in zip(ordered, done, strict=True):
            timed.append((job, seconds))
            outcomes.extend(job_outcomes)
    outcomes.sort(key=lambda o: o.case)
    report = audit(outcomes)
    if not args.serving:
        report.cases += len(PLATFORM_CHECKS)
        report.violations.extend(platform_check_violations())
    report.seconds = time.perf_counter() - started
    payload = {"engine_version": ENGINE_VERSION, **report.to_dict()}
    args.out.write_text(json.dumps(payload, indent=2) + "\n")
    print(
        f"audit: {report.cases} cases ({report.answered} answered, {report.refused} refused) "
        f"in {report.seconds:.0f} s; {len(report.violations)} violations "
        f"{report.counts() or ''} -> {args.out}"
    )
    if args.timings > 0:
        print(timings_text(timed, args.timings))
    return 1 if report.violations else 0


if __name__ == "__main__":
    sys.exit(main())
