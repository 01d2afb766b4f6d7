"""How unevenly a served MoE model's router loads its experts, as the routed experts' kernels
pay for it (docs/MODEL.md 15.1, "Expert load imbalance").

The engine's MoE rule (:func:`serving.gemm.routed_experts_s`) was fitted on TensorRT-LLM's
fused-MoE latencies with the tokens spread evenly over the experts.  Real routers do not spread
them evenly, and a step waits for its busiest GPU: the same kernel tables (AIConfigurator 0.12.0,
TensorRT-LLM 1.3.0rc20 ``moe_perf.parquet``) time every point a second and third time with the
tokens routed by a power law over the experts, measuring the expert-parallel rank that receives
the most (AIConfigurator's ``collect_moe.py``, "EP Group Selection"), and at the same shapes those
read 1.1-1.2 times the balanced time on one GPU and 1.4-2.0 times under EP4-EP8 once an expert
gets 64 or more rows.  The engine prices it as the busiest GPU's rows an expert being
:func:`expert_load` times the mean: a layer that streams its experts' weights (few rows each) is
unchanged, one that runs them at the GEMMs' FLOP rate grows.
"""

from __future__ import annotations

import math
from typing import Final

EXPERT_LOAD_IMBALANCE: Final[dict[int, float]] = {1: 1.10, 2: 1.30, 4: 2.00, 8: 2.50}
"""Rows an expert gets on the busiest GPU of an expert-parallel group of ``ep`` GPUs, over the
mean (fitted): for each EP degree, the factor on the rows of :func:`serving.gemm.
routed_experts_s` whose ratio (the engine's layer at the factor over the engine's at 1) best
matches, in squared log error, the measured ratio of TensorRT-LLM 1.3.0rc20's fused-MoE
latencies routed by a power law of exponent 1.2 over the same points routed evenly
(AIConfigurator 0.12.0 ``systems/data/<gpu>/moe/trtllm/1.3.0rc20/moe_perf.parquet``,
``power_law_1.2`` over ``balanced``; tp 1, H100 / H200 / B200 / GB200 / B300, BF16 / FP8 /
NVFP4 CUTLASS and both MXFP4 paths, points with 16 or more rows an expert: 2,530 / 2,551 /
2,569 / 2,578 points, mean |log error| of the ratio 0.15 / 0.17 / 0.21 / 0.24;
``bench/aic_moe_imbalance_fit.py``).  The exponent is AIConfigurator's for every MoE family but
DeepSeek's (``sdk/models/moe.py``), which its documentation gives as the latency-matched estimate
for Qwen3-235B on CNN-DailyMail and OpenOrca, "typical production" (``collector`` docs,
"Power-Law Distribution in MoE Workload Simulation"; 1.01 for DeepSeek-V3 / R1).  Never set from
a serving row."""

MAX_UNBALANCED_EP: Final = 8
"""The largest expert-parallel group priced with :data:`EXPERT_LOAD_IMBALANCE`.  TensorRT-LLM's
single-server attention-DP recipes (DEP2-DEP8, e.g. its gpt-oss deployment guide and tech blog
9) run without an expert load balancer (``moe_load_balancer`` is opt-in), while wide expert
parallelism over more GPUs runs with one (DeepSeek's EPLB, SGLang's ``--enable-eplb``,
TensorRT-LLM's tech blog 4 "Scaling Expert Parallelism" with its online EPLB), which
AIConfigurator prices with tables of their own; larger groups keep the balanced rule."""


def expert_load(ep: int) -> float:
    """:data:`EXPERT_LOAD_IMBALANCE` of an expert group of ``ep`` GPUs, linear in log2(ep)
    between the fitted degrees; 1 (balanced) beyond :data:`MAX_UNBALANCED_EP`."""
    ep = max(1, int(ep))
    if ep > MAX_UNBALANCED_EP:
        return 1.0
    hit = EXPERT_LOAD_IMBALANCE.get(ep)
    if hit is not None:
        return hit
    lower = 2 ** math.floor(math.log2(ep))
    upper = 2 * lower
    share = (math.log2(ep) - math.log2(lower)) / (math.log2(upper) - math.log2(lower))
    low, high = EXPERT_LOAD_IMBALANCE[lower], EXPERT_LOAD_IMBALANCE[upper]
    return low + share * (high - low)
