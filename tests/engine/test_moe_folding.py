"""MoE parallel folding: with expert parallelism the routed experts are not tensor-parallel
(Megatron-Core ``expert_tensor_parallel_size = 1``), so expert parallelism folds over the
tensor-, data- and context-parallel ranks (docs/MODEL.md 17.1, "MoE parallel folding")."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from advisor.engine import ScenarioError, evaluate
from advisor.engine.facts.catalog import GpuSpec, ModelSpec, default_catalog
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model.efficiency import layer_forward
from advisor.engine.model.memory import training_memory
from advisor.engine.model.placement import expert_dp_size, expert_tp, training_communicators
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.stage_time import tp_collectives_per_stage

CATALOG = default_catalog()


def _model(model_id: str) -> ModelSpec:
    m = CATALOG.model(model_id)
    assert m is not None
    return m


def _gpu(gpu_id: str) -> GpuSpec:
    g = CATALOG.gpu(gpu_id)
    assert g is not None
    return g


QWEN3_235B_H100: dict[str, Any] = {
    # NeMo's own job: Megatron-Bridge QWEN3_235B_A22B_PRETRAIN_CONFIG_H100_FP8_CS_V2 at 21d102f5e
    # (expert_tensor_parallel_size 1, TP2 PP8 VP4 EP32, GBS 8192, a2a overlap, alltoall)
    "workload": "training",
    "model": "qwen3-235b-a22b",
    "gpu": "h100-sxm",
    "gpus": 256,
    "gpus_per_node": 8,
    "precision": "fp8",
    "sequence_length": 4096,
    "training": {"global_batch_sequences": 8192},
    "parallelism": {
        "tp": 2,
        "pp": 8,
        "ep": 32,
        "virtual_stages": 4,
        "micro_batch": 1,
        "moe_dispatcher": "alltoall",
        "ep_overlap": "a2a_1f1b",
        "tp_comm_overlap": False,
    },
}


def test_nemos_qwen3_235b_plan_with_ep_over_tp_and_dp_is_answered() -> None:
    """EP32 with TP2 on 256 GPUs (dp 16): ep does not divide dp x cp (16) but does divide
    tp x dp x cp (32); the engine refused it ("must divide dp x cp (16)")."""
    s = parse_scenario(QWEN3_235B_H100, CATALOG)
    w = plan_workload(s)
    assert (w.plan.tp, w.plan.pp, w.plan.dp, w.plan.ep) == (2, 8, 16, 32)
    t = w.training
    assert t is not None
    # the all-to-all group: 32 consecutive ranks (4 servers); expert DP: tp x dp / ep = 1
    assert (t.ep_layout.size, t.ep_layout.nodes) == (32, 4)
    assert t.expert_dp_layout.size == 1
    result = evaluate(QWEN3_235B_H100)
    assert result["metrics"]["step_time_s"] > 0
    assert result["workload"]["plan"]["ep"] == 32


def test_ep_that_divides_no_fold_is_refused_naming_the_rule() -> None:
    raw = {**QWEN3_235B_H100, "parallelism": {**QWEN3_235B_H100["parallelism"], "ep": 64}}
    with pytest.raises(ScenarioError) as err:
        plan_workload(parse_scenario(raw, CATALOG))
    assert "parallelism.ep" in str(err.value)
    assert "must divide tp x dp x cp (32)" in str(err.value)


@settings(max_examples=60, deadline=None)
@given(
    tp=st.sampled_from([1, 2, 4, 8]),
    cp=st.sampled_from([1, 2]),
    dp=st.integers(min_value=1, max_value=64),
    ep=st.sampled_from([1, 2, 4, 8, 16, 32, 64]),
)
def test_expert_groups_tile_the_stage(tp: int, cp: int, dp: int, ep: int) -> None:
    """ep x expert TP x expert DP covers a stage's tp x cp x dp ranks exactly whenever ep
    divides them, and with TP1 the groups are the ones before folding (dp x cp / ep ranks at
    stride ep; EP consecutive)."""
    assume((tp * cp * dp) % ep == 0)
    etp = expert_tp(tp, ep)
    edp = expert_dp_size(tp, dp * cp, ep)
    assert ep * etp * edp == tp * cp * dp
    comms = training_communicators(tp, cp, dp, ep, 2)
    assert (comms["ep"].size, comms["edp"].size) == (ep, edp)
    assert comms["edp"].stride == ep * etp
    if tp == 1:
        assert edp == max(1, dp * cp // ep) and comms["ep"].stride == 1


def test_a_moe_layer_keeps_only_the_attentions_tp_collectives_when_experts_fold() -> None:
    m = _model("qwen3-235b-a22b")
    layers = 12
    assert tp_collectives_per_stage(m, 1, 32, "none", layers) == 0
    assert tp_collectives_per_stage(m, 2, 1, "none", layers) == 4 * layers
    # every Qwen3 235B layer is MoE: 2 forward + 2 backward minus the MLP's pair
    assert tp_collectives_per_stage(m, 2, 32, "none", layers) == 2 * layers
    assert tp_collectives_per_stage(m, 2, 32, "full", layers) == 3 * layers
    dense = _model("llama3-70b")
    assert tp_collectives_per_stage(dense, 2, 1, "full", layers) == 6 * layers


def test_folded_experts_run_whole_on_a_ranks_own_tokens() -> None:
    """TP2 with EP32: each rank routes its own half of the micro-batch's tokens to whole
    experts, so its routed GEMMs are those of TP1 over half the tokens (the experts' backward
    beyond the plain factor depends on the routed shapes only); without EP the experts split
    over tp, the TP group's tokens on half-width experts."""
    gpu = _gpu("h100-sxm")
    m = _model("qwen3-235b-a22b")
    folded = layer_forward(gpu, "bf16", m, 8192, 4096, 2, 32)
    unsplit = layer_forward(gpu, "bf16", m, 4096, 4096, 1, 32)
    assert folded.backward_gemm_extra_s == pytest.approx(unsplit.backward_gemm_extra_s, rel=1e-12)
    split = layer_forward(gpu, "bf16", m, 8192, 4096, 2, 1)
    whole = layer_forward(gpu, "bf16", m, 8192, 4096, 1, 1)
    assert split.backward_gemm_extra_s < whole.backward_gemm_extra_s


def test_experts_without_ep_are_split_over_tp_in_memory() -> None:
    raw = {
        "workload": "training",
        "model": "mixtral-8x7b",
        "gpu": "h100-sxm",
        "gpus": 16,
        "precision": "bf16",
        "sequence_length": 4096,
        "training": {"global_batch_sequences": 256},
    }
    s = parse_scenario(raw, CATALOG)
    tp1 = training_memory(s, 1, 1, 16, 1, 1, "zero1", "full", 16)
    tp2 = training_memory(s, 2, 1, 8, 1, 1, "zero1", "full", 32)
    # weights per GPU: TP2 holds half of every parameter, experts included
    assert tp2.weights_gb == pytest.approx(tp1.weights_gb / 2, rel=0.01)
