"""Model presets (architecture figures from the publishers' model cards and papers)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from advisor.engine.facts.catalog.value_hash import cached_value_hash, state_without_value_hash


@dataclass(frozen=True)
class ModelSpec:
    """A transformer's shape.  ``params_b`` and ``active_params_b`` are billions of parameters.

    ``kv_dim_per_layer`` is the number of cached elements per token per layer
    (``2 * kv_heads * head_dim`` for multi-head / grouped-query attention; 576 for
    DeepSeek's multi-head latent attention).  ``attention_head_dim`` is the publisher's
    ``head_dim`` where it is not ``hidden / heads`` (Qwen3: 128 on a 2,048 or 4,096 hidden size;
    gpt-oss: 64 on 2,880); 0 means ``hidden / heads``.  ``moe_ffn_hidden`` is one expert's width.
    ``mtp_layers`` counts the multi-token-prediction modules trained with the model (DeepSeek-V3
    report section 2.2: one, D = 1; ``num_nextn_predict_layers`` in its config.json): each is
    one more transformer layer, a 2h -> h projection and a second pass of the shared output
    head, run on the last pipeline stage in training (docs/MODEL.md section 5.1).
    ``attention_chunk`` > 0 is chunked local attention on ``chunked_attention_layers`` of the
    layers (Llama 4: 36 of 48, chunks of 8,192 tokens; every fourth layer attends the whole
    sequence): a token there attends only the earlier tokens of its own chunk.
    ``sliding_window`` > 0 is sliding-window attention on ``sliding_window_layers`` of the layers
    (gpt-oss: 18 of 36 and 12 of 24, windows of 128 tokens, alternating with full attention): a
    token there attends at most the ``sliding_window`` tokens before it.  Both spans:
    :mod:`advisor.engine.model.attention_span`.
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
    mtp_layers: int = 0
    attention_head_dim: int = 0
    attention_chunk: int = 0
    chunked_attention_layers: int = 0
    sliding_window: int = 0
    sliding_window_layers: int = 0
    checkpoint_precision: str = ""
    """The number format of the publisher's own weights where they are not 16-bit: ``fp8``
    (DeepSeek-V3 / R1 / V3.1 and Kimi K2, block-scaled FP8) or ``mxfp4`` (gpt-oss's routed
    experts); "" for BF16 weights. A serving scenario that names no precision serves the model
    as it ships where the GPU runs that format (``number_format.serving_precision``)."""
    checkpoint_source: str = ""
    """Where the publisher says the weights' number format (``checkpoint_precision``)."""
    compact_release: str = ""
    """A smaller number format the publisher also releases the model in, made to fit less
    hardware than its 16-bit weights: ``fp8`` for Llama 3.1 405B and Llama 4 Maverick (Meta's
    FP8 releases, "to run within a single server node" / "fit on a single H100 DGX host") and
    Qwen3's FP8 releases; "" for none.  A serving scenario that names no precision serves it
    where the 16-bit weights overfill one scale-up domain and this release's weights do not
    (``number_format.serving_precision``)."""
    compact_release_source: str = ""
    """Where the publisher releases ``compact_release``."""

    # the value hash, computed once per object; the function itself, one call per hash
    __hash__ = cached_value_hash

    def __getstate__(self) -> dict[str, Any]:
        return state_without_value_hash(self)

    @property
    def is_moe(self) -> bool:
        return self.moe_experts > 1 and self.moe_top_k > 0

    @property
    def head_dim(self) -> int:
        """Width of one attention head: the publisher's ``head_dim`` where it is given
        (``attention_head_dim``), otherwise ``hidden / heads``."""
        return self.attention_head_dim or max(1, self.hidden // self.heads)

    @property
    def q_dim(self) -> int:
        """Width of the query and attention output (``heads x head_dim``): the query
        projection's N and the output projection's K; ``hidden`` for most models."""
        return self.heads * self.head_dim

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

    Non-expert parameters are attention (Q and O: 2 h q_dim; K and V: h * kv_dim) per layer and
    the embeddings; the rest of ``params_b`` is experts, of which top_k / experts are active.
    """
    attention = m.layers * (2.0 * m.hidden * m.q_dim + m.hidden * kv_dim)
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
            compact_release="fp8",
            compact_release_source=(
                "Meta, 'Introducing Llama 3.1' (2024-07-23): 'we quantized our models from 16-bit "
                "(BF16) to 8-bit (FP8) numerics, effectively lowering the compute requirements "
                "needed and allowing the model to run within a single server node' "
                "(meta-llama/Llama-3.1-405B-Instruct-FP8)"
            ),
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
            mtp_layers=1,
            source="DeepSeek-V3 technical report arXiv 2412.19437 (MLA KV 512+64, 1 shared + "
            "256 routed experts, top-8, first 3 layers dense)",
            checkpoint_precision="fp8",
            checkpoint_source=(
                "deepseek-ai/DeepSeek-V3 README: 'Since FP8 training is natively adopted in our "
                "framework, we only provide FP8 weights'; config.json quantization_config "
                "quant_method fp8, weight_block_size [128, 128]"
            ),
        ),
        ModelSpec(
            id="llama4-scout",
            name="Llama 4 Scout (17B active, 16 experts)",
            params_b=109.0,
            layers=48,
            hidden=5120,
            heads=40,
            kv_heads=8,
            vocab=202048,
            ffn_hidden=8192,
            moe_experts=16,
            moe_top_k=1,
            moe_layers=48,
            active_params_b=17.0,
            attention_chunk=8192,
            chunked_attention_layers=36,
            source="meta-llama/Llama-4-Scout-17B-16E config.json (hidden 5120, 48 layers, 40 "
            "heads / 8 KV, 16 routed experts top-1 + 1 shared, expert FFN 8192, vocab 202,048, "
            "MoE in every layer, attention_chunk_size 8,192); Meta Llama 4 model card (109B total, "
            "17B active); transformers Llama4TextConfig: no_rope_layer_interval 4 (a NoPE layer "
            "attending the whole sequence every fourth layer), chunked attention on the 36 "
            "RoPE layers",
        ),
        ModelSpec(
            id="llama4-maverick",
            name="Llama 4 Maverick (17B active, 128 experts)",
            params_b=400.0,
            layers=48,
            hidden=5120,
            heads=40,
            kv_heads=8,
            vocab=202048,
            ffn_hidden=8192,
            moe_experts=128,
            moe_top_k=1,
            moe_layers=24,
            active_params_b=17.0,
            attention_chunk=8192,
            chunked_attention_layers=36,
            source="meta-llama/Llama-4-Maverick-17B-128E config.json (hidden 5120, 48 layers, "
            "40 heads / 8 KV, 128 routed experts top-1 + 1 shared, expert FFN 8192, dense FFN "
            "16,384, interleave_moe_layer_step 2 = 24 MoE layers, attention_chunk_size 8,192); "
            "Meta Llama 4 model card (400B total, 17B active); transformers Llama4TextConfig: "
            "no_rope_layer_interval 4 (a NoPE layer attending the whole sequence every fourth "
            "layer), chunked attention on the 36 RoPE layers",
            compact_release="fp8",
            compact_release_source=(
                "Meta Llama 4 model card: 'the Llama 4 Maverick model is released as both BF16 "
                "and FP8 quantized weights. The FP8 quantized weights fit on a single H100 DGX "
                "host while still maintaining quality' "
                "(meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8)"
            ),
        ),
        ModelSpec(
            id="qwen3-235b-a22b",
            name="Qwen3-235B-A22B",
            params_b=235.0,
            layers=94,
            hidden=4096,
            heads=64,
            kv_heads=4,
            vocab=151936,
            ffn_hidden=1536,
            moe_experts=128,
            moe_top_k=8,
            moe_layers=94,
            active_params_b=22.0,
            kv_dim_per_layer=1024,
            attention_head_dim=128,
            source="Qwen/Qwen3-235B-A22B config.json (hidden 4096, 94 layers, 64 heads / 4 KV, "
            "head_dim 128, 128 experts top-8, moe_intermediate_size 1536, vocab 151,936); Qwen3 "
            "technical report arXiv 2505.09388 (235B total, 22B active)",
            compact_release="fp8",
            compact_release_source=(
                "Qwen/Qwen3-235B-A22B-FP8, Qwen's own FP8 release (fine-grained FP8, block size "
                "128)"
            ),
        ),
        ModelSpec(
            id="qwen3-30b-a3b",
            name="Qwen3-30B-A3B",
            params_b=30.5,
            layers=48,
            hidden=2048,
            heads=32,
            kv_heads=4,
            vocab=151936,
            ffn_hidden=768,
            moe_experts=128,
            moe_top_k=8,
            moe_layers=48,
            active_params_b=3.3,
            kv_dim_per_layer=1024,
            attention_head_dim=128,
            source="Qwen/Qwen3-30B-A3B config.json (hidden 2048, 48 layers, 32 heads / 4 KV, "
            "head_dim 128, 128 experts top-8, moe_intermediate_size 768, vocab 151,936); Qwen3 "
            "technical report arXiv 2505.09388 (30.5B total, 3.3B active)",
            compact_release="fp8",
            compact_release_source=(
                "Qwen/Qwen3-30B-A3B-FP8, Qwen's own FP8 release (fine-grained FP8, block size 128)"
            ),
        ),
        ModelSpec(
            id="gpt-oss-120b",
            name="gpt-oss-120b",
            params_b=116.8,
            layers=36,
            hidden=2880,
            heads=64,
            kv_heads=8,
            vocab=201088,
            ffn_hidden=2880,
            moe_experts=128,
            moe_top_k=4,
            moe_layers=36,
            active_params_b=5.1,
            kv_dim_per_layer=1024,
            attention_head_dim=64,
            sliding_window=128,
            sliding_window_layers=18,
            source="openai/gpt-oss-120b config.json (hidden 2880, 36 layers, 64 heads / 8 KV, "
            "head_dim 64, 128 experts top-4, intermediate 2880, vocab 201,088, sliding_window "
            "128, layer_types sliding / full alternating: 18 sliding-window layers); OpenAI "
            "gpt-oss model card (116.8B total, 5.1B active; attention alternating banded windows "
            "of 128 tokens and full dense)",
            checkpoint_precision="mxfp4",
            checkpoint_source=(
                "openai/gpt-oss-120b config.json quantization_config (quant_method mxfp4, routed "
                "experts; attention, router, embedding and lm_head in modules_to_not_convert)"
            ),
        ),
        ModelSpec(
            id="gpt-oss-20b",
            name="gpt-oss-20b",
            params_b=20.9,
            layers=24,
            hidden=2880,
            heads=64,
            kv_heads=8,
            vocab=201088,
            ffn_hidden=2880,
            moe_experts=32,
            moe_top_k=4,
            moe_layers=24,
            active_params_b=3.6,
            kv_dim_per_layer=1024,
            attention_head_dim=64,
            sliding_window=128,
            sliding_window_layers=12,
            source="openai/gpt-oss-20b config.json (hidden 2880, 24 layers, 64 heads / 8 KV, "
            "head_dim 64, 32 experts top-4, intermediate 2880, vocab 201,088, sliding_window "
            "128, layer_types sliding / full alternating: 12 sliding-window layers); OpenAI "
            "gpt-oss model card (20.9B total, 3.6B active; attention alternating banded windows "
            "of 128 tokens and full dense)",
            checkpoint_precision="mxfp4",
            checkpoint_source=(
                "openai/gpt-oss-20b config.json quantization_config (quant_method mxfp4, routed "
                "experts; attention, router, embedding and lm_head in modules_to_not_convert)"
            ),
        ),
        ModelSpec(
            id="deepseek-r1",
            name="DeepSeek-R1",
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
            mtp_layers=1,
            source="deepseek-ai/DeepSeek-R1 config.json (the DeepSeek-V3 architecture: MLA KV "
            "512+64, 1 shared + 256 routed experts, top-8, first 3 layers dense); arXiv "
            "2501.12948",
            checkpoint_precision="fp8",
            checkpoint_source=(
                "deepseek-ai/DeepSeek-R1 config.json quantization_config (quant_method fp8, "
                "weight_block_size [128, 128]), the DeepSeek-V3 base's FP8 weights"
            ),
        ),
        ModelSpec(
            id="deepseek-v3.1",
            name="DeepSeek-V3.1",
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
            mtp_layers=1,
            source="deepseek-ai/DeepSeek-V3.1 config.json (same architecture as DeepSeek-V3: "
            "61 layers, hidden 7168, MLA KV 512+64, 256 routed experts top-8 + 1 shared, first "
            "3 layers dense, vocab 129,280)",
            checkpoint_precision="fp8",
            checkpoint_source=(
                "deepseek-ai/DeepSeek-V3.1 config.json quantization_config (quant_method fp8, "
                "weight_block_size [128, 128], UE8M0 scales)"
            ),
        ),
        ModelSpec(
            id="kimi-k2",
            name="Kimi K2 (1T, 32B active)",
            params_b=1000.0,
            layers=61,
            hidden=7168,
            heads=64,
            kv_heads=64,
            vocab=163840,
            ffn_hidden=2048,
            moe_experts=384,
            moe_top_k=8,
            moe_layers=60,
            active_params_b=32.0,
            kv_dim_per_layer=576,
            source="moonshotai/Kimi-K2-Instruct config.json (DeepSeek-V3 architecture: 61 "
            "layers, hidden 7168, 64 heads, MLA kv_lora_rank 512 + rope 64, 384 routed experts "
            "top-8 + 1 shared, moe_intermediate_size 2048, first layer dense, vocab 163,840); "
            "Kimi K2 model card (1T total, 32B active)",
            checkpoint_precision="fp8",
            checkpoint_source=(
                "moonshotai/Kimi-K2-Instruct README: 'Our model checkpoints are stored in the "
                "block-fp8 format'; vLLM's Kimi-K2 recipe runs it 'with native FP8'"
            ),
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
