"""The engine's answers to the bench grid, to check a speed change moves no figure.

    .venv/bin/python bench/grid_results.py --out /tmp/before.json      # on the old code
    .venv/bin/python bench/grid_results.py --out /tmp/after.json --compare /tmp/before.json

Evaluates every scenario of ``bench/grid.py`` (and the single-design scenario of
``bench/engine_bench.py``) with every engine cache emptied before each, as ``make bench`` times
them, and writes the JSON results keyed by scenario name (``json.dumps(..., sort_keys=True)``).
``--audit-every K`` adds every K-th case of the audit grid (``advisor.engine.tools.audit``;
refusals as their field errors).  ``--compare`` exits 1 and names the scenarios whose JSON
differs by a single byte.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.engine_bench import (  # noqa: E402
    DESIGN,
    DESIGN_SCENARIO,
    WARM_UP,
    clear_engine_caches,
)
from bench.grid import SCENARIOS  # noqa: E402


def results(names: list[str], audit_every: int = 0) -> dict[str, str]:
    from advisor.engine import evaluate
    from advisor.engine.errors import ScenarioError
    from advisor.engine.tools.audit_grid import grid, scenario_for

    evaluate(WARM_UP)
    scenarios: dict[str, dict[str, Any]] = {
        **{n: SCENARIOS[n] for n in names},
        "one-design-gpt3-175b-h100-1024": {**DESIGN_SCENARIO, "design": DESIGN},
    }
    if audit_every > 0:
        for i, case in enumerate(grid()[::audit_every]):
            scenarios[f"audit-{i * audit_every}"] = scenario_for(case, None)
    out: dict[str, str] = {}
    for name, scenario in scenarios.items():
        clear_engine_caches()
        try:
            out[name] = json.dumps(evaluate(scenario), sort_keys=True)
        except ScenarioError as err:
            out[name] = json.dumps({"refused": err.field_errors}, sort_keys=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--compare", type=Path)
    parser.add_argument("--only", action="append")
    parser.add_argument("--audit-every", type=int, default=0)
    args = parser.parse_args(argv)
    got = results(args.only or list(SCENARIOS), args.audit_every)
    args.out.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(got)} results -> {args.out}")
    if args.compare is None:
        return 0
    before: dict[str, str] = json.loads(args.compare.read_text(encoding="utf-8"))
    differ = [n for n in got if n in before and before[n] != got[n]]
    missing = [n for n in got if n not in before]
    for name in differ:
        print(f"DIFFERS: {name}")
    for name in missing:
        print(f"not in {args.compare}: {name}")
    print(f"{len(got) - len(differ) - len(missing)} identical, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
