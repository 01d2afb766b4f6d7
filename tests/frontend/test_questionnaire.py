"""The questionnaire's answers, their checks, and the scenario v1 they become."""

from __future__ import annotations

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.scenarios.engine_calls import validate_inputs
from frontend import questionnaire as qn

CATALOG = default_catalog()
STEPS = qn.build_steps(CATALOG)


def _question(name: str) -> qn.Question:
    return next(q for s in STEPS for q in s.questions if q.name == name)


def test_gpu_and_model_choices_come_from_the_engine_catalog() -> None:
    gpus = {c.value for c in _question("gpu").choices}
    models = {c.value for c in _question("model_choice").choices}
    assert gpus == set(CATALOG.gpu_ids)
    assert models == {*CATALOG.model_ids, "custom"}
    llama = next(c for c in _question("model_choice").choices if c.value == "llama3-70b")
    assert "70.6 B parameters" in llama.detail


def test_every_question_explains_why_it_matters() -> None:
    for step in STEPS:
        for question in step.questions:
            assert len(question.why) > 15, question.name


def test_default_answers_make_a_scenario_the_engine_accepts() -> None:
    inputs = qn.answers_to_inputs(qn.default_answers(STEPS), CATALOG)
    validate_inputs(inputs, catalog=CATALOG)
    assert inputs["workload"] == "training"
    assert inputs["gpus"] == 64
    assert inputs["training"]["total_tokens"] == 1e12


def test_answers_become_scenario_v1_for_split_inference() -> None:
    answers = {
        **qn.default_answers(STEPS),
        "workload": "inference",
        "replicas": "split",
        "concurrent_requests": "32",
        "target_ms_per_token": "40",
        "gpu_pricing": "cloud",
        "gpu_hour_usd": "2.25",
        "network_budget_usd": "1,500,000",
    }
    inputs = qn.answers_to_inputs(answers, CATALOG)
    assert inputs["inference"] == {
        "independent_replicas": False,
        "concurrent_requests": 32,
        "prompt_tokens": 2048,
        "output_tokens": 512,
        "target_ms_per_token": 40.0,
        "target_ttft_ms": 2000.0,
    }
    assert "training" not in inputs
    assert inputs["constraints"]["gpu_hour_usd"] == 2.25
    assert inputs["constraints"]["network_budget_usd"] == 1_500_000


def test_separate_prompt_and_answer_servers_become_a_disaggregated_deployment() -> None:
    answers = {
        **qn.default_answers(STEPS),
        "workload": "inference",
        "replicas": "disaggregated",
        "requests_per_s": "12.5",
        "target_ttft_ms": "1500",
    }
    inputs = qn.answers_to_inputs(answers, CATALOG)
    assert inputs["inference"]["deployment"] == "disaggregated"
    assert inputs["inference"]["independent_replicas"] is False
    assert inputs["inference"]["requests_per_s"] == 12.5
    assert inputs["inference"]["target_ttft_ms"] == 1500.0
    assert qn.inputs_to_answers(inputs, CATALOG)["replicas"] == "disaggregated"


def test_i_dont_know_leaves_the_deployment_and_the_rate_to_the_advisor() -> None:
    answers = {**qn.default_answers(STEPS), "workload": "inference", "replicas": "auto"}
    inputs = qn.answers_to_inputs(answers, CATALOG)
    assert "independent_replicas" not in inputs["inference"]
    assert "deployment" not in inputs["inference"]
    assert "requests_per_s" not in inputs["inference"]
    assert qn.inputs_to_answers(inputs, CATALOG)["replicas"] == "auto"


def test_a_custom_model_is_sent_as_its_shape() -> None:
    answers = {
        **qn.default_answers(STEPS),
        "model_choice": "custom",
        "custom_params_b": "13",
        "custom_layers": "40",
        "custom_hidden": "5120",
        "custom_heads": "40",
        "custom_moe_experts": "0",
        "custom_moe_top_k": "0",
    }
    model = qn.answers_to_inputs(answers, CATALOG)["model"]
    assert model == {
        "params_b": 13.0,
        "layers": 40,
        "hidden": 5120,
        "heads": 40,
        "moe_experts": 0,
        "moe_top_k": 0,
    }


