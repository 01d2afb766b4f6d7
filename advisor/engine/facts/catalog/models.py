"""Model presets (architecture figures from the publishers' model cards and papers)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class ModelSpec:
    """A transformer's shape.  ``params_b`` and ``active_params_b`` are billions of parameters.

    ``kv_dim_per_layer`` is the number of cached elements per token per layer
    (``2 * kv_heads * head_dim`` for multi-head / grouped-query attention; 576 for
    DeepSeek's multi-head latent attention).  ``moe_ffn_hidden`` is one expert's width.
    """

    id: str
    name: str
    params_b: float
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    vocab: int
    ffn_hidden: int
    moe_experts: int = 0
    moe_top_k: int = 0
    moe_layers: int = 0
    active_params_b: float = 0.0
    kv_dim_per_layer: int = 0
    tied_embeddings: bool = False
    source: str = ""

    @property
    def is_moe(self) -> bool:
        return self.moe_experts > 1 and self.moe_top_k > 0

    @property
    def head_dim(self) -> int:
        return max(1, self.hidden // self.heads)

    @property
    def params(self) -> float:
        return self.params_b * 1e9

    @property
    def active_params(self) -> float:
        return (self.active_params_b or self.params_b) * 1e9

    @property
    def embedding_params(self) -> float:
        """Input embedding (and, when untied, the output head) parameters."""
        return float(self.vocab * self.hidden * (1 if self.tied_embeddings else 2))

    @property
    def expert_params(self) -> float:
        """Parameters held in routed experts (0 for dense models)."""
        if not self.is_moe:
            return 0.0
        active_expert_share = self.params - self.active_params
        # total - active = expert_params * (1 - top_k / experts)
        frac_inactive = 1.0 - self.moe_top_k / self.moe_experts
        return max(0.0, active_expert_share / frac_inactive) if frac_inactive > 0 else 0.0

    @property
    def dense_params(self) -> float:
        """Parameters that are not routed experts (attention, dense FFN, embeddings)."""
        return max(0.0, self.params - self.expert_params)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["active_params_b"] = self.active_params / 1e9
        return d

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ModelSpec:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in names})


def with_derived_defaults(m: ModelSpec) -> ModelSpec:
    """Fill ``kv_dim_per_layer``, ``ffn_hidden``, ``moe_layers`` and ``active_params_b``."""
    kv_dim = m.kv_dim_per_layer or 2 * m.kv_heads * m.head_dim
    ffn = m.ffn_hidden or 4 * m.hidden
    moe_layers = m.moe_layers or (m.layers if m.is_moe else 0)
    active_b = m.active_params_b
    if not active_b:
        active_b = estimate_active_params(m, kv_dim) / 1e9 if m.is_moe else m.params_b
    return replace(
        m, kv_dim_per_layer=kv_dim, ffn_hidden=ffn, moe_layers=moe_layers, active_params_b=active_b
    )


def estimate_active_params(m: ModelSpec, kv_dim: int) -> float:
    """Active parameters of a custom MoE model: everything except the unused experts.

    Non-expert parameters are attention (Q and O: 2 h^2; K and V: h * kv_dim) per layer and
    the embeddings; the rest of ``params_b`` is experts, of which top_k / experts are active.
    """
    attention = m.layers * (2.0 * m.hidden * m.hidden + m.hidden * kv_dim)
    embeddings = float(m.vocab * m.hidden * (1 if m.tied_embeddings else 2))
    non_expert = min(m.params, attention + embeddings)
    experts = m.params - non_expert
    return non_expert + experts * m.moe_top_k / m.moe_experts


_META_L3 = "Meta Llama 3 model card and 'The Llama 3 Herd of Models' arXiv 2407.21783 Table 3"

MODELS: tuple[ModelSpec, ...] = tuple(
    with_derived_defaults(m)
    for m in (
        ModelSpec(
            id="llama3-8b",
            name="Llama 3 8B",
            params_b=8.03,
            layers=32,
            hidden=4096,
            heads=32,
            kv_heads=8,
            vocab=128256,
            ffn_hidden=14336,
            source=_META_L3,
        ),
        ModelSpec(
            id="llama3-70b",
            name="Llama 3 70B",
            params_b=70.6,
            layers=80,
            hidden=8192,
            heads=64,
            kv_heads=8,
            vocab=128256,
            ffn_hidden=28672,
            source=_META_L3,
        ),
        ModelSpec(
            id="llama3.1-405b",
            name="Llama 3.1 405B",
            params_b=405.0,
            layers=126,
            hidden=16384,
            heads=128,
            kv_heads=8,
            vocab=128256,
            ffn_hidden=53248,
            source=_META_L3,
        ),
        ModelSpec(
            id="mixtral-8x7b",
            name="Mixtral 8x7B",
            params_b=46.7,
            layers=32,
            hidden=4096,
            heads=32,
            kv_heads=8,
            vocab=32000,
            ffn_hidden=14336,
            moe_experts=8,
            moe_top_k=2,
            active_params_b=12.9,
            source="Mistral AI, 'Mixtral of Experts' arXiv 2401.04088",
        ),
        ModelSpec(
            id="deepseek-v3",
            name="DeepSeek-V3",
            params_b=671.0,
            layers=61,
            hidden=7168,
            heads=128,
            kv_heads=128,
            vocab=129280,
            ffn_hidden=2048,
            moe_experts=256,
            moe_top_k=8,
            moe_layers=58,
            active_params_b=37.0,
            kv_dim_per_layer=576,
            source="DeepSeek-V3 technical report arXiv 2412.19437 (MLA KV 512+64, 1 shared + "
            "256 routed experts, top-8, first 3 layers dense)",
        ),
        ModelSpec(
            id="gpt3-175b",
            name="GPT-3 175B",
            params_b=175.0,
            layers=96,
            hidden=12288,
            heads=96,
            kv_heads=96,
            vocab=50257,
            ffn_hidden=49152,
            tied_embeddings=True,
            source="Brown et al., 'Language Models are Few-Shot Learners' arXiv 2005.14165 "
            "Table 2.1",
        ),
    )
)

MODEL_IDS: tuple[str, ...] = tuple(m.id for m in MODELS)
