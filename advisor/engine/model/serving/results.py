"""Serving figures that start from a whole scenario: an ``evaluate`` result's load curves
and the prediction of a published serving row.

Both re-plan the scenario (:func:`advisor.engine.model.planner.plan_workload`) and then price it
with :mod:`advisor.engine.model.serving.load`, so they sit above both modules (serving is planned by
the workload module; it does not plan).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from advisor.engine.facts.catalog import Catalog, default_catalog
from advisor.engine.input.scenario import Design, parse_scenario
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.serving.compute import decode_step_s, prefill_service_s
from advisor.engine.model.serving.load import (
    ServingModel,
    load_curve,
    serving_metrics,
    serving_model,
)
from advisor.engine.result.echo import ScenarioEcho
from advisor.engine.result.records import Option


def load_curves_for_result(
    scenario: ScenarioEcho, options: Iterable[Option], catalog: Catalog | None = None
) -> list[dict[str, Any]]:
    """Latency-vs-load curves of the given options of a (typed) ``evaluate`` result.

    Re-plans the result's normalised scenario (pure and fast) on ``catalog`` (the run's;
    the built-in one by default) and prices each option's network.  Returns ``[]`` for
    training or when there are no options.
    """
    if scenario.workload != "inference":
        return []
    planned = parse_scenario(scenario.to_dict(), catalog or default_catalog())
    workload = plan_workload(planned)
    serving_plan = workload.inference.serving if workload.inference is not None else None
    if serving_plan is None:
        return []
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, float, int]] = set()
    for option in options:
        key = (option.fabric, float(option.nic_gbps), int(option.nics_per_node))
        if key in seen or not key[1] or not key[2]:
            continue
        seen.add(key)
        design = Design(
            fabric=key[0],
            nic_gbps=key[1],
            nics_per_node=key[2],
            oversubscription=float(option.oversubscription or 1.0),
        )
        at_ask = serving_metrics(planned, serving_plan, design)
        out.append(
            {
                "label": f"{key[0]} {key[2]} x {key[1]:g}G",
                "fabric": key[0],
                "recommended": option.recommended,
                "points": load_curve(planned, serving_plan, design),
                "ttft_ms_p95": at_ask.ttft_ms_p95,
                "kv_transfer_share_of_ttft": at_ask.kv_transfer_share_of_ttft,
                "kv_transfer_ms": at_ask.kv_transfer_ms,
                "load_saturated": at_ask.load_saturated,
            }
        )
    return out


# ----------------------------------------------------------------------------- validation


def published_scenario(row: dict[str, Any]) -> dict[str, Any]:
    """Scenario v1 for a published serving result with the source's own deployment."""
    config = row["config"]
    gpn = int(config.get("gpus_per_node", 8))
    phase = config["phase"]
    base: dict[str, Any] = {
        "workload": "inference",
        "model": config["model"],
        "gpu": config["gpu"],
        "precision": config.get("precision", "bf16"),
    }
    if phase == "capacity":
        parallelism = {"tp": int(config.get("tp", 1))}
        if config.get("ep"):
            # DEPn: attention data-parallel over n GPUs, the experts spread over them
            parallelism["ep"] = int(config["ep"])
        return base | {
            "gpus": gpn,
            "gpus_per_node": gpn,
            "inference": {
                "deployment": "replicas",
                "prompt_tokens": int(config["prompt_tokens"]),
                "output_tokens": int(config["output_tokens"]),
                "requests_per_s": 1.0,
            },
            "parallelism": parallelism,
        }
    if phase == "static":
        tp = int(config.get("tp", 1))
        return base | {
            "gpus": gpn,
            "gpus_per_node": gpn,
            "inference": {
                "deployment": "replicas",
                "prompt_tokens": int(config["prompt_tokens"]),
                "output_tokens": int(config["output_tokens"]),
                "concurrent_requests": int(config["batch"]) * (gpn // tp),
            },
            "parallelism": {"tp": tp},
        }
    if phase == "decode":
        decode, prefill = int(config["servers"]), int(config["prefill_servers"])
        kv = int(config["kv_length"])
        inference: dict[str, Any] = {"prompt_tokens": max(1, kv - 1), "output_tokens": 2}
    else:
        prefill, decode = int(config["servers"]), int(config["decode_servers"])
        inference = {
            "prompt_tokens": int(config["prompt_tokens"]),
            "output_tokens": int(config.get("output_tokens", 1000)),
            "prefix_cache_hit_rate": float(config.get("prefix_cache_hit_rate", 0.0)),
        }
    inference |= {
        "deployment": "disaggregated",
        "pools": {"prefill": {"servers": prefill}, "decode": {"servers": decode}},
    }
    if config.get("mtp"):
        inference["mtp"] = float(config["mtp"])
    return base | {"gpus": (prefill + decode) * gpn, "gpus_per_node": gpn, "inference": inference}


def benchmark_output_rate(model: ServingModel, requests: int) -> float:
    """Output tokens per second of one instance over ``trtllm-bench throughput``'s whole run:
    ``requests`` identical requests (one prompt and one output length: ``prepare_dataset.py
    token-norm-dist`` with both deviations 0) queued at once.

    The instance holds ``B`` of them at a time (its KV-memory batch, reserved for the whole
    sequence as the Guaranteed-No-Evict scheduler does), so they run in waves: every request of
    a wave ends on the same step and the next wave starts together, the last wave holding the
    ``requests mod B`` left.  The run lasts every prompt (one at a time, as the capacity model
    prices them) plus ``output / tokens per step`` steps of each wave at its own batch.  With
    many waves this tends to the steady capacity (:meth:`ServingModel.capacity_rps` per
    instance); with one wave and a small remainder it is well below it (docs/MODEL.md 15.1,
    "The benchmark's own request count")."""
    prompts_s, decode_s = benchmark_run_s(model, requests)
    return requests * model.serving_plan.output_tokens / (prompts_s + decode_s)


def benchmark_run_s(model: ServingModel, requests: int) -> tuple[float, float]:
    """(seconds of every prompt, seconds of every decode step) of :func:`benchmark_output_rate`'s
    run: the prompts one at a time, then each wave's ``output / tokens per step`` steps at its
    own batch."""
    plan = model.serving_plan
    batch = max(1, int(plan.decode.max_batch_per_instance))
    full, rest = divmod(requests, batch)
    steps = plan.output_tokens / plan.tokens_per_step
    prompts_s = requests * max(0.0, model.prefill_s)
    decode_s = steps * (
        full * model.step(float(batch)) + (model.step(float(rest)) if rest else 0.0)
    )
    return prompts_s, decode_s


def published_design(config: dict[str, Any]) -> Design:
    """The network a published serving row ran on: its own fabric, NIC speed and count where it
    states them, else InfiniBand, 8 x 400G a server."""
    return Design(
        fabric=str(config.get("fabric", "infiniband")),
        nic_gbps=float(config.get("nic_gbps", 400)),
        nics_per_node=int(config.get("nics_per_node", 8)),
    )


def predict_published(row: dict[str, Any]) -> dict[str, float]:
    """Throughput and time per token of a published serving result (``kind: serving``).

    decode: the decode pool at the source's batch per GPU; prefill: the prefill pool's input
    tokens per second per server (cache hits included when the source counts them); static:
    a batch processed to completion (prefill of every prompt, then every output step at the
    mean context), as TensorRT-LLM's gptSessionBenchmark measures; capacity: the output tokens
    per second of one instance at its capacity (prefill and decode sharing its GPUs, decode at
    the batch its KV memory holds), as ``trtllm-bench throughput`` measures with requests at an
    infinite rate; over the benchmark's own run of ``num_requests`` identical requests
    (:func:`benchmark_output_rate`) when the row gives the count.
    """
    config = row["config"]
    scenario = parse_scenario(published_scenario(row), default_catalog())
    workload = plan_workload(scenario)
    assert workload.inference is not None and workload.inference.serving is not None
    serving_plan = workload.inference.serving
    design = published_design(config)
    if config["phase"] == "capacity":
        model = serving_model(scenario, serving_plan, design, "point")
        requests = config.get("num_requests")
        if requests is not None and serving_plan.colocated:
            return {"output_tokens_per_s_per_instance": benchmark_output_rate(model, int(requests))}
        capacity = model.capacity_rps()
        return {
            "output_tokens_per_s_per_instance": capacity
            * serving_plan.output_tokens
            / serving_plan.decode.instances
        }
    if config["phase"] == "decode":
        b = float(config["batch_per_gpu"]) * serving_plan.decode.gpus_per_instance
        step = decode_step_s(scenario, serving_plan, b, design, "point")
        tokens = b * serving_plan.decode.instances * serving_plan.tokens_per_step / step
        return {
            "tokens_per_s_per_server": tokens / serving_plan.decode.servers,
            "ms_per_token": step / serving_plan.tokens_per_step * 1e3,
        }
    if config["phase"] == "prefill":
        service = prefill_service_s(scenario, serving_plan, serving_plan.prefill, design, "point")
        computed = serving_plan.prefill.instances * serving_plan.computed_prompt_tokens / service
        hit = float(config.get("prefix_cache_hit_rate", 0.0))
        return {
            "input_tokens_per_s_per_server": computed / (1.0 - hit) / serving_plan.prefill.servers
        }
    batch = float(config["batch"])
    service = prefill_service_s(scenario, serving_plan, serving_plan.prefill, design, "point")
    step = decode_step_s(scenario, serving_plan, batch, design, "point")
    total = batch * service + serving_plan.output_tokens * step
    per_instance = batch * serving_plan.output_tokens / total
    return {
        "tokens_per_s_per_gpu": per_instance / serving_plan.decode.gpus_per_instance,
        "ms_per_token": step * 1e3,
    }
