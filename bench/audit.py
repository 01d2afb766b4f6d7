"""The audit grid (``make audit``): every preset model x GPU x size through ``evaluate``, the
late-2026 hardware grid and the platform checks.

Writes ``bench/audit.json`` (counts, violations by property, examples) and exits 1 when any
property is violated (see ``advisor/engine/tools/audit.py`` for the properties).  Options:
``--processes N`` (default: all cores), ``--every K`` (every K-th case only, for a quick look;
series properties then compare the sizes that remain), ``--serving`` (the inference cases
only).  Cases are evaluated without the scaling chart, which no property reads (see
``advisor/engine/tools/audit.py``).
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
    audit,
    grid,
    platform_check_violations,
    run_case,
)

OUT = ROOT / "bench" / "audit.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--processes", type=int, default=multiprocessing.cpu_count())
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--serving", action="store_true", help="serving (inference) cases only, no platform checks"
    )
    args = parser.parse_args(argv)
    cases = [c for c in grid() if not args.serving or c.workload.startswith("inference")]
    cases = cases[:: max(1, args.every)]
    started = time.perf_counter()
    with multiprocessing.Pool(max(1, args.processes)) as pool:
        outcomes = pool.map(run_case, cases, chunksize=16)
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
    return 1 if report.violations else 0


if __name__ == "__main__":
    sys.exit(main())
