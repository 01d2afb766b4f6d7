"""What the benchmark's CUDA-graph padding would do to the published serving capacity rows
(docs/MODEL.md 15.1, "CUDA-graph padding, read and not adopted").

TensorRT-LLM's performance pages since v1.0 run ``trtllm-bench throughput`` on the PyTorch
backend with ``cuda_graph_config: {enable_padding: true, batch_sizes: [1, 2, 4, ..., 256, 384,
512, 1024, 2048, 4096, 8192]}`` (perf-overview.md at 00f37686, "Running the Benchmark"; the
developer guide's at 03e27c7d the same list).  A generation-only iteration then runs the
captured graph of the next listed size, its extra rows dummy requests
(``_torch/pyexecutor/model_engine.py``: ``_round_up_batch_size``), and the sizes above the
runtime's ``min(max_batch_size, max_num_tokens)`` are replaced by that cap
(``_filter_cuda_graph_batch_sizes``).  trtllm-bench sets ``max_batch_size`` by
``tensorrt_llm/bench/build/tuning.py`` ``finetune_setting`` (the KV estimate rounded up: to 32
below 256 requests, 128 below 1,024, 256 above, at least 64) for the quantisations it tunes,
and leaves the defaults (2,048 requests, 8,192 tokens) for the others (MXFP4: not one of
``TUNED_QUANTS``).

This script replays each row of those pages as ``results.benchmark_run_s`` does, with each
decode step's batch-dependent parts (GEMMs, experts, element-wise, output head, all-reduces)
at the padded batch and its attention at the real one (a dummy request attends one token), the
engine's KV batch standing in for trtllm-bench's estimate and capped at its ``max_batch_size``,
and prints the row's error without and with the padding and the MAE by family and use.  Reading
a held-out row this way is looking at it (docs/VALIDATION_SOURCES.md).  Engine only::

    .venv/bin/python bench/cuda_graph_padding.py             # every row of the PyTorch pages
    .venv/bin/python bench/cuda_graph_padding.py trtllm10    # rows whose id holds all words
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from advisor.engine.facts.catalog import default_catalog  # noqa: E402
from advisor.engine.input.scenario import parse_scenario  # noqa: E402
from advisor.engine.model.planner import plan_workload  # noqa: E402
from advisor.engine.model.serving import compute  # noqa: E402
from advisor.engine.model.serving.load import ServingModel, serving_model  # noqa: E402
from advisor.engine.model.serving.results import (  # noqa: E402
    predict_published,
    published_design,
    published_scenario,
)
from advisor.engine.tools.validation import row_use, serving_capacity_rows  # noqa: E402

GRAPH_BATCH_SIZES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 1024, 2048, 4096, 8192)
"""``cuda_graph_config.batch_sizes`` of the pages' ``llm_options.yml``."""
PYTORCH_PAGES = ("trtllm-", "trtllm10-")
"""Row ids of the pages run on the PyTorch backend (v1.0 and the developer guide); the v0.17
page's rows (``trtllm017``) ran TensorRT engines, which have no such padding."""
DEFAULT_MAX_BATCH_SIZE = 2048
DEFAULT_MAX_NUM_TOKENS = 8192
UNTUNED_PRECISIONS = ("mxfp4",)
STEADY_REQUESTS = 3000
"""Requests of a row whose page gives no count (the developer guide's 1000/1000), as
``serving_rows_probe.py`` takes them."""


def tuned_max_batch_size(requests: float) -> int:
    """``finetune_setting``'s ``max_batch_size`` for a KV estimate of ``requests``."""
    raw = min(requests, 4096.0)
    if raw < 256:
        return max(64, 32 * math.ceil(raw / 32))
    if raw < 1024:
        return 128 * math.ceil(raw / 128)
    return 256 * math.ceil(raw / 256)


def padded_batch(batch: int, cap: int) -> int:
    """The captured graph a generation-only iteration of ``batch`` requests runs."""
    listed = next((size for size in GRAPH_BATCH_SIZES if size >= batch), cap)
    return min(listed, cap)


def padded_run_rate(row: dict[str, Any], model: ServingModel) -> float:
    """Output tokens per second of the benchmark's run with every decode step padded."""
    scenario, plan = model.scenario, model.serving_plan
    pool = plan.decode
    kv_batch = max(1, int(pool.max_batch_per_instance))
    untuned = str(row["config"].get("precision")) in UNTUNED_PRECISIONS
    max_batch = DEFAULT_MAX_BATCH_SIZE if untuned else tuned_max_batch_size(kv_batch)
    cap = min(max_batch, DEFAULT_MAX_NUM_TOKENS if untuned else max_batch)
    batch = min(kv_batch, max_batch)

    def without_attention(b: float) -> float:
        if scenario.model.is_moe:
            return compute.moe_decode_s(scenario, pool, b, plan.rows_per_step, 0.0)
        return compute.dense_decode_s(scenario, b, plan.rows_per_step, 0.0, pool.tp, pool.pp)

    def step(b: int) -> float:
        padded = without_attention(float(padded_batch(b, cap))) - without_attention(float(b))
        return model.step(float(b)) + padded

    requests = int(row["config"].get("num_requests") or STEADY_REQUESTS)
    full, rest = divmod(requests, batch)
    steps = plan.output_tokens / plan.tokens_per_step
    decode_s = steps * (full * step(batch) + (step(rest) if rest else 0.0))
    prompts_s = requests * max(0.0, model.prefill_s)
    return requests * plan.output_tokens / (prompts_s + decode_s)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("words", nargs="*", help="keep rows whose id contains every word")
    args = parser.parse_args(argv)
    errors: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    for row in serving_capacity_rows():
        if row["config"]["phase"] != "capacity" or not row["id"].startswith(PYTORCH_PAGES):
            continue
        if not all(w in row["id"] for w in args.words):
            continue
        scenario = parse_scenario(published_scenario(row), default_catalog())
        inference = plan_workload(scenario).inference
        assert inference is not None and inference.serving is not None
        if not inference.serving.colocated:
            continue
        model = serving_model(scenario, inference.serving, published_design(row["config"]), "point")
        measured = float(row["measured"]["output_tokens_per_s_per_instance"])
        now = predict_published(row)["output_tokens_per_s_per_instance"] / measured - 1.0
        padded = padded_run_rate(row, model) / measured - 1.0
        family = "moe" if scenario.model.is_moe else "dense"
        errors[(family, row_use(row))].append((now, padded))
        print(f"{row['id']:66s} {row_use(row):11s} {100 * now:+7.1f} -> {100 * padded:+7.1f} %")
    for (family, use), pairs in sorted(errors.items()):
        before = statistics.mean(abs(a) for a, _ in pairs)
        after = statistics.mean(abs(b) for _, b in pairs)
        beyond = (sum(abs(a) > 0.15 for a, _ in pairs), sum(abs(b) > 0.15 for _, b in pairs))
        print(
            f"{family:5s} {use:11s} {len(pairs):4d} rows: MAE {100 * before:5.2f} -> "
            f"{100 * after:5.2f} %, beyond 15 % {beyond[0]} -> {beyond[1]}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
