"""Predicted vs measured for the published calibration rows in ``data/calibration.json``.

Row kinds: ``collective`` (nccl-tests busbw), ``training`` (TFLOP/s per GPU — hardware or
model FLOPs, with ``attention_flops: "causal"`` when the source halves attention — tokens/s per
GPU, GPU-hours per trillion tokens), ``all_to_all`` (DeepEP dispatch/combine latency and
bandwidth) and ``topology`` (switch and link counts).  Tolerances: bandwidth and throughput
15 %, latency 35 %, topology exact.  :func:`model_error_band` turns the residuals into the
model-error part of every low/high range (docs/MODEL.md section 9.1).
"""

from __future__ import annotations

import contextlib
import json
from functools import lru_cache
from importlib import resources
from typing import Any

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import Design, parse_scenario
from advisor.engine.model.collectives import collective, make_domain, moe_dispatch, nic_bytes_per_s
from advisor.engine.model.efficiency import forward_flops_per_token, profile
from advisor.engine.model.performance import evaluate_design
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.serving.results import predict_published
from advisor.engine.model.topology import size_topology

BANDWIDTH_TOLERANCE_PCT = 15.0
LATENCY_TOLERANCE_PCT = 35.0
TOPOLOGY_TOLERANCE_PCT = 0.0
_SKIP_METRICS = frozenset({"range"})


@lru_cache(maxsize=1)
def calibration_rows() -> tuple[dict[str, Any], ...]:
    """The calibration rows shipped with the engine (never read from ../shared)."""
    text = (
        resources.files("advisor.engine.calibration")
        .joinpath("data/calibration.json")
        .read_text("utf-8")
    )
    return tuple(json.loads(text)["rows"])


def tolerance_pct(kind: str, metric: str) -> float:
    if kind == "topology":
        return TOPOLOGY_TOLERANCE_PCT
    if "latency" in metric or metric.endswith("_us") or metric.endswith("_ms"):
        return LATENCY_TOLERANCE_PCT
    return BANDWIDTH_TOLERANCE_PCT


