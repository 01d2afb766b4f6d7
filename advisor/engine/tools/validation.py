"""Predicted vs measured for the published calibration rows in ``data/calibration.json``.

Row kinds: ``collective`` (nccl-tests busbw), ``training`` (TFLOP/s per GPU — hardware or
model FLOPs, with ``attention_flops: "causal"`` when the source halves attention — tokens/s per
GPU, GPU-hours per trillion tokens), ``all_to_all`` (DeepEP dispatch/combine latency and
bandwidth) and ``topology`` (switch and link counts).  Tolerances: bandwidth and throughput
15 %, latency 35 %, topology exact.

Every row carries a ``use`` (docs/VALIDATION_SOURCES.md): ``fitted`` (a constant was set on it,
named in ``fitted``), ``development`` (watched while the model changed), ``held_out`` (never used
to set or choose anything) or ``arithmetic`` (the engine's own topology arithmetic, exact checks
that are not accuracy).  The report summarises the mean absolute error per use and per kind and
leads with the held-out figures.  :func:`model_error_band` turns the residuals into the
model-error part of every low/high range (docs/MODEL.md section 9.1); each report line also gets
the band computed without its own row (``loo_low`` / ``loo_high``), whose coverage on held-out
rows is the honest check of those ranges.

A held-out row may carry ``looked_at``: the model changes aimed at it, or made after its
prediction had been seen (docs/VALIDATION_SOURCES.md).  The held-out MAE and leave-one-out
coverage are reported over every held-out row (the baseline check) and again over the held-out
rows without that mark (``held_out_unseen_*``).
"""

from __future__ import annotations

import contextlib
import json
from functools import lru_cache
from importlib import resources
from typing import Any

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import RAIL_GROUP_NODES
from advisor.engine.facts.numbers import finite as num
from advisor.engine.input.scenario import Design, Scenario, parse_scenario
from advisor.engine.model.collectives import collective, make_domain
from advisor.engine.model.efficiency import forward_flops_per_token, profile
from advisor.engine.model.launch_mode import benchmark_time_s
from advisor.engine.model.moe_dispatch import moe_dispatch
from advisor.engine.model.nccl_versions import NCCL_DEFAULT_VERSION, parse_version
from advisor.engine.model.network_rate import nic_bytes_per_s
from advisor.engine.model.performance import error_band_kind, evaluate_design
from advisor.engine.model.placement import contiguous_share
from advisor.engine.model.planner import REFERENCE_DESIGN, plan_workload
from advisor.engine.model.scaleup import ScaleUp
from advisor.engine.model.serving.results import predict_published
from advisor.engine.model.topology import size_topology

USES = ("fitted", "development", "held_out", "arithmetic")
"""What a calibration row was used for (docs/VALIDATION_SOURCES.md)."""
HELD_OUT_REGRESSION_POINTS = 1.0
"""``validate`` fails when the held-out MAE rises more than this many percentage points above
the committed baseline (``data/validation_baseline.json``)."""
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
    uplink_load, hops = _whole_job_leaf_load(config, nodes, per_node, bound)
    return gpu, make_domain(
        nodes=nodes,
        ranks_per_node=per_node,
        # ``nvls: false``: NVLink SHARP switched off in the source's run (NCCL_NVLS_ENABLE=0)
        scaleup=ScaleUp.of(gpu, nvls=None if config.get("nvls") is None else bool(config["nvls"])),
        fabric_id=config.get("fabric") if multi else None,
        nic_gbps=float(config.get("nic_gbps") or 0.0),
        nics_per_node=int(config.get("nics_per_node") or 0),
        oversubscription=float(config.get("oversubscription", 1.0)),
        in_network_reduction=bool(config.get("in_network_reduction", False)),
        bound=bound,
        uplink_load=uplink_load,
        hops=hops,
        # the NCCL release the source's run used, where it says (docs/MODEL.md section 3)
        nccl_version=(
            parse_version(str(config["nccl_version"]))
            if config.get("nccl_version")
            else NCCL_DEFAULT_VERSION
        ),
        # a network-plugin transport the source's run used (AWS EFA, docs/MODEL.md section 3)
        transport=config.get("net_transport") if multi else None,
    )


