"""Take the published serving capacity rows apart: what the engine prices for each, and what the
row's measured run time leaves for the part the engine may have wrong (docs/MODEL.md 15.1,
"Chunked local attention", where these readings found Llama 4's chunks).

    .venv/bin/python bench/serving_rows_probe.py                  # every capacity row
    .venv/bin/python bench/serving_rows_probe.py devguide maverick  # rows whose id holds all words

Per row: the engine's decode batch ``B`` (the KV memory's), its decode step at ``B`` and its
prompt service per request, its predicted output rate beside the measured one; then, over the
benchmark's own run (``results.benchmark_output_rate``: ``num_requests`` identical requests in
waves of ``B``), the *implied prefill* (the measured run time less the engine's decode time, per
request) and the *implied step* (the measured run time less the engine's prompt time, per decode
step of the run). A negative implied prefill means the engine's decode alone outlasts the
measured run. Reading a held-out row this way is looking at it: a change it leads to marks the
row ``looked_at`` (docs/VALIDATION_SOURCES.md). Engine only; a few seconds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from advisor.engine.facts.catalog import default_catalog  # noqa: E402
from advisor.engine.input.scenario import parse_scenario  # noqa: E402
from advisor.engine.model.planner import plan_workload  # noqa: E402
from advisor.engine.model.serving.load import serving_model  # noqa: E402
from advisor.engine.model.serving.results import (  # noqa: E402
    benchmark_run_s,
    predict_published,
    published_design,
    published_scenario,
)
from advisor.engine.tools.validation import serving_capacity_rows  # noqa: E402

STEADY_REQUESTS = 3000
"""Requests of a row whose page gives no count (the developer guide's 1000/1000): the count of
its 1024/1024 row, so the implied figures have a run to divide."""


def probe(row: dict) -> str:
    config = row["config"]
    scenario = parse_scenario(published_scenario(row), default_catalog())
    plan = plan_workload(scenario).inference
    assert plan is not None and plan.serving is not None
    serving = plan.serving
    model = serving_model(scenario, serving, published_design(config), "point")
    batch = max(1, int(serving.decode.max_batch_per_instance))
    requests = int(config.get("num_requests") or STEADY_REQUESTS)
    prompts_s, decode_s = benchmark_run_s(model, requests)
    waves = -(-requests // batch)
    measured = float(row["measured"]["output_tokens_per_s_per_instance"])
    predicted = predict_published(row)["output_tokens_per_s_per_instance"]
    run_s = requests * serving.output_tokens / measured
    implied_prefill = (run_s - decode_s) / requests
    implied_step = (run_s - prompts_s) / (serving.output_tokens / serving.tokens_per_step * waves)
    return (
        f"{row['id']:62s} B {batch:5d}  step {model.step(float(batch)) * 1e3:7.2f} ms"
        f"  prompt {model.prefill_s * 1e3:8.1f} ms  {predicted:9.0f} / {measured:9.0f}"
        f" ({(predicted / measured - 1) * 100:+6.1f} %)  implied prompt"
        f" {implied_prefill * 1e3:9.1f} ms  implied step {implied_step * 1e3:7.2f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("words", nargs="*", help="keep rows whose id contains every word")
    args = parser.parse_args(argv)
    rows = [
        r
        for r in serving_capacity_rows()
        if r["config"]["phase"] == "capacity" and all(w in r["id"] for w in args.words)
    ]
    for row in rows:
        print(probe(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
