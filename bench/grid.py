"""The fixed grid of realistic scenarios `make bench` times cold (each unseen by the process).

Training, fine-tuning and serving (replicas, split, disaggregated DeepSeek), 16 to 100k GPUs,
odd sizes, custom models, explicit plans, fixed designs and non-default constraints: what
sales engineers and the API are asked. Never change a scenario once figures were published
against it; add new ones at the end (the names key `bench/results.json`).
"""

from __future__ import annotations

from typing import Any

_TRAIN = {"global_batch_sequences": 1024, "total_tokens": 1e12}

SCENARIOS: dict[str, dict[str, Any]] = {
    # --- training -----------------------------------------------------------------------
    "train-llama3-8b-a100-16": {
        "workload": "training", "model": "llama3-8b", "gpu": "a100-80gb-sxm", "gpus": 16,
    },
    "train-llama3-8b-l40s-40": {
        "workload": "training", "model": "llama3-8b", "gpu": "l40s", "gpus": 40,
    },
    "train-llama3-70b-h100-1024": {
        "workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 1024,
        "sequence_length": 8192,
        "training": {"global_batch_sequences": 512, "total_tokens": 1e12},
    },
    "train-llama3-70b-h100-1000": {
        "workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 1000,
    },
    "train-llama3-70b-mi325x-264": {
        "workload": "training", "model": "llama3-70b", "gpu": "mi325x", "gpus": 264,
    },
    "train-llama3-70b-gaudi3-136": {
        "workload": "training", "model": "llama3-70b", "gpu": "gaudi3", "gpus": 136,
    },
    "train-llama3-70b-gb200-576": {
        "workload": "training", "model": "llama3-70b", "gpu": "gb200-nvl72", "gpus": 576,
        "gpus_per_node": 4,
    },
    "train-gpt3-175b-h100-1024": {
        "workload": "training", "model": "gpt3-175b", "gpu": "h100-sxm", "gpus": 1024,
        "training": {"global_batch_sequences": 1536, "total_tokens": 3e11},
    },
    "train-gpt3-175b-a100-3000": {
        "workload": "training", "model": "gpt3-175b", "gpu": "a100-80gb-sxm", "gpus": 3000,
    },
    "train-gpt3-175b-b200-65536": {
        "workload": "training", "model": "gpt3-175b", "gpu": "b200", "gpus": 65536,
        "training": {"global_batch_sequences": 8192, "total_tokens": 1e12},
    },
    "train-llama3.1-405b-h100-16384": {
        "workload": "training", "model": "llama3.1-405b", "gpu": "h100-sxm", "gpus": 16384,
        "sequence_length": 8192,
        "training": {"global_batch_sequences": 2048, "total_tokens": 1.5e13},
    },
    "train-llama3.1-405b-h100-100000": {
        "workload": "training", "model": "llama3.1-405b", "gpu": "h100-sxm", "gpus": 100000,
        "training": {"global_batch_sequences": 16384, "total_tokens": 1.5e13},
    },
    "train-llama3.1-405b-mi300x-1032": {
        "workload": "training", "model": "llama3.1-405b", "gpu": "mi300x", "gpus": 1032,
    },
    "train-llama3.1-405b-b200-8200": {
        "workload": "training", "model": "llama3.1-405b", "gpu": "b200", "gpus": 8200,
        "precision": "fp8",
    },
    "train-mixtral-8x7b-h100-256": {
        "workload": "training", "model": "mixtral-8x7b", "gpu": "h100-sxm", "gpus": 256,
        "training": _TRAIN,
    },
    "train-deepseek-v3-h800-2048": {
        "workload": "training", "model": "deepseek-v3", "gpu": "h800-sxm", "gpus": 2048,
        "precision": "fp8", "sequence_length": 4096,
        "training": {"global_batch_sequences": 15360, "total_tokens": 1.48e13},
    },
    "train-deepseek-v3-mi300x-1048": {
        "workload": "training", "model": "deepseek-v3", "gpu": "mi300x", "gpus": 1048,
    },
    "train-deepseek-v3-h100-24576": {
        "workload": "training", "model": "deepseek-v3", "gpu": "h100-sxm", "gpus": 24576,
    },
    "train-custom-30b-h200-512": {
        "workload": "training", "gpu": "h200-sxm", "gpus": 512,
        "model": {"params_b": 30, "layers": 48, "hidden": 7168, "heads": 56,
                  "vocab": 65536, "kv_heads": 8},
    },
    "train-llama3-70b-h100-explicit-512": {
        "workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 512,
        "parallelism": {"tp": 8, "pp": 4, "dp": 16},
    },
    "train-llama3-70b-h100-32k-128": {
        "workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 128,
        "sequence_length": 32768, "precision": "fp8",
    },
    "train-llama3-70b-h100-design-2048": {
        "workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 2048,
        "design": {"fabric": "roce", "nic_gbps": 400, "nics_per_node": 8,
                   "oversubscription": 2},
    },
    "train-llama3-70b-h100-ethernet-cost-776": {
        "workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 776,
        "constraints": {"team_skills": "ethernet", "prefer": "cost"},
    },
    "train-llama3-8b-h100-budget-96": {
        "workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 96,
        "constraints": {"network_budget_usd": 400000, "gpu_pricing": "cloud"},
    },
    # --- fine-tuning --------------------------------------------------------------------
    "ft-llama3-8b-a100-16": {
        "workload": "fine_tuning", "model": "llama3-8b", "gpu": "a100-80gb-sxm", "gpus": 16,
    },
    "ft-llama3-70b-h100-64": {
        "workload": "fine_tuning", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 64,
    },
    "ft-mixtral-8x7b-h100-104": {
        "workload": "fine_tuning", "model": "mixtral-8x7b", "gpu": "h100-sxm", "gpus": 104,
    },
    "ft-llama3.1-405b-h200-256": {
        "workload": "fine_tuning", "model": "llama3.1-405b", "gpu": "h200-sxm", "gpus": 256,
    },
    # --- serving ------------------------------------------------------------------------
    "serve-llama3-8b-l40s-32-rate": {
        "workload": "inference", "model": "llama3-8b", "gpu": "l40s", "gpus": 32,
        "inference": {"requests_per_s": 40},
    },
    "serve-llama3-70b-h100-64-replicas": {
        "workload": "inference", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 64,
        "inference": {"independent_replicas": True, "concurrent_requests": 256},
    },
    "serve-llama3-70b-h100-16-split": {
        "workload": "inference", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 16,
        "inference": {"independent_replicas": False, "target_ms_per_token": 30},
    },
    "serve-llama3.1-405b-h100-128": {
        "workload": "inference", "model": "llama3.1-405b", "gpu": "h100-sxm", "gpus": 128,
        "precision": "fp8",
        "inference": {"concurrent_requests": 512, "prompt_tokens": 4096, "output_tokens": 1024},
    },
    "serve-mixtral-8x7b-h200-64": {
        "workload": "inference", "model": "mixtral-8x7b", "gpu": "h200-sxm", "gpus": 64,
    },
    "serve-gpt3-175b-a100-96": {
        "workload": "inference", "model": "gpt3-175b", "gpu": "a100-80gb-sxm", "gpus": 96,
    },
    "serve-deepseek-v3-h20-128": {
        "workload": "inference", "model": "deepseek-v3", "gpu": "h20", "gpus": 128,
        "precision": "fp8",
    },
    "serve-deepseek-v3-h800-288-disagg": {
        "workload": "inference", "model": "deepseek-v3", "gpu": "h800-sxm", "gpus": 288,
        "precision": "fp8",
        "inference": {"deployment": "disaggregated", "concurrent_requests": 4096},
    },
    "serve-deepseek-v3-h100-1024-disagg": {
        "workload": "inference", "model": "deepseek-v3", "gpu": "h100-sxm", "gpus": 1024,
        "precision": "fp8",
        "inference": {"deployment": "disaggregated", "requests_per_s": 200},
    },
    "serve-deepseek-v3-b200-256-rate": {
        "workload": "inference", "model": "deepseek-v3", "gpu": "b200", "gpus": 256,
        "precision": "fp8",
        "inference": {"requests_per_s": 100, "prompt_tokens": 4096, "output_tokens": 1024},
    },
    "serve-deepseek-v3-h200-200": {
        "workload": "inference", "model": "deepseek-v3", "gpu": "h200-sxm", "gpus": 200,
        "precision": "fp8",
    },
    "serve-llama3-70b-mi300x-72-rate": {
        "workload": "inference", "model": "llama3-70b", "gpu": "mi300x", "gpus": 72,
        "inference": {"requests_per_s": 25, "target_ttft_ms": 1000},
    },
}  # fmt: skip

KINDS = ("train", "ft", "serve")


def kind_of(name: str) -> str:
    """The scenario's kind from its name (train, ft or serve)."""
    return name.split("-", 1)[0]
