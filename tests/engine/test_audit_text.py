"""The audit's text properties: no figure in customer text reads "1.19e+04", no catalog id
stands for a display name, and a platform's GPU links are named as its own."""

from __future__ import annotations

import dataclasses

import pytest

from advisor.engine import evaluate_typed
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.tools.audit import point_violations, run_case, text_violations
from advisor.engine.tools.audit_grid import AuditCase
from advisor.engine.tools.audit_text import INTERNAL_ID, customer_prose

# 64 H100 servers of Llama 3 8B replicas asked for 50,000 requests/s: saturated, so the
# headline states the served and asked rates, both above 1,000 (".3g" wrote them 4.01e+03
# and 5e+04).
OVERLOADED = {
    "workload": "inference",
    "model": "llama3-8b",
    "gpu": "h100-sxm",
    "gpus": 512,
    "inference": {"requests_per_s": 50000},
}


def test_an_overloaded_fleet_states_its_rates_in_plain_decimals() -> None:
    result = evaluate_typed(OVERLOADED, scaling_chart=False)
    head = result.recommendation.headline
    assert "Serving falls short" in head
    assert "of the 50,000 asked" in head
    assert text_violations("overloaded", result) == []


def test_the_property_finds_e_notation_anywhere_in_the_prose() -> None:
    result = evaluate_typed(OVERLOADED, scaling_chart=False)
    rec = dataclasses.replace(result.recommendation, headline="serves 4.01e+03 requests/s")
    found = text_violations("overloaded", dataclasses.replace(result, recommendation=rec))
    assert [v.prop for v in found] == ["e-notation"]
    assert "4.01e+03" in found[0].detail
    warned = dataclasses.replace(result, warnings=("a step of 1.2e-05 s",))
    found = text_violations("w", warned)
    assert [v.prop for v in found] == ["e-notation"]
    assert "a step of 1.2e-05 s" in found[0].detail
    # a word with "e-" in it is not a number
    plain = dataclasses.replace(result, warnings=("time-to-first token, one-NIC-per-GPU",))
    assert text_violations("w", plain) == []


def test_the_property_finds_a_large_count_without_thousands_separators() -> None:
    """``ungrouped-count``: "16384 servers" where customer text writes "16,384 servers"; part
    numbers, versions, issue numbers and decimals are not counts."""
    result = evaluate_typed(OVERLOADED, scaling_chart=False)
    grouped = dataclasses.replace(result, warnings=("the job spans 16,384 servers",))
    assert text_violations("w", grouped) == []
    bare = dataclasses.replace(result, warnings=("the job spans 16384 servers",))
    found = text_violations("w", bare)
    assert [v.prop for v in found] == ["ungrouped-count"]
    assert "16384 servers" in found[0].detail
    not_counts = dataclasses.replace(
        result,
        warnings=(
            "NVIDIA Quantum-2 QM97000, vllm-project/vllm #13972, arXiv 2412.19437, "
            "12345.5 ms, a ConnectX-7 MCX75310AAS",
        ),
    )
    assert text_violations("w", not_counts) == []
    # four digits are left to the sentences themselves: sources cite "2048^3" GEMMs
    four = dataclasses.replace(result, warnings=("4096 GPUs",))
    assert text_violations("w", four) == []


