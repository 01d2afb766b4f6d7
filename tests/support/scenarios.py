"""Scenario inputs more than one test suite reads (one definition, one name)."""

from __future__ import annotations

from typing import Any

GPT_OSS_20B_AT_CAPACITY: dict[str, Any] = {
    "workload": "inference",
    "model": "gpt-oss-20b",
    "gpu": "h100-sxm",
    "gpus": 8,
    "gpus_per_node": 8,
    "precision": "mxfp4",
    "inference": {
        "prompt_tokens": 1000,
        "output_tokens": 1000,
        "requests_per_s": 40,
        "target_ttft_ms": 3000,
        "target_ms_per_token": 100,
    },
}
"""gpt-oss-20b on one 8 x H100 server at 40 requests/s, 1,000 / 1,000 tokens, 100 ms a token:
at its capacity within the targets a decode GPU holds about 650 sequences, the regime where the
published runs of small-active MoE models measured well below the model
(``serving.known_limits``)."""


SERVING_70B_5_RPS: dict[str, Any] = {
    "workload": "inference",
    "model": "llama3-70b",
    "gpu": "h100-sxm",
    "gpus": 16,
    "gpus_per_node": 8,
    "inference": {"requests_per_s": 5},
}
"""Llama 3 70B on two 8 x H100 servers at 5 requests/s: an answer with no compute fabric
(prompt and answer GPUs disaggregated inside each server), the what-if suites' serving case."""


LLAMA_405B_TWO_GB300_RACKS: dict[str, Any] = {
    "workload": "inference",
    "model": "llama3.1-405b",
    "gpu": "gb300-nvl72",
    "gpus": 144,
    "gpus_per_node": 4,
    "inference": {"target_ms_per_token": 20},
}
"""Llama 3.1 405B (BF16) on two GB300 NVL72 racks at 20 ms a token: only TP16 replicas meet
the target (8.88 requests/s within the targets; TP8's step, its all-reduces over the rack's
NVLink included, is past 20 ms at any load), four to a 72-GPU rack, which leaves 4 of the 36
trays without one (the planner's notes say so).  At the default 50 ms a token TP8 serves the
most on every GPU (36.0 requests/s against TP16's 26.2)."""
