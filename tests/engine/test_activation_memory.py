"""Training memory: activations at the model's own widths, the pipeline's in-flight count and
the GPU's capacity in bytes (docs/MODEL.md section 5.2); MLA's recomputed up-projections
(section 6)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.engine.facts.catalog import ModelSpec, default_catalog
from advisor.engine.facts.constants import RECOMPUTE_BYTES_PER_TOKEN_HIDDEN
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model.efficiency import mla_up_projection_flops_per_token, mla_up_projection_s
from advisor.engine.model.memory import (
    _activation_part,
    _held_layer_microbatches,
    _layer_activation_bytes,
    memory_consts,
    training_memory,
)
from advisor.engine.model.stage_time import _stage_split

MIB = 2**20


def _model(model_id: str) -> ModelSpec:
    model = default_catalog().model(model_id)
    assert model is not None
    return model


def test_gpt3_layer_keeps_korthikanti_34_bytes_in_bf16() -> None:
    # Korthikanti et al. 2022, section 4.1: 34 s b h per layer once the s^2 scores are gone
    kept, activation_out = _layer_activation_bytes(_model("gpt3-175b"), "bf16")
    assert kept == pytest.approx(34.0)
    assert activation_out == pytest.approx(8.0)  # the GeLU output: 4 h in bf16


def test_llama_layer_counts_gqa_swiglu_and_fp8_gemm_inputs() -> None:
    llama = _model("llama3.1-405b")
    # 2 + 2 + 2 (Q) + 0.25 (K, V of 8 of 128 heads) + 2 (O) + 2 + 2 + 13 (2 x 3.25 h) + 6.5
    assert _layer_activation_bytes(llama, "bf16") == pytest.approx((31.75, 6.5))
    # the four GEMM inputs as fp8 casts (1 B), the projection's besides the bf16 output
    assert _layer_activation_bytes(llama, "fp8") == pytest.approx((27.5, 3.25))


def test_first_rank_of_an_even_split_matches_narayanan() -> None:
    pp, vp, layers = 8, 4, 12
    held = _held_layer_microbatches(0, layers, pp, vp, microbatches=64)
    assert held == pytest.approx(pp * (1 + (pp - 1) / (pp * vp)) * layers)
    # without interleaving rank r holds pp - r micro-batches, never more than the step has
    assert _held_layer_microbatches(0, layers, pp, 1, microbatches=64) == pp * layers
    assert _held_layer_microbatches(3, layers, pp, 1, microbatches=64) == (pp - 3) * layers
    assert _held_layer_microbatches(0, layers, pp, 1, microbatches=2) == 2 * layers


def test_second_rank_is_fullest_when_the_first_stage_is_lighter() -> None:
    # Llama 3 405B on 16 stages: 7 + 14 x 8 + 7; interleaved by 4 the second rank runs
    # 2 x 14 + 3 x 16 warm-up chunk passes and holds one more, 2 layers each
    first, inner, _ = _stage_split(126, 16) or (0, 0, 0)
    assert (first, inner) == (7, 8)
    rank0 = _held_layer_microbatches(0, first, 16, 4, microbatches=384)
    rank1 = _held_layer_microbatches(1, inner, 16, 4, microbatches=384)
    assert rank1 == pytest.approx(154.0)
    assert rank1 > rank0


def test_capacity_counts_the_vendors_binary_gigabytes() -> None:
    catalog = default_catalog()
    # nvidia-smi totals: 81,559 MiB on an "80 GB" H100, 189,471 MiB on a "186 GB" GB200
    for gpu_id, smi_mib in (("h100-sxm", 81_559), ("gb200-nvl72", 189_471)):
        gpu = catalog.gpu(gpu_id)
        assert gpu is not None
        assert gpu.memory_bytes == pytest.approx(smi_mib * MIB, rel=0.01)
        assert gpu.memory_bytes > gpu.memory_gb * 1e9


def test_training_memory_reports_capacity_in_decimal_gigabytes() -> None:
    scenario = parse_scenario(
        {
            "workload": "training",
            "model": "llama3-8b",
            "gpu": "gb200-nvl72",
            "gpus": 8,
            "sequence_length": 8192,
            "training": {"global_batch_sequences": 64},
        },
        default_catalog(),
    )
    mem = training_memory(scenario, 1, 1, 8, 1, 1, "zero1", "none", 8)
    assert mem.capacity_gb == pytest.approx(186.0 * 2**30 / 1e9)
    assert mem.usable_gb == pytest.approx(0.9 * mem.capacity_gb)


def test_mla_up_projections_are_recomputed_unless_everything_is() -> None:
    gpu = default_catalog().gpu("b200")
    assert gpu is not None
    deepseek = _model("deepseek-v3")
    # q_lora_rank 1536 -> 128 x 192, kv latent 512 -> 128 x 256 (DeepSeek-V3 config.json)
    assert mla_up_projection_flops_per_token(deepseek) == 2.0 * 128 * (192 * 1536 + 256 * 512)
    assert mla_up_projection_s(gpu, "fp8", deepseek, 4096, 1) > 0.0
    # grouped-query attention has no latent up-projection to recompute
    llama = _model("llama3-70b")
    assert mla_up_projection_flops_per_token(llama) == 0.0
    assert mla_up_projection_s(gpu, "fp8", llama, 4096, 1) == 0.0


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    model=st.sampled_from(("llama3-70b", "gpt3-175b", "deepseek-v3", "llama3.1-405b")),
    tp=st.sampled_from((1, 2, 4, 8)),
    pp=st.integers(min_value=1, max_value=128),
    mb=st.sampled_from((1, 2)),
    recompute=st.sampled_from(("none", "selective", "full")),
    microbatches=st.integers(min_value=1, max_value=512),
    cp=st.sampled_from((1, 2, 4)),
    vp=st.sampled_from((1, 2, 3, 4, 8)),
)
def test_the_activation_part_holds_what_each_ranks_warm_up_holds(
    model: str, tp: int, pp: int, mb: int, recompute: str, microbatches: int, cp: int, vp: int
) -> None:
    # _activation_part writes out _held_layer_microbatches of ranks 0, 1 and pp - 1 (the
    # planner asks ~1,000 fits a design): the same bytes, bit for bit, as the function's
    s = parse_scenario(
        {"workload": "training", "model": model, "gpu": "h100-sxm", "gpus": 8 * 128},
        default_catalog(),
    )
    m = s.model
    stages = _stage_split(m.layers, pp, m.mtp_layers)
    if stages is None:
        return
    first, inner, last = stages
    consts = memory_consts(s)
    got = _activation_part(s, tp, pp, mb, recompute, microbatches, cp, vp, stages, consts)
    # the function's own terms, with the ranks' warm-up counts from the function itself
    tokens = s.sequence_length * mb / max(1, cp)
    per_token_hidden, activation_fn = consts[1]
    full = per_token_hidden * tokens * m.hidden / tp
    if recompute == "selective":
        kept = max(
            RECOMPUTE_BYTES_PER_TOKEN_HIDDEN * tokens * m.hidden / tp,
            full - activation_fn * tokens * m.hidden / tp,
        )
    elif recompute == "full":
        kept = RECOMPUTE_BYTES_PER_TOKEN_HIDDEN * tokens * m.hidden / tp
    else:
        kept = full
    if pp > 1:
        second = inner if pp > 2 else last + m.mtp_layers
        held = max(
            _held_layer_microbatches(0, first, pp, vp, microbatches),
            _held_layer_microbatches(1, second, pp, vp, microbatches),
        )
    else:
        held = float(m.layers)
    want = held * kept
    if recompute == "full":
        want += full
    logits = 4.0 * tokens * m.vocab / tp * (1 + m.mtp_layers)
    if pp == 1:
        want += logits
    else:
        final = _held_layer_microbatches(pp - 1, last + m.mtp_layers, pp, vp, microbatches)
        want = max(want, final * kept + logits)
    assert got == want
