"""The load model's time per token against an iteration-level simulation on the engine's prices
(docs/MODEL.md 15.2, "What AIConfigurator reads as 'at target'").

    .venv/bin/python bench/serving_ifb_simulation.py              # 70B, 8 H100, 4,000 / 1,000
    .venv/bin/python bench/serving_ifb_simulation.py --case 0     # a case of aic_side_by_side
    .venv/bin/python bench/serving_ifb_simulation.py --scan       # all twelve, 50 / 80 / 95 %

``--scan`` runs every case of ``bench/aic_side_by_side.py`` at 50, 80 and 95 % of the engine's
rate within the targets and prints the load model's p95 time per token and TTFT beside the
simulated ones, then the mean |difference| (about a minute at the default 20,000 requests). A
disaggregated choice is simulated as its prefill pool (first come first served, the engine's
prompt service), the KV transfer at the load model's time, and one decode instance (each
request to one at random) iterating as below with no prompts in its steps. For a colocated
choice (replicas, split; prefill and decode share the GPUs) one replica is simulated as
TensorRT-LLM's in-flight batching
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
import dataclasses
import heapq
import json
import math
import random
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from aic_side_by_side import CASES, case_scenario

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.serving.compute import CHUNKED_PREFILL_TOKENS
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
    tpot_sd_s: float
    tpot_skewness: float
    ttft_p95_s: float


def _quantile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def simulate(
    replica: Replica,
    rate: float,
    requests: int,
    seed: int = 1,
    chunk_tokens: int | None = None,
) -> Simulated:
    """One replica at Poisson ``rate``; the first fifth of the finished requests is warm-up."""
    rnd = random.Random(seed)
    arrivals = _poisson(rnd, rate, int(requests * 1.3) + 10)
    return simulate_ready(replica, [(t, t) for t in arrivals], requests, chunk_tokens)


def _poisson(rnd: random.Random, rate: float, count: int) -> list[float]:
    times, clock = [], 0.0
    for _ in range(count):
        clock += rnd.expovariate(rate)
        times.append(clock)
    return times


def simulate_ready(
    replica: Replica,
    requests_in: list[tuple[float, float]],
    requests: int,
    chunk_tokens: int | None = None,
) -> Simulated:
    """One replica fed (arrival, ready) pairs in order of ready: a request joins an iteration
    once ready (colocated: on arrival; disaggregated: its prompt done elsewhere and its KV cache
    moved, ``prompt_s`` 0), and TTFT counts from its arrival.  ``chunk_tokens``: chunked
    prefill as the load model prices it (vLLM: each iteration carries up to that many prompt
    tokens, first come first served, a prompt split over iterations) instead of TensorRT-LLM's
    whole prompts within ``MAX_NUM_TOKENS``.  Stops after ``requests`` finish; the first fifth
    is warm-up."""
    slots = len(replica.steps_s) - 1
    per_token_s = replica.prompt_s / max(1, replica.prompt_tokens)
    clock, iteration = 0.0, 0
    pending = collections.deque(requests_in)
    waiting: collections.deque[list[float]] = collections.deque()
    generating: collections.deque[tuple[float, float, int]] = collections.deque()
    finished: list[tuple[float, float, float]] = []
    while len(finished) < requests and (pending or waiting or generating):
        while pending and pending[0][1] <= clock:
            waiting.append([pending.popleft()[0], float(replica.prompt_tokens)])
        batch = len(generating)
        if batch == 0 and not waiting:
            clock = pending[0][1]
            continue
        prompts: list[float] = []
        prompt_time = 0.0
        if chunk_tokens is None:
            tokens = batch
            while (
                waiting
                and tokens + replica.prompt_tokens <= MAX_NUM_TOKENS
                and batch + len(prompts) < slots
            ):
                prompts.append(waiting.popleft()[0])
                tokens += replica.prompt_tokens
            prompt_time = len(prompts) * replica.prompt_s
        else:
            budget = float(chunk_tokens)
            while waiting and budget > 0 and batch + len(prompts) < slots:
                head = waiting[0]
                take = min(budget, head[1])
                head[1] -= take
                budget -= take
                prompt_time += take * per_token_s
                if head[1] <= 0:
                    prompts.append(waiting.popleft()[0])
        clock += (replica.steps_s[batch] if batch else 0.0) + prompt_time
        iteration += 1
        while generating and iteration - generating[0][2] >= replica.output_tokens - 1:
            arrived, first, _ = generating.popleft()
            finished.append((arrived, first, clock))
        generating.extend((arrived, clock, iteration) for arrived in prompts)
    kept = finished[len(finished) // 5 :]
    tpot = sorted((end - first) / (replica.output_tokens - 1) for _, first, end in kept)
    ttft = sorted(first - arrived for arrived, first, _ in kept)
    mean = sum(tpot) / len(tpot)
    sd = math.sqrt(sum((t - mean) ** 2 for t in tpot) / len(tpot))
    return Simulated(
        tpot_mean_s=mean,
        tpot_sd_s=sd,
        tpot_skewness=sum((t - mean) ** 3 for t in tpot) / len(tpot) / sd**3 if sd > 0 else 0.0,
        tpot_p50_s=_quantile(tpot, 0.50),
        tpot_p95_s=_quantile(tpot, 0.95),
        tpot_p99_s=_quantile(tpot, 0.99),
        ttft_p95_s=_quantile(ttft, 0.95),
    )


def simulate_disaggregated(
    model: ServingModel, replica: Replica, rate: float, requests: int, seed: int = 1
) -> Simulated:
    """A disaggregated deployment at Poisson ``rate``: the prefill pool as c instances serving
    prompts first come first served (``ServingModel.prefill_s`` each), the KV transfer at the
    load model's time at this rate, then each request to a decode instance at random; one
    decode instance simulated as :func:`simulate_ready` (no prompts in its iterations)."""
    rnd = random.Random(seed)
    plan = model.serving_plan
    decode_instances = plan.decode.instances
    kv_s = model.at_rate(rate).kv_transfer_s
    free = [0.0] * plan.prefill.instances
    heapq.heapify(free)
    mine: list[tuple[float, float]] = []
    for arrival in _poisson(rnd, rate, int(requests * 1.3 * decode_instances) + 10):
        start = max(arrival, heapq.heappop(free))
        done = start + model.prefill_s
        heapq.heappush(free, done)
        if rnd.randrange(decode_instances) == 0:
            mine.append((arrival, done + kv_s))
    mine.sort(key=lambda pair: pair[1])
    decode_only = dataclasses.replace(replica, prompt_s=0.0, prompt_tokens=0)
    return simulate_ready(decode_only, mine, requests)


def simulate_case(
    model: ServingModel,
    replica: Replica,
    rate: float,
    requests: int,
    chunk_tokens: int | None = None,
) -> Simulated:
    """The case's deployment at ``rate`` requests per second (all instances); ``chunk_tokens``
    as in :func:`simulate_ready` for a colocated one."""
    if model.serving_plan.colocated:
        instances = model.serving_plan.decode.instances
        return simulate(replica, rate / instances, requests, chunk_tokens=chunk_tokens)
    return simulate_disaggregated(model, replica, rate, requests)


def case_model(index: int) -> ServingModel:
    scenario = parse_scenario(case_scenario(*CASES[index][:7]), default_catalog())
    plan = plan_workload(scenario)
    assert plan.inference is not None and plan.inference.serving is not None
    serving_plan = plan.inference.serving
    return ServingModel(scenario, serving_plan, reference_design(scenario))


def case_replica(model: ServingModel) -> Replica:
    """One replica of ``model`` at the engine's prices."""
    plan = model.serving_plan
    return Replica(
        steps_s=[0.0]
        + [model.step(b) for b in range(1, int(plan.decode.max_batch_per_instance) + 1)],
        prompt_s=model.prefill_s,
        prompt_tokens=plan.prompt_tokens,
        output_tokens=plan.output_tokens,
    )


