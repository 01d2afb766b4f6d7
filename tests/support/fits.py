"""A customer's nccl-tests fit of a RoCE fabric (H100 SXM, 8 x 400G NICs per server), for the
tests that evaluate with a calibration. bench/result_identity.py builds the same fit itself:
bench code does not import from tests."""

from __future__ import annotations

from advisor.engine.calibration.fabric_fit import FabricFit, FitHardware, TermFit


def roce_fit(scale: float, latency_s: float = 1e-6) -> FabricFit:
    """The fit at ``scale`` times the default 368 GB/s network bandwidth and ``latency_s``."""
    net = TermFit(
        kind="network",
        bytes_per_s=368e9 * scale,
        default_bytes_per_s=368e9,
        latency_s=latency_s,
        default_latency_s=1e-6,
        bandwidth_identified=True,
        latency_identified=True,
        rms_residual_pct=5.0,
        default_rms_residual_pct=20.0,
        points=(),
    )
    return FabricFit(
        gpu_id="h100-sxm",
        gpu_name="NVIDIA H100 80GB HBM3",
        hardware=FitHardware(fabric="roce", nic_gbps=400, nics_per_node=8),
        network=net,
        scaleup=None,
        warnings=(),
    )
