"""Scenario v1 described once: every field, its type, its choices, its default, its range.

The keys come from the parser (``advisor.engine.input.scenario``: ``SCENARIO_KEYS``,
``TRAINING_KEYS`` ...), the ranges from ``advisor.engine.facts.limits.LIMITS``, the defaults
from the parser's constants and ``Constraints``; this module adds what each field means.
:func:`scenario_json_schema` is the JSON schema the API publishes (OpenAPI 3.0 dialect:
``nullable``), and the questionnaire shows the same defaults: a field added to the parser
without a description here fails :func:`scenario_paths`' check in the tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.engine.facts.catalog.cloud import cloud_fabric_ids
from advisor.engine.facts.constants import (
    DEFAULT_CHUNK_TOKENS,
    DEFAULT_CORPUS_CHUNKS,
    DEFAULT_EMBEDDING_DIMS,
    DEFAULT_TOP_K,
    FABRIC_IDS,
)
from advisor.engine.facts.limits import LIMITS
from advisor.engine.facts.transports import TRANSPORTS
from advisor.engine.facts.vocabulary import TEAM_SKILLS
from advisor.engine.input import rag as rg
from advisor.engine.input import scenario as sc
from advisor.engine.result.echo import Constraints

_UNSET = object()


@dataclass(frozen=True)
class FieldDoc:
    """One field of scenario v1: JSON type, meaning, static default, allowed values."""

    kind: str
    description: str
    default: Any = _UNSET
    choices: tuple[Any, ...] = ()


_C = Constraints()

FIELDS: dict[str, FieldDoc] = {
    "workload": FieldDoc("string", "What the GPUs do.", choices=sc.WORKLOADS),
    "model": FieldDoc("model", "A model preset id (GET /api/v1/catalog/) or a custom model."),
    "gpu": FieldDoc("string", "A GPU id from GET /api/v1/catalog/, e.g. h100-sxm."),
    "gpus": FieldDoc("integer", "GPUs in the job (whole servers)."),
    "gpus_per_node": FieldDoc(
        "integer", "GPUs per server; default: the GPU's server size (or gpus when smaller)."
    ),
    "precision": FieldDoc(
        "string",
        "Number format; default bf16 (fp16 where bf16 is missing), and for serving a model "
        "whose publisher ships it in another format, that format where the GPU runs it "
        "(DeepSeek-V3 / R1 / V3.1 and Kimi K2: fp8; gpt-oss: mxfp4), and the publisher's fp8 "
        "release of Llama 3.1 405B, Llama 4 Maverick and Qwen3 where their 16-bit weights "
        "overfill one server (or NVLink domain); fp4 (NVFP4) serves only, "
        "on GPUs with FP4 tensor cores (NVIDIA Blackwell); mxfp4 serves only an MoE model, its "
        "routed experts in MXFP4 and the rest in BF16 (gpt-oss's published checkpoint).",
        choices=sc.PRECISIONS,
    ),
    "sequence_length": FieldDoc(
        "integer", "Tokens per sample or context window.", default=sc.DEFAULT_SEQUENCE_LENGTH
    ),
    "name": FieldDoc("string", "Free text, kept with the inputs."),
    "description": FieldDoc("string", "Free text, kept with the inputs."),
    "version": FieldDoc("integer", "Scenario format version (1)."),
    "model.params_b": FieldDoc("number", "Parameters, billions."),
    "model.layers": FieldDoc("integer", "Transformer blocks."),
    "model.hidden": FieldDoc("integer", "Hidden size."),
    "model.heads": FieldDoc("integer", "Attention heads (divide hidden)."),
    "model.kv_heads": FieldDoc("integer", "Key/value heads; default: heads."),
    "model.vocab": FieldDoc("integer", "Vocabulary size; default 32,000."),
    "model.ffn_hidden": FieldDoc("integer", "Feed-forward width; default 4 x hidden."),
    "model.moe_experts": FieldDoc("integer", "Experts (0: dense).", default=0),
    "model.moe_top_k": FieldDoc("integer", "Experts each token visits (0: dense).", default=0),
    "model.active_params_b": FieldDoc("number", "Active parameters per token, billions."),
    "model.name": FieldDoc("string", "A name for the custom model."),
    "model.tied_embeddings": FieldDoc("boolean", "Input and output embeddings shared.", False),
    "training.global_batch_sequences": FieldDoc(
        "integer", "Sequences per optimizer step (wins over global_batch_tokens)."
    ),
    "training.global_batch_tokens": FieldDoc(
        "integer",
        f"Tokens per optimizer step; default {sc.DEFAULT_GLOBAL_BATCH_TOKENS:,}, or "
        f"{sc.BATCH_TOKENS_PER_GPU:,} per GPU rounded down to a power of two when larger "
        "(published practice: Llama 3 405B used 16M tokens on 16,384 GPUs); "
        f"{sc.MOE_BATCH_TOKENS_PER_GPU:,} per GPU for a mixture-of-experts model's pretraining "
        "(DeepSeek-V3 used 63M tokens on 2,048 GPUs).",
    ),
    "training.total_tokens": FieldDoc(
        "number",
        f"Tokens the run processes; default {sc.DEFAULT_TRAINING_TOKENS:,.0f} (training) or "
        f"{sc.DEFAULT_FINE_TUNING_TOKENS:,.0f} (fine-tuning).",
    ),
    "training.sharding": FieldDoc(
        "string",
        "Memory sharding; left out, the planner weighs ZeRO-1 and ZeRO-3.",
        choices=sc.SHARDINGS,
    ),
    "inference.independent_replicas": FieldDoc(
        "boolean", "Each server serves whole requests; null: the engine decides.", default=None
    ),
    "inference.concurrent_requests": FieldDoc(
        "integer",
        "A closed loop's users, each sending its next request when the last is answered; those "
        "the KV memory holds no place for wait to be admitted (with requests_per_s, the rate "
        "sets the requests in flight).",
        default=sc.DEFAULT_CONCURRENT_REQUESTS,
    ),
    "inference.prompt_tokens": FieldDoc(
        "integer", "Tokens per prompt.", default=sc.DEFAULT_PROMPT_TOKENS
    ),
    "inference.output_tokens": FieldDoc(
        "integer", "Tokens generated per request.", default=sc.DEFAULT_OUTPUT_TOKENS
    ),
    "inference.target_ms_per_token": FieldDoc(
        "number", "p95 time per generated token, ms.", default=sc.DEFAULT_TARGET_MS_PER_TOKEN
    ),
    "inference.deployment": FieldDoc(
        "string", "Serving deployment; null lets the engine choose.", choices=sc.DEPLOYMENTS
    ),
    "inference.requests_per_s": FieldDoc(
        "number", "Poisson arrival rate; null: a closed loop of concurrent_requests users."
    ),
    "inference.target_ttft_ms": FieldDoc(
        "number", "p95 time to first token, ms.", default=sc.DEFAULT_TARGET_TTFT_MS
    ),
    "inference.prefix_cache_hit_rate": FieldDoc(
        "number", "Share of prompt tokens served from a prefix cache (below 1).", default=0.0
    ),
    "inference.mtp": FieldDoc("number", "Speculative decoding (one draft token): acceptance."),
    "inference.pools": FieldDoc("object", "Servers and parallelism of each disaggregated pool."),
    "inference.pools.prefill": FieldDoc("object", "The prompt (prefill) pool."),
    "inference.pools.decode": FieldDoc("object", "The answer (decode) pool."),
    "rag": FieldDoc(
        "object",
        "A retrieval pipeline (RAG) in front of the serving fleet: an embedding tier and a "
        "vector-search tier feed top_k chunks into every prompt (workload inference only).",
    ),
    "rag.top_k": FieldDoc("integer", "Chunks retrieved per question.", default=DEFAULT_TOP_K),
    "rag.chunk_tokens": FieldDoc(
        "integer",
        "Tokens per chunk; top_k x chunk_tokens of inference.prompt_tokens is retrieved context.",
        default=DEFAULT_CHUNK_TOKENS,
    ),
    "rag.embedding_dims": FieldDoc(
        "integer", "Dimensions of one embedding vector.", default=DEFAULT_EMBEDDING_DIMS
    ),
    "rag.corpus_chunks": FieldDoc(
        "integer", "Chunks in the vector index.", default=DEFAULT_CORPUS_CHUNKS
    ),
    "rag.embedding_servers": FieldDoc(
        "integer", "Servers of the embedding tier; null: sized by the engine for the load."
    ),
    "rag.vector_search_servers": FieldDoc(
        "integer",
        "Servers of the vector-search tier; null: sized by the engine (index memory, load).",
    ),
    "parallelism.tp": FieldDoc("integer", "Tensor-parallel size; null: the planner's."),
    "parallelism.pp": FieldDoc("integer", "Pipeline-parallel stages; null: the planner's."),
    "parallelism.dp": FieldDoc("integer", "Data-parallel replicas; null: the planner's."),
    "parallelism.ep": FieldDoc(
        "integer",
        "Expert-parallel size (divides the experts and tp x dp x cp: the experts fold over "
        "those ranks, not tensor-parallel); null: the planner's.",
    ),
    "parallelism.cp": FieldDoc("integer", "Context-parallel size; null: the planner's."),
    "parallelism.micro_batch": FieldDoc("integer", "Sequences per micro-batch."),
    "parallelism.virtual_stages": FieldDoc("integer", "Interleaved stages per pipeline rank."),
    "parallelism.first_stage_layers": FieldDoc("integer", "Layers of the first stage."),
    "parallelism.last_stage_layers": FieldDoc("integer", "Layers of the last stage."),
    "parallelism.recompute": FieldDoc(
        "string", "Activation recomputation.", choices=sc.RECOMPUTE_MODES
    ),
    "parallelism.zero": FieldDoc(
        "integer", "ZeRO stage; overrides training.sharding.", choices=tuple(sc.ZERO_STAGES)
    ),
    "parallelism.tp_comm_overlap": FieldDoc(
        "boolean", "Tensor-parallel comm overlapped with GEMMs; default on Hopper and newer."
    ),
    "parallelism.ep_overlap": FieldDoc(
        "string",
        "Expert all-to-all hidden behind compute; a planned MoE job defaults to a2a_1f1b "
        "where Megatron-Core runs it, an explicit plan to none.",
        choices=sc.EP_OVERLAP_MODES,
    ),
    "parallelism.moe_dispatcher": FieldDoc(
        "string",
        "Expert dispatch in training: alltoall (NCCL all-to-all of every token copy) or deepep "
        "(DeepEP/HybridEP: a token crosses the network once per server); a planned MoE job on "
        "NVIDIA Hopper/Blackwell defaults to deepep, otherwise alltoall.",
        choices=sc.MOE_DISPATCHERS,
    ),
    "parallelism.flash_attention": FieldDoc("boolean", "Fused attention (default true)."),
    "parallelism.sequence_parallel": FieldDoc("boolean", "Sequence parallelism (default true)."),
    "parallelism.fp8_param_gather": FieldDoc(
        "boolean",
        "The distributed optimizer all-gathers FP8 weights, 1 B per parameter (Megatron-Core "
        "fp8_param_gather, NeMo fp8_params); FP8 precision only (default false: bf16).",
    ),
    "parallelism.dp_bucket_params": FieldDoc(
        "integer",
        "Parameters per data-parallel gradient bucket, at least 1,000,000 (Megatron-Core "
        "bucket_size; Apex bucket_cap_mb x 1,048,576 / 2); default max(40 M, 1 M x dp x cp).",
    ),
    "design.fabric": FieldDoc("string", "The fabric class to evaluate.", choices=FABRIC_IDS),
    "design.nic_gbps": FieldDoc("number", "Line rate of one compute NIC port, Gb/s.", 400.0),
    "design.nics_per_node": FieldDoc("integer", "Compute NICs per server.", default=8),
    "design.oversubscription": FieldDoc("number", "r of r:1 at the leaf.", default=1.0),
    "design.adaptive_routing": FieldDoc(
        "boolean", "null: the fabric's default (InfiniBand yes, Ethernet no).", default=None
    ),
    "design.in_network_reduction": FieldDoc("boolean", "SHARP (InfiniBand only).", False),
    "design.transport": FieldDoc(
        "string",
        "A network-plugin transport NCCL runs across servers: AWS EFA through aws-ofi-nccl "
        "(efa-p4d: p4d/p4de, efa-p5: p5/p5e, efa-p5en: p5en/p6-b200; roce fabric only); "
        "absent or null: the fabric's own. constraints.cloud sets it for an AWS instance.",
        choices=tuple(sorted(TRANSPORTS)),
    ),
    "constraints.gpu_pricing": FieldDoc(
        "string", "Owned (amortized) or rented GPUs.", _C.gpu_pricing, sc.GPU_PRICING
    ),
    "constraints.gpu_hour_usd": FieldDoc(
        "number", "Price of a GPU-hour when rented; default: the GPU's catalog cloud price."
    ),
    "constraints.electricity_usd_per_kwh": FieldDoc(
        "number", "Electricity, USD per kWh.", _C.electricity_usd_per_kwh
    ),
    "constraints.pue": FieldDoc("number", "Data-centre PUE (>= 1).", _C.pue),
    "constraints.amortization_years": FieldDoc(
        "number", "Years owned hardware is amortized over.", _C.amortization_years
    ),
    "constraints.network_budget_usd": FieldDoc("number", "Most the network may cost; null: none."),
    "constraints.team_skills": FieldDoc(
        "string", "What the operating team already runs.", _C.team_skills, tuple(TEAM_SKILLS)
    ),
    "constraints.prefer": FieldDoc(
        "string", "How ties between cheaper and faster break.", _C.prefer, sc.PREFERENCES
    ),
    "constraints.utilization": FieldDoc(
        "number",
        "Share of the amortization life the cluster runs work, in (0, 1].",
        _C.utilization,
    ),
    "constraints.allow_oversubscription": FieldDoc(
        "boolean",
        "With prefer=cost, oversubscribed or fewer-NIC designs may be recommended.",
        _C.allow_oversubscription,
    ),
    "constraints.storage_write_gbytes_per_s": FieldDoc(
        "number", "The storage system's sustained write rate for the cluster, GB/s."
    ),
    "constraints.cloud": FieldDoc(
        "string",
        "A cloud instance type the GPUs are rented on (e.g. aws-p5): its scale-out fabric is "
        "evaluated as the given design and returned as cloud_fabric; null: none.",
        choices=cloud_fabric_ids(),
    ),
    "training": FieldDoc("object", "Training and fine-tuning: batch, run length, sharding."),
    "inference": FieldDoc("object", "Serving: load, lengths, latency targets, deployment."),
    "parallelism": FieldDoc("object", "An explicit plan; fields left out are the planner's."),
    "design": FieldDoc("object", "One network design to price beside the recommendation."),
    "constraints": FieldDoc("object", "Prices, budget, team skills and priorities."),
    **{
        f"inference.pools.{pool}.{key}": FieldDoc("integer", what)
        for pool in ("prefill", "decode")
        for key, what in (
            ("servers", "Servers of the pool; null: the engine's."),
            ("tp", "Tensor-parallel size inside the pool."),
            ("ep", "Expert-parallel size inside the pool."),
        )
    },
}
"""Every field of scenario v1 by dotted path (the sections included)."""

_SECTIONS: dict[str, tuple[str, ...]] = {
    "training": sc.TRAINING_KEYS,
    "inference": sc.INFERENCE_KEYS,
    "inference.pools": sc.POOLS_KEYS,
    "inference.pools.prefill": sc.POOL_KEYS,
    "inference.pools.decode": sc.POOL_KEYS,
    "rag": rg.RAG_KEYS,
    "parallelism": sc.PARALLELISM_KEYS,
    "design": sc.DESIGN_KEYS,
    "constraints": sc.CONSTRAINT_KEYS,
}
_REQUIRED = {"": ("workload", "model", "gpu", "gpus"), "design": ("fabric",)}
_MODEL_REQUIRED = ("params_b", "layers", "hidden", "heads")


def scenario_paths() -> set[str]:
    """Every dotted path the parser accepts (sections included)."""
    out = set(sc.SCENARIO_KEYS)
    out |= {f"model.{k}" for k in sc.MODEL_KEYS}
    for section, keys in _SECTIONS.items():
        out |= {f"{section}.{k}" for k in keys}
    return out


def _leaf(path: str) -> dict[str, Any]:
    doc = FIELDS[path]
    schema: dict[str, Any] = {"description": doc.description}
    if doc.choices:
        schema["enum"] = list(doc.choices)
        schema["type"] = "integer" if doc.kind == "integer" else "string"
    else:
        schema["type"] = doc.kind
    limit = LIMITS.get(path)
    if limit is not None:
        schema["type"] = "integer" if limit.integer else "number"
        schema["minimum"] = limit.low
        schema["maximum"] = limit.high
    elif doc.kind == "number" and path == "constraints.utilization":
        schema["exclusiveMinimum"] = True
        schema["minimum"] = 0
        schema["maximum"] = 1
    if doc.default is not _UNSET:
        schema["default"] = doc.default
    if path not in _REQUIRED[""] and path != "design.fabric":
        schema["nullable"] = True
    return schema


def _object(section: str) -> dict[str, Any]:
    keys = _SECTIONS[section]
    properties = {
        k: _object(f"{section}.{k}") if f"{section}.{k}" in _SECTIONS else _leaf(f"{section}.{k}")
        for k in keys
    }
    out: dict[str, Any] = {
        "type": "object",
        "description": FIELDS[section].description,
        "properties": properties,
        "additionalProperties": False,
        "nullable": True,
    }
    if section in _REQUIRED:
        out["required"] = list(_REQUIRED[section])
    return out


def scenario_json_schema() -> dict[str, Any]:
    """Scenario v1 as a JSON schema (OpenAPI 3.0: ``nullable``): what the API publishes."""
    custom = {
        "type": "object",
        "description": "A custom model (no preset).",
        "required": list(_MODEL_REQUIRED),
        "properties": {k: _leaf(f"model.{k}") for k in sc.MODEL_KEYS},
        "additionalProperties": False,
    }
    properties: dict[str, Any] = {}
    for key in sc.SCENARIO_KEY_ORDER:
        if key == "model":
            properties[key] = {
                "description": FIELDS["model"].description,
                "oneOf": [{"type": "string", "description": "A model preset id."}, custom],
            }
        elif key in _SECTIONS:
            properties[key] = _object(key)
        else:
            properties[key] = _leaf(key)
    return {
        "type": "object",
        "description": "Scenario v1 (docs/ENGINE_API.md): only workload, model, gpu and gpus "
        "are required; every other field has the default it states.",
        "required": list(_REQUIRED[""]),
        "properties": properties,
        "additionalProperties": False,
    }
