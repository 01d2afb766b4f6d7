"""The default catalog's GPU and model specs by id, for engine tests that price one part of a
layer or a collective directly (a missing id fails the test at the lookup, not later)."""

from __future__ import annotations

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.catalog.gpus import GpuSpec
from advisor.engine.facts.catalog.models import ModelSpec


def gpu(gpu_id: str) -> GpuSpec:
    spec = default_catalog().gpu(gpu_id)
    assert spec is not None, f"no GPU {gpu_id!r} in the default catalog"
    return spec


def model(model_id: str) -> ModelSpec:
    spec = default_catalog().model(model_id)
    assert spec is not None, f"no model {model_id!r} in the default catalog"
    return spec