def _whole_job_leaf_load(
    config: dict[str, Any], nodes: int, per_node: int, bound: str
) -> tuple[float | None, int]:
    """(leaf uplink load, switch hops) of a collective over every rank of a published run.

    The point and low estimates place the ranks as the product's point estimate places a
    training job's communicators (docs/MODEL.md section 17: contiguous, topology-ordered
    servers, leaves of :data:`RAIL_GROUP_NODES` servers): a ring in rank order leaves a leaf
    only at the leaf boundaries.  The high bound keeps the placement-free fallback (random
    server order, :func:`network_rate.cross_leaf_fraction`), as the product's high bound
    scatters its servers.  ``None``: no leaf boundary inside the job, or the high bound.
    """
    if bound == "high" or nodes <= RAIL_GROUP_NODES:
        return None, 1
    ranks = nodes * per_node
    pattern = "all_to_all" if config.get("op") == "all_to_all" else "ring"
    server = contiguous_share(pattern, ranks, 1, per_node)
    leaf = contiguous_share(pattern, ranks, 1, RAIL_GROUP_NODES * per_node)
    return (leaf / server if server > 0.0 else 0.0), 3


def predict_collective(row: dict[str, Any]) -> dict[str, float]:
    config = row["config"]
    _, domain = _domain_for(config)
    result = collective(
        config["op"], float(config["bytes"]), domain, config.get("algorithm", "auto") or "auto"
    )
    # nccl-tests' one-process mode (``-g N``), where the source states it (docs/MODEL.md 3)
    gpus_per_process = config.get("gpus_per_process", 1)
    if not isinstance(gpus_per_process, int) or gpus_per_process < 1:
        raise ValueError(
            f"config.gpus_per_process: must be a whole number of at least 1, "
            f"got {gpus_per_process!r}"
        )
    time_s = benchmark_time_s(result.time_s, gpus_per_process)
    slower = result.time_s / time_s if time_s > 0 else 1.0
    busbw = result.busbw_bytes_per_s * slower
    wire = nic_bytes_per_s(float(config.get("nic_gbps") or 0.0)) * int(
        config.get("nics_per_node") or 1
    )
    return {
        "busbw_GBps": busbw / 1e9,
        "algbw_GBps": result.algbw_bytes_per_s * slower / 1e9,
        "time_us": time_s * 1e6,
        "wire_fraction_max": busbw / wire if wire > 0 else 0.0,
        "wire_fraction": busbw / wire if wire > 0 else 0.0,
    }


def training_scenario(row: dict[str, Any]) -> dict[str, Any]:
    """Scenario v1 for a published training run: the row's own settings (a setting its source
    leaves open is left to the planner; none is read from the row's prose)."""
    config = row["config"]
    parallelism = dict(config.get("parallelism", {}))
    model = config["model"]
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


def run_design(scenario: Scenario) -> Design:
    """The design a published training run is priced on: its own, or, where the row names none,
    the planner's reference (one 400G InfiniBand NIC per GPU, non-blocking)."""
    return scenario.design or REFERENCE_DESIGN


def predict_training(row: dict[str, Any]) -> dict[str, float]:
    # the design the run used, priced directly (the recommendation is not needed here)
    scenario = parse_scenario(training_scenario(row), default_catalog())
    workload = plan_workload(scenario)
    design = run_design(scenario)
    metrics = evaluate_design(scenario, workload, design)
    gpu = default_catalog().gpu(row["config"]["gpu"])
    assert gpu is not None
    peak = gpu.peak_tflops(row["config"].get("precision", "bf16"))
    gpus = int(row["config"]["gpus"])
    tokens_per_gpu = num(metrics.tokens_per_s) / gpus
    model_tflops = num(metrics.model_tflops_per_gpu)
    if row["config"].get("attention_flops") == "causal":
        # the source counts causal attention as half of the 4 s h FLOPs per token per layer
        model = scenario.model
        full = forward_flops_per_token(model, scenario.sequence_length)
        half = full - 2.0 * scenario.sequence_length * model.heads * model.head_dim * model.layers
        model_tflops *= half / full
    return {
        "tflops_per_gpu": num(metrics.tflops_per_gpu),
        "fraction_of_peak": num(metrics.tflops_per_gpu) / peak,
        "model_tflops_per_gpu": model_tflops,
        "mfu": model_tflops * 1e12 / (peak * 1e12) if peak else 0.0,
        "step_time_s": num(metrics.step_time_s),
        "tokens_per_s_per_gpu": tokens_per_gpu,
        "gpu_hours_per_trillion_tokens": 1e12 / tokens_per_gpu / 3600.0 if tokens_per_gpu else 0.0,
    }