def test_a_cluster_of_16384_servers_is_described_with_thousands_separators() -> None:
    """The fabric-free, training and split sentences that printed "16384 servers" (the audit's
    largest sizes) now group their digits."""
    result = evaluate_typed(
        {"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 131072},
        scaling_chart=False,
    )
    assert "16,384 servers" in " ".join(result.recommendation.rationale)
    assert text_violations("training-131072", result) == []


# Qwen3-235B-A22B FP8 disaggregated on 4 x 8 H200 at 20 requests/s of 8,000 / 1,000 tokens: over
# capacity on every network, and the KV-transfer sentence read "(0 % of the 3,600,000 ms p95 time
# to first token)" and blamed TCP ("so this deployment needs RDMA") for a queue the GPUs hold.
OVER_CAPACITY_DISAGGREGATED = {
    "workload": "inference",
    "model": "qwen3-235b-a22b",
    "gpu": "h200-sxm",
    "gpus": 32,
    "precision": "fp8",
    "inference": {
        "requests_per_s": 20,
        "prompt_tokens": 8000,
        "output_tokens": 1000,
        "target_ttft_ms": 2000,
        "target_ms_per_token": 40,
        "deployment": "disaggregated",
    },
}


def test_an_over_capacity_disaggregated_answer_says_the_queue_in_words() -> None:
    result = evaluate_typed(OVER_CAPACITY_DISAGGREGATED, scaling_chart=False)
    assert result.metrics.load_saturated
    assert text_violations("over-capacity", result) == []
    (kv,) = [t for t in result.recommendation.rationale if "crosses the fabric before" in t]
    assert "grows without bound whatever the network" in kv
    assert "needs RDMA" not in kv


@pytest.mark.parametrize(
    "sentence",
    [
        "(0 % of the 3,600,000 ms p95 time",
        # the KV sentence's one decimal, which the property missed until 2026-12-07
        "before its first token: 3,600,000.0 ms on InfiniBand 1 x 400G",
    ],
)
def test_the_property_finds_the_over_capacity_stand_in_printed_as_a_time(sentence: str) -> None:
    result = evaluate_typed(OVERLOADED, scaling_chart=False)
    printed = dataclasses.replace(result, warnings=(sentence,))
    found = text_violations("w", printed)
    assert [v.prop for v in found] == ["saturated-figure"]
    assert "3,600,000" in found[0].detail


@pytest.mark.parametrize(
    ("gpu", "variant", "servers", "said"),
    [
        # a TCP design ruled out, not for "3,600,000 ms p95": the default closed loop of 64
        # users queues behind its KV links for minutes (2026-12-07), no longer without bound
        ("h100-sxm", "default", 8, "min p95 time to first token misses the 2,000 ms target"),
        # the KV-sizing sentence of a fabric that cannot keep up with the caches, and the KV
        # sentence, which printed "3,600,000.0 ms on InfiniBand 1 x 400G" (2026-12-07)
        ("h100-sxm", "overloaded", 33, "on InfiniBand 1 x 400G the transfers cannot keep up"),
    ],
)
def test_over_capacity_reasons_and_sizing_say_the_queue_in_words(
    gpu: str, variant: str, servers: int, said: str
) -> None:
    """The audit's saturated-figure cases of 2026-12-06: GPT-3 175B disaggregated, where a
    design's reason or the fabric's sizing sentence printed the stand-in as a time."""
    from advisor.engine.tools.audit import AuditCase, run_case

    case = AuditCase("gpt3-175b", gpu, "inference-disaggregated", variant, servers)
    outcome = run_case(case)
    assert outcome.result is not None, outcome.refusal
    assert text_violations("gpt3", outcome.result) == []
    prose = " ".join(customer_prose(outcome.result))
    assert said in prose


def test_the_property_finds_a_catalog_id_where_a_display_name_belongs() -> None:
    """``internal-id``: "144 x gb300-nvl72" or "8 x cx7-400g" in customer text; the vendor's
    part number, the display name and an id inside an address are not ids."""
    result = evaluate_typed(OVERLOADED, scaling_chart=False)
    assert text_violations("w", result) == []
    leaked = dataclasses.replace(result, warnings=("144 x gb300-nvl72 on 8 x cx7-400g",))
    found = text_violations("w", leaked)
    assert [v.prop for v in found] == ["internal-id", "internal-id"]
    assert "gb300-nvl72" in found[0].detail and "cx7-400g" in found[1].detail
    named = dataclasses.replace(
        result,
        warnings=(
            "144 x NVIDIA GB300 NVL72 on ConnectX-7 MCX75310AAS-NEAT (NVIDIA GB300 NVL72 "
            "datasheet, nvidia.com/en-us/data-center/gb300-nvl72); an h100-sxm-like part",
        ),
    )
    assert text_violations("w", named) == []


def test_no_catalog_text_a_customer_reads_holds_another_items_id() -> None:
    """The BOM shows each line's source under its description: a NIC's source named its
    sibling as "the same C8180 card as cx8-800g". A model named by its own id (OpenAI's
    gpt-oss-120b) is a name, not a leak."""
    catalog = default_catalog()
    texts = [
        (item.sku, item.source)
        for item in (*catalog.nics, *catalog.switches, *catalog.transceivers, *catalog.cables)
    ]
    texts += [(gpu.id, gpu.reference_design) for gpu in catalog.gpus]
    texts += [(model.id, model.name) for model in catalog.models]
    leaks = [(owner, m.group(0)) for owner, text in texts for m in INTERNAL_ID.finditer(text)]
    assert leaks == []
    assert INTERNAL_ID.search("serving gpt-oss-120b on 8 x NVIDIA B200") is None


def test_a_refusal_reads_as_the_answers_do() -> None:
    """A refusal's message is customer text too: DeepSeek-V3 as independent replicas on 2,049
    A100 servers read "does not fit on 16392 x NVIDIA A100 80GB SXM4 inside one server ... (add
    GPUs ...)", a count without separators and a remedy more GPUs cannot meet; it now names
    the server that bounds a replica and says to let a replica span servers."""
    case = AuditCase("deepseek-v3", "a100-80gb-sxm", "inference-replicas", "default", 2049)
    outcome = run_case(case)
    assert outcome.refusal is not None
    (message,) = outcome.refusal["inference.independent_replicas"]
    assert message.startswith(
        "DeepSeek-V3 does not fit inside one server of 8 x NVIDIA A100 80GB SXM4: "
    )
    assert "let a replica span servers" in message
    assert point_violations(outcome) == []
    leaked = dataclasses.replace(
        outcome, refusal={"gpus": ["does not fit on 16392 x a100-80gb-sxm"]}
    )
    assert [v.prop for v in point_violations(leaked)] == ["ungrouped-count", "internal-id"]


# Llama 3 70B replicas on four MI355X servers: no compute fabric, so the rationale says where
# the GPUs' traffic stays and which reference design the answer follows.
MI355X_REPLICAS = {
    "workload": "inference",
    "model": "llama3-70b",
    "gpu": "mi355x",
    "gpus": 32,
    "inference": {"requests_per_s": 50},
}


def test_an_amd_answer_names_infinity_fabric_and_the_amd_reference_not_nvlink() -> None:
    """The no-fabric reference design read "GPU traffic inside an NVLink domain stays on
    NVLink" on every platform, and only the API carried it; it names the platform's own links
    and reference design, and the page reads it in the rationale."""
    result = evaluate_typed(MI355X_REPLICAS, scaling_chart=False)
    rec = result.recommendation
    assert not rec.needs_compute_fabric
    assert rec.reference_design is not None
    statement = rec.reference_design.statement
    assert statement in rec.rationale
    assert "here one server, its GPUs joined by Infinity Fabric" in statement
    assert "AMD Pensando Pollara 400 AI NIC per GPU" in statement
    assert "NVLink" not in statement
    assert text_violations("mi355x", result) == []


@pytest.mark.parametrize(
    ("gpu", "gpus", "sentence"),
    [
        ("mi355x", 32, "GPU traffic inside an NVLink domain stays on NVLink."),
        ("mi355x", 32, "each request's KV cache moves over the server's NVLink"),
        ("h100-sxm", 8, "GPU-to-GPU traffic stays on Infinity Fabric inside each server."),
    ],
)
def test_the_property_finds_another_platforms_links(gpu: str, gpus: int, sentence: str) -> None:
    result = evaluate_typed({**MI355X_REPLICAS, "gpu": gpu, "gpus": gpus}, scaling_chart=False)
    assert text_violations(gpu, result) == []
    found = text_violations(gpu, dataclasses.replace(result, warnings=(sentence,)))
    assert found and {v.prop for v in found} == {"scale-up-name"}
    # the links a sentence names without saying they carry the job's traffic are no finding
    cited = "DeepEP needs NVIDIA Hopper or Blackwell GPUs joined by NVLink; no NVLink bridge"
    assert text_violations(gpu, dataclasses.replace(result, warnings=(cited,))) == []


def test_a_rag_pipeline_on_amd_keeps_its_generation_traffic_on_infinity_fabric() -> None:
    result = evaluate_typed({**MI355X_REPLICAS, "gpus": 8, "rag": {}}, scaling_chart=False)
    assert result.rag is not None
    (generation,) = [t for t in result.rag.statements if t.startswith("The generation tier")]
    assert "stays inside its server, on Infinity Fabric" in generation
    assert text_violations("rag", result) == []


def test_the_decisions_ties_and_premiums_name_designs_as_the_headline_does() -> None:
    """``decision.tied_with`` read "RoCE v2 8 x 400G cx7-400g (tomahawk5-64x800, 1:1)", the
    catalog's ids, in the API a quoting client prints."""
    result = evaluate_typed(
        {"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 256},
        scaling_chart=False,
    )
    decision = result.recommendation.decision
    assert decision is not None and decision.tied_with
    for design in decision.tied_with:
        assert " per server (" in design and INTERNAL_ID.search(design) is None, design
    assert text_violations("ties", result) == []
    labelled = dataclasses.replace(decision, tied_with=("RoCE v2 8 x 400G cx7-400g (1:1)",))
    rec = dataclasses.replace(result.recommendation, decision=labelled)
    found = text_violations("ties", dataclasses.replace(result, recommendation=rec))
    assert [v.prop for v in found] == ["internal-id"]