def test_one_server_sends_its_gpus_as_one_node() -> None:
    answers = {**qn.default_answers(STEPS), "scale": "one", "gpus": "4"}
    inputs = qn.answers_to_inputs(answers, CATALOG)
    assert inputs["gpus"] == 4
    assert inputs["gpus_per_node"] == 4


@pytest.mark.parametrize(
    "inputs",
    [
        {
            "workload": "training",
            "model": "llama3-70b",
            "gpu": "h100-sxm",
            "gpus": 512,
            "training": {"total_tokens": 2e12, "global_batch_sequences": 1024, "sharding": "zero3"},
            "constraints": {"gpu_pricing": "owned", "team_skills": "both", "prefer": "cost"},
        },
        {
            "workload": "inference",
            "model": "llama3-8b",
            "gpu": "l40s",
            "gpus": 16,
            "inference": {"independent_replicas": True, "concurrent_requests": 8},
        },
        {
            "workload": "fine_tuning",
            "gpu": "h100-sxm",
            "gpus": 8,
            "gpus_per_node": 8,
            "model": {"params_b": 13, "layers": 40, "hidden": 5120, "heads": 40},
        },
    ],
)
def test_editing_a_saved_scenario_round_trips_its_inputs(inputs: dict) -> None:
    answers = qn.inputs_to_answers(inputs, CATALOG)
    again = qn.answers_to_inputs(answers, CATALOG)
    for key, value in inputs.items():
        if isinstance(value, dict):
            for inner, v in value.items():
                assert again[key][inner] == v, (key, inner)
        else:
            assert again[key] == value, key


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("gpus", "abc", "Enter a whole number; 'abc' is not one."),
        ("gpus", "2.5", "Enter a whole number; '2.5' is not one."),
        ("gpus", "0", "Must be at least 1; you entered 0."),
        ("gpus", "", "How many GPUs in total?: please answer this question."),
        ("target_ms_per_token", "fast", "Enter a number; 'fast' is not one."),
        ("workload", "mining", "'mining' is not one of the choices."),
    ],
)
def test_each_problem_is_named(name: str, raw: str, message: str) -> None:
    assert qn.check_question(_question(name), raw) == message


def test_one_server_cannot_hold_more_gpus_than_it_has() -> None:
    step = next(s for s in STEPS if s.slug == "hardware")
    answers = {**qn.default_answers(STEPS), "scale": "one", "gpus": "16"}
    errors = qn.check_step(step, answers, CATALOG)
    assert errors["gpus"] == [
        "One server holds 8 of these GPUs, but you asked for 16. Choose 'Several servers' "
        "on the first page, or fewer GPUs."
    ]


def test_gpus_must_fill_whole_servers() -> None:
    step = next(s for s in STEPS if s.slug == "hardware")
    errors = qn.check_step(step, {**qn.default_answers(STEPS), "gpus": "60"}, CATALOG)
    assert errors["gpus"] == ["60 GPUs do not fill whole servers of 8; try 56 or 64."]


def test_questions_of_the_other_workload_are_not_checked() -> None:
    step = next(s for s in STEPS if s.slug == "work")
    answers = {**qn.default_answers(STEPS), "workload": "inference", "total_tokens_b": "lots"}
    assert qn.check_step(step, answers, CATALOG) == {}


def test_engine_field_errors_are_filed_under_their_questions() -> None:
    answers = {**qn.default_answers(STEPS), "model_choice": "custom"}
    errors = qn.errors_by_question(
        {
            "gpus": ["must be a positive integer"],
            "model.hidden": ["must be divisible by heads"],
            "training.global_batch_sequences": ["must be a multiple of 64"],
            "design.fabric": ["unknown fabric"],
            "something.new": ["odd"],
        },
        STEPS,
        answers,
    )
    assert errors["gpus"] == ["must be a positive integer", "unknown fabric"]
    assert errors["custom_hidden"] == ["must be divisible by heads"]
    assert errors["global_batch_sequences"] == ["must be a multiple of 64"]
    assert errors[""] == ["something.new: odd"]
    assert qn.first_step_with_errors(errors, STEPS) == "model"
