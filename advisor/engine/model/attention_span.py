"""How many tokens a query attends (its span), averaged over positions and layers: every earlier
token of the sequence (causal), or on a model with chunked local attention (Llama 4:
``ModelSpec.attention_chunk`` tokens on ``chunked_attention_layers`` of its layers) only the
earlier tokens of its own chunk on those layers.  One rule for serving's decode and prefill and
for training's attention kernels (docs/MODEL.md 15.1, "Chunked local attention")."""

from __future__ import annotations

from advisor.engine.facts.catalog import ModelSpec


def decode_attention_context(model: ModelSpec, prompt_tokens: float, output_tokens: float) -> float:
    """Cached tokens a decode query attends, averaged over the output positions and the
    layers: ``prompt + output / 2`` on full attention, less on a model's chunked layers."""
    context = prompt_tokens + output_tokens / 2.0
    return _chunked_context(model, context, prompt_tokens, prompt_tokens + output_tokens)


def prefill_attention_context(
    model: ModelSpec, prompt_tokens: float, computed_tokens: float
) -> float:
    """Tokens a prompt token attends, averaged over the ``computed_tokens`` new positions (the
    rest of the prompt a cached prefix) and the layers: ``prompt - computed / 2`` (causal) on
    full attention, less on a model's chunked layers."""
    context = max(0.0, prompt_tokens - computed_tokens / 2.0)
    return _chunked_context(model, context, prompt_tokens - computed_tokens, prompt_tokens)


def training_attention_context(model: ModelSpec, sequence: float) -> float:
    """The span a training sequence's causal attention executes, as the full-sequence length it
    equals without chunks (``sequence``; the kernels run half of it, causal): twice the mean
    span of the sequence's positions."""
    return 2.0 * prefill_attention_context(model, sequence, sequence)


def _chunked_context(model: ModelSpec, context: float, first: float, last: float) -> float:
    """``context`` on the full-attention layers, averaged with the chunked layers' span over
    positions ``first``..``last``: a position ``p`` attends ``p mod chunk`` tokens there
    (continuous positions, so a range inside the first chunk gives ``context`` again)."""
    chunk = float(model.attention_chunk)
    chunked = min(model.chunked_attention_layers, model.layers)
    if chunk <= 0 or chunked <= 0 or last <= first:
        return context
    local = (_chunk_position_integral(last, chunk) - _chunk_position_integral(first, chunk)) / (
        last - first
    )
    return ((model.layers - chunked) * context + chunked * local) / model.layers


def _chunk_position_integral(position: float, chunk: float) -> float:
    """Integral of ``p mod chunk`` over ``p`` from 0 to ``position``."""
    whole = position // chunk
    rest = position - whole * chunk
    return whole * chunk * chunk / 2.0 + rest * rest / 2.0
