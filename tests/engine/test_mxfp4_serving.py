"""mxfp4: an MoE model served as gpt-oss ships it, the routed experts in MXFP4 and the rest in
BF16 (docs/MODEL.md 15.1, "MXFP4 experts")."""

from __future__ import annotations

import pytest

from advisor.engine import ScenarioError, evaluate
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import WEIGHT_BYTES
from advisor.engine.facts.weights import dense_precision, served_weight_bytes
from advisor.engine.model.serving.compute import kv_bytes_per_token, moe_layer_s
from advisor.engine.model.serving.gemm import (
    MOE_KERNEL_FIXED_S,
    MXFP4_EXPERT_KERNELS,
    expert_kernel,
    expert_tile_m,
    inference_gemm,
)
from advisor.engine.model.serving.precision import expert_math_precision

CATALOG = default_catalog()
GPT_OSS = CATALOG.model("gpt-oss-120b")
H100 = CATALOG.gpu("h100-sxm")
B200 = CATALOG.gpu("b200")
GB = 1e9


def _serve(model: str, gpu: str, gpus: int, **extra: object) -> dict:
    raw = {
        "workload": "inference",
        "model": model,
        "gpu": gpu,
        "gpus": gpus,
        "precision": "mxfp4",
        "inference": {"prompt_tokens": 1024, "output_tokens": 1024},
    }
    raw.update(extra)
    return evaluate(raw)


def test_mxfp4_is_four_and_a_quarter_bits_on_the_experts_and_bf16_elsewhere() -> None:
    assert WEIGHT_BYTES["mxfp4"] == 4.25 / 8
    assert dense_precision("mxfp4") == "bf16"
    assert dense_precision("fp4") == "fp4"
    experts = GPT_OSS.expert_params
    rest = GPT_OSS.params - experts
    assert served_weight_bytes(GPT_OSS, "mxfp4") == pytest.approx(experts * 4.25 / 8 + rest * 2.0)
    # the published checkpoint is 60.8 GiB (65.3 GB): it fits one 80 GB GPU
    assert 60 * GB < served_weight_bytes(GPT_OSS, "mxfp4") < 70 * GB
    # an expert-parallel instance's dense part is all BF16
    assert served_weight_bytes(GPT_OSS, "mxfp4", GPT_OSS.dense_params) == pytest.approx(
        served_weight_bytes(GPT_OSS, "bf16", GPT_OSS.dense_params)
    )


def test_the_experts_math_and_kv_cache_follow_the_gpu() -> None:
    assert H100 is not None and B200 is not None
    assert expert_math_precision(B200, "mxfp4") == "fp8"
    assert expert_math_precision(H100, "mxfp4") == "bf16"
    assert expert_math_precision(H100, "fp8") == "fp8"
    # TensorRT-LLM's gpt-oss recipe: an FP8 cache on Blackwell, BF16 ("auto") on Hopper
    assert kv_bytes_per_token(GPT_OSS, "mxfp4", B200) == kv_bytes_per_token(GPT_OSS, "fp8")
    assert kv_bytes_per_token(GPT_OSS, "mxfp4", H100) == kv_bytes_per_token(GPT_OSS, "bf16")
    with pytest.raises(ValueError):
        kv_bytes_per_token(GPT_OSS, "mxfp4")


def test_an_mxfp4_expert_gemm_reads_its_4_bit_weights_at_the_math_rate() -> None:
    assert H100 is not None and B200 is not None
    for gpu, math_precision in ((B200, "fp8"), (H100, "bf16")):
        mx = inference_gemm(gpu, "mxfp4", 5760.0, 2880.0)
        same_math = inference_gemm(gpu, math_precision, 5760.0, 2880.0)
        assert mx.wbytes == 4.25 / 8
        assert mx.flop_rate == same_math.flop_rate
    # Blackwell's MXFP4 x MXFP8 kernels and Hopper's BF16 x MXFP4 Triton kernels have constants
    # of their own (fitted on TensorRT-LLM's tables), Hopper's also tiles of 32 rows
    rate, fixed, _ = expert_kernel(B200, "mxfp4")
    assert (fixed, MXFP4_EXPERT_KERNELS["fp8"][0]) == (18e-6, 18e-6)
    rate_h, fixed_h, _ = expert_kernel(H100, "mxfp4")
    assert fixed_h == MXFP4_EXPERT_KERNELS["bf16"][0] != MOE_KERNEL_FIXED_S
    assert rate_h == 0.425 * expert_kernel(H100, "bf16")[0]  # 0.425 of the 16-bit rate
    assert expert_tile_m(H100, "mxfp4") == 32.0
    assert expert_tile_m(B200, "mxfp4") == expert_tile_m(H100, "bf16") == 0.0
    assert rate > rate_h


