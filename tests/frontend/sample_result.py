"""A realistic engine result (contract in docs/ENGINE_API.md) for tests that must not depend
on the engine's numbers: chart builders, templates, exports."""

from __future__ import annotations

import copy
from typing import Any

from advisor.engine.facts.catalog import default_catalog

_TRAIN_METRICS = {
    "step_time_s": 4.12,
    "compute_s": 3.80,
    "exposed_comm_s": 0.21,
    "bubble_s": 0.06,
    "straggler_s": 0.05,
    "tflops_per_gpu": 402.5,
    "scaling_efficiency": 0.92,
    "gpu_idle_fraction": 0.078,
    "run_time_s": 1_900_000.0,
    "gpu_hours": 540_000.0,
}


def _option(
    rank: int,
    fabric: str,
    nic_gbps: int,
    nics: int,
    step: float,
    capex: float,
    recommended: bool = False,
    why_not: str | None = None,
) -> dict[str, Any]:
    metrics = dict(_TRAIN_METRICS)
    metrics["step_time_s"] = step
    metrics["exposed_comm_s"] = round(step - 3.80 - 0.11, 3)
    metrics["gpu_idle_fraction"] = round((step - 3.80) / step, 3)
    metrics["scaling_efficiency"] = round(3.80 / step, 3)
    total = 4_000_000.0 * step / 4.12 + capex
    return {
        "rank": rank,
        "fabric": fabric,
        "nic_gbps": nic_gbps,
        "nics_per_node": nics,
        "oversubscription": 1,
        "switch_model": "qm9700" if fabric == "infiniband" else "sn5600",
        "feasible": True,
        "recommended": recommended,
        "metrics": metrics,
        "cost": {
            "network_capex_usd": capex,
            "total_cost_usd": total,
            "idle_cost_usd": total * metrics["gpu_idle_fraction"],
        },
        "why_not": why_not,
    }


