"""Retrieval pipelines (RAG): the tiers in front of the serving fleet and their traffic.

Pure arithmetic on the scenario (docs/MODEL.md section 21), no prices: how many questions
arrive per second, how many servers the embedding and vector-search tiers need, the bytes
each question moves between the tiers, and the time the tiers and their network add before
the generation tier (the scenario's GPUs, the serving model) starts on the prompt.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from advisor.engine.facts.constants import (
    EMBEDDING_BYTES_PER_DIM,
    EMBEDDING_LATENCY_S,
    EMBEDDING_MAX_INPUT_TOKENS,
    EMBEDDING_QUERIES_PER_S_PER_SERVER,
    FABRICS,
    HNSW_BYTES_PER_LINK,
    HNSW_LINKS,
    RETRIEVAL_TIER_MIN_SERVERS,
    TEXT_BYTES_PER_TOKEN,
    VECTOR_INDEX_MEMORY_HEADROOM,
    VECTOR_SEARCH_LATENCY_S,
    VECTOR_SEARCH_QUERIES_PER_S_PER_SERVER,
    VECTOR_SERVER_MEMORY_BYTES,
)
from advisor.engine.facts.vocabulary import (
    EMBEDDING_TIER,
    ETHERNET,
    GENERATION_TIER,
    RAG_TIER_LABELS,
    VECTOR_SEARCH_TIER,
)
from advisor.engine.input.scenario import InferenceSpec, Scenario
from advisor.engine.result.echo import RagInput
from advisor.engine.result.records import RagFlow, RagTier


@dataclass(frozen=True)
class RagPlan:
    """The pipeline as sized for the scenario's load."""

    queries_per_s: float
    rate_basis: str
    question_tokens: int
    context_tokens: int
    index_bytes: float
    tiers: tuple[RagTier, ...]
    flows: tuple[RagFlow, ...]
    retrieval_compute_s: float
    """Embedding plus vector search, p95-p99 as published, before any network time."""

    @property
    def busiest_gbits_per_s(self) -> float:
        """The most traffic (in plus out) any one server of any tier carries."""
        return max(t.gbits_per_s_per_server for t in self.tiers)

    @property
    def retrieval_servers(self) -> int:
        """Servers of the embedding and vector-search tiers (the generation tier aside)."""
        return sum(t.servers for t in self.tiers if t.role != GENERATION_TIER)

    def tier(self, role: str) -> RagTier:
        return next(t for t in self.tiers if t.role == role)


def query_rate(inference: InferenceSpec, users_rate: float | None) -> tuple[float, str]:
    """Questions per second and where the number comes from: ``requests_per_s`` when given,
    else ``users_rate``, the rate the closed loop of ``concurrent_requests`` users settles at
    on the generation fleet (``serving.load.offered_load``, Little's law on the load model: the
    rate the answer's first screen and its headroom read, capped by what the fleet serves)."""
    if inference.requests_per_s is not None:
        return inference.requests_per_s, "the stated arrival rate"
    if users_rate is None:
        raise ValueError("a closed loop's question rate needs the fleet's offered load")
    return users_rate, f"{inference.concurrent_requests:,} concurrent users (Little's law)"


def index_bytes(rag: RagInput) -> float:
    """Memory of the HNSW index: N x (D x 4 + m x 16) x headroom (MODEL.md 21)."""
    per_vector = rag.embedding_dims * EMBEDDING_BYTES_PER_DIM + HNSW_LINKS * HNSW_BYTES_PER_LINK
    return rag.corpus_chunks * per_vector * VECTOR_INDEX_MEMORY_HEADROOM


def _embedding_need(rate: float) -> int:
    return max(RETRIEVAL_TIER_MIN_SERVERS, math.ceil(rate / EMBEDDING_QUERIES_PER_S_PER_SERVER))


def _vector_need(rate: float, index: float) -> tuple[int, int]:
    """(shards, replicas) the index and the load need."""
    shards = math.ceil(index / VECTOR_SERVER_MEMORY_BYTES)
    replicas = max(
        RETRIEVAL_TIER_MIN_SERVERS, math.ceil(rate / VECTOR_SEARCH_QUERIES_PER_S_PER_SERVER)
    )
    return shards, replicas


def _embedding_servers(rag: RagInput, rate: float) -> tuple[int, str]:
    if rag.embedding_servers is not None:
        return rag.embedding_servers, "as given"
    servers = _embedding_need(rate)
    return servers, (
        f"{rate:,.0f} questions/s at {EMBEDDING_QUERIES_PER_S_PER_SERVER:,.0f} per server, "
        f"at least {RETRIEVAL_TIER_MIN_SERVERS} (N+1)"
    )


