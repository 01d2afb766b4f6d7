"""Upload parsing benchmark (``make bench``): adversarial uploads of the largest size, written
to bench/parse.json.

Every upload of tests/measurements/test_parser_adversarial.py (512,000 characters: one line of
digits and dots, a 500,000-digit number, command lines of ``_perf`` and ``-np``, full-width
digits, 4,000-character lines, 200,000 short lines of each kind the parser looks for) plus the
most expensive upload that parses (4,000 rows of 133 two-server tests) are read and fitted as
the upload's request does (``parse_text`` then ``fit_measurement``), each timed in CPU time of
this process and wall time. Target: every upload answered in under 2 s.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from advisor.engine.calibration.fabric_fit import fit_measurement  # noqa: E402
from advisor.engine.calibration.nccl_tests import MAX_ROWS, NcclParseError, parse_text  # noqa: E402
from tests.measurements.test_parser_adversarial import ADVERSARIAL  # noqa: E402

OUT = ROOT / "bench" / "parse.json"
TARGET_S = 2.0


def largest_parsing_upload() -> str:
    ranks = "".join(
        f"#  Rank {i:2d} Group  0 Pid {i} on h{i // 8} device  {i % 8} [0x1b] NVIDIA H100\n"
        for i in range(16)
    )
    rows = "".join(
        f"{8 << k} {2 << k} float sum -1 {10 + k}.5 1.00 1.80 0 {10 + k}.4 1.00 1.80 0\n"
        for k in range(30)
    )
    unit = "# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 1\n" + ranks + rows
    return unit * (MAX_ROWS // 30)


def answer(text: str) -> str:
    try:
        parsed = parse_text(text)
    except NcclParseError as exc:
        return f"refused: {str(exc)[:80]}"
    fit = fit_measurement(parsed)
    return f"read {len(parsed.runs)} runs, fitted {len(fit.terms)} terms"


def main() -> int:
    uploads = {**ADVERSARIAL, "4,000 rows of 133 two-server tests": largest_parsing_upload()}
    rows = []
    for name, text in uploads.items():
        cpu0, wall0 = time.process_time(), time.perf_counter()
        outcome = answer(text)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        rows.append(
            {"upload": name, "chars": len(text), "cpu_s": round(cpu, 3), "wall_s": round(wall, 3)}
            | {"outcome": outcome}
        )
        print(f"{name:40s} {len(text):>7d} chars  cpu {cpu:6.3f} s  wall {wall:6.3f} s  {outcome}")
    worst_cpu = max(r["cpu_s"] for r in rows)
    worst_wall = max(r["wall_s"] for r in rows)
    result = {
        "machine": platform.platform(),
        "python": platform.python_version(),
        "target_s": TARGET_S,
        "worst_cpu_s": worst_cpu,
        "worst_wall_s": worst_wall,
        "uploads": rows,
    }
    OUT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"worst: cpu {worst_cpu:.3f} s, wall {worst_wall:.3f} s (target < {TARGET_S} s)")
    return 0 if worst_cpu < TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