def predict_all_to_all(row: dict[str, Any]) -> dict[str, float]:
    config = row["config"]
    _, domain = _domain_for(config)
    mode = config["mode"]
    dispatch = moe_dispatch(
        tokens_per_rank=int(config["tokens_per_rank"]),
        hidden=int(config["hidden"]),
        top_k=int(config["top_k"]),
        bytes_per_element=float(config.get("bytes_per_element", 1)),
        d=domain,
        mode=mode,
        node_limit=int(config["topk_groups"]) if config.get("topk_groups") else None,
    )
    # DeepEP's low-latency benchmark divides all dispatched bytes by the time; the normal
    # kernels' benchmark divides its own count of RDMA bytes (every node a token is sent to,
    # the sender's own included: tests/legacy/test_internode.py) by the time.
    normal_rdma = dispatch.reported_rdma_bytes
    return {
        "latency_us": dispatch.time_s * 1e6,
        "rdma_GBps": (
            dispatch.total_bytes_per_s if mode == "low_latency" else dispatch.rdma_bytes_per_s
        )
        / 1e9,
        "rdma_GBps_per_gpu": (
            normal_rdma / dispatch.time_s if mode == "normal" and dispatch.time_s > 0 else 0.0
        )
        / 1e9
        if mode == "normal"
        else dispatch.rdma_bytes_per_s / 1e9,
        # DeepEP's intranode "bottleneck bandwidth (NVLink)": NVLink bytes per GPU / time
        "nvlink_GBps_per_gpu": (
            dispatch.nvlink_bytes / dispatch.time_s / 1e9 if dispatch.time_s > 0 else 0.0
        ),
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


def row_use(row: dict[str, Any]) -> str:
    """The row's ``use``; a row without one is an error (every row must say what it is for)."""
    use = row.get("use")
    if use not in USES:
        raise ValueError(
            f"calibration row {row.get('id')!r}: use must be one of {USES}, got {use!r}"
        )
    return str(use)


LOOKED_AT_FIELDS = ("change", "commit", "date", "why")
"""Every ``looked_at`` entry names the change, its commit (7-40 hex digits), the date
(YYYY-MM-DD) and why the row counts as looked at."""


def row_looked_at(row: dict[str, Any]) -> list[dict[str, str]]:
    """The row's ``looked_at`` entries (empty: never looked at); malformed entries are an error.

    Only held-out rows carry the mark: a fitted or development row was used anyway.
    """
    import re

    entries = row.get("looked_at", [])
    where = f"calibration row {row.get('id')!r}: looked_at"
    if not isinstance(entries, list):
        raise ValueError(f"{where} must be a list, got {type(entries).__name__}")
    if entries and row.get("use") != "held_out":
        raise ValueError(f"{where} is for held-out rows only (use {row.get('use')!r})")
    out: list[dict[str, str]] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) != set(LOOKED_AT_FIELDS):
            raise ValueError(f"{where}[{i}] must have exactly the fields {LOOKED_AT_FIELDS}")
        if not all(isinstance(entry[k], str) and entry[k].strip() for k in LOOKED_AT_FIELDS):
            raise ValueError(f"{where}[{i}]: every field must be a non-empty string")
        if not re.fullmatch(r"[0-9a-f]{7,40}", entry["commit"]):
            raise ValueError(
                f"{where}[{i}].commit must be 7-40 hex digits, got {entry['commit']!r}"
            )
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", entry["date"]):
            raise ValueError(f"{where}[{i}].date must be YYYY-MM-DD, got {entry['date']!r}")
        out.append({k: str(entry[k]) for k in LOOKED_AT_FIELDS})
    return out


