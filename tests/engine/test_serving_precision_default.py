"""A served model runs as its publisher ships it unless the scenario names a precision
(ModelSpec.checkpoint_precision, number_format.serving_precision; docs/MODEL.md 15.1, "The number
format of a served model")."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine import evaluate_typed
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import parse_scenario

CATALOG = default_catalog()


def _precision(model: str, gpu: str, workload: str = "inference", **extra: Any) -> str:
    raw = {"workload": workload, "model": model, "gpu": gpu, "gpus": 16, **extra}
    return parse_scenario(raw, CATALOG).precision


@pytest.mark.parametrize(
    ("model", "gpu", "expected"),
    [
        ("deepseek-r1", "b200", "fp8"),
        ("deepseek-v3", "h100-sxm", "fp8"),
        ("deepseek-v3.1", "mi300x", "fp8"),
        ("kimi-k2", "h200-sxm", "fp8"),
        ("gpt-oss-120b", "h100-sxm", "mxfp4"),
        ("gpt-oss-20b", "b200", "mxfp4"),
        ("llama3-70b", "h100-sxm", "bf16"),  # published in BF16
        ("qwen3-235b-a22b", "b200", "bf16"),
        ("deepseek-v3", "a100-80gb-sxm", "bf16"),  # no FP8 tensor cores: 16-bit as before
    ],
)
def test_a_served_model_runs_as_it_ships_where_the_gpu_runs_the_format(
    model: str, gpu: str, expected: str
) -> None:
    assert _precision(model, gpu) == expected


def test_a_named_precision_and_training_keep_their_own() -> None:
    assert _precision("deepseek-r1", "b200", precision="bf16") == "bf16"
    assert _precision("gpt-oss-120b", "b200", precision="fp4") == "fp4"
    assert _precision("deepseek-v3", "h100-sxm", workload="training") == "bf16"
    assert _precision("gpt-oss-120b", "h100-sxm", workload="fine_tuning") == "bf16"


def test_the_answer_says_the_number_format_and_where_it_comes_from() -> None:
    """DeepSeek-R1 on 64 B200 at 32k-token prompts: at BF16 (1.3 TB of weights) its replicas
    spanned servers by pipeline stages and bought an InfiniBand fabric; as it ships (FP8) they
    fit one server. The answer names the format and the publisher's word for it; a scenario
    that departs from it is told the shipped format."""
    base = {
        "workload": "inference",
        "model": "deepseek-r1",
        "gpu": "b200",
        "gpus": 64,
        "inference": {"requests_per_s": 20, "prompt_tokens": 32768, "output_tokens": 2048},
    }
    shipped = evaluate_typed(base)
    assert shipped.scenario.precision == "fp8"
    row = next(a for a in shipped.assumptions if a.name == "Number format")
    assert (row.value, row.unit) == ("fp8", "as the publisher ships the weights")
    assert "quant_method fp8" in row.source
    assert not shipped.recommendation.needs_compute_fabric

    bf16 = evaluate_typed({**base, "precision": "bf16"})
    row = next(a for a in bf16.assumptions if a.name == "Number format")
    assert (row.value, row.unit) == ("bf16", "the publisher ships the weights in fp8")
    assert bf16.recommendation.needs_compute_fabric

    llama = evaluate_typed({**base, "model": "llama3-70b"})
    assert not [a for a in llama.assumptions if a.name == "Number format"]


def test_what_you_asked_says_the_format_was_the_model_s_own() -> None:
    """The answer's "What you asked" printed "fp8" for a scenario that named no number format;
    it says the format came with the model."""
    from advisor.reports.presenters import input_summary

    base = {"workload": "inference", "model": "deepseek-r1", "gpu": "h200-sxm", "gpus": 16}
    rows = dict(input_summary(evaluate_typed(base)))
    assert rows["Number format"] == "fp8 (as the model ships)"
    named = dict(input_summary(evaluate_typed({**base, "precision": "bf16"})))
    assert named["Number format"] == "bf16"
    llama = dict(input_summary(evaluate_typed({**base, "model": "llama3-70b"})))
    assert llama["Number format"] == "bf16"


@pytest.mark.parametrize(
    ("model", "gpu", "gpus", "expected"),
    [
        # 16-bit weights overfill one server, the publisher's FP8 release fits it
        ("llama4-maverick", "h100-sxm", 8, "fp8"),  # 800 GB against 616 GB usable
        ("llama4-maverick", "h100-sxm", 16, "fp8"),  # one server a replica, not two
        ("llama3.1-405b", "h100-sxm", 32, "fp8"),
        ("qwen3-235b-a22b", "l40s", 8, "fp8"),  # 470 GB against 373 GB usable
        # the BF16 weights fit one server or NVLink domain: the primary release
        ("llama3.1-405b", "h200-sxm", 16, "bf16"),
        ("llama4-maverick", "b200", 8, "bf16"),
        ("llama4-maverick", "gb200-nvl72", 72, "bf16"),
        ("qwen3-235b-a22b", "h100-sxm", 8, "bf16"),
        # no FP8 tensor cores, or the release does not fit either
        ("llama3.1-405b", "a100-80gb-sxm", 16, "bf16"),
        ("llama3.1-405b", "l40s", 16, "bf16"),  # 409 GB of FP8 against 373 GB
        ("llama3-70b", "l40s", 8, "bf16"),  # Meta releases no FP8 70B
    ],
)
def test_the_publisher_s_smaller_release_serves_where_16_bits_overfill_a_server(
    model: str, gpu: str, gpus: int, expected: str
) -> None:
    raw = {"workload": "inference", "model": model, "gpu": gpu, "gpus": gpus}
    assert parse_scenario(raw, CATALOG).precision == expected


def test_the_smaller_release_is_said_and_decides_the_fabric() -> None:
    """Llama 4 Maverick on 16 H100: at BF16 (800 GB) each replica spans two servers and buys a
    compute fabric; Meta's FP8 release "fits on a single H100 DGX host", so each server serves
    on its own. The answer names the release and where the publisher says so; a named BF16 is
    kept, and training keeps BF16."""
    from advisor.reports.presenters import input_summary

    base = {
        "workload": "inference",
        "model": "llama4-maverick",
        "gpu": "h100-sxm",
        "gpus": 16,
        "inference": {"requests_per_s": 4},
    }
    release = evaluate_typed(base)
    assert release.scenario.precision == "fp8"
    row = next(a for a in release.assumptions if a.name == "Number format")
    assert (row.value, row.unit) == ("fp8", "the publisher's own release in this format")
    assert "single H100 DGX host" in row.source
    assert not release.recommendation.needs_compute_fabric
    assert dict(input_summary(release))["Number format"] == "fp8 (the publisher's fp8 release)"

    bf16 = evaluate_typed({**base, "precision": "bf16"})
    assert bf16.scenario.precision == "bf16"
    assert not [a for a in bf16.assumptions if a.name == "Number format"]
    assert bf16.recommendation.needs_compute_fabric
    assert dict(input_summary(bf16))["Number format"] == "bf16"

    assert _precision("llama4-maverick", "h100-sxm", workload="training") == "bf16"


def test_a_named_16_bit_format_that_does_not_fit_is_told_the_release_that_does() -> None:
    """Maverick at BF16 on one H100 server is refused as before, and the refusal names the
    release that fits rather than "a smaller precision"; a model without one keeps the old
    words (405B on A100: no FP8 tensor cores)."""
    from advisor.engine.errors import ScenarioError
    from advisor.engine.model.planner import plan_workload

    def refusal(raw: dict[str, Any]) -> str:
        with pytest.raises(ScenarioError) as info:
            plan_workload(parse_scenario(raw, CATALOG))
        return " ".join(m for msgs in info.value.field_errors.values() for m in msgs)

    base = {"workload": "inference", "model": "llama4-maverick", "gpu": "h100-sxm", "gpus": 8}
    said = refusal({**base, "precision": "bf16"})
    assert "serve the publisher's fp8 release, which fits one server: precision fp8" in said
    said = refusal({**base, "model": "llama3.1-405b", "gpu": "a100-80gb-sxm"})
    assert "add GPUs or use a smaller precision" in said
