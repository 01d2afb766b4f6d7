"""The load model's time per token against an iteration-level simulation on the engine's prices
(docs/MODEL.md 15.2, "What AIConfigurator reads as 'at target'").

    .venv/bin/python bench/serving_ifb_simulation.py              # 70B, 8 H100, 4,000 / 1,000
    .venv/bin/python bench/serving_ifb_simulation.py --case 0     # a case of aic_side_by_side

The engine's own choice for a case of ``bench/aic_side_by_side.py`` must be replicas (prefill
and decode share the GPUs). One replica is simulated as TensorRT-LLM's in-flight batching
schedules it (docs: "Paged Attention, IFB, and Request Scheduling": context-phase sequences are
processed together with generation-phase ones; chunked prefill is off by default, so a prompt
joins an iteration whole while the iteration's tokens stay within ``max_num_tokens`` = 8,192 and
the replica's KV slots): every generating request gets one token per iteration, an iteration
costs the engine's decode step at its generating batch (``ServingModel.step``) plus the engine's
prompt service (``ServingModel.prefill_s``) for each prompt it carries, the first token comes at
the end of the prompt's iteration, arrivals are Poisson at the rate / replicas. A request's time
per token is its own mean, (E2E - TTFT) / (output - 1) (MLPerf loadgen, vLLM's serving
benchmark). Prints, per rate, the engine's analytic p50 / p95 time per token (the load model)
beside the simulated mean / p50 / p95 / p99, then the highest simulated rate of the scan whose
p95 meets the target. Same prices, so any difference is the load model's statistics, not the
step or prefill physics. A few seconds.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from aic_side_by_side import CASES, MODELS

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.serving.load import ServingModel
from advisor.engine.model.serving.pools import reference_design

MAX_NUM_TOKENS = 8192
"""TensorRT-LLM's default token budget of one iteration (BuildConfig.max_num_tokens)."""


@dataclass(frozen=True)
class Replica:
    steps_s: list[float]
    """Decode step by generating batch, 0 .. the replica's KV slots."""
    prompt_s: float
    prompt_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class Simulated:
    tpot_mean_s: float
    tpot_p50_s: float
    tpot_p95_s: float
    tpot_p99_s: float
    ttft_p95_s: float


def _quantile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def simulate(replica: Replica, rate: float, requests: int, seed: int = 1) -> Simulated:
    """One replica at Poisson ``rate``; the first fifth of the finished requests is warm-up."""
    rnd = random.Random(seed)
    slots = len(replica.steps_s) - 1
    clock, iteration = 0.0, 0
    next_arrival = rnd.expovariate(rate)
    waiting: collections.deque[float] = collections.deque()
    generating: collections.deque[tuple[float, float, int]] = collections.deque()
    finished: list[tuple[float, float, float]] = []
    while len(finished) < requests:
        while next_arrival <= clock:
            waiting.append(next_arrival)
            next_arrival += rnd.expovariate(rate)
        batch = len(generating)
        if batch == 0 and not waiting:
            clock = next_arrival
            continue
        prompts: list[float] = []
        tokens = batch
        while (
            waiting
            and tokens + replica.prompt_tokens <= MAX_NUM_TOKENS
            and batch + len(prompts) < slots
        ):
            prompts.append(waiting.popleft())
            tokens += replica.prompt_tokens
        clock += (replica.steps_s[batch] if batch else 0.0) + len(prompts) * replica.prompt_s
        iteration += 1
        while generating and iteration - generating[0][2] >= replica.output_tokens - 1:
            arrived, first, _ = generating.popleft()
            finished.append((arrived, first, clock))
        generating.extend((arrived, clock, iteration) for arrived in prompts)
    kept = finished[len(finished) // 5 :]
    tpot = sorted((end - first) / (replica.output_tokens - 1) for _, first, end in kept)
    ttft = sorted(first - arrived for arrived, first, _ in kept)
    return Simulated(
        tpot_mean_s=sum(tpot) / len(tpot),
        tpot_p50_s=_quantile(tpot, 0.50),
        tpot_p95_s=_quantile(tpot, 0.95),
        tpot_p99_s=_quantile(tpot, 0.99),
        ttft_p95_s=_quantile(ttft, 0.95),
    )


def case_model(index: int) -> ServingModel:
    size, gpu, gpus, isl, osl, ttft, tpot, _ = CASES[index]
    raw: dict[str, Any] = {
        "workload": "inference",
        "model": MODELS[size],
        "gpu": f"{gpu}-sxm",
        "gpus": gpus,
        "precision": "bf16",
        "inference": {
            "prompt_tokens": isl,
            "output_tokens": osl,
            "target_ttft_ms": ttft,
            "target_ms_per_token": tpot,
            "requests_per_s": 1000,
        },
    }
    scenario = parse_scenario(raw, default_catalog())
    plan = plan_workload(scenario)
    assert plan.inference is not None and plan.inference.serving is not None
    serving_plan = plan.inference.serving
    if not serving_plan.colocated:
        raise SystemExit(f"case {index}: the engine's choice is {serving_plan.deployment}")
    return ServingModel(scenario, serving_plan, reference_design(scenario))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", type=int, default=9, help="index into aic_side_by_side.CASES")
    parser.add_argument("--requests", type=int, default=20000)
    args = parser.parse_args()
    model = case_model(args.case)
    plan = model.serving_plan
    instances = plan.decode.instances
    replica = Replica(
        steps_s=[0.0]
        + [model.step(b) for b in range(1, int(plan.decode.max_batch_per_instance) + 1)],
        prompt_s=model.prefill_s,
        prompt_tokens=plan.prompt_tokens,
        output_tokens=plan.output_tokens,
    )
    at_target = model.max_rate_at_target()
    print(
        json.dumps(
            {
                "case": list(CASES[args.case][:5]),
                "tp": plan.decode.tp,
                "replicas": instances,
                "prompt_ms": round(model.prefill_s * 1e3, 2),
                "engine_rate_at_target": round(at_target, 4),
            }
        )
    )
    best = 0.0
    for fraction in (0.8, 0.85, 0.9, 0.95, 1.0, 1.05, 1.1, 1.15):
        rate = at_target * fraction
        point = model.at_rate(rate)
        sim = simulate(replica, rate / instances, args.requests)
        if sim.tpot_p95_s <= plan.target_tpot_s:
            best = rate
        print(
            json.dumps(
                {
                    "requests_per_s": round(rate, 4),
                    "engine_ms_per_token_p50": round(point.tpot_p50_s * 1e3, 3),
                    "engine_ms_per_token_p95": round(point.tpot_p95_s * 1e3, 3),
                    "simulated_mean": round(sim.tpot_mean_s * 1e3, 3),
                    "simulated_p50": round(sim.tpot_p50_s * 1e3, 3),
                    "simulated_p95": round(sim.tpot_p95_s * 1e3, 3),
                    "simulated_p99": round(sim.tpot_p99_s * 1e3, 3),
                    "engine_ttft_ms_p95": round(point.ttft_p95_s * 1e3, 1),
                    "simulated_ttft_ms_p95": round(sim.ttft_p95_s * 1e3, 1),
                }
            )
        )
    print(
        json.dumps(
            {
                "engine_rate_at_target": round(at_target, 4),
                "simulated_rate_at_target_of_the_scan": round(best, 4),
            }
        )
    )


if __name__ == "__main__":
    main()
