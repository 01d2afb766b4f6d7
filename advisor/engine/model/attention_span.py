"""How many tokens a query attends (its span), averaged over positions and layers: every earlier
token of the sequence (causal), or on a model with local attention layers less: chunked local
attention (Llama 4: ``ModelSpec.attention_chunk`` tokens on ``chunked_attention_layers`` of its
layers), where a token attends only the earlier tokens of its own chunk, and sliding-window
attention (gpt-oss: ``ModelSpec.sliding_window`` tokens on ``sliding_window_layers``), where it
attends at most the last ``sliding_window`` tokens.  One rule for serving's decode and prefill
and for training's attention kernels (docs/MODEL.md 15.1, "Local attention: chunks and sliding
windows")."""

from __future__ import annotations

from advisor.engine.facts.catalog import ModelSpec


def decode_attention_context(model: ModelSpec, prompt_tokens: float, output_tokens: float) -> float:
    """Cached tokens a decode query attends, averaged over the output positions and the
    layers: ``prompt + output / 2`` on full attention, less on a model's local layers."""
    context = prompt_tokens + output_tokens / 2.0
    return _local_context(model, context, prompt_tokens, prompt_tokens + output_tokens)


def prefill_attention_context(
    model: ModelSpec, prompt_tokens: float, computed_tokens: float
) -> float:
    """Tokens a prompt token attends, averaged over the ``computed_tokens`` new positions (the
    rest of the prompt a cached prefix) and the layers: ``prompt - computed / 2`` (causal) on
    full attention, less on a model's local layers."""
    context = max(0.0, prompt_tokens - computed_tokens / 2.0)
    return _local_context(model, context, prompt_tokens - computed_tokens, prompt_tokens)


def training_attention_context(model: ModelSpec, sequence: float) -> float:
    """The span a training sequence's causal attention executes, as the full-sequence length it
    equals without chunks (``sequence``; the kernels run half of it, causal): twice the mean
    span of the sequence's positions."""
    return 2.0 * prefill_attention_context(model, sequence, sequence)


def _local_context(model: ModelSpec, context: float, first: float, last: float) -> float:
    """``context`` on the full-attention layers, averaged with the local layers' span over
    positions ``first``..``last``: a position ``p`` attends ``p mod chunk`` tokens on a chunked
    layer and ``min(p, window)`` on a sliding-window one (continuous positions, so a range
    inside the first chunk or window gives ``context`` again)."""
    chunk = float(model.attention_chunk)
    window = float(model.sliding_window)
    chunked = min(model.chunked_attention_layers, model.layers) if chunk > 0 else 0
    sliding = min(model.sliding_window_layers, model.layers - chunked) if window > 0 else 0
    if chunked + sliding <= 0 or last <= first:
        return context
    span = last - first
    local = 0.0
    if chunked:
        chunk_mean = (
            _chunk_position_integral(last, chunk) - _chunk_position_integral(first, chunk)
        ) / span
        local += chunked * chunk_mean
    if sliding:
        window_mean = (
            _window_position_integral(last, window) - _window_position_integral(first, window)
        ) / span
        local += sliding * window_mean
    return ((model.layers - chunked - sliding) * context + local) / model.layers


def _chunk_position_integral(position: float, chunk: float) -> float:
    """Integral of ``p mod chunk`` over ``p`` from 0 to ``position``."""
    whole = position // chunk
    rest = position - whole * chunk
    return whole * chunk * chunk / 2.0 + rest * rest / 2.0


def _window_position_integral(position: float, window: float) -> float:
    """Integral of ``min(p, window)`` over ``p`` from 0 to ``position``."""
    if position <= window:
        return position * position / 2.0
    return window * window / 2.0 + window * (position - window)