def is_bound(metric: str) -> bool:
    """``*_max`` metrics are upper bounds (the model must not exceed them), not point values."""
    return metric.endswith("_max")


def validate_row(row: dict[str, Any]) -> list[dict[str, Any]]:
    """One report line per measured metric of ``row``."""
    kind = row["kind"]
    use = row_use(row)
    fitted = [str(name) for name in row.get("fitted", [])]
    looked_at = [f"{entry['change']} ({entry['commit']})" for entry in row_looked_at(row)]
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
        if is_bound(metric):
            # an upper bound: the model must not exceed it by more than the tolerance
            passed = err <= tol + 1e-9
        lines.append(
            {
                "id": row["id"],
                "kind": kind,
                "use": use,
                "fitted": fitted,
                "looked_at": looked_at,
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


@lru_cache(maxsize=1)
def serving_capacity_rows() -> tuple[dict[str, Any], ...]:
    """Published dense serving capacities (``data/serving_rows.json``: TensorRT-LLM's
    performance overview, phase ``capacity``), each marked ``use``: ``development`` (the
    compute model's choices looked at it) or ``held_out`` (read once, after)."""
    text = (
        resources.files("advisor.engine.calibration")
        .joinpath("data/serving_rows.json")
        .read_text("utf-8")
    )
    return tuple(json.loads(text)["rows"])


def predict_serving(row: dict[str, Any]) -> dict[str, float]:
    return predict_published(row)


_PREDICTORS["serving"] = predict_serving


@lru_cache(maxsize=1)
def _all_lines() -> tuple[tuple[dict[str, Any], dict[str, Any]], ...]:
    """(row, line) for every report line of every calibration row; computed once per process
    with model-error bands switched off (the point predictions do not depend on them)."""
    out: list[tuple[dict[str, Any], dict[str, Any]]] = []
    _BAND_STATE["building"] = True
    try:
        rows = list(calibration_rows())
        with contextlib.suppress(FileNotFoundError, OSError):
            rows += list(serving_calibration_rows())
        with contextlib.suppress(FileNotFoundError, OSError):
            rows += list(serving_capacity_rows())
        for row in rows:
            for line in validate_row(row):
                # the residual pool its model-error band reads (MoE serving apart from dense)
                line["pool"] = _band_kind(row, line["kind"])
                out.append((row, line))
    finally:
        _BAND_STATE["building"] = False
    return tuple(out)


def _mae(lines: list[dict[str, Any]]) -> float | None:
    values = [abs(float(line["error_pct"])) for line in lines]
    return sum(values) / len(values) if values else None


def _accuracy_lines(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Lines that measure accuracy: not topology arithmetic, not upper bounds."""
    return [line for line in lines if line["use"] != "arithmetic" and not is_bound(line["metric"])]


@lru_cache(maxsize=1)
def validation_baseline() -> dict[str, Any]:
    """The committed held-out errors (``data/validation_baseline.json``); empty if absent."""
    try:
        text = (
            resources.files("advisor.engine.calibration")
            .joinpath("data/validation_baseline.json")
            .read_text("utf-8")
        )
    except (FileNotFoundError, OSError):
        return {}
    data = json.loads(text)
    return data if isinstance(data, dict) else {}


def summarise(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """MAE per use, per kind and per (use, kind); held-out MAE and leave-one-out coverage."""
    accuracy = _accuracy_lines(lines)
    by_use: dict[str, Any] = {}
    by_kind: dict[str, Any] = {}
    by_use_kind: dict[str, dict[str, Any]] = {}
    for use in USES:
        members = [line for line in accuracy if line["use"] == use]
        if use != "arithmetic":
            by_use[use] = {
                "mae_pct": _mae(members),
                "lines": len(members),
                "rows": len({line["id"] for line in members}),
            }
        kinds = sorted({line["kind"] for line in members})
        if kinds:
            by_use_kind[use] = {
                kind: {
                    "mae_pct": _mae([m for m in members if m["kind"] == kind]),
                    "lines": sum(1 for m in members if m["kind"] == kind),
                }
                for kind in kinds
            }
    for kind in sorted({line["kind"] for line in accuracy}):
        members = [line for line in accuracy if line["kind"] == kind]
        by_kind[kind] = {"mae_pct": _mae(members), "lines": len(members)}
    held = [line for line in accuracy if line["use"] == "held_out"]
    held_in_band = [line for line in held if line.get("loo_inside")]
    # held-out rows no model change was aimed at, nor made after their prediction was seen
    unseen = [line for line in held if not line.get("looked_at")]
    unseen_in_band = [line for line in unseen if line.get("loo_inside")]
    arithmetic = [line for line in lines if line["use"] == "arithmetic"]
    baseline = validation_baseline().get("held_out_mae_pct")
    held_mae = _mae(held)
    regression_ok = (
        baseline is None
        or held_mae is None
        or held_mae <= float(baseline) + HELD_OUT_REGRESSION_POINTS + 1e-9
    )
    return {
        "held_out_mae_pct": held_mae,
        "held_out_lines": len(held),
        "held_out_rows": len({line["id"] for line in held}),
        "held_out_within_tolerance": sum(1 for line in held if line["passed"]),
        "held_out_loo_inside": len(held_in_band),
        "held_out_loo_coverage": len(held_in_band) / len(held) if held else None,
        "held_out_unseen_mae_pct": _mae(unseen),
        "held_out_unseen_lines": len(unseen),
        "held_out_unseen_rows": len({line["id"] for line in unseen}),
        "held_out_unseen_loo_inside": len(unseen_in_band),
        "held_out_unseen_loo_coverage": len(unseen_in_band) / len(unseen) if unseen else None,
        "held_out_unseen_mae_by_kind": {
            kind: {
                "mae_pct": _mae([m for m in unseen if m["kind"] == kind]),
                "lines": sum(1 for m in unseen if m["kind"] == kind),
            }
            for kind in sorted({line["kind"] for line in unseen})
        },
        "held_out_mae_by_pool": held_out_by_pool(held),
        "held_out_looked_at_rows": len({line["id"] for line in held if line.get("looked_at")}),
        "held_out_baseline_mae_pct": baseline,
        "held_out_regression_ok": regression_ok,
        "mae_by_use": by_use,
        "mae_by_kind": by_kind,
        "mae_by_use_and_kind": by_use_kind,
        "arithmetic_checks": {
            "passed": sum(1 for line in arithmetic if line["passed"]),
            "total": len(arithmetic),
        },
    }


def held_out_by_pool(held: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Held-out MAE per residual pool (a line's ``pool``, else its kind): what the accuracy page
    says of each family of predictions, MoE serving apart from dense serving, as the ranges
    shown with answers keep them (:func:`_band_kind`)."""
    pools: dict[str, list[dict[str, Any]]] = {}
    for line in held:
        pools.setdefault(str(line.get("pool") or line["kind"]), []).append(line)
    return {
        pool: {
            "mae_pct": _mae(members),
            "lines": len(members),
            "rows": len({m["id"] for m in members}),
            "within_tolerance": sum(1 for m in members if m["passed"]),
        }
        for pool, members in sorted(pools.items())
    }


@lru_cache(maxsize=1)
def held_out_pools() -> dict[str, dict[str, Any]]:
    """The report's ``held_out_mae_by_pool``, kept once per process: what an answer's page says
    of the family its range is read from (the accuracy page reads the same summary)."""
    pools: dict[str, dict[str, Any]] = validation_report()["summary"]["held_out_mae_by_pool"]
    return pools


def validation_report() -> dict[str, Any]:
    """``{"rows": [...], "summary": {...}, "passed": bool}`` (docs/ENGINE_API.md).

    ``passed``: every fitted, development and arithmetic line within its tolerance, and the
    held-out MAE no more than :data:`HELD_OUT_REGRESSION_POINTS` above the baseline.  Held-out
    lines outside their tolerance are reported (``passed: false``) but do not fail the run.
    """
    lines = [dict(line) for _, line in _all_lines()]
    for line, (lo, hi, inside) in zip(lines, loo_bands(), strict=True):
        line["loo_low"], line["loo_high"], line["loo_inside"] = lo, hi, inside
    summary = summarise(lines)
    passed = all(line["passed"] for line in lines if line["use"] != "held_out") and bool(
        summary["held_out_regression_ok"]
    )
    return {"rows": lines, "summary": summary, "passed": passed}


def baseline_from_report(report: dict[str, Any]) -> dict[str, Any]:
    """The held-out errors of ``report`` in the baseline file's shape."""
    held = [line for line in _accuracy_lines(list(report["rows"])) if line["use"] == "held_out"]
    return {
        "about": "Held-out errors the last accepted model made (python -m advisor.engine validate "
        "--write-baseline). validate fails when held_out_mae_pct rises more than "
        f"{HELD_OUT_REGRESSION_POINTS:g} point above this figure.",
        "held_out_mae_pct": round(float(report["summary"]["held_out_mae_pct"] or 0.0), 3),
        "held_out_loo_inside": int(report["summary"]["held_out_loo_inside"]),
        "lines": {
            f"{line['id']}:{line['metric']}": round(float(line["error_pct"]), 2) for line in held
        },
    }


# ----------------------------------------------------------------------------- model error bands

_TIME_LIKE = ("time", "latency", "_us", "_ms", "gpu_hours")
_BAND_STATE = {"building": False}
DEFAULT_MODEL_ERROR = 0.15
"""Band half-width (as a time ratio) for a kind with no calibration row: the throughput
tolerance."""
BAND_COVERAGE = 0.9
"""Target share of unseen measurements inside a band: each tail holds 5 %.  The residuals of a
kind on the GPU generation give the band by the split-conformal rule (order statistic
ceil((n + 1) x 0.95) of n residuals on each side)."""
MIN_GENERATION_ROWS = 6
"""A generation needs this many development / held-out residuals of a kind to set its own
band; with fewer it takes the kind's residuals over all generations."""


def _time_ratio(metric: str, error_pct: float) -> float:
    """measured / predicted *time* for one report line (> 1: the model was optimistic)."""
    ratio = 1.0 + error_pct / 100.0
    if ratio <= 0:
        return 1.0
    if any(tag in metric for tag in _TIME_LIKE):
        return 1.0 / ratio
    return ratio


def _band_kind(row: dict[str, Any], kind: str) -> str:
    """The residual pool of a row's line (:func:`performance.error_band_kind`): serving rows of
    MoE models apart from the dense ones."""
    model_id = (row.get("config") or {}).get("model")
    model = default_catalog().model(str(model_id)) if isinstance(model_id, str) else None
    return error_band_kind(kind, model is not None and model.is_moe)


def _generation(row: dict[str, Any]) -> str:
    gpu_id = (row.get("config") or {}).get("gpu")
    gpu = default_catalog().gpu(str(gpu_id)) if gpu_id else None
    return profile(gpu).generation if gpu is not None else "*"


def _conformal(values: list[float], upper: bool) -> float:
    """The split-conformal bound of ``values`` for a (1 - BAND_COVERAGE)/2 tail: the k-th
    smallest (upper bound) or k-th largest (lower bound), k = ceil((n + 1)(1 - tail))."""
    import math

    ordered = sorted(values, reverse=not upper)
    n = len(ordered)
    if n == 0:
        return 0.0
    k = math.ceil((n + 1) * (1.0 - (1.0 - BAND_COVERAGE) / 2.0))
    return ordered[min(k, n) - 1]


def _residuals(exclude_id: str | None = None) -> dict[tuple[str, str], list[float]]:
    """ln(measured / predicted time) of the development and held-out lines, by (kind,
    generation) and (kind, "*"); ``exclude_id`` leaves one row out."""
    import math

    table: dict[tuple[str, str], list[float]] = {}
    for row, line in _all_lines():
        # fitted rows' residuals are small by construction: they would narrow every band
        if line["id"] == exclude_id or line["use"] in ("arithmetic", "fitted"):
            continue
        if is_bound(line["metric"]):
            continue
        r = math.log(_time_ratio(line["metric"], line["error_pct"]))
        gen = _generation(row)
        kind = _band_kind(row, line["kind"])
        table.setdefault((kind, gen), []).append(r)
        table.setdefault((kind, "*"), []).append(r)
    return table


@lru_cache(maxsize=1)
def residual_table() -> dict[tuple[str, str], tuple[float, ...]]:
    """ln(measured / predicted time) of every calibration line, by (kind, GPU generation).

    ``(kind, "*")`` pools a kind over generations.  Built once per process; while it is built
    the engine reports bands without model error (:func:`model_error_band` returns 1, 1).
    """
    return {k: tuple(v) for k, v in _residuals().items()}


def _band(table: Any, kind: str, generation: str) -> tuple[float, float]:
    import math

    pooled = list(table.get((kind, "*"), ()))
    own = list(table.get((kind, generation), ()))
    if not pooled:
        return 1.0 / (1.0 + DEFAULT_MODEL_ERROR), 1.0 + DEFAULT_MODEL_ERROR
    # a generation with enough rows of its own answers for itself (a Blackwell miss says
    # little about Hopper); one with few borrows the kind's pooled residuals
    sample = own if len(own) >= MIN_GENERATION_ROWS else pooled
    lo = min(0.0, _conformal(sample, upper=False))
    hi = max(0.0, _conformal(sample, upper=True))
    return math.exp(lo), math.exp(hi)


def model_error_band(kind: str, generation: str) -> tuple[float, float]:
    """(low, high) factors on a predicted *time* from the calibration residuals of ``kind``:
    the split-conformal 5th-95th percentile of its residuals on ``generation`` (over all
    generations when that one has fewer than MIN_GENERATION_ROWS; DEFAULT_MODEL_ERROR when the
    kind has no row)."""
    if _BAND_STATE["building"]:
        return 1.0, 1.0
    return _band(residual_table(), kind, generation)


def _apply(line: dict[str, Any], low_t: float, high_t: float) -> tuple[float, float]:
    value = float(line["predicted"])
    if any(tag in line["metric"] for tag in _TIME_LIKE):
        return value * low_t, value * high_t
    return value / high_t, value / low_t


def line_band(line: dict[str, Any], row: dict[str, Any]) -> tuple[float, float]:
    """The engine's (low, high) for one report line: the point prediction widened by the model
    error band of its kind and generation (all rows, as shown to users)."""
    low_t, high_t = model_error_band(_band_kind(row, line["kind"]), _generation(row))
    return _apply(line, low_t, high_t)


@lru_cache(maxsize=1)
def loo_bands() -> tuple[tuple[float | None, float | None, bool | None], ...]:
    """(loo_low, loo_high, inside) per report line: the band of :func:`model_error_band`
    computed from every *other* row's residuals, so a row never widens its own band.  Lines
    that are not accuracy (topology arithmetic, upper bounds) get (None, None, None)."""
    out: list[tuple[float | None, float | None, bool | None]] = []
    tables: dict[str, dict[tuple[str, str], list[float]]] = {}
    for row, line in _all_lines():
        if line["use"] == "arithmetic" or is_bound(line["metric"]):
            out.append((None, None, None))
            continue
        table = tables.get(line["id"])
        if table is None:
            table = tables[line["id"]] = _residuals(exclude_id=line["id"])
        low_t, high_t = _band(table, _band_kind(row, line["kind"]), _generation(row))
        lo, hi = _apply(line, low_t, high_t)
        measured = float(line["measured"])
        out.append((lo, hi, lo * (1 - 1e-9) <= measured <= hi * (1 + 1e-9)))
    return tuple(out)


def band_coverage(use: str | None = "held_out") -> dict[str, Any]:
    """Share of calibration lines (of ``use``; None: every accuracy line) whose measured value
    lies inside the band computed without their own row (leave-one-out)."""
    lines = []
    for (_, line), (lo, hi, inside) in zip(_all_lines(), loo_bands(), strict=True):
        if inside is None or (use is not None and line["use"] != use):
            continue
        lines.append({**line, "low": lo, "high": hi, "inside": inside})
    total = len(lines)
    inside_count = sum(1 for line in lines if line["inside"])
    return {
        "lines": lines,
        "inside": inside_count,
        "total": total,
        "share": inside_count / total if total else 1.0,
    }
