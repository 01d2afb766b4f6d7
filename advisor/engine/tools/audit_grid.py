"""The audit's grid: which jobs :mod:`advisor.engine.tools.audit` asks the engine, as scenarios.

Every preset model x every GPU x sizes from 1 to 16,384 servers (odd sizes included), for
training, fine-tuning and three kinds of serving deployment, under the default and three
non-default constraint sets; the late-2026 platforms with every preset
(:func:`new_hardware_grid`); retrieval pipelines (:func:`rag_grid`); serving fleets asked
for far more than they serve (:func:`overload_grid`); NVFP4 serving on Blackwell
(:func:`fp4_grid`); and MoE serving on MXFP4 experts (:func:`mxfp4_grid`).  :func:`scenario_for`
turns a case into
the scenario v1 dict ``evaluate`` reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from advisor.engine.facts.catalog import Catalog, default_catalog

SIZES_SERVERS: tuple[int, ...] = (
    1, 2, 3, 4, 8, 13, 16, 32, 33, 64, 128, 257, 512, 1024, 2049, 4096, 8192, 16384,
)  # fmt: skip
"""Server counts of the grid: powers of two and odd sizes in between."""
LADDER_SERVERS: tuple[int, ...] = (2, 4, 8, 16, 32, 64, 128, 512, 1024, 4096, 8192, 16384)
"""The doubling (or faster) ladder along which fabric-class changes are counted."""

WORKLOADS: tuple[str, ...] = (
    "training", "fine_tuning", "inference-replicas", "inference-split", "inference-disaggregated",
)  # fmt: skip
INFERENCE_DEPLOYMENTS: dict[str, dict[str, Any]] = {
    "inference-replicas": {"independent_replicas": True},
    "inference-split": {"independent_replicas": False},
    "inference-disaggregated": {"deployment": "disaggregated"},
}
"""The ``inference`` section of each kind of serving case."""

VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "ethernet-team-cost": {"team_skills": "ethernet", "prefer": "cost"},
    "cost-first": {"prefer": "cost", "allow_oversubscription": True},
    "ib-team-speed-cloud": {"team_skills": "infiniband", "prefer": "performance",
                            "gpu_pricing": "cloud"},
    "tight-budget": {},
}  # fmt: skip
"""Constraint sets: the default, two that pull the decision in opposite directions, the
customer who asks for the least cost and allows oversubscription (the decision's
``cost_preference`` mode, unaudited until 2026-12-08), and a network budget of
``BUDGET_USD_PER_GPU`` per GPU (below field practice's price)."""
BUDGET_USD_PER_GPU = 6_000.0
"""The tight-budget variant's network budget per GPU: under a non-blocking 400G fabric's
~$8-11k, so the cut order shows."""
AUDIT_MODELS: tuple[str, ...] = (
    "llama3-8b", "llama3-70b", "llama3.1-405b", "mixtral-8x7b", "deepseek-v3", "gpt3-175b",
)  # fmt: skip
"""The main grid's models (the newer presets run in the new-hardware grid)."""
AUDIT_GPUS: tuple[str, ...] = (
    "a100-80gb-sxm", "v100-sxm2-32gb", "h100-sxm", "h100-pcie", "h200-sxm", "h800-sxm", "h20",
    "b200", "gb200-nvl72", "l40s", "mi300x", "mi325x", "gaudi3",
)  # fmt: skip
"""The main grid's GPUs."""
NEW_HARDWARE_GPUS: tuple[str, ...] = ("b300", "gb300-nvl72", "mi355x")
NEW_MODELS: tuple[str, ...] = (
    "llama4-scout", "llama4-maverick", "qwen3-235b-a22b", "qwen3-30b-a3b", "gpt-oss-120b",
    "gpt-oss-20b", "deepseek-r1", "deepseek-v3.1", "kimi-k2",
)  # fmt: skip
NEW_HARDWARE_SIZES: tuple[int, ...] = (2, 18, 33, 257)
"""Servers (NVL72: trays; 18 trays are one rack) of the new-hardware grid."""
NEW_HARDWARE_WORKLOADS: tuple[str, ...] = (
    "training", "inference-split", "inference-disaggregated",
)  # fmt: skip
RAG_WORKLOAD = "inference-rag"
"""A retrieval pipeline (``rag: {}``) in front of a fleet whose deployment the engine picks."""
RAG_GPUS: tuple[str, ...] = ("h100-sxm", "gb200-nvl72", "l40s", "mi300x")
RAG_SIZES: tuple[int, ...] = (1, 2, 3, 33)
NEW_MODEL_GPUS: tuple[str, ...] = ("h100-sxm", "b200", "mi300x")
NEW_MODEL_SIZES: tuple[int, ...] = (4, 33)
OVERLOADED = "overloaded"
"""The variant of a serving case asked for far more than its fleet serves (``overload_grid``)."""
OVERLOAD_REQUESTS_PER_S_PER_GPU = 20.0
"""The overloaded variant's arrival rate per GPU: above every audited fleet's capacity (Llama 3
8B replicas on H100 serve ~8 requests/s per GPU within the default targets), so every
deployment kind is answered past capacity."""
OVERLOAD_SIZES: tuple[int, ...] = (2, 33)
FP4 = "fp4"
"""The variant of a serving case on NVFP4 weights (``precision: fp4``, :func:`fp4_grid`)."""
FP4_MODELS: tuple[str, ...] = ("llama3-8b", "llama3-70b", "llama3.1-405b", "deepseek-v3")
FP4_SIZES: tuple[int, ...] = (1, 2, 3, 18, 33)
FP4_WORKLOADS: tuple[str, ...] = (
    "inference-replicas", "inference-split", "inference-disaggregated",
)  # fmt: skip
MXFP4 = "mxfp4"
"""The variant of a serving case on MXFP4 experts (``precision: mxfp4``, :func:`mxfp4_grid`)."""
MXFP4_MODELS: tuple[str, ...] = ("gpt-oss-120b", "deepseek-v3")
MXFP4_GPUS: tuple[str, ...] = ("h100-sxm", "h200-sxm", "b200", "gb200-nvl72")
MXFP4_SIZES: tuple[int, ...] = (1, 2, 33)
BF16 = "bf16"
"""The variant of a serving case at 16-bit weights (``precision: bf16``, :func:`bf16_grid`) of a
model published in another format, which the default now serves as it ships, or with a smaller
release the default serves where its 16-bit weights overfill a server."""
BF16_MODELS: tuple[str, ...] = ("deepseek-v3", "gpt-oss-120b", "llama3.1-405b", "llama4-maverick")
VARIANT_SIZES: tuple[int, ...] = (2, 3, 33, 257, 2049)
VARIANT_WORKLOADS: tuple[str, ...] = ("training", "inference-split")
"""Non-default variants run at these sizes and workloads only (the default runs everywhere)."""


@dataclass(frozen=True, order=True)
class AuditCase:
    """One point of the grid."""

    model: str
    gpu: str
    workload: str
    variant: str
    servers: int

    @property
    def series(self) -> tuple[str, str, str, str]:
        """Cases of one series differ only in size (monotonicity is checked along it)."""
        return (self.model, self.gpu, self.workload, self.variant)

    def label(self) -> str:
        return f"{self.model}/{self.gpu}/{self.workload}/{self.variant}/{self.servers}srv"


def grid(catalog: Catalog | None = None) -> list[AuditCase]:
    """The whole grid, ordered so each series is contiguous and sizes ascend."""
    cat = catalog or default_catalog()
    models = [m for m in AUDIT_MODELS if cat.model(m) is not None]
    gpus = [g for g in AUDIT_GPUS if cat.gpu(g) is not None]
    cases = {
        AuditCase(model, gpu, workload, variant, servers)
        for model in models
        for gpu in gpus
        for workload in WORKLOADS
        for variant in VARIANTS
        for servers in sorted(set(SIZES_SERVERS) | set(LADDER_SERVERS))
        if variant == "default"
        or (
            servers in VARIANT_SIZES
            and workload in VARIANT_WORKLOADS
            and (variant != "tight-budget" or workload == "training")
        )
    }
    cases |= set(new_hardware_grid(cat))
    cases |= set(rag_grid(cat))
    cases |= set(overload_grid(cat))
    cases |= set(fp4_grid(cat))
    cases |= set(mxfp4_grid(cat))
    cases |= set(bf16_grid(cat))
    return sorted(cases)


def mxfp4_grid(catalog: Catalog | None = None) -> list[AuditCase]:
    """Serving MoE models on MXFP4 experts (gpt-oss as it ships, and a large MoE) on Hopper,
    whose experts run BF16 activations, and Blackwell, whose run MXFP8: each deployment kind,
    one server to 33."""
    return _series(
        catalog or default_catalog(), MXFP4_MODELS, MXFP4_GPUS, FP4_WORKLOADS, MXFP4, MXFP4_SIZES
    )


def bf16_grid(catalog: Catalog | None = None) -> list[AuditCase]:
    """Models published in FP8 or MXFP4, or with an FP8 release made to fit one server, served
    at BF16 (asked for by name), every serving deployment on Hopper and Blackwell, one server to
    33: the default serves them as they ship or in that release where 16 bits overfill a server
    (``number_format.serving_precision``), so without this variant their 16-bit answers (weights
    twice or four times as large, pools and replicas across servers) would go unaudited."""
    return _series(
        catalog or default_catalog(), BF16_MODELS, MXFP4_GPUS, FP4_WORKLOADS, BF16, MXFP4_SIZES
    )


def fp4_grid(catalog: Catalog | None = None) -> list[AuditCase]:
    """Serving on NVFP4 weights on every GPU with FP4 tensor cores: dense and MoE models, each
    deployment kind, one server to one NVL72 rack and beyond."""
    cat = catalog or default_catalog()
    return sorted(
        AuditCase(model, gpu.id, workload, FP4, servers)
        for model in FP4_MODELS
        if cat.model(model) is not None
        for gpu in cat.gpus
        if gpu.supports("fp4")
        for workload in FP4_WORKLOADS
        for servers in FP4_SIZES
    )


def overload_grid(catalog: Catalog | None = None) -> list[AuditCase]:
    """Every audit model on every GPU, each deployment kind, asked for
    ``OVERLOAD_REQUESTS_PER_S_PER_GPU``: an overloaded fleet says so and serves its capacity
    (a disaggregated prefill pool past its capacity read an unbounded first-token queue while
    serving every request asked, MODEL.md 15.2)."""
    return _series(
        catalog or default_catalog(),
        AUDIT_MODELS,
        AUDIT_GPUS,
        tuple(INFERENCE_DEPLOYMENTS),
        OVERLOADED,
        OVERLOAD_SIZES,
    )


def _series(
    cat: Catalog,
    models: tuple[str, ...],
    gpus: tuple[str, ...],
    workloads: tuple[str, ...],
    variant: str,
    sizes: tuple[int, ...],
) -> list[AuditCase]:
    """Every (model, GPU, workload, size) of the lists under one variant, the catalog's models
    and GPUs only."""
    return sorted(
        AuditCase(model, gpu, workload, variant, servers)
        for model in models
        if cat.model(model) is not None
        for gpu in gpus
        if cat.gpu(gpu) is not None
        for workload in workloads
        for servers in sizes
    )


def rag_grid(catalog: Catalog | None = None) -> list[AuditCase]:
    """Retrieval pipelines: every audit model on four platforms at four sizes."""
    cat = catalog or default_catalog()
    return sorted(
        AuditCase(model, gpu, RAG_WORKLOAD, "default", servers)
        for model in AUDIT_MODELS
        if cat.model(model) is not None
        for gpu in RAG_GPUS
        if cat.gpu(gpu) is not None
        for servers in RAG_SIZES
    )


def new_hardware_grid(catalog: Catalog | None = None) -> list[AuditCase]:
    """The late-2026 platforms with every preset, and the new presets on established GPUs."""
    cat = catalog or default_catalog()
    cases = [
        AuditCase(model, gpu, workload, "default", servers)
        for model in cat.model_ids
        for gpu in NEW_HARDWARE_GPUS
        if cat.gpu(gpu) is not None
        for workload in NEW_HARDWARE_WORKLOADS
        for servers in NEW_HARDWARE_SIZES
    ]
    cases += [
        AuditCase(model, gpu, workload, "default", servers)
        for model in NEW_MODELS
        if cat.model(model) is not None
        for gpu in NEW_MODEL_GPUS
        for workload in ("training", "inference-split")
        for servers in NEW_MODEL_SIZES
    ]
    return sorted(cases)


def scenario_for(case: AuditCase, catalog: Catalog | None = None) -> dict[str, Any]:
    """The scenario v1 dict of a case: whole servers of the GPU's own server size."""
    cat = catalog or default_catalog()
    gpu = cat.gpu(case.gpu)
    if gpu is None:
        raise KeyError(f"unknown GPU {case.gpu!r} in the audit grid")
    per_server = gpu.gpus_per_server
    scenario: dict[str, Any] = {
        "model": case.model,
        "gpu": case.gpu,
        "gpus": case.servers * per_server,
        "gpus_per_node": per_server,
    }
    if case.workload == RAG_WORKLOAD:
        scenario["workload"] = "inference"
        scenario["rag"] = {}
    elif case.workload.startswith("inference"):
        scenario["workload"] = "inference"
        scenario["inference"] = dict(INFERENCE_DEPLOYMENTS[case.workload])
        if case.variant == OVERLOADED:
            scenario["inference"]["requests_per_s"] = (
                OVERLOAD_REQUESTS_PER_S_PER_GPU * scenario["gpus"]
            )
    else:
        scenario["workload"] = case.workload
    if case.variant == FP4:
        scenario["precision"] = "fp4"
    if case.variant == MXFP4:
        scenario["precision"] = "mxfp4"
    if case.variant == BF16:
        scenario["precision"] = "bf16"
    if VARIANTS.get(case.variant):
        scenario["constraints"] = dict(VARIANTS[case.variant])
    if case.variant == "tight-budget":
        scenario["constraints"] = {"network_budget_usd": BUDGET_USD_PER_GPU * scenario["gpus"]}
    return scenario
