"""Which precision each part of a served model runs at (docs/MODEL.md 15.1, "MXFP4 experts").

A scenario names one serving precision.  For bf16, fp16, fp8 and fp4 every linear layer of the
transformer blocks takes it (the embedding and output head their own, ``HEAD_PRECISION``).  mxfp4
is gpt-oss's published checkpoint: the routed experts in MXFP4, everything else in BF16
(:data:`constants.DENSE_PRECISION`); how the experts' GEMMs run depends on the GPU
(:data:`constants.MXFP4_MXFP8_GPUS_NEED`).
"""

from __future__ import annotations

from typing import Final

from advisor.engine.facts.catalog import GpuSpec
from advisor.engine.facts.constants import (
    KV_ELEMENT_BYTES,
    LATENT_KV_ELEMENT_BYTES,
    MXFP4_MXFP8_GPUS_NEED,
    WEIGHT_BYTES,
)
from advisor.engine.facts.weights import dense_precision
from advisor.engine.input.scenario import Scenario

MXFP4: Final = "mxfp4"


def expert_math_precision(gpu: GpuSpec, precision: str) -> str:
    """The tensor-core precision the routed experts' GEMMs (and their dispatched activations)
    run at: ``precision`` itself, but for mxfp4 FP8 (MXFP8 activations) on a GPU with FP4
    tensor cores and the dense precision elsewhere (16-bit activations against 4-bit
    weights)."""
    if precision != MXFP4:
        return precision
    return "fp8" if gpu.supports(MXFP4_MXFP8_GPUS_NEED) else dense_precision(precision)


def kv_precision(gpu: GpuSpec, precision: str) -> str:
    """The precision whose KV-cache width a deployment keeps: the scenario's, but for mxfp4 the
    experts' math precision (TensorRT-LLM's gpt-oss recipe: an FP8 cache on Blackwell, BF16 on
    Hopper); every other precision's math is its own."""
    return expert_math_precision(gpu, precision)


def kv_element_bytes(precision: str, latent: bool = False, gpu: GpuSpec | None = None) -> float:
    """KV cache bytes per element: fp8 serving of GQA/MHA models keeps an fp8 KV cache
    (TensorRT-LLM ``fp8_kv_cache``, vLLM ``kv_cache_dtype=fp8``); latent (MLA) caches stay
    bf16 as in FlashMLA and the DeepSeek/SGLang deployments, but for NVFP4 checkpoints, which
    ship an FP8 cache (:data:`constants.LATENT_KV_ELEMENT_BYTES`); otherwise 16-bit
    (:data:`constants.KV_ELEMENT_BYTES`, FP8 under fp4 too).  mxfp4 keeps the cache its
    recipe keeps on ``gpu`` (:func:`serving.precision.kv_precision`), so it needs the GPU."""
    if gpu is not None:
        precision = kv_precision(gpu, precision)
    elif precision == MXFP4:
        raise ValueError("the KV cache of an mxfp4 deployment depends on its GPU")
    return LATENT_KV_ELEMENT_BYTES[precision] if latent else KV_ELEMENT_BYTES[precision]


def dispatch_bytes_per_element(scenario: Scenario) -> float:
    """Bytes per hidden element an expert-parallel dispatch sends: the experts' activation
    precision (NVFP4 under fp4, MXFP8 under mxfp4 on Blackwell, 16-bit on Hopper)."""
    return WEIGHT_BYTES[expert_math_precision(scenario.gpu, scenario.precision)]
