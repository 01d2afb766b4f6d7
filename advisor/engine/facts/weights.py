"""The bytes a served checkpoint's weights take (docs/MODEL.md 15.1, "The 16-bit embedding and
output head").

A quantized serving checkpoint quantizes the linear layers of its transformer blocks and keeps
the input embedding table and the output head (``lm_head``) at 16 bits: NVIDIA's Model
Optimizer, which builds TensorRT-LLM's FP8 checkpoints, disables ``*lm_head*`` in every
quantization config (``modelopt/torch/quantization/config.py``,
``_default_disabled_quantizer_cfg``) and wraps no embedding module in a quantizer; DeepSeek's
own FP8 checkpoint keeps both in BF16 as well.  A 16-bit precision keeps them at its own width.
"""

from __future__ import annotations

from advisor.engine.facts.catalog import ModelSpec
from advisor.engine.facts.constants import DENSE_PRECISION, HEAD_PRECISION, WEIGHT_BYTES


def dense_precision(precision: str) -> str:
    """The precision of the attention, router, non-routed MLP and element-wise work."""
    return DENSE_PRECISION.get(precision, precision)


def served_weight_bytes(model: ModelSpec, precision: str, params: float | None = None) -> float:
    """Bytes of ``params`` parameters of ``model`` served at ``precision`` (the whole model
    when ``None``; an expert-parallel instance passes its dense part), of which the embedding
    table and the output head (:attr:`ModelSpec.embedding_params`) take
    :data:`constants.HEAD_PRECISION`'s bytes and the rest ``precision``'s.  Under a precision
    whose dense layers keep their own (mxfp4: :data:`constants.DENSE_PRECISION`) the routed
    experts (:attr:`ModelSpec.expert_params`, when the whole model is asked) take
    ``precision``'s bytes and every other parameter the dense precision's."""
    dense = dense_precision(precision)
    if dense != precision:
        experts = model.expert_params if params is None else 0.0
        rest = (model.params if params is None else params) - experts
        embedding = min(model.embedding_params, rest)
        return (
            experts * WEIGHT_BYTES[precision]
            + (rest - embedding) * WEIGHT_BYTES[dense]
            + embedding * WEIGHT_BYTES[HEAD_PRECISION[precision]]
        )
    total = model.params if params is None else params
    embedding = min(model.embedding_params, total)
    return (total - embedding) * WEIGHT_BYTES[precision] + embedding * WEIGHT_BYTES[
        HEAD_PRECISION[precision]
    ]