SCAN_FRACTIONS = (0.5, 0.8, 0.95)
"""Rates of the scan, as shares of the engine's rate within the targets."""


def _pct(engine: float, simulated: float) -> float:
    return 100.0 * (engine / simulated - 1.0)


def _mean_abs(values: list[float]) -> float:
    return round(sum(abs(v) for v in values) / len(values), 2) if values else 0.0


def scan(requests: int) -> None:
    """Every case of aic_side_by_side at SCAN_FRACTIONS of the engine's rate within the
    targets: the load model's p95 time per token and TTFT beside the simulated ones (a
    colocated case under both schedulers: TensorRT-LLM's whole prompts and the chunked
    prefill the load model prices), then the mean |difference| in percent of the simulated
    figure."""
    diffs: dict[str, list[float]] = collections.defaultdict(list)
    for index in range(len(CASES)):
        model = case_model(index)
        replica = case_replica(model)
        at_target = model.max_rate_at_target()
        colocated = model.serving_plan.colocated
        for fraction in SCAN_FRACTIONS:
            rate = at_target * fraction
            point = model.at_rate(rate)
            sim = simulate_case(model, replica, rate, requests)
            row: dict[str, Any] = {
                "case": index,
                "what": list(CASES[index][:5]),
                "deployment": model.serving_plan.deployment,
                "tp": model.serving_plan.decode.tp,
                "share": fraction,
                "requests_per_s": round(rate, 4),
                "tpot_mean_ms": [round(point.tpot_p50_s * 1e3, 2), round(sim.tpot_mean_s * 1e3, 2)],
                "tpot_p95_ms": [round(point.tpot_p95_s * 1e3, 2), round(sim.tpot_p95_s * 1e3, 2)],
                "tpot_p95_diff_pct": round(_pct(point.tpot_p95_s, sim.tpot_p95_s), 1),
                "ttft_p95_ms": [round(point.ttft_p95_s * 1e3, 1), round(sim.ttft_p95_s * 1e3, 1)],
                "ttft_p95_diff_pct": round(_pct(point.ttft_p95_s, sim.ttft_p95_s), 1),
            }
            diffs["tpot"].append(_pct(point.tpot_p95_s, sim.tpot_p95_s))
            diffs["ttft"].append(_pct(point.ttft_p95_s, sim.ttft_p95_s))
            if colocated:
                chunked = simulate_case(model, replica, rate, requests, CHUNKED_PREFILL_TOKENS)
                row["chunked_tpot_p95_ms"] = round(chunked.tpot_p95_s * 1e3, 2)
                row["chunked_ttft_p95_ms"] = round(chunked.ttft_p95_s * 1e3, 1)
                diffs["tpot_chunked"].append(_pct(point.tpot_p95_s, chunked.tpot_p95_s))
                diffs["ttft_chunked"].append(_pct(point.ttft_p95_s, chunked.ttft_p95_s))
            else:
                diffs["tpot_chunked"].append(diffs["tpot"][-1])
                diffs["ttft_chunked"].append(diffs["ttft"][-1])
            print(json.dumps(row), flush=True)
    print(
        json.dumps(
            {
                "points": len(diffs["tpot"]),
                "tpot_p95_mean_abs_diff_pct": _mean_abs(diffs["tpot"]),
                "tpot_p95_max_abs_diff_pct": round(max(abs(v) for v in diffs["tpot"]), 2),
                "ttft_p95_mean_abs_diff_pct": _mean_abs(diffs["ttft"]),
                "on_chunked_prefill": {
                    "tpot_p95_mean_abs_diff_pct": _mean_abs(diffs["tpot_chunked"]),
                    "tpot_p95_max_abs_diff_pct": round(
                        max(abs(v) for v in diffs["tpot_chunked"]), 2
                    ),
                    "ttft_p95_mean_abs_diff_pct": _mean_abs(diffs["ttft_chunked"]),
                },
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", type=int, default=9, help="index into aic_side_by_side.CASES")
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--scan", action="store_true", help="every case at SCAN_FRACTIONS")
    args = parser.parse_args()
    if args.scan:
        scan(args.requests)
        return
    model = case_model(args.case)
    plan = model.serving_plan
    instances = plan.decode.instances
    replica = case_replica(model)
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
        sim = simulate_case(model, replica, rate, args.requests)
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