def _vector_servers(rag: RagInput, rate: float, index: float) -> tuple[int, str]:
    if rag.vector_search_servers is not None:
        return rag.vector_search_servers, "as given"
    shards, replicas = _vector_need(rate, index)
    return shards * replicas, (
        f"{shards} shard{'s' if shards != 1 else ''} of the {index / 2**30:,.0f} GiB index "
        f"x {replicas} replicas ({rate:,.0f} queries/s at "
        f"{VECTOR_SEARCH_QUERIES_PER_S_PER_SERVER:,.0f} per replica, at least "
        f"{RETRIEVAL_TIER_MIN_SERVERS})"
    )


def _flows(
    rag: RagInput, inference: InferenceSpec, rate: float, question_tokens: int
) -> tuple[RagFlow, ...]:
    def flow(name: str, source: str, target: str, size: float) -> RagFlow:
        return RagFlow(
            name=name,
            source=source,
            target=target,
            bytes_per_query=size,
            gbits_per_s=rate * size * 8 / 1e9,
        )

    return (
        flow("question", "users", EMBEDDING_TIER, question_tokens * TEXT_BYTES_PER_TOKEN),
        flow(
            "query vector",
            EMBEDDING_TIER,
            VECTOR_SEARCH_TIER,
            rag.embedding_dims * EMBEDDING_BYTES_PER_DIM,
        ),
        flow(
            "retrieved chunks",
            VECTOR_SEARCH_TIER,
            GENERATION_TIER,
            rag.context_tokens * TEXT_BYTES_PER_TOKEN,
        ),
        flow("prompt", EMBEDDING_TIER, GENERATION_TIER, question_tokens * TEXT_BYTES_PER_TOKEN),
        flow("answer", GENERATION_TIER, "users", inference.output_tokens * TEXT_BYTES_PER_TOKEN),
    )


def _per_server(flows: tuple[RagFlow, ...], role: str, servers: int) -> float:
    """Traffic in plus out of one server of a tier, spread evenly over its servers."""
    total = sum(f.gbits_per_s for f in flows if role in (f.source, f.target))
    return total / max(1, servers)


def plan_rag(s: Scenario, users_rate: float | None) -> RagPlan:
    """The pipeline of a RAG scenario (``s.rag`` and ``s.inference`` set); ``users_rate``: see
    :func:`query_rate`."""
    rag, inference = s.rag, s.inference
    if rag is None or inference is None:
        raise ValueError("plan_rag needs a scenario with rag and inference")
    rate, basis = query_rate(inference, users_rate)
    question = max(1, inference.prompt_tokens - rag.context_tokens)
    index = index_bytes(rag)
    flows = _flows(rag, inference, rate, question)
    embed, embed_why = _embedding_servers(rag, rate)
    vector, vector_why = _vector_servers(rag, rate, index)
    shards, replicas = _vector_need(rate, index)
    sizes = (
        (EMBEDDING_TIER, embed, embed_why, _embedding_need(rate)),
        (VECTOR_SEARCH_TIER, vector, vector_why, shards * replicas),
        (GENERATION_TIER, s.nodes, "the scenario's GPU servers", s.nodes),
    )
    tiers = tuple(
        RagTier(
            role=role,
            label=RAG_TIER_LABELS[role],
            servers=n,
            sized_by=why,
            gbits_per_s_per_server=_per_server(flows, role, n),
            needed_servers=need,
        )
        for role, n, why, need in sizes
    )
    return RagPlan(
        queries_per_s=rate,
        rate_basis=basis,
        question_tokens=question,
        context_tokens=rag.context_tokens,
        index_bytes=index,
        tiers=tiers,
        flows=flows,
        retrieval_compute_s=EMBEDDING_LATENCY_S + VECTOR_SEARCH_LATENCY_S,
    )


def embedded_tokens(plan: RagPlan) -> int:
    """Tokens of the question the embedding model reads (BERT-class models stop at 512)."""
    return min(plan.question_tokens, EMBEDDING_MAX_INPUT_TOKENS)


def network_s(plan: RagPlan, link_gbps: float) -> float:
    """Network time on one question's path to its first token: one TCP message per hop
    (question, query vector, retrieved chunks, the first token back) plus each flow's bytes
    at the tier links' line rate."""
    hops = ("question", "query vector", "retrieved chunks", "answer")
    latency = len(hops) * FABRICS[ETHERNET].message_latency_s
    wire = sum(
        f.bytes_per_query * 8 / (link_gbps * 1e9)
        for f in plan.flows
        if f.name in hops[:-1] or f.name == "prompt"
    )
    return latency + wire
