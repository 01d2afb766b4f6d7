"""FP8 parameter all-gather (``parallelism.fp8_param_gather``, docs/MODEL.md 5.4): the
distributed optimizer gathers the FP8 bytes of every linear layer's weight, the embeddings and
output layer in bf16; the gradients are reduced as before."""

from __future__ import annotations

import pytest

from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model.performance import evaluate_design
from advisor.engine.model.planner import plan_workload


def _raw(fp8_param_gather: bool | None, precision: str = "fp8") -> dict[str, object]:
    parallelism: dict[str, object] = {"tp": 1, "pp": 1, "cp": 1, "dp": 256, "micro_batch": 1}
    parallelism["zero"] = 1
    if fp8_param_gather is not None:
        parallelism["fp8_param_gather"] = fp8_param_gather
    return {
        "workload": "training",
        "model": "llama3-8b",
        "gpu": "b200",
        "gpus": 256,
        "gpus_per_node": 8,
        "precision": precision,
        "sequence_length": 4096,
        "training": {"global_batch_sequences": 256},
        "parallelism": parallelism,
        "design": {"fabric": "infiniband", "nic_gbps": 400, "nics_per_node": 8},
    }


def _ops(fp8_param_gather: bool | None) -> tuple[dict[str, tuple[float, int]], float]:
    """The plan's data-parallel collectives (bytes, count by kind) and the model's share of
    embedding and output-layer weights."""
    s = parse_scenario(_raw(fp8_param_gather), default_catalog())
    t = plan_workload(s).training
    assert t is not None
    share = s.model.embedding_params / s.model.dense_params
    return {op: (nbytes, count) for op, nbytes, count in t.dp_op_bytes}, share


def test_the_all_gather_carries_fp8_weights_and_bf16_embeddings() -> None:
    plain, share = _ops(None)
    assert plain == _ops(False)[0]
    fp8, _ = _ops(True)
    # Llama 3 8B: 128,256 x 4,096 input embedding and untied output layer, 13 % of the weights
    assert 0.12 < share < 0.14
    assert fp8["reduce_scatter"] == plain["reduce_scatter"]
    assert fp8["all_gather"][1] == plain["all_gather"][1]
    assert fp8["all_gather"][0] == pytest.approx(plain["all_gather"][0] * (1.0 + share) / 2.0)


def test_a_faster_gather_never_slows_the_step() -> None:
    steps = []
    for flag in (False, True):
        s = parse_scenario(_raw(flag), default_catalog())
        assert s.design is not None
        steps.append(float(evaluate_design(s, plan_workload(s), s.design).to_dict()["step_time_s"]))
    assert steps[1] < steps[0]


def test_fp8_weights_need_fp8_precision() -> None:
    with pytest.raises(ScenarioError, match=r"parallelism\.fp8_param_gather.*fp8"):
        parse_scenario(_raw(True, "bf16"), default_catalog())
