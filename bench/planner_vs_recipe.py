"""The planner against the plans of the published training runs, each on its own design
(``advisor.engine.tools.planner_check``; docs/MODEL.md 5.3, "Planner against the sources").

    .venv/bin/python bench/planner_vs_recipe.py          # -> bench/planner_vs_recipe.json

Prints one line per row (the planner's step over the source's, both steps, the planner's plan)
and writes the rows with a summary: the geometric mean of the ratios, how many rows read the
planner's plan more than 3 % and 10 % slower, and the largest ratio.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from advisor.engine.tools.planner_check import compare, rows_with_plans  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "bench" / "planner_vs_recipe.json"))
    args = parser.parse_args()
    results = [compare(row) for row in rows_with_plans()]
    for r in results:
        print(
            f"{r.row_id:55s} {r.ratio:6.3f}  source {r.source_step_s:9.3f} s"
            f"  planner {r.planner_step_s:9.3f} s  {r.planner_plan}"
        )
    ratios = [r.ratio for r in results]
    summary = {
        "rows": len(ratios),
        "geometric_mean_ratio": round(math.exp(sum(map(math.log, ratios)) / len(ratios)), 4),
        "planner_slower_by_over_3_pct": sum(x > 1.03 for x in ratios),
        "planner_slower_by_over_10_pct": sum(x > 1.10 for x in ratios),
        "largest_ratio": round(max(ratios), 4),
    }
    print(json.dumps(summary))
    rows = [
        {
            "id": r.row_id,
            "ratio": round(r.ratio, 4),
            "source_step_s": round(r.source_step_s, 4),
            "planner_step_s": round(r.planner_step_s, 4),
            "planner_plan": r.planner_plan,
        }
        for r in results
    ]
    what = "the planner's step over the published plan's, each row on its own design"
    report = {"what": what, "summary": summary, "rows": rows}
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
