"""The data-parallel collectives hide in two windows (docs/MODEL.md 6): the gradient
reduction behind the last micro-batch's backward pass (Megatron-Core's backward post-hook
starts a bucket's reduce-scatter or all-reduce when its gradients of the last micro-batch are
ready), the parameter all-gather behind the first micro-batch's forward (its forward pre-hook
waits for a bucket's all-gather and starts the next one); one bucket of each never hidden."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import DP_OVERLAP_EFFICIENCY, GRAD_BYTES_PER_PARAM
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model.design_network import _ops_time, net_for
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.stage_time import bucket_params
from advisor.engine.model.training_step import _training_times


def _times(zero: int, seq: int) -> tuple[float, float, float, float, Any, float]:
    """(reduction s, all-gather s, exposed s, one micro-batch's compute s, the plan, the share
    never hidden: one Megatron-Core bucket of the gradient bytes) of Llama 3 8B on 256 B200 over
    InfiniBand, one sequence of ``seq`` tokens per GPU (one micro-batch), data parallel only: the
    only exposed communication is the data-parallel gradients'."""
    parallelism: dict[str, object] = {"tp": 1, "pp": 1, "cp": 1, "dp": 256, "micro_batch": 1}
    parallelism["zero"] = zero
    raw = {
        "workload": "training",
        "model": "llama3-8b",
        "gpu": "b200",
        "gpus": 256,
        "gpus_per_node": 8,
        "precision": "fp8",
        "sequence_length": seq,
        "training": {"global_batch_sequences": 256},
        "parallelism": parallelism,
        "design": {"fabric": "infiniband", "nic_gbps": 400, "nics_per_node": 8},
    }
    s = parse_scenario(raw, default_catalog())
    w = plan_workload(s)
    t = w.training
    assert s.design is not None and t is not None and t.microbatches == 1
    net = net_for(s, w, s.design, "point")
    assert net is not None
    gather = tuple(o for o in t.dp_op_bytes if o[0] == "all_gather")
    reduce = tuple(o for o in t.dp_op_bytes if o[0] != "all_gather")
    reduce_s, gather_s = _ops_time(net, t.dp_layout, reduce), _ops_time(net, t.dp_layout, gather)
    times = _training_times(s, w, t, s.design, "point")
    share = bucket_params(256) * GRAD_BYTES_PER_PARAM / t.dp_bytes
    return reduce_s, gather_s, times.exposed_comm_s, t.compute_s, t, share


def test_the_all_gather_hides_only_behind_the_forward() -> None:
    reduce_s, gather_s, exposed, per_mb, t, share = _times(1, 6144)
    assert reduce_s > 0.0 and gather_s > 0.0
    fwd = t.forward_fraction
    backward_window = DP_OVERLAP_EFFICIENCY * per_mb * (1.0 - fwd)
    forward_window = DP_OVERLAP_EFFICIENCY * per_mb * fwd
    expected = max(reduce_s - backward_window, reduce_s * share) + max(
        gather_s - forward_window, gather_s * share
    )
    assert exposed == pytest.approx(expected, rel=1e-12)
    # the all-gather outlasts the forward it hides behind although both collectives together
    # fit in the whole micro-batch: one shared window would hide all but one bucket of each
    one_window = max(reduce_s + gather_s - DP_OVERLAP_EFFICIENCY * per_mb, 0.0)
    assert one_window < (reduce_s + gather_s) * share
    assert gather_s * (1.0 - share) > forward_window
    assert exposed > (reduce_s + gather_s) * share * 1.5


def test_a_plain_all_reduce_hides_only_behind_the_backward() -> None:
    reduce_s, gather_s, exposed, per_mb, t, share = _times(0, 4096)
    assert gather_s == 0.0 and reduce_s > 0.0
    backward_window = DP_OVERLAP_EFFICIENCY * per_mb * (1.0 - t.forward_fraction)
    # longer than the backward pass, shorter than the whole micro-batch
    assert backward_window < reduce_s * (1.0 - share)
    assert reduce_s < DP_OVERLAP_EFFICIENCY * per_mb
    assert exposed == pytest.approx(max(reduce_s - backward_window, reduce_s * share), rel=1e-12)
