"""Fitting the engine's collective model to real published nccl-tests / rccl-tests runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from advisor.engine.calibration.fabric_fit import FabricFit, fit_measurement, gpu_id_for_name
from advisor.engine.calibration.nccl_tests import parse_text
from advisor.engine.input.scenario import Calibration
from advisor.engine.model.collectives import CommDomain, calibrated_domain
from advisor.engine.model.scaleup import ScaleUp

DATA = Path(__file__).resolve().parent.parent / "data" / "nccl"


def fit(name: str, **kw: object):
    return fit_measurement(parse_text((DATA / name).read_text()), **kw)  # type: ignore[arg-type]


def test_gpu_names_map_to_catalog_ids():
    assert gpu_id_for_name("NVIDIA H100 80GB HBM3") == "h100-sxm"
    assert gpu_id_for_name("NVIDIA H100 PCIe") == "h100-pcie"
    assert gpu_id_for_name("AMD Instinct MI300X") == "mi300x"
    assert gpu_id_for_name("Tesla V100-PCIE-16GB") == "v100-sxm2-32gb"
    assert gpu_id_for_name("NVIDIA GeForce RTX 5090") is None


def test_single_server_mi300x_fits_the_scaleup_term_close_to_the_measured_plateau():
    f = fit("amd_mi300x_1x8_all_reduce.txt")
    assert f.network is None and f.scaleup is not None
    up = f.scaleup
    assert up.bandwidth_identified and up.latency_identified
    # measured plateau: busbw 315.7 GB/s at 8 GB (ring bus bandwidth of the xGMI mesh)
    assert 300e9 < up.bytes_per_s < 335e9
    big = [p for p in up.points if p.nbytes >= 1 << 30]
    assert all(abs(p.residual_pct) < 5 for p in big)
    assert up.rms_residual_pct <= up.default_rms_residual_pct
    cal = f.calibration()
    assert cal.scaleup_bandwidth_scale == pytest.approx(up.bytes_per_s / up.default_bytes_per_s)
    assert cal.net_bandwidth_scale == 1.0


def test_two_server_h100_fits_network_bandwidth_and_latency_better_than_default():
    # A3 Mega: 8 x 200G NICs per server, GPUDirect-TCPXO (a TCP transport)
    f = fit(
        "nvidia_h100_2x8_all_reduce_gcp_a3mega.txt",
        fabric="ethernet",
        nic_gbps=200,
        nics_per_node=8,
    )
    net = f.network
    assert net is not None
    assert net.bandwidth_identified and net.latency_identified
    # 8 x 200G at 55% TCP efficiency is the default; the log shows ~340 GB/s busbw at 8 GB
    assert net.rms_residual_pct < net.default_rms_residual_pct
    assert net.latency_s > 10e-6  # 123 us at 8 B across 2 servers: far above RDMA latency
    assert f.hardware is not None and f.hardware.assumed == ()
    largest = max(net.points, key=lambda p: p.nbytes)
    assert abs(largest.residual_pct) < 25


def test_two_server_mi300x_roce_reports_that_the_scaleup_limits_large_sizes():
    f = fit("amd_mi300x_2x8_all_reduce_roce.txt")
    net = f.network
    assert net is not None
    assert not net.bandwidth_identified
    assert any("scale-up" in w and "not the network" in w for w in f.warnings)
    assert net.latency_identified
    assert net.rms_residual_pct < net.default_rms_residual_pct / 10
    assert f.calibration().net_bandwidth_scale == 1.0
    assert f.hardware is not None and "nic_gbps" in f.hardware.assumed


def test_a_single_size_cannot_identify_latency_and_says_so():
    f = fit("nvidia_v100_2x1_broadcast_tcp.txt")
    assert f.network is not None
    assert not f.network.latency_identified
    assert not f.network.bandwidth_identified
    assert any("only one message size" in w for w in f.warnings)
    assert f.calibration() == Calibration(
        source="nothing identified: default model", fabric="ethernet"
    )


def test_runs_without_servers_are_skipped_with_a_reason():
    f = fit("nvidia_h100_2x1_all_reduce_ib_tree.txt")
    assert f.network is None and f.scaleup is None
    assert any("servers and GPUs per server unknown" in w for w in f.warnings)


def test_perftest_summary_is_kept():
    f = fit("perftest_ib_write_bw_roce.txt")
    assert f.link == {"write_bw_Gbps": 0.48}


def test_calibration_scales_only_the_terms_it_identified():
    cal = Calibration(
        net_bandwidth_scale=0.5, net_latency_delta_s=2e-6, scaleup_bandwidth_scale=1.0
    )
    d = CommDomain(nodes=4, ranks_per_node=8, scaleup_bytes_per_s=300e9, net_bytes_per_s=100e9)
    out = calibrated_domain(d, cal)
    assert (out.net_bytes_per_s, out.net_extra_latency_s, out.scaleup_bytes_per_s) == (
        50e9,
        2e-6,
        300e9,
    )
    single = calibrated_domain(
        CommDomain(nodes=1, ranks_per_node=8, scaleup_bytes_per_s=300e9), cal
    )
    assert single.net_extra_latency_s == 0.0
    applied = cal.applied()
    assert (applied.net_bandwidth_scale, applied.net_latency_delta_us) == (0.5, 2.0)


def _synthetic(net_bytes_per_s: float, extra_latency_s: float, nodes: int = 4):
    """nccl-tests rows the engine's own model predicts for a known fabric (H100, 8 per server)."""
    from dataclasses import replace

    from advisor.engine.calibration.nccl_tests import ParsedText, Row, Run
    from advisor.engine.facts.catalog import default_catalog
    from advisor.engine.facts.constants import busbw_factor
    from advisor.engine.model.collectives import collective_time_s, make_domain

    gpu = default_catalog().gpu("h100-sxm")
    assert gpu is not None
    dom = make_domain(
        nodes=nodes,
        ranks_per_node=8,
        scaleup=ScaleUp.of(gpu),
        fabric_id="roce",
        nic_gbps=400,
        nics_per_node=8,
    )
    dom = replace(dom, net_bytes_per_s=net_bytes_per_s, net_extra_latency_s=extra_latency_s)
    rows = []
    for k in range(31):
        size = 8 << k
        t = collective_time_s("all_gather", float(size), dom)[0]
        alg = size / t / 1e9
        rows.append(Row(size, t * 1e6, alg, alg * busbw_factor("all_gather", 8 * nodes)))
    run = Run(
        op="all_gather",
        tool="nccl-tests",
        ranks=8 * nodes,
        nodes=nodes,
        gpus_per_node=8,
        gpu="NVIDIA H100 80GB HBM3",
        hosts=tuple(f"n{i}" for i in range(nodes)),
        rows=tuple(rows),
    )
    return ParsedText(runs=(run,), link_runs=(), warnings=())


