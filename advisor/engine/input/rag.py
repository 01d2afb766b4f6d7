"""Retrieval-augmented generation (RAG): the scenario's optional ``rag`` section.

A RAG pipeline is a serving scenario (``workload: inference``) in three tiers: an embedding
tier turns each question into a vector, a vector-search tier returns the ``top_k`` nearest
chunks of the corpus, and the generation tier (the scenario's GPUs, answered by the serving
model like any fleet) reads them as part of its prompt: ``top_k x chunk_tokens`` of
``inference.prompt_tokens`` are retrieved context, the rest is the question and instructions.

Defaults (docs/MODEL.md section 21; ``DEFAULT_TOP_K`` and its neighbours in
:mod:`advisor.engine.facts.constants`, read by the parser and the result's ``RagInput``
record alike): 4 chunks of 256 tokens, 1,024-dimensional embeddings, a corpus of 10 million
chunks; tier sizes left to the engine.
"""

from __future__ import annotations

import math
from typing import Any

from advisor.engine.result.echo import RagInput

RAG_KEYS: tuple[str, ...] = (
    "top_k",
    "chunk_tokens",
    "embedding_dims",
    "corpus_chunks",
    "embedding_servers",
    "vector_search_servers",
)
"""The keys of ``rag`` (the parser below and the published schema read these)."""

_COUNTS = ("top_k", "chunk_tokens", "embedding_dims", "corpus_chunks")
_SERVERS = ("embedding_servers", "vector_search_servers")


def _count(value: Any) -> int | None:
    """A positive whole number, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or not float(value).is_integer() or value <= 0:
        return None
    return int(value)


def parse_rag(raw: Any) -> tuple[RagInput | None, dict[str, str]]:
    """``rag`` as given: the spec and one message per bad field (dotted path -> message).

    Cross-checks against the rest of the scenario (the workload, the prompt length) are the
    scenario parser's: :func:`rag_problems`.
    """
    if raw is None:
        return None, {}
    if not isinstance(raw, dict):
        return None, {"rag": "must be an object (top_k, chunk_tokens, embedding_dims, ...)"}
    errors = {f"rag.{key}": "unknown field" for key in raw if key not in RAG_KEYS}
    values: dict[str, Any] = {}
    for key in RAG_KEYS:
        if raw.get(key) is None:
            continue
        number = _count(raw[key])
        if number is None:
            errors[f"rag.{key}"] = "must be a positive integer"
        else:
            values[key] = number
    if errors:
        return None, errors
    return RagInput(**values), {}


def rag_problems(rag: RagInput, workload: str | None, prompt_tokens: int | None) -> dict[str, str]:
    """What the rest of the scenario rules out for this pipeline (dotted path -> message)."""
    if workload != "inference":
        return {
            "rag": "a retrieval pipeline serves a model: it needs workload 'inference' "
            f"(not {workload!r})"
        }
    if prompt_tokens is not None and rag.context_tokens >= prompt_tokens:
        return {
            "rag.top_k": f"top_k x chunk_tokens = {rag.top_k} x {rag.chunk_tokens} = "
            f"{rag.context_tokens:,} retrieved tokens must leave room for the question in "
            f"inference.prompt_tokens ({prompt_tokens:,}): the retrieved chunks are part of "
            "the prompt"
        }
    return {}
