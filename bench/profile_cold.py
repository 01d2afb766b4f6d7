"""cProfile of cold evaluations over the bench grid (where a new request's time goes).

    .venv/bin/python bench/profile_cold.py [--only NAME ...] [--sort tottime] [--limit 40]

Each scenario is evaluated once with every engine cache cleared before it (as `make bench`
measures it), all under one profile; prints the top functions and writes the raw stats to
/tmp/profile_cold.prof (for snakeviz or pstats).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# cProfile sees Python frames only: profile the engine's source, not its compiled build
os.environ.setdefault("FABRIC_ENGINE_SOURCE", "1")
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.engine_bench import WARM_UP, clear_engine_caches  # noqa: E402
from bench.grid import SCENARIOS  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", action="append")
    parser.add_argument("--sort", default="tottime")
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--out", type=Path, default=Path("/tmp/profile_cold.prof"))
    args = parser.parse_args(argv)
    from advisor.engine import evaluate

    evaluate(WARM_UP)
    profiler = cProfile.Profile()
    total = 0.0
    for name in args.only or list(SCENARIOS):
        clear_engine_caches()
        start = time.process_time()
        profiler.enable()
        evaluate(SCENARIOS[name])
        profiler.disable()
        total += time.process_time() - start
    profiler.dump_stats(str(args.out))
    print(f"{total * 1e3:.0f} ms CPU over the scenarios (profiled)")
    pstats.Stats(str(args.out)).sort_stats(args.sort).print_stats(args.limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
