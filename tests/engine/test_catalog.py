"""The hardware catalog: every required GPU and model, sources, and a lossless round trip."""

from __future__ import annotations

import json
import re

import pytest

from advisor.engine.facts.catalog import Catalog, default_catalog

REQUIRED_GPUS = (
    "a100-80gb-sxm",
    "v100-sxm2-32gb",
    "h100-sxm",
    "h100-pcie",
    "h200-sxm",
    "h800-sxm",
    "h20",
    "b200",
    "gb200-nvl72",
    "l40s",
    "mi300x",
    "mi325x",
    "gaudi3",
)
REQUIRED_MODELS = (
    "llama3-8b",
    "llama3-70b",
    "llama3.1-405b",
    "mixtral-8x7b",
    "deepseek-v3",
    "gpt3-175b",
)
SOURCED_FIGURES = (
    "bf16_dense_tflops",
    "fp8_dense_tflops",
    "memory_gb",
    "memory_bw_gbytes_per_s",
    "scaleup_gbytes_per_s",
    "power_w",
    "price_usd",
)


@pytest.mark.parametrize("gpu_id", REQUIRED_GPUS)
def test_every_required_gpu_is_in_the_catalog_with_a_source_per_figure(gpu_id: str) -> None:
    gpu = default_catalog().gpu(gpu_id)
    assert gpu is not None
    sources = dict(gpu.sources)
    for figure in SOURCED_FIGURES:
        assert sources.get(figure), f"{gpu_id}.{figure} has no source"
    assert gpu.memory_gb > 0 and gpu.memory_bw_gbytes_per_s > 0
    assert gpu.scaleup_gbytes_per_s > 0 and gpu.power_w > 0
    assert gpu.price_is_estimate


def test_nvl72_is_one_72_gpu_nvlink_domain_of_4_gpu_trays() -> None:
    gpu = default_catalog().gpu("gb200-nvl72")
    assert gpu is not None
    assert gpu.scaleup_domain_gpus == 72
    assert gpu.gpus_per_server == 4
    assert gpu.nvlink_sharp


def test_h100_figures_match_the_datasheet() -> None:
    gpu = default_catalog().gpu("h100-sxm")
    assert gpu is not None
    assert gpu.bf16_dense_tflops == 989.0
    assert gpu.fp8_dense_tflops == 1979.0
    assert gpu.scaleup_gbytes_per_s == 450.0  # 900 GB/s NVLink 4, per direction


def test_precision_support_follows_tensor_cores() -> None:
    cat = default_catalog()
    v100, a100 = cat.gpu("v100-sxm2-32gb"), cat.gpu("a100-80gb-sxm")
    assert v100 is not None and a100 is not None
    assert not v100.supports("bf16") and v100.supports("fp16")
    assert not a100.supports("fp8")


@pytest.mark.parametrize("model_id", REQUIRED_MODELS)
def test_model_presets_exist_with_consistent_shapes(model_id: str) -> None:
    model = default_catalog().model(model_id)
    assert model is not None
    assert model.hidden % model.heads == 0
    assert model.active_params <= model.params
    assert model.kv_dim_per_layer > 0
    assert model.source


def test_moe_presets_split_expert_and_dense_parameters() -> None:
    ds = default_catalog().model("deepseek-v3")
    assert ds is not None and ds.is_moe
    assert ds.moe_experts == 256 and ds.moe_top_k == 8
    assert ds.expert_params + ds.dense_params == pytest.approx(ds.params)
    assert 10e9 < ds.dense_params < 40e9


def test_catalog_round_trips_through_json() -> None:
    cat = default_catalog()
    data = json.loads(json.dumps(cat.to_dict()))
    again = Catalog.from_dict(data)
    assert again == cat
    assert again.version == cat.version
    assert {"gpus", "models", "nics", "switches", "transceivers", "cables"} <= data.keys()


def test_an_edited_catalog_keeps_the_edit() -> None:
    data = default_catalog().to_dict()
    data["version"] = "edited-1"
    for g in data["gpus"]:
        if g["id"] == "h100-sxm":
            g["price_usd"] = 1.0
    edited = Catalog.from_dict(data)
    gpu = edited.gpu("h100-sxm")
    assert gpu is not None and gpu.price_usd == 1.0
    assert edited.version == "edited-1"


def test_every_gpu_carries_sourced_platform_facts() -> None:
    from advisor.engine.facts.catalog import default_catalog

    cat = default_catalog()
    nics = {n.sku: n for n in cat.nics}
    for gpu in cat.gpus:
        assert gpu.host_pcie_gen in (3, 4, 5, 6), gpu.id
        assert gpu.reference_nic_sku in nics, gpu.id
        assert gpu.reference_nic_count > 0, gpu.id
        assert gpu.reference_fabric in ("roce", "infiniband"), gpu.id
        assert gpu.storage_nic_sku in nics, gpu.id
        assert all(option in nics for option in gpu.nic_options), gpu.id
        assert gpu.reference_design, gpu.id
        assert dict(gpu.sources).get("platform"), gpu.id
    gaudi = cat.gpu("gaudi3")
    assert gaudi is not None and gaudi.integrated_scaleout
    assert nics[gaudi.reference_nic_sku].links == 24  # 3 per card x 8 cards
    b200 = cat.gpu("b200")
    assert b200 is not None and nics[b200.reference_nic_sku].port_gbps == 400


