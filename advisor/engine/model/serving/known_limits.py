"""Where the serving model is known to read optimistic, said on the answer that falls there.

The developer guide's held-out TensorRT-LLM runs of mixture-of-experts models with few active
parameters (gpt-oss-20b and -120b, Qwen3-30B-A3B) split by the number of sequences a decode
GPU holds in its step: below :data:`LARGE_DECODE_BATCH_PER_GPU` the engine's throughput and
the measured one agree as for other models, at or above it the runs serve 1.0-2.0 times fewer
tokens per second than the engine computes (docs/MODEL.md 10, "Small-active MoE at large
decode batches": the runtime's work per sequence and step that the kernels do not show).  The
cause is not modelled, so nothing is fitted: the answer's capacity keeps the model's figure
and says how far the published runs in its regime fell short of it.  The readings below are
those rows' ratios (the engine's output rate over the measured), checked against the
validation report by ``tests/engine/test_known_limits.py`` so they cannot go stale.
"""

from __future__ import annotations

from typing import NamedTuple

SMALL_ACTIVE_MOE_PARAMS = 6e9
"""Active parameters at or below which an MoE model is "small-active": the three catalog
models the published runs measure (3.3-5.1 B active) read the same way, the next ones
(Llama 4 Maverick 17 B, Qwen3-235B-A22B 22 B, DeepSeek-R1 37 B) do not."""
LARGE_DECODE_BATCH_PER_GPU = 350.0
"""Sequences a decode GPU holds in its step from which the runs read short."""


class MeasuredRatio(NamedTuple):
    """The engine's output rate over the measured one on held-out published runs."""

    measurements: int
    low: float
    median: float
    high: float


LARGE_BATCH_READING = MeasuredRatio(measurements=30, low=0.97, median=1.55, high=1.87)
"""Small-active MoE runs at :data:`LARGE_DECODE_BATCH_PER_GPU` or more sequences a GPU (the
developer guide at 03e27c7d, held out; docs/VALIDATION_SOURCES.md)."""
SMALL_BATCH_READING = MeasuredRatio(measurements=26, low=0.79, median=1.07, high=1.28)
"""The same models' runs below it."""


def small_active_moe(moe: bool, active_params: float) -> bool:
    """A mixture-of-experts model with at most :data:`SMALL_ACTIVE_MOE_PARAMS` active."""
    return moe and 0.0 < active_params <= SMALL_ACTIVE_MOE_PARAMS


def large_batch_caution(
    name: str, moe: bool, active_params: float, batch_per_gpu: float | None
) -> str | None:
    """The caution an answer for model ``name`` carries when its capacity within the targets
    has a small-active MoE model decode :data:`LARGE_DECODE_BATCH_PER_GPU` or more sequences
    a GPU; None elsewhere (and without the figure)."""
    if batch_per_gpu is None or not small_active_moe(moe, active_params):
        return None
    if batch_per_gpu < LARGE_DECODE_BATCH_PER_GPU:
        return None
    large, small = LARGE_BATCH_READING, SMALL_BATCH_READING
    return (
        f"Caution: {name} is a mixture-of-experts model with few active "
        f"parameters ({active_params / 1e9:.1f} B), and at its capacity within the "
        f"targets each decode GPU holds about {batch_per_gpu:,.0f} sequences. For such models "
        f"at {LARGE_DECODE_BATCH_PER_GPU:,.0f} or more sequences a GPU, the advisor computes "
        f"{large.median:.1f} times the tokens per second that TensorRT-LLM's published runs "
        f"measured (median of {large.measurements} held-out measurements, {large.low:.1f} to "
        f"{large.high:.1f} times); below that, {small.median:.2f} times ({small.measurements} "
        "measurements). Read the capacity as an upper bound and size the fleet with that "
        "margin."
    )
