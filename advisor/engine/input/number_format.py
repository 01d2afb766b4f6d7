"""The number format a serving scenario runs when it names none, and the remedy a refusal names
when a served model does not fit (docs/MODEL.md 15.1, "The number format of a served model"
and "The publisher's smaller release")."""

from __future__ import annotations

from advisor.engine.facts.catalog import GpuSpec, ModelSpec
from advisor.engine.facts.constants import DENSE_PRECISION, WEIGHT_BYTES
from advisor.engine.facts.weights import served_weight_bytes


def serving_precision(
    model: ModelSpec | None, gpu: GpuSpec | None, gpus: int | None, gpus_per_node: int | None
) -> str | None:
    """The number format a serving scenario that names none runs, where the GPU runs it; ``None``
    otherwise (16-bit):

    - the model as its publisher ships it (``ModelSpec.checkpoint_precision``: DeepSeek-V3 / R1
      and Kimi K2 in FP8, gpt-oss's experts in MXFP4). Served at BF16 instead, DeepSeek-R1's
      1.3 TB spanned servers by pipeline stages on B200 and bought an InfiniBand fabric its FP8
      weights, in one server, do not need;
    - the publisher's smaller release (``ModelSpec.compact_release``: Meta's FP8 Llama 3.1 405B
      and Llama 4 Maverick, Qwen3's FP8) where the 16-bit weights overfill one scale-up domain of
      the job and that release's weights do not: Maverick's 800 GB on 8 x H100 (616 GB usable)
      was refused, and Llama 3.1 405B on 32 H100 split its replicas over servers and bought an
      InfiniBand fabric; their FP8 releases fit one server (Meta: "a single H100 DGX host").
    """
    if model is None or gpu is None:
        return None
    if model.checkpoint_precision:
        return model.checkpoint_precision if gpu.supports(model.checkpoint_precision) else None
    release = model.compact_release
    if not release or not gpu.supports(release) or not gpus or not gpus_per_node:
        return None
    room = gpu.usable_bytes * gpu.job_domain_gpus(gpus, gpus_per_node)
    if served_weight_bytes(model, "bf16") > room >= served_weight_bytes(model, release):
        return release
    return None


SIXTEEN_BIT: frozenset[str] = frozenset({"bf16", "fp16"})
"""The 16-bit formats a publisher's smaller release stands beside."""


def smaller_release(model: ModelSpec, gpu: GpuSpec, precision: str) -> str | None:
    """The publisher's smaller release (``ModelSpec.compact_release``) a scenario running
    ``precision`` could serve instead: the scenario runs 16 bits and the GPU runs the release's
    format; ``None`` otherwise. The remedy a serving answer that falls short names beside more
    servers (``decision.release``, docs/MODEL.md 15.2) and a refusal names where it fits
    (:func:`fit_remedy`)."""
    release = model.compact_release
    if release and precision in SIXTEEN_BIT and gpu.supports(release):
        return release
    return None


def fit_remedy(
    model: ModelSpec,
    gpu: GpuSpec,
    gpus: int,
    gpus_per_node: int,
    precision: str,
    grow: str = "add GPUs",
) -> str:
    """The remedy a refusal names when a served model does not fit: ``grow`` (what gives a
    replica more GPUs: "add GPUs", or "let a replica span servers" where one server bounds it)
    or a smaller precision, or the publisher's smaller release where it fits one scale-up
    domain and the scenario runs 16 bits (:func:`smaller_release`, :func:`serving_precision`)."""
    release = smaller_release(model, gpu, precision)
    if release and serving_precision(model, gpu, gpus, gpus_per_node) == release:
        return (
            f"{grow}, or serve the publisher's {release} release, which fits one server: "
            f"precision {release}"
        )
    return f"{grow} or use a smaller precision"


def smaller_serving_precision(model: ModelSpec, gpu: GpuSpec, precision: str) -> str | None:
    """The largest number format with fewer weight bytes than ``precision`` that a served
    ``model`` runs on ``gpu``, by the scenario parser's rules (the GPU's tensor cores run it; a
    format of the routed experts alone, mxfp4, needs an MoE model); ``None`` where none is
    smaller (fp8 on an L40S, which has no fp4).  What a serving shortfall that no load meets
    names beside a faster GPU (``decision.prose``)."""
    smaller = [
        p
        for p in WEIGHT_BYTES
        if WEIGHT_BYTES[p] < WEIGHT_BYTES[precision]
        and gpu.supports(p)
        and (model.is_moe or p not in DENSE_PRECISION)
    ]
    return max(smaller, key=lambda p: WEIGHT_BYTES[p]) if smaller else None
