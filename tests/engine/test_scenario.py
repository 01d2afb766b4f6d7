"""Scenario v1 parsing: defaults, and errors that name the field and the rule."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine import ScenarioError
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.echo import scenario_echo
from advisor.engine.input.scenario import default_global_batch_tokens, parse_scenario
from advisor.engine.model.planner import plan_workload


def minimal(**overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "workload": "training",
        "model": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": 64,
    }
    raw.update(overrides)
    return raw


def errors_of(raw: dict[str, Any]) -> dict[str, list[str]]:
    with pytest.raises(ScenarioError) as info:
        plan_workload(parse_scenario(raw, default_catalog()))
    return info.value.field_errors


def test_only_four_fields_are_required_and_defaults_are_filled() -> None:
    s = parse_scenario(minimal(), default_catalog())
    assert s.gpus_per_node == 8
    assert s.precision == "bf16"
    assert s.sequence_length == 4096
    assert s.training is not None
    assert s.training.global_batch_tokens == 4096 * 1024
    assert s.training.sharding == "zero1"
    assert s.design is None
    normalised = scenario_echo(s).to_dict()
    assert normalised["gpus_per_node"] == 8
    assert normalised["training"]["total_tokens"] == 1e12


def test_a_v100_defaults_to_fp16_because_it_has_no_bf16() -> None:
    s = parse_scenario(minimal(gpu="v100-sxm2-32gb", model="llama3-8b"), default_catalog())
    assert s.precision == "fp16"


@pytest.mark.parametrize(
    ("overrides", "field", "fragment"),
    [
        ({"gpu": "h999"}, "gpu", "unknown GPU id 'h999'"),
        ({"model": "gpt-7"}, "model", "unknown model id"),
        ({"gpus": -8}, "gpus", "positive integer"),
        ({"gpus": 0}, "gpus", "positive integer"),
        ({"gpus": 12}, "gpus", "multiple of gpus_per_node"),
        ({"workload": "gaming"}, "workload", "must be one of"),
        ({"precision": "fp8", "gpu": "a100-80gb-sxm"}, "precision", "no fp8"),
        (
            {"training": {"global_batch_sequences": 0}},
            "training.global_batch_sequences",
            "positive",
        ),
        ({"training": {"sharding": "zero2"}}, "training.sharding", "must be one of"),
        ({"design": {"fabric": "token-ring"}}, "design.fabric", "must be one of"),
        ({"design": {"fabric": "roce", "nics_per_node": 0}}, "design.nics_per_node", "positive"),
        (
            {"design": {"fabric": "roce", "oversubscription": 0.5}},
            "design.oversubscription",
            ">= 1",
        ),
        ({"parallelism": {"tp": 8, "pp": 2, "dp": 2}}, "parallelism", "must equal gpus"),
        ({"parallelism": {"tp": 3}}, "parallelism.tp", "divide"),
        ({"model": {"layers": 2, "hidden": 64, "heads": 4}}, "model.params_b", "is required"),
        (
            {"model": {"params_b": 1, "layers": 2, "hidden": 65, "heads": 4}},
            "model.hidden",
            "divisible",
        ),
        ({"colour": "blue"}, "colour", "unknown field"),
    ],
)
def test_bad_input_names_the_field_and_the_rule(
    overrides: dict[str, Any], field: str, fragment: str
) -> None:
    errors = errors_of(minimal(**overrides))
    assert field in errors, errors
    assert any(fragment in message for message in errors[field]), errors[field]


def test_all_problems_are_reported_at_once() -> None:
    errors = errors_of({"workload": "training", "model": "nope", "gpu": "nope", "gpus": -1})
    assert {"model", "gpu", "gpus"} <= errors.keys()


def test_str_of_the_error_joins_the_messages() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario(minimal(gpus=-1), default_catalog())
    assert "gpus: must be a positive integer" in str(info.value)


def test_a_model_that_cannot_fit_even_at_maximum_parallelism_is_refused() -> None:
    errors = errors_of(minimal(model="llama3.1-405b", gpu="l40s", gpus=8))
    assert "gpus" in errors
    assert "does not fit" in errors["gpus"][0]


@pytest.mark.parametrize(
    ("workload", "model", "gpu", "gpus", "holds"),
    [
        # 16 bytes a parameter of weights, gradients and Adam state: 1.1 TB against 8 x 72 GB
        ("fine_tuning", "llama3-70b", "a100-80gb-sxm", 8, 16),
        # 6.5 TB of state: 64 H100 hold 4.6 TB usable, 128 hold 9.2
        ("training", "llama3.1-405b", "h100-sxm", 16, 128),
    ],
)
def test_a_training_refusal_names_a_cluster_that_holds_the_job(
    workload: str, model: str, gpu: str, gpus: int, holds: int
) -> None:
    """The refusal says how many of the same GPUs hold the job, and that cluster is answered
    while half of it is refused; a fine-tuning refusal says every weight is trained."""
    base = minimal(workload=workload, model=model, gpu=gpu, gpus=gpus)
    message = errors_of(base)["gpus"][0]
    name = default_catalog().gpu(gpu).name
    assert f"{holds:,} x {name} ({holds // 8:,} server" in message
    assert ("adapters such as LoRA are not modelled" in message) == (workload == "fine_tuning")
    assert "gpus" in errors_of({**base, "gpus": holds // 2})
    assert (
        plan_workload(parse_scenario({**base, "gpus": holds}, default_catalog())).nodes
        == holds // 8
    )


def test_inference_that_must_stay_in_one_server_but_cannot_is_refused() -> None:
    raw = minimal(
        workload="inference",
        model="llama3.1-405b",
        gpus=16,
        precision="bf16",  # unnamed, Meta's FP8 release fits one server (serving_precision)
        inference={"independent_replicas": True},
    )
    errors = errors_of(raw)
    assert "inference.independent_replicas" in errors


def test_custom_moe_model_gets_an_active_parameter_estimate() -> None:
    raw = minimal(
        model={
            "params_b": 47,
            "layers": 32,
            "hidden": 4096,
            "heads": 32,
            "kv_heads": 8,
            "vocab": 32000,
            "moe_experts": 8,
            "moe_top_k": 2,
        }
    )
    s = parse_scenario(raw, default_catalog())
    # Mixtral 8x7B: 46.7B total, 12.9B active
    assert 10e9 < s.model.active_params < 16e9


@pytest.mark.parametrize(
    ("gpus", "tokens"),
    [
        (8, 4_194_304),
        (4_096, 4_194_304),
        (8_192, 8_388_608),
        (12_288, 8_388_608),
        (16_384, 16_777_216),
        (16_392, 16_777_216),
    ],
)
def test_the_default_batch_grows_with_the_cluster_as_published_runs_do(
    gpus: int, tokens: int
) -> None:
    """4M tokens, then 1,024 per GPU as a power of two: Llama 3 405B ran 16M on 16,384."""
    raw = {"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": gpus}
    training = parse_scenario(raw, default_catalog()).training
    assert training is not None
    assert training.global_batch_tokens == tokens
    given = {**raw, "training": {"global_batch_sequences": 512}}
    assert parse_scenario(given, default_catalog()).training.global_batch_sequences == 512


@pytest.mark.parametrize(
    ("gpus", "tokens"),
    [
        (64, 4_194_304),
        (256, 8_388_608),
        (2_048, 67_108_864),
        (16_384, 67_108_864),
        (131_072, 134_217_728),
    ],
)
def test_a_moe_pretraining_default_batch_follows_moe_practice(gpus: int, tokens: int) -> None:
    """32,768 tokens per GPU as a power of two (DeepSeek-V3 ran 62.9M on 2,048 GPUs), at most
    64M (the largest published MoE batches) and never below the dense rule; the same model's
    fine-tuning, a dense model and a given batch keep their own rule."""
    raw = {"workload": "training", "model": "deepseek-v3", "gpu": "h100-sxm", "gpus": gpus}
    training = parse_scenario(raw, default_catalog()).training
    assert training is not None and training.global_batch_tokens == tokens
    tuned = parse_scenario({**raw, "workload": "fine_tuning"}, default_catalog()).training
    assert tuned is not None and tuned.global_batch_tokens == default_global_batch_tokens(gpus)
    dense = parse_scenario({**raw, "model": "llama3-70b"}, default_catalog()).training
    assert dense is not None and dense.global_batch_tokens == default_global_batch_tokens(gpus)
    given = {**raw, "training": {"global_batch_tokens": 4_194_304}}
    assert parse_scenario(given, default_catalog()).training.global_batch_tokens == 4_194_304
