"""The routed experts' load imbalance (``advisor.engine.model.serving.routing``; docs/MODEL.md
15.1, "Expert load imbalance"): the busiest GPU's rows an expert over the mean, fitted on the
kernel tables' power-law over balanced latencies, priced where the grouped GEMMs' FLOPs set the
time and not where the experts' weights do."""

from __future__ import annotations

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.model.serving.compute import moe_layer_s
from advisor.engine.model.serving.routing import (
    EXPERT_LOAD_IMBALANCE,
    MAX_UNBALANCED_EP,
    expert_load,
)

CATALOG = default_catalog()
GPT_OSS_20B = CATALOG.model("gpt-oss-20b")
GPT_OSS_120B = CATALOG.model("gpt-oss-120b")
B200 = CATALOG.gpu("b200")


def test_the_fitted_degrees_are_read_as_fitted_and_grow_with_the_group() -> None:
    for ep, load in EXPERT_LOAD_IMBALANCE.items():
        assert expert_load(ep) == load
    loads = [expert_load(ep) for ep in range(1, MAX_UNBALANCED_EP + 1)]
    assert loads == sorted(loads)
    assert loads[0] > 1.0
    assert EXPERT_LOAD_IMBALANCE[2] < expert_load(3) < EXPERT_LOAD_IMBALANCE[4]
    assert expert_load(6) == pytest.approx(
        EXPERT_LOAD_IMBALANCE[4] + (EXPERT_LOAD_IMBALANCE[8] - EXPERT_LOAD_IMBALANCE[4]) * 0.585,
        abs=1e-3,
    )


def test_wide_expert_parallel_groups_keep_the_balanced_rule() -> None:
    """Groups beyond one server's eight GPUs run with an expert load balancer (EPLB)."""
    for ep in (MAX_UNBALANCED_EP + 1, 16, 72, 256):
        assert expert_load(ep) == 1.0
    assert expert_load(0) == expert_load(1)


def _layer(model, tokens: float, ep: int, balanced: bool):  # type: ignore[no-untyped-def]
    assert B200 is not None and model is not None
    per_gpu = model.moe_experts // ep
    return moe_layer_s(B200, "mxfp4", model, tokens, 1, ep, per_gpu, tokens * ep, balanced=balanced)


def test_a_layer_that_streams_its_experts_weights_is_unchanged() -> None:
    """64 sequences on one GPU: each of gpt-oss-20b's 32 experts gets 8 rows, the layer reads
    its weights and the busiest expert's extra rows cost nothing."""
    even, uneven = _layer(GPT_OSS_20B, 64.0, 1, True), _layer(GPT_OSS_20B, 64.0, 1, False)
    assert uneven.routed_s == even.routed_s
    assert uneven.rows_per_expert == even.rows_per_expert


@pytest.mark.parametrize(("model", "ep"), [(GPT_OSS_20B, 1), (GPT_OSS_120B, 4)])
def test_a_compute_bound_layer_pays_for_its_busiest_gpu(model, ep: int) -> None:  # type: ignore[no-untyped-def]
    """4,096 tokens on each GPU: the grouped GEMMs' FLOPs set the time, and the busiest GPU's
    rows set the step, up to the fitted factor and the tiles it rounds to."""
    even, uneven = _layer(model, 4096.0, ep, True), _layer(model, 4096.0, ep, False)
    assert uneven.routed_s > even.routed_s
    extra_tile = 1.0 + 128.0 / (expert_load(ep) * even.rows_per_expert)  # rounded to whole tiles
    assert uneven.routed_s <= expert_load(ep) * extra_tile * even.routed_s
    assert uneven.experts_run == even.experts_run