def _domain_for(config: dict[str, Any], bound: str = "point") -> Any:
    gpu = default_catalog().gpu(config["gpu"])
    if gpu is None:
        raise ValueError(f"unknown gpu {config['gpu']!r}")
    per_node = int(config.get("gpus_per_node") or gpu.gpus_per_server)
    nodes = int(config.get("nodes") or max(1, int(config.get("gpus", per_node)) // per_node))
    multi = nodes > 1
    return gpu, make_domain(
        nodes=nodes,
        ranks_per_node=per_node,
        scaleup_kind=gpu.scaleup_kind,
        scaleup_gbytes_per_s=gpu.scaleup_gbytes_per_s,
        scaleup_efficiency=gpu.scaleup_efficiency,
        nvls=gpu.nvlink_sharp,
        fabric_id=config.get("fabric") if multi else None,
        nic_gbps=float(config.get("nic_gbps") or 0.0),
        nics_per_node=int(config.get("nics_per_node") or 0),
        oversubscription=float(config.get("oversubscription", 1.0)),
        in_network_reduction=bool(config.get("in_network_reduction", False)),
        bound=bound,
    )


def predict_collective(row: dict[str, Any]) -> dict[str, float]:
    config = row["config"]
    _, domain = _domain_for(config)
    result = collective(
        config["op"], float(config["bytes"]), domain, config.get("algorithm", "auto") or "auto"
    )
    busbw = result.busbw_bytes_per_s
    wire = nic_bytes_per_s(float(config.get("nic_gbps") or 0.0)) * int(
        config.get("nics_per_node") or 1
    )
    return {
        "busbw_GBps": busbw / 1e9,
        "algbw_GBps": result.algbw_bytes_per_s / 1e9,
        "time_us": result.time_s * 1e6,
        "wire_fraction_max": busbw / wire if wire > 0 else 0.0,
        "wire_fraction": busbw / wire if wire > 0 else 0.0,
    }


def _text(row: dict[str, Any]) -> str:
    return f"{row.get('source', '')} {row.get('note', '')}".lower()


def training_scenario(row: dict[str, Any]) -> dict[str, Any]:
    """Scenario v1 for a published training run (recomputation/interleaving from its text)."""
    config = row["config"]
    text = _text(row)
    parallelism = dict(config.get("parallelism", {}))
    if "recompute" not in parallelism and "recomput" in text:
        parallelism["recompute"] = "full"
    model = config["model"]
    if "virtual_stages" not in parallelism and "interleav" in text and isinstance(model, dict):
        layers_per_stage = int(model["layers"]) // int(parallelism.get("pp", 1))
        parallelism["virtual_stages"] = (
            2 if layers_per_stage % 2 == 0 and parallelism.get("pp", 1) > 1 else 1
        )
    scenario: dict[str, Any] = {
        "workload": "training",
        "model": model,
        "gpu": config["gpu"],
        "gpus": config["gpus"],
        "gpus_per_node": config.get("gpus_per_node"),
        "precision": config.get("precision", "bf16"),
        "sequence_length": config["sequence_length"],
        "training": {"global_batch_sequences": config["global_batch_sequences"]},
        "parallelism": parallelism,
    }
    if config.get("fabric"):
        scenario["design"] = {
            "fabric": config["fabric"],
            "nic_gbps": config["nic_gbps"],
            "nics_per_node": config["nics_per_node"],
        }
    return scenario


def predict_training(row: dict[str, Any]) -> dict[str, float]:
    # the design the run used, priced directly (the recommendation is not needed here)
    scenario = parse_scenario(training_scenario(row), default_catalog())
    workload = plan_workload(scenario)
    design = scenario.design or Design(fabric="infiniband", nic_gbps=400.0, nics_per_node=8)
    metrics = evaluate_design(scenario, workload, design).to_dict()
    gpu = default_catalog().gpu(row["config"]["gpu"])
    assert gpu is not None
    peak = gpu.peak_tflops(row["config"].get("precision", "bf16"))
    gpus = int(row["config"]["gpus"])
    tokens_per_gpu = metrics["tokens_per_s"] / gpus
    model_tflops = metrics["model_tflops_per_gpu"]
    if row["config"].get("attention_flops") == "causal":
        # the source counts causal attention as half of the 4 s h FLOPs per token per layer
        model = scenario.model
        full = forward_flops_per_token(model, scenario.sequence_length)
        half = full - 2.0 * scenario.sequence_length * model.heads * model.head_dim * model.layers
        model_tflops *= half / full
    return {
        "tflops_per_gpu": metrics["tflops_per_gpu"],
        "fraction_of_peak": metrics["tflops_per_gpu"] / peak,
        "model_tflops_per_gpu": model_tflops,
        "mfu": model_tflops * 1e12 / (peak * 1e12) if peak else 0.0,
        "step_time_s": metrics["step_time_s"],
        "tokens_per_s_per_gpu": tokens_per_gpu,
        "gpu_hours_per_trillion_tokens": 1e12 / tokens_per_gpu / 3600.0 if tokens_per_gpu else 0.0,
    }


def predict_all_to_all(row: dict[str, Any]) -> dict[str, float]:
    config = row["config"]
    _, domain = _domain_for(config)
    mode = config.get("mode") or ("normal" if "normal kernels" in _text(row) else "low_latency")
    dispatch = moe_dispatch(
        tokens_per_rank=int(config["tokens_per_rank"]),
        hidden=int(config["hidden"]),
        top_k=int(config["top_k"]),
        bytes_per_element=float(config.get("bytes_per_element", 1)),
        d=domain,
        mode=mode,
    )
    # DeepEP's low-latency benchmark divides all dispatched bytes by the time; the normal
    # kernels report the RDMA bytes each GPU moves.
    return {
        "latency_us": dispatch.time_s * 1e6,
        "rdma_GBps": (
            dispatch.total_bytes_per_s if mode == "low_latency" else dispatch.rdma_bytes_per_s
        )
        / 1e9,
        "rdma_GBps_per_gpu": dispatch.rdma_bytes_per_s / 1e9,
    }


def predict_topology(row: dict[str, Any]) -> dict[str, float]:
    config = row["config"]
    size = size_topology(
        int(config["endpoints"]),
        int(config["switch_radix"]),
        float(config.get("oversubscription", 1.0)),
    )
    return {k: float(v) for k, v in size.to_dict().items() if isinstance(v, (int, float))}


_PREDICTORS = {
    "collective": predict_collective,
    "training": predict_training,
    "all_to_all": predict_all_to_all,
    "topology": predict_topology,
}


def _error_pct(predicted: float, measured: float) -> float:
    if measured == 0:
        return 0.0 if predicted == 0 else 100.0
    return (predicted - measured) / measured * 100.0


def validate_row(row: dict[str, Any]) -> list[dict[str, Any]]:
    """One report line per measured metric of ``row``."""
    kind = row["kind"]
    predicted = _PREDICTORS[kind](row)
    lines = []
    for metric, measured in row["measured"].items():
        if metric in _SKIP_METRICS or not isinstance(measured, (int, float)):
            continue
        if metric not in predicted:
            continue
        tol = float(row.get("tolerance_pct", tolerance_pct(kind, metric)))
        value = predicted[metric]
        err = _error_pct(value, float(measured))
        passed = abs(err) <= tol + 1e-9
        if metric.endswith("_max"):
            # an upper bound: the model must not exceed it by more than the tolerance
            passed = err <= tol + 1e-9
        lines.append(
            {
                "id": row["id"],
                "kind": kind,
                "source": row.get("source", ""),
                "confidence": row.get("confidence", ""),
                "metric": metric,
                "predicted": value,
                "measured": float(measured),
                "error_pct": err,
                "tolerance_pct": tol,
                "passed": passed,
            }
        )
    return lines


@lru_cache(maxsize=1)
def serving_calibration_rows() -> tuple[dict[str, Any], ...]:
    """Published serving results (``data/serving_calibration.json``, kind ``serving``)."""
    text = (
        resources.files("advisor.engine.calibration")
        .joinpath("data/serving_calibration.json")
        .read_text("utf-8")
    )
    return tuple(json.loads(text)["rows"])


def predict_serving(row: dict[str, Any]) -> dict[str, float]:
    return predict_published(row)


_PREDICTORS["serving"] = predict_serving


def validation_report() -> dict[str, Any]:
    """``{"rows": [...], "passed": bool}`` (docs/ENGINE_API.md)."""
    lines: list[dict[str, Any]] = []
    for row in calibration_rows() + serving_calibration_rows():
        lines.extend(validate_row(row))
    return {"rows": lines, "passed": all(line["passed"] for line in lines)}


# ----------------------------------------------------------------------------- model error bands

_TIME_LIKE = ("time", "latency", "_us", "_ms", "gpu_hours")
_BAND_STATE = {"building": False}
DEFAULT_MODEL_ERROR = 0.15
"""Band half-width (as a time ratio) for a kind with no calibration row: the throughput
tolerance."""
POOLED_QUANTILE = 0.9
"""Every generation's band covers at least the pooled 10th-90th percentile residual of its kind,
so a generation with one or two rows is not credited with their luck."""


def _time_ratio(metric: str, error_pct: float) -> float:
    """measured / predicted *time* for one report line (> 1: the model was optimistic)."""
    ratio = 1.0 + error_pct / 100.0
    if ratio <= 0:
        return 1.0
    if any(tag in metric for tag in _TIME_LIKE):
        return 1.0 / ratio
    return ratio


def _generation(row: dict[str, Any]) -> str:
    gpu_id = (row.get("config") or {}).get("gpu")
    gpu = default_catalog().gpu(str(gpu_id)) if gpu_id else None
    return profile(gpu).generation if gpu is not None else "*"


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@lru_cache(maxsize=1)
def residual_table() -> dict[tuple[str, str], tuple[float, ...]]:
    """ln(measured / predicted time) of every calibration line, by (kind, GPU generation).

    ``(kind, "*")`` pools a kind over generations.  Built once per process; while it is built
    the engine reports bands without model error (:func:`model_error_band` returns 1, 1).
    """
    import math

    table: dict[tuple[str, str], list[float]] = {}
    _BAND_STATE["building"] = True
    try:
        rows = list(calibration_rows())
        with contextlib.suppress(FileNotFoundError, OSError):
            rows += list(serving_calibration_rows())
        for row in rows:
            lines = validate_row(row)
            gen = _generation(row)
            for line in lines:
                log_ratio = math.log(_time_ratio(line["metric"], line["error_pct"]))
                table.setdefault((line["kind"], gen), []).append(log_ratio)
                table.setdefault((line["kind"], "*"), []).append(log_ratio)
    finally:
        _BAND_STATE["building"] = False
    return {k: tuple(v) for k, v in table.items()}


def model_error_band(kind: str, generation: str) -> tuple[float, float]:
    """(low, high) factors on a predicted *time* from the calibration residuals of ``kind`` on
    ``generation``: the extreme residuals of that generation, widened to at least the pooled
    10th-90th percentile of the kind (DEFAULT_MODEL_ERROR when the kind has no row)."""
    import math

    if _BAND_STATE["building"]:
        return 1.0, 1.0
    table = residual_table()
    pooled = table.get((kind, "*"), ())
    own = table.get((kind, generation), ())
    if not pooled:
        return 1.0 / (1.0 + DEFAULT_MODEL_ERROR), 1.0 + DEFAULT_MODEL_ERROR
    lo = min(0.0, _quantile(list(pooled), 1.0 - POOLED_QUANTILE), min(own, default=0.0))
    hi = max(0.0, _quantile(list(pooled), POOLED_QUANTILE), max(own, default=0.0))
    return math.exp(lo), math.exp(hi)


def line_band(line: dict[str, Any], row: dict[str, Any]) -> tuple[float, float]:
    """The engine's (low, high) for one report line: the point prediction widened by the model
    error band of its kind and generation."""
    low_t, high_t = model_error_band(line["kind"], _generation(row))
    value = float(line["predicted"])
    if any(tag in line["metric"] for tag in _TIME_LIKE):
        return value * low_t, value * high_t
    return value / high_t, value / low_t


def band_coverage() -> dict[str, Any]:
    """Share of calibration lines whose measured value lies inside the engine's band."""
    by_id = {row["id"]: row for row in calibration_rows()}
    inside = 0
    lines = []
    for row in by_id.values():
        for line in validate_row(row):
            lo, hi = line_band(line, row)
            ok = lo * (1 - 1e-9) <= line["measured"] <= hi * (1 + 1e-9)
            inside += ok
            lines.append({**line, "low": lo, "high": hi, "inside": ok})
    total = len(lines)
    return {
        "lines": lines,
        "inside": inside,
        "total": total,
        "share": inside / total if total else 1.0,
    }