@pytest.mark.parametrize(
    ("net_gbytes_per_s", "extra_latency_us"), [(100.0, 0.0), (250.0, 5.0), (40.0, 30.0)]
)
def test_the_fit_recovers_a_known_fabric_from_the_models_own_curve(
    net_gbytes_per_s: float, extra_latency_us: float
):
    parsed = _synthetic(net_gbytes_per_s * 1e9, extra_latency_us * 1e-6)
    f = fit_measurement(parsed, fabric="roce", nic_gbps=400, nics_per_node=8)
    net = f.network
    assert net is not None and net.bandwidth_identified
    assert net.bytes_per_s == pytest.approx(net_gbytes_per_s * 1e9, rel=0.03)
    assert net.latency_s == pytest.approx(extra_latency_us * 1e-6, abs=1e-6)
    assert net.rms_residual_pct < 2.0


def test_large_sizes_only_identify_bandwidth_not_latency():
    f = fit("nvidia_a100_1x8_sendrecv.txt")
    up = f.scaleup
    assert up is not None
    assert up.bandwidth_identified and not up.latency_identified
    # the plateau: 195.1 GB/s at 1 GB (the 128 MB row is a warm-up outlier)
    assert 185e9 < up.bytes_per_s < 200e9
    assert up.latency_s == up.default_latency_s
    assert any("latency not identified" in w for w in f.warnings)


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_row = st.tuples(
    st.integers(min_value=0, max_value=1 << 34),
    st.floats(min_value=0.0, max_value=1e7, allow_nan=False),
)


@settings(max_examples=25, deadline=None)
@given(
    op=st.sampled_from(["all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv"]),
    nodes=st.integers(min_value=1, max_value=4),
    gpn=st.integers(min_value=1, max_value=8),
    rows=st.lists(_row, min_size=1, max_size=12),
    gpu=st.sampled_from(["NVIDIA H100 80GB HBM3", "AMD Instinct MI300X", "Some New GPU"]),
)
def test_any_parsed_run_fits_to_finite_json(op, nodes, gpn, rows, gpu):
    from advisor.engine import json_safe
    from advisor.engine.calibration.nccl_tests import ParsedText, Row, Run

    run = Run(
        op=op,
        tool="nccl-tests",
        ranks=nodes * gpn,
        nodes=nodes,
        gpus_per_node=gpn,
        gpu=gpu,
        hosts=tuple(f"h{i}" for i in range(nodes)),
        rows=tuple(Row(b, t, 1.0, 1.0) for b, t in rows),
    )
    f = fit_measurement(ParsedText(runs=(run,), link_runs=(), warnings=()))
    out = json_safe(f.to_dict())  # raises on NaN or infinity
    cal = f.calibration()
    assert 0.02 <= cal.net_bandwidth_scale <= 2.0
    assert 0.02 <= cal.scaleup_bandwidth_scale <= 2.0
    assert isinstance(out["warnings"], list)