# Orderable part numbers as the vendors' datasheets print them (docs/MODEL.md "Part numbers").
_PART_NUMBER = re.compile(r"^[A-Z0-9][A-Z0-9-]{3,30}$")


def test_network_parts_carry_orderable_vendor_part_numbers() -> None:
    catalog = default_catalog()
    items = [*catalog.nics, *catalog.switches, *catalog.transceivers, *catalog.cables]
    numbered = {item.sku: item.part_number for item in items if item.part_number}
    assert all(_PART_NUMBER.match(pn) for pn in numbered.values()), numbered
    assert numbered["quantum2-qm9700"] == "MQM9700-NS2F"
    assert numbered["cx7-400g"] == "MCX75310AAS-NEAT"
    assert numbered["spectrum4-sn5600"] == "MSN5600"
    # The reference designs' fabric parts are all orderable by number.
    for sku in ("cx7-400g", "spectrum4-sn5600", "quantum2-qm9700", "osfp-2x400g-sr8"):
        assert sku in numbered
    assert len(numbered) >= 30


def test_gpu_and_model_hash_by_value_once_and_pickle_without_it() -> None:
    # the planner's caches are keyed by the GPU and the model (not by id()): equal objects
    # hash equal, a changed figure is another key, and a pickled copy hashes itself again
    import dataclasses
    import pickle

    cat = default_catalog()
    for spec in (cat.gpu("h100-sxm"), cat.model("llama3-70b")):
        assert spec is not None
        copy = pickle.loads(pickle.dumps(spec))  # noqa: S301 - our own object
        assert copy == spec and hash(copy) == hash(spec)
        assert "_value_hash" not in copy.__dict__ or hash(copy) == hash(spec)
        assert "_value_hash" not in spec.__getstate__()
        rebuilt = dataclasses.replace(spec)
        assert rebuilt is not spec and rebuilt == spec and hash(rebuilt) == hash(spec)
        changed = dataclasses.replace(spec, name=spec.name + " (edited)")
        assert changed != spec and hash(changed) != hash(spec)


def test_the_stage_cache_tells_an_edited_gpu_from_the_catalogs() -> None:
    # a staff edit makes a new GPU object with the same id: its stage time is its own
    import dataclasses

    from advisor.engine.input.scenario import parse_scenario
    from advisor.engine.model.stage_time import _stage_time_per_microbatch

    cat = default_catalog()
    s = parse_scenario(
        {"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 64}, cat
    )
    faster = dataclasses.replace(
        s, gpu=dataclasses.replace(s.gpu, bf16_dense_tflops=2 * s.gpu.bf16_dense_tflops)
    )
    args = (8, 1, 1, 1, "none", (10, 10, 10), 8)
    base = _stage_time_per_microbatch(s, *args)
    assert _stage_time_per_microbatch(faster, *args)[0] < base[0]
    assert _stage_time_per_microbatch(s, *args) == base


def test_every_catalog_gpu_names_its_generation_and_hopper_or_newer_reads_it() -> None:
    from advisor.engine.facts.catalog import default_catalog
    from advisor.engine.tools.audit import HOPPER_BLACKWELL

    gpus = default_catalog().gpus
    assert all(g.generation for g in gpus), [g.id for g in gpus if not g.generation]
    # the audit's field-practice set comes from the catalog, not a list of its own
    assert {
        "h100-sxm", "h100-pcie", "h200-sxm", "h800-sxm", "h20",
        "b200", "gb200-nvl72", "b300", "gb300-nvl72",
    } == HOPPER_BLACKWELL  # fmt: skip
    assert not any(g.hopper_or_newer for g in gpus if g.vendor != "NVIDIA")


def test_the_builtin_catalog_is_versioned_by_its_content() -> None:
    """The built-in catalog's version names its items (a digest), so a change to any item is a
    new version: a hand-kept "builtin-2025.11.1" stayed the same while B300, GB300, MI355X and
    the 800G parts were added, and staff edits saved on the old built-in catalog were never
    re-applied to the new one (``catalog_reapply_edits`` reads the version)."""
    import dataclasses

    from advisor.engine.facts.catalog import BUILTIN_VERSION_PREFIX, content_version

    catalog = default_catalog()
    assert catalog.version.startswith(BUILTIN_VERSION_PREFIX)
    assert catalog.version == content_version(catalog)
    assert content_version(Catalog.from_dict(catalog.to_dict())) == catalog.version
    first = catalog.gpus[0]
    cheaper = dataclasses.replace(first, price_usd=first.price_usd - 1.0)
    edited = dataclasses.replace(catalog, gpus=(cheaper, *catalog.gpus[1:]))
    assert content_version(edited) != catalog.version
