"""The data-parallel collectives hide in two windows (docs/MODEL.md 6): the gradient
reduction behind the last micro-batch's backward pass (Megatron-Core's backward post-hook
starts a bucket's reduce-scatter or all-reduce when its gradients of the last micro-batch are
ready), the parameter all-gather behind the first micro-batch's forward (its forward pre-hook
waits for a bucket's all-gather and starts the next one); one bucket of each never hidden."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import DP_OVERLAP_EFFICIENCY, FABRICS, GRAD_BYTES_PER_PARAM
from advisor.engine.input.scenario import parse_scenario
from advisor.engine.model.design_network import net_for
from advisor.engine.model.planner import plan_workload
from advisor.engine.model.stage_time import bucket_params
from advisor.engine.model.training_step import _assemble, _pair_time, _static, _training_times


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
    reduce_s, gather_s = _pair_time(net, t.dp_layout, (reduce, gather))
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


def _interleaved(vp: int) -> tuple[Any, Any, Any]:
    """(scenario, workload, static terms) of Llama 3 70B on 64 H100, TP 4, PP 4, DP 4, eight
    micro-batches per step, ``vp`` model chunks per pipeline stage."""
    raw = {
        "workload": "training",
        "model": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": 64,
        "gpus_per_node": 8,
        "precision": "bf16",
        "sequence_length": 4096,
        "training": {"global_batch_sequences": 32},
        "parallelism": {
            "tp": 4,
            "pp": 4,
            "dp": 4,
            "micro_batch": 1,
            "virtual_stages": vp,
            "zero": 1,
        },
        "design": {"fabric": "infiniband", "nic_gbps": 400, "nics_per_node": 8},
    }
    s = parse_scenario(raw, default_catalog())
    w = plan_workload(s)
    assert w.training is not None and w.training.microbatches == 8
    return s, w, _static(s, w, w.training)


def test_interleaved_chunks_reduce_in_the_cool_down() -> None:
    # Megatron-Core's interleaved 1F1B starts a chunk's gradient reduction on its last
    # micro-batch's backward: chunk vp-1 first, each next one pp chunk-backwards later
    _, w1, plain = _interleaved(1)
    _, w4, chunks = _interleaved(4)
    assert w1.training is not None and w4.training is not None
    backward = w4.training.compute_s / 8 * (1.0 - w4.training.forward_fraction)
    assert chunks.reduce_window == pytest.approx(DP_OVERLAP_EFFICIENCY * backward * 13 / 4)
    assert chunks.chunk_window == pytest.approx(DP_OVERLAP_EFFICIENCY * backward / 4)
    assert chunks.chunk_share == 0.25
    assert plain.reduce_window == plain.chunk_window and plain.chunk_share == 1.0


def test_a_reduction_longer_than_one_backward_hides_in_the_cool_down() -> None:
    s, w, st = _interleaved(4)
    t = w.training
    assert s.design is not None and t is not None
    # a reduce-scatter three micro-batch backwards long, no all-gather: one shared window
    # would expose two of them; the chunks' queue exposes only what the last chunk's reduction
    # outlasts its own backward
    reduce_s = 3.0 * st.chunk_window * 4
    jitter_cv = FABRICS[s.design.fabric].jitter_cv
    times = _assemble(
        st, t, s.design, "low", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, (reduce_s, 0.0), (0.0, 0.0),
        jitter_cv,
    )  # fmt: skip
    assert times.exposed_comm_s == pytest.approx(
        max(
            reduce_s - st.reduce_window,
            reduce_s / 4 - st.chunk_window,
            reduce_s * st.min_exposed_share,
        )
    )
    assert times.exposed_comm_s < reduce_s - 4 * st.chunk_window


def test_the_never_hidden_share_is_the_jobs_own_bucket() -> None:
    # one bucket of the job's own size (parallelism.dp_bucket_params) is never hidden
    s, w, _ = _interleaved(1)
    raw_bucket = 500_000_000
    raw = {
        "workload": "training",
        "model": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": 64,
        "gpus_per_node": 8,
        "precision": "bf16",
        "sequence_length": 4096,
        "training": {"global_batch_sequences": 32},
        "parallelism": {
            "tp": 4,
            "pp": 4,
            "dp": 4,
            "micro_batch": 1,
            "zero": 1,
            "dp_bucket_params": raw_bucket,
        },
        "design": {"fabric": "infiniband", "nic_gbps": 400, "nics_per_node": 8},
    }
    s2 = parse_scenario(raw, default_catalog())
    w2 = plan_workload(s2)
    assert w.training is not None and w2.training is not None
    st2 = _static(s2, w2, w2.training)
    assert st2.min_exposed_share == pytest.approx(
        raw_bucket * GRAD_BYTES_PER_PARAM / w2.training.dp_bytes
    )
    assert st2.min_exposed_share > _static(s, w, w.training).min_exposed_share
