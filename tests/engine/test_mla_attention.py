"""Multi-head latent attention as trained: score and context widths of the heads, not 4 h."""

from __future__ import annotations

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.model.efficiency import (
    MLA_HEAD_DIM,
    MLA_ROPE_DIM,
    attention_flops_per_query_key,
    kernel_fixed_s,
    latent_attention,
    layer_forward,
)
from tests.support import catalog


def test_deepseek_v3_attention_executes_its_192_wide_scores_and_128_wide_values() -> None:
    m = catalog.model("deepseek-v3")
    assert latent_attention(m)
    # DeepSeek-V3 report section 4.2: 128 heads, d_h 128, d_h^R 64
    assert attention_flops_per_query_key(m) == 2.0 * 128 * (128 + 64 + 128)
    assert (MLA_HEAD_DIM, MLA_ROPE_DIM) == (128, 64)
    assert attention_flops_per_query_key(m) / (4.0 * m.hidden) == pytest.approx(81920 / 28672)


def test_grouped_query_attention_keeps_four_h() -> None:
    m = catalog.model("llama3-70b")
    assert not latent_attention(m)
    assert attention_flops_per_query_key(m) == 4.0 * m.heads * m.head_dim


def test_mla_attention_time_grows_with_its_width_model_flops_keep_megatrons_convention() -> None:
    from dataclasses import replace

    m = catalog.model("deepseek-v3")
    gqa = replace(m, kv_dim_per_layer=2 * m.kv_heads * m.head_dim)  # same shape, no MLA
    gpu = default_catalog().gpu("b200")
    assert gpu is not None
    mla_lc = layer_forward(gpu, "fp8", m, 4096, 4096, 1, 8)
    gqa_lc = layer_forward(gpu, "fp8", gqa, 4096, 4096, 1, 8)
    # the attention kernels run 2.86x the FLOPs of 4 s h (beside each kernel's fixed time) ...
    t0 = kernel_fixed_s(gpu, 1)
    assert (mla_lc.attention_s - t0) / (gqa_lc.attention_s - t0) == pytest.approx(81920 / 28672)
    # ... while the model FLOPs keep counting 4 s h (forward_flops_per_token's convention)
    assert mla_lc.model_flops == pytest.approx(gqa_lc.model_flops)
