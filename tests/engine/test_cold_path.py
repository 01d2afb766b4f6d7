"""The cold path's shared work (value-keyed memos within and across design evaluations, the
result writer's per-class field lists) never changes an answer: a design priced after others
equals the same design priced first, and a result is written as its records define it."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping

import pytest

from advisor.engine import evaluate_typed
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.scenario import Design, parse_scenario
from advisor.engine.model import design_network, planner
from advisor.engine.model.performance import evaluate_design
from advisor.engine.model.planner import plan_workload
from advisor.engine.result import base
from tests.support.engine_build import ran_on_source

DESIGNS = [
    Design(fabric=fabric, nic_gbps=gbps, nics_per_node=nics, oversubscription=over)
    for fabric in ("infiniband", "roce")
    for gbps, nics in ((400, 8), (200, 4))
    for over in (1.0, 2.0)
]


def _metrics_in_order(raw: dict[str, object], order: list[Design]) -> dict[Design, object]:
    planner._PLAN_CACHE.clear()
    design_network._net.cache_clear()
    design_network._OPS_CACHE.clear()
    design_network._DOMAIN_CACHE.clear()
    design_network._NET_KINDS_CACHE.clear()
    design_network._COLLECTIVE_CACHE.clear()
    scenario = parse_scenario(raw, default_catalog())
    workload = plan_workload(scenario)
    return {d: evaluate_design(scenario, workload, d) for d in order}


def test_a_design_priced_after_others_equals_it_priced_first() -> None:
    raw: dict[str, object] = {
        "workload": "training",
        "model": "mixtral-8x7b",
        "gpu": "h100-sxm",
        "gpus": 256,
    }
    forward = _metrics_in_order(raw, DESIGNS)
    backward = _metrics_in_order(raw, DESIGNS[::-1])
    assert forward == backward
    alone = {d: _metrics_in_order(raw, [d])[d] for d in DESIGNS[:3]}
    assert all(alone[d] == forward[d] for d in alone)
    # designs that differ only in oversubscription share the in-leaf domains and their figures
    assert len(design_network._OPS_CACHE) > 0
    assert len(design_network._DOMAIN_CACHE) > 0


def test_a_network_kind_number_is_never_reused() -> None:
    """A network built before the caches were emptied keeps its number: a later network of
    another value must not read its domains."""
    first = design_network._net_kind(("a",))
    design_network._NET_KINDS_CACHE.clear()
    second = design_network._net_kind(("b",))
    assert first != second
    assert design_network._net_kind(("b",)) == second


def test_the_ops_memo_is_bounded(request: pytest.FixtureRequest) -> None:
    if ran_on_source(request):
        return  # the bound is a Final constant: the compiled build reads it inlined
    design_network._OPS_CACHE.clear()
    raw: dict[str, object] = {
        "workload": "training",
        "model": "llama3-8b",
        "gpu": "h100-sxm",
        "gpus": 64,
    }
    limit = design_network._OPS_CACHE_MAX
    try:
        design_network._OPS_CACHE_MAX = 2
        _metrics_in_order(raw, DESIGNS)
        assert len(design_network._OPS_CACHE) <= 2
    finally:
        design_network._OPS_CACHE_MAX = limit


SPLIT_SERVING: dict[str, object] = {
    "workload": "inference",
    "model": "llama3.1-405b",
    "gpu": "h100-sxm",
    "gpus": 32,
    "inference": {"deployment": "split", "requests_per_s": 2.0},
}


def test_a_split_serving_design_priced_after_others_equals_it_priced_first() -> None:
    """Its tensor-parallel all-reduces cross servers: designs with equal domains read one
    collective's time from the memo (design_network.domain_collective_s)."""
    forward = _metrics_in_order(SPLIT_SERVING, DESIGNS)
    assert len(design_network._COLLECTIVE_CACHE) > 0
    backward = _metrics_in_order(SPLIT_SERVING, DESIGNS[::-1])
    assert forward == backward
    alone = {d: _metrics_in_order(SPLIT_SERVING, [d])[d] for d in DESIGNS[:3]}
    assert all(alone[d] == forward[d] for d in alone)


def test_the_collective_memo_is_bounded(request: pytest.FixtureRequest) -> None:
    if ran_on_source(request):
        return  # the bound is a Final constant: the compiled build reads it inlined
    limit = design_network._COLLECTIVE_CACHE_MAX
    try:
        design_network._COLLECTIVE_CACHE_MAX = 2
        _metrics_in_order(SPLIT_SERVING, DESIGNS)
        assert 0 < len(design_network._COLLECTIVE_CACHE) <= 2
    finally:
        design_network._COLLECTIVE_CACHE_MAX = limit


def _reference_dump(value: object) -> object:
    """The result's JSON by its definition: every field of a record in declaration order,
    those marked omitted when None or at their default left out, then ``extra``."""
    if isinstance(value, base.Record):
        out: dict[str, object] = {}
        for f in dataclasses.fields(value):  # type: ignore[arg-type]
            if f.name == base.EXTRA:
                continue
            item = getattr(value, f.name)
            if item is None and f.metadata.get("omit_when_none"):
                continue
            if f.metadata.get("omit_when_default") and item == f.default:
                continue
            out[f.name] = _reference_dump(item)
        out.update({k: _reference_dump(v) for k, v in getattr(value, base.EXTRA).items()})
        return out
    if isinstance(value, tuple | list):
        return [_reference_dump(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _reference_dump(v) for k, v in value.items()}
    return value


def test_a_result_is_written_as_its_records_define_it() -> None:
    for raw in (
        {"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 64},
        {
            "workload": "inference",
            "model": "mixtral-8x7b",
            "gpu": "h200-sxm",
            "gpus": 16,
            "design": {"fabric": "roce", "nic_gbps": 400, "nics_per_node": 8},
        },
    ):
        result = evaluate_typed(raw)
        written = result.to_dict()
        assert json.dumps(written) == json.dumps(_reference_dump(result))


def test_clean_leaves_out_every_non_finite_figure() -> None:
    import math

    import numpy as np

    from advisor.engine.decision.util import clean
    from advisor.engine.result.records import Metrics

    m = Metrics(step_time_s=1.5, compute_s=math.inf, bubble_s=float(np.float64("nan")))
    m = dataclasses.replace(m, straggler_s=np.float64("inf"))  # type: ignore[arg-type]
    out = clean(m)
    assert out.step_time_s == 1.5
    assert out.compute_s is None and out.bubble_s is None and out.straggler_s is None
    finite = Metrics(step_time_s=2.0)
    assert clean(finite) is finite


def test_a_plain_result_is_written_in_one_walk_as_json_safe_copies_it() -> None:
    import math

    import numpy as np

    from advisor.engine import json_safe
    from advisor.engine.result.records import Metrics

    for raw in (
        {"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 64},
        {"workload": "inference", "model": "mixtral-8x7b", "gpu": "h200-sxm", "gpus": 16},
    ):
        result = evaluate_typed(raw)
        plain = result.to_plain_dict()
        assert plain is not None
        # the same values of the same types (json text tells 1 from 1.0 and True from 1)
        assert json.dumps(plain) == json.dumps(json_safe(result.to_dict()))
    for value in (math.inf, math.nan, np.float64(1.5)):
        # not finite, or a type json_safe does not copy as it is: the careful path decides
        m = dataclasses.replace(Metrics(step_time_s=1.0), compute_s=value)
        assert m.to_plain_dict() is None
    extra = Metrics.from_dict({"step_time_s": 2.0, "new_key": [1, 2.5, {"k": None}]})
    assert extra.to_plain_dict() == json_safe(extra.to_dict())
