"""How a published nccl-tests run launched its collectives (docs/MODEL.md section 3).

The product prices NCCL as frameworks use it: one process per GPU, each enqueueing one kernel
per collective, whose host cost hides behind the device time.  nccl-tests can also run one
process driving every GPU of a server (``all_reduce_perf -g N``): one thread then enqueues, per
collective, a group with one kernel on each of the N GPUs.  nccl-tests times a run as the wall
time of enqueueing ``iters`` collectives back to back and waiting for them, divided by
``iters`` (``src/common.cu`` ``BenchTime``), so the host's enqueueing and the GPUs' work overlap
and the time per collective is the larger of the two.  Only a validation row that states the
one-process mode (``config.gpus_per_process``) takes this term; the product never does.
"""

from __future__ import annotations

ONE_PROCESS_FIXED_S = 1.6e-6
"""The fixed host time of one group launch from one thread (fitted: the intercept of the
least-squares line through NVIDIA/nccl-tests issue #123's DGX-A100 ``-g N`` times, N = 2-8;
rows ``nccl123-a100-g*``)."""
ONE_PROCESS_PER_GPU_S = 3.96e-6
"""The host time per GPU of that launch (fitted: the slope of the same line, rows
``nccl123-a100-g*``)."""


def one_process_host_s(gpus_per_process: int) -> float:
    """Host time of one thread enqueueing one collective on ``gpus_per_process`` GPUs."""
    if gpus_per_process < 1:
        raise ValueError(f"gpus_per_process: must be at least 1, got {gpus_per_process}")
    return ONE_PROCESS_FIXED_S + ONE_PROCESS_PER_GPU_S * gpus_per_process


def benchmark_time_s(device_time_s: float, gpus_per_process: int) -> float:
    """nccl-tests' time per collective: the device time, or the host's enqueueing where one
    process drives more than one GPU and its enqueueing is the slower of the two."""
    if gpus_per_process <= 1:
        return device_time_s
    return max(device_time_s, one_process_host_s(gpus_per_process))