TRAINING_RESULT: dict[str, Any] = {
    "engine_version": "1.0.0",
    "catalog_version": default_catalog().version,
    "scenario": {
        "workload": "training",
        "model": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": 512,
        "gpus_per_node": 8,
        "precision": "bf16",
        "sequence_length": 8192,
        "training": {"global_batch_sequences": 512, "total_tokens": 1e12, "sharding": "none"},
        "constraints": {"gpu_pricing": "owned", "team_skills": "ethernet", "prefer": "balanced"},
    },
    "workload": {
        "model": {"id": "llama3-70b", "name": "Llama 3 70B", "params_b": 70.6},
        "memory": {"fits": True},
        "plan": {"tp": 8, "pp": 4, "dp": 16, "ep": 1, "micro_batch": 1, "sharding": "none"},
        "nodes": 64,
        "gpus_per_node": 8,
        "spans_servers": True,
        "traffic": {},
    },
    "recommendation": {
        "fabric": "roce",
        "needs_compute_fabric": True,
        "nic_gbps": 400,
        "nics_per_node": 8,
        "nic_sku": "cx7-400g",
        "topology": {
            "kind": "leaf-spine",
            "tiers": 2,
            "leaf_switches": 8,
            "spine_switches": 4,
            "core_switches": 0,
            "oversubscription": 1,
            "rail_optimized": True,
            "switch_model": "sn5600",
        },
        "headline": "RoCE v2 at 400 Gb/s with 8 NICs per server on a 2-tier rail-optimized "
        "leaf-spine; network about $2.9M.",
        "rationale": [
            "The job spans 64 servers, so gradients (141 GB per step) cross the network.",
            "RoCE keeps GPUs idle 7.8 % of the time vs 8.1 % on InfiniBand, for $1.1M less.",
            "Ethernet (TCP) would leave GPUs idle 41 % of the time, costing $1.9M more.",
        ],
    },
    "metrics": dict(_TRAIN_METRICS),
    "bom": [
        {
            "sku": "cx7-400g",
            "description": "NVIDIA ConnectX-7 400GbE",
            "category": "nic",
            "quantity": 512,
            "unit_price_usd": 2400.0,
            "extended_price_usd": 1_228_800.0,
            "source": "NVIDIA datasheet; estimate",
            "network": "compute",
            "power_w": 25.0,
        },
        {
            "sku": "sn5600",
            "description": "NVIDIA Spectrum-4 SN5600 64x800G",
            "category": "switch",
            "quantity": 12,
            "unit_price_usd": 60000.0,
            "extended_price_usd": 720_000.0,
            "source": "NVIDIA datasheet; estimate",
            "network": "compute",
            "power_w": 1500.0,
        },
        {
            "sku": "osfp-400g-sr4",
            "description": "400G SR4 optic",
            "category": "transceiver",
            "quantity": 1024,
            "unit_price_usd": 700.0,
            "extended_price_usd": 716_800.0,
            "source": "estimate",
            "network": "compute",
            "power_w": 8.0,
        },
        {
            "sku": "mmf-mpo12-30m",
            "description": "MPO-12 fiber, 30 m",
            "category": "cable",
            "quantity": 1024,
            "unit_price_usd": 120.0,
            "extended_price_usd": 122_880.0,
            "source": "estimate",
            "network": "compute",
            "power_w": 0.0,
        },
        {
            "sku": "sn2201-tor",
            "description": "Management switch 48x1G",
            "category": "switch",
            "quantity": 2,
            "unit_price_usd": 5000.0,
            "extended_price_usd": 10_000.0,
            "source": "estimate",
            "network": "management",
            "power_w": 100.0,
        },
    ],
    "cost": {
        "network_capex_usd": 2_798_480.0,
        "network_power_w": 52_000.0,
        "network_power_cost_usd": 12_000.0,
        "gpu_cost_usd": 3_900_000.0,
        "idle_cost_usd": 304_000.0,
        "total_cost_usd": 6_710_480.0,
        "work": "training run of 1e12 tokens",
        "gpu_hours": 540_000.0,
    },
    "options": [
        _option(1, "roce", 400, 8, 4.12, 2_798_480.0, recommended=True),
        _option(
            2,
            "infiniband",
            400,
            8,
            4.10,
            3_900_000.0,
            why_not="Costs $1.1M more for 0.5 % faster steps.",
        ),
        _option(
            3,
            "roce",
            400,
            4,
            4.40,
            1_900_000.0,
            why_not="Half the NICs save $0.9M but idle GPUs cost $1.4M.",
        ),
        _option(
            4,
            "ethernet",
            100,
            2,
            6.50,
            600_000.0,
            why_not="GPUs idle 41 % of the time; $1.9M more in GPU-hours.",
        ),
    ],
    "pruned": [{"design": {"fabric": "infiniband", "nic_gbps": 200}, "reason": "over budget"}],
    "break_even": [
        {
            "statement": "InfiniBand becomes cheaper overall above 2,048 GPUs.",
            "parameter": "gpus",
            "value": 2048,
        },
    ],
    "uncertainty": {
        "step_time_s": {"low": 3.95, "high": 4.45},
        "total_cost_usd": {"low": 6_400_000.0, "high": 7_100_000.0},
    },
    "monitoring": [
        "PFC pause frames and ECN marks per port",
        "NCCL all-reduce time against step time",
    ],
    "assumptions": [
        {"name": "MFU", "value": 0.45, "unit": "fraction", "source": "docs/MODEL.md"},
        {"name": "GPU amortization", "value": 4, "unit": "years", "source": "constraints"},
    ],
    "scaling": [
        {"fabric": f, "nodes": n, "scaling_efficiency": e}
        for f, base in (("ethernet", 0.55), ("roce", 0.93), ("infiniband", 0.94))
        for n, e in ((1, 1.0), (2, base + 0.05), (8, base + 0.02), (64, base), (256, base - 0.03))
    ],
}

SINGLE_SERVER_RESULT: dict[str, Any] = copy.deepcopy(TRAINING_RESULT)
SINGLE_SERVER_RESULT["workload"].update({"nodes": 1, "spans_servers": False})
SINGLE_SERVER_RESULT["recommendation"].update(
    {
        "fabric": "ethernet",
        "needs_compute_fabric": False,
        "nic_gbps": 100,
        "nics_per_node": 1,
        "nic_sku": "cx6dx-100g",
        "topology": {
            "kind": "single-switch",
            "tiers": 1,
            "leaf_switches": 1,
            "spine_switches": 0,
            "core_switches": 0,
            "oversubscription": 1,
            "rail_optimized": False,
            "switch_model": "sn2201",
        },
        "headline": "No compute fabric needed: all 8 GPUs sit in one server.",
    }
)


def training_result() -> dict[str, Any]:
    return copy.deepcopy(TRAINING_RESULT)


def single_server_result() -> dict[str, Any]:
    return copy.deepcopy(SINGLE_SERVER_RESULT)