# TensorRT-LLM 1.3.0rc20's MXFP4 x MXFP8 fused MoE on B200 (AIConfigurator 0.12.0 moe_perf,
# balanced routing, tp 1, ep 1, gpt-oss-120b's experts: hidden and width 2,880, 128 experts,
# top 4), ms: the constants were fitted on 297 such points (9.7 % mean |error|)
W4A8_POINTS = [(64, 0.274619e-3), (1024, 0.311872e-3), (16384, 1.655397e-3)]


def _experts_as_the_table_times_them(gpu_id: str, model_id: str, tokens: int) -> float:
    """One MoE layer's routed experts over ``tokens`` rows on one GPU (tp 1, ep 1), with the
    element-wise passes a ``moe_perf`` latency includes (the token permutation and the gated
    activation at HBM_EFFICIENCY)."""
    from advisor.engine.facts.constants import HBM_EFFICIENCY
    from advisor.engine.model.efficiency import ELEMENTWISE_FFN_PASSES
    from advisor.engine.model.serving.compute import MOE_PERMUTE_PASSES

    gpu, model = CATALOG.gpu(gpu_id), CATALOG.model(model_id)
    assert gpu is not None and model is not None
    t = moe_layer_s(gpu, "mxfp4", model, float(tokens), 1, 1, model.moe_experts, float(tokens))
    hbm = gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
    k = model.moe_top_k
    permute = 2.0 * tokens * MOE_PERMUTE_PASSES * (1 + k) * model.hidden / hbm
    activation = 2.0 * ELEMENTWISE_FFN_PASSES * tokens * k * model.ffn_hidden / hbm
    return float(t.routed_s + permute + activation)


@pytest.mark.parametrize(("tokens", "measured"), W4A8_POINTS)
def test_gpt_oss_experts_read_the_measured_kernels(tokens: int, measured: float) -> None:
    priced = _experts_as_the_table_times_them("b200", "gpt-oss-120b", tokens)
    assert 0.75 < priced / measured < 1.3


# Hopper's BF16 x MXFP4 Triton MoE on H100 (AIConfigurator 0.12.0 moe_perf, w4a16_mxfp4,
# balanced, tp 1, ep 1, gpt-oss-20b's experts: 2,880 wide, 32 experts, top 4), seconds: the
# Hopper constants were fitted on 81 such points (11.3 % mean |error|) and read these +3 / +10 /
# +9 %; the shared constants read them +38 / -40 / -41 %
W4A16_POINTS = [(64, 0.2257e-3), (1024, 0.5953e-3), (4096, 2.22e-3)]


@pytest.mark.parametrize(("tokens", "measured"), W4A16_POINTS)
def test_gpt_oss_experts_on_hopper_read_the_measured_kernels(tokens: int, measured: float) -> None:
    priced = _experts_as_the_table_times_them("h100-sxm", "gpt-oss-20b", tokens)
    assert 0.8 < priced / measured < 1.25


def test_gpt_oss_fits_one_h100_at_mxfp4_and_not_at_fp8() -> None:
    served = _serve("gpt-oss-120b", "h100-sxm", 1)
    assert served["metrics"]["max_requests_per_s_at_target"] > 0
    with pytest.raises(ScenarioError):
        evaluate(
            {
                "workload": "inference",
                "model": "gpt-oss-120b",
                "gpu": "h100-sxm",
                "gpus": 1,
                "precision": "fp8",
                "inference": {"prompt_tokens": 1024, "output_tokens": 1024},
            }
        )


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ({"model": "llama3-70b", "gpu": "h100-sxm", "gpus": 8}, "has no experts"),
        ({"model": "gpt-oss-120b", "gpu": "v100-sxm2-32gb", "gpus": 8}, "no mxfp4"),
    ],
)
def test_mxfp4_is_refused_where_it_cannot_run(raw: dict, says: str) -> None:
    with pytest.raises(ScenarioError) as refused:
        evaluate({"workload": "inference", "precision": "mxfp4", **raw})
    assert "precision" in refused.value.field_errors
    assert says in " ".join(refused.value.field_errors["precision"])


def test_mxfp4_does_not_train() -> None:
    with pytest.raises(ScenarioError) as refused:
        evaluate(
            {
                "workload": "training",
                "model": "gpt-oss-120b",
                "gpu": "b200",
                "gpus": 8,
                "precision": "mxfp4",
            }
        )
    assert "serving precision" in " ".join(refused.value.field_errors["precision"])


def test_the_answer_says_how_its_experts_run() -> None:
    rows = {row["name"]: row for row in _serve("gpt-oss-120b", "b200", 8)["assumptions"]}
    assert rows["MXFP4 experts"]["value"] == "MXFP8 activations"
    assert rows["peak"]["value"] == 4500.0 and "fp8 (mxfp4 experts)" in rows["peak"]["unit"]
    rows = {row["name"]: row for row in _serve("gpt-oss-120b", "h100-sxm", 8)["assumptions"]}
    assert rows["MXFP4 experts"]["value"] == "bf16 activations"
    assert "bf16 (mxfp4 experts)" in rows["peak"]["unit"]
