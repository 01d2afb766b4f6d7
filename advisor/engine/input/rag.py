"""Retrieval-augmented generation (RAG): the scenario's optional ``rag`` section.

A RAG pipeline is a serving scenario (``workload: inference``) in three tiers: an embedding
tier turns each question into a vector, a vector-search tier returns the ``top_k`` nearest
chunks of the corpus, and the generation tier (the scenario's GPUs, answered by the serving
model like any fleet) reads them as part of its prompt: ``top_k x chunk_tokens`` of
``inference.prompt_tokens`` are retrieved context, the rest is the question and instructions.

Defaults (docs/MODEL.md section 21): 4 chunks of 256 tokens, 1,024-dimensional embeddings,
a corpus of 10 million chunks; tier sizes left to the engine.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

RAG_KEYS: tuple[str, ...] = (
    "top_k",
    "chunk_tokens",
    "embedding_dims",
    "corpus_chunks",
    "embedding_servers",
    "vector_search_servers",
)
"""The keys of ``rag`` (the parser below and the published schema read these)."""

DEFAULT_TOP_K = 4
"""Chunks retrieved per question: LangChain's ``VectorStore.similarity_search`` returns k = 4
by default (langchain-core reference)."""
DEFAULT_CHUNK_TOKENS = 256
"""Tokens per chunk: common practice is 128-512 tokens (Milvus, 'optimal chunk size for RAG
applications'); Vertex AI RAG Engine defaults to 1,024 (Google Cloud docs)."""
DEFAULT_EMBEDDING_DIMS = 1024
"""Dimensions of one embedding: bge-large-en-v1.5, e5-large-v2 and NVIDIA NV-EmbedQA-E5-v5
all produce 1,024 (their model cards)."""
DEFAULT_CORPUS_CHUNKS = 10_000_000
"""Chunks in the index: VectorDBBench's 10M-vector performance case (zilliztech/VectorDBBench,
Performance768D10M), about 2.6 billion tokens at 256 tokens per chunk."""

_COUNTS = ("top_k", "chunk_tokens", "embedding_dims", "corpus_chunks")
_SERVERS = ("embedding_servers", "vector_search_servers")


@dataclass(frozen=True)
class RagSpec:
    """A retrieval pipeline in front of the generation tier (``None`` = sized by the engine)."""

    top_k: int = DEFAULT_TOP_K
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS
    embedding_dims: int = DEFAULT_EMBEDDING_DIMS
    corpus_chunks: int = DEFAULT_CORPUS_CHUNKS
    embedding_servers: int | None = None
    vector_search_servers: int | None = None

    @property
    def context_tokens(self) -> int:
        """Retrieved tokens in every prompt: ``top_k x chunk_tokens``."""
        return self.top_k * self.chunk_tokens


def _count(value: Any) -> int | None:
    """A positive whole number, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not math.isfinite(value) or not float(value).is_integer() or value <= 0:
        return None
    return int(value)


def parse_rag(raw: Any) -> tuple[RagSpec | None, dict[str, str]]:
    """``rag`` as given: the spec and one message per bad field (dotted path -> message).

    Cross-checks against the rest of the scenario (the workload, the prompt length) are the
    scenario parser's: :func:`rag_problems`.
    """
    if raw is None:
        return None, {}
    if not isinstance(raw, dict):
        return None, {"rag": "must be an object (top_k, chunk_tokens, embedding_dims, ...)"}
    errors = {f"rag.{key}": "unknown field" for key in raw if key not in RAG_KEYS}
    values: dict[str, int] = {}
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
    return RagSpec(**values), {}


def rag_problems(rag: RagSpec, workload: str | None, prompt_tokens: int | None) -> dict[str, str]:
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