@pytest.mark.parametrize(
    ("name", "kw"),
    [
        ("amd_mi300x_1x8_all_reduce.txt", {}),
        (
            "nvidia_h100_2x8_all_reduce_gcp_a3mega.txt",
            {"fabric": "ethernet", "nic_gbps": 200, "nics_per_node": 8},
        ),
    ],
)
def test_a_stored_fit_reads_back_as_the_same_record(name: str, kw: dict[str, object]) -> None:
    """The measurement page reads the stored JSON through FabricFit.from_dict: every term,
    point, the hardware and the calibration come back as they were (up to GB/s -> B/s)."""
    original = fit(name, **kw)
    stored = original.to_dict()

    read = FabricFit.from_dict(stored)

    assert _close(read.to_dict(), stored)
    assert [t.kind for t in read.terms] == [t.kind for t in original.terms]
    assert read.calibration().source == original.calibration().source
    for before, after in zip(original.terms, read.terms, strict=True):
        assert after.points == before.points
        assert after.bytes_per_s == pytest.approx(before.bytes_per_s)
        assert after.latency_us == pytest.approx(before.latency_s * 1e6)


def _close(got: object, want: object) -> bool:
    """Equal JSON, floats within a relative 1e-12 (the GB/s and us units of the dict form)."""
    if isinstance(want, dict) and isinstance(got, dict):
        return got.keys() == want.keys() and all(_close(got[k], want[k]) for k in want)
    if isinstance(want, list) and isinstance(got, list):
        return len(got) == len(want) and all(_close(g, w) for g, w in zip(got, want, strict=True))
    if isinstance(want, float) and isinstance(got, float):
        return got == pytest.approx(want, rel=1e-12, abs=1e-15)
    return got == want


def _efa_log(nodes: int = 2):
    """all_reduce rows the engine's EFA model predicts on 2 x 8 H100 (docs/MODEL.md 3,
    "Transports"), as a log that ran through aws-ofi-nccl (NCCL's ``NET/OFI``, FI_PROVIDER=efa)."""
    from advisor.engine.calibration.nccl_tests import ParsedText, Row, Run
    from advisor.engine.facts.catalog import default_catalog
    from advisor.engine.facts.constants import busbw_factor
    from advisor.engine.model.collectives import collective_time_s, make_domain

    gpu = default_catalog().gpu("h100-sxm")
    assert gpu is not None
    dom = make_domain(
        nodes=nodes,
        ranks_per_node=8,
        scaleup=ScaleUp.of(gpu),
        fabric_id="roce",
        nic_gbps=400,
        nics_per_node=8,
        transport="efa-p5",
    )
    rows = []
    for k in range(31):
        size = 8 << k
        t = collective_time_s("all_reduce", float(size), dom)[0]
        alg = size / t / 1e9
        rows.append(Row(size, t * 1e6, alg, alg * busbw_factor("all_reduce", 8 * nodes)))
    run = Run(
        op="all_reduce",
        tool="nccl-tests",
        ranks=8 * nodes,
        nodes=nodes,
        gpus_per_node=8,
        gpu="NVIDIA H100 80GB HBM3",
        hosts=tuple(f"n{i}" for i in range(nodes)),
        rows=tuple(rows),
        transport="OFI",
        env=(("FI_PROVIDER", "efa"),),
    )
    return ParsedText(runs=(run,), link_runs=(), warnings=())


def test_an_efa_log_is_fitted_on_efas_transport_not_as_roce_verbs() -> None:
    """A customer's EFA nccl-tests are compared with the same transport model a rented AWS
    design is evaluated with, so the fitted latency is not EFA's step counted again."""
    f = fit_measurement(_efa_log())
    assert f.hardware is not None
    assert (f.hardware.fabric, f.hardware.transport) == ("roce", "efa-p5")
    assert "fabric" not in f.hardware.assumed
    net = f.network
    assert net is not None and net.latency_identified
    # the fit's grid resolves about a microsecond; as RoCE verbs it would find EFA's step again
    assert abs(f.calibration().net_latency_delta_s) <= 2e-6
    assert FabricFit.from_dict(f.to_dict()).hardware == f.hardware
