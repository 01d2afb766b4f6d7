"""The nccl-tests / rccl-tests / perftest parser on real published outputs (tests/data/nccl)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from advisor.engine.calibration.nccl_tests import NcclParseError, parse_text

DATA = Path(__file__).resolve().parent.parent / "data" / "nccl"


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_two_h100_servers_all_reduce_reads_ranks_servers_gpu_and_every_size():
    parsed = parse_text(read("nvidia_h100_2x8_all_reduce_gcp_a3mega.txt"))
    (run,) = parsed.runs
    assert (run.op, run.tool, run.ranks, run.nodes, run.gpus_per_node) == (
        "all_reduce",
        "nccl-tests",
        16,
        2,
        8,
    )
    assert run.gpu == "NVIDIA H100 80GB HBM3"
    assert run.hosts == ("ztan-mig-235z", "ztan-mig-gq73")
    assert len(run.rows) == 31
    first, last = run.rows[0], run.rows[-1]
    assert (first.nbytes, first.time_us, first.in_place_time_us) == (8, 135.8, 123.5)
    assert (last.nbytes, last.time_us, last.busbw_gbytes_per_s) == (8589934592, 47535.0, 338.82)
    assert last.in_place_busbw_gbytes_per_s == 337.35
    assert run.peak_busbw_gbytes_per_s == 338.82
    assert run.avg_busbw_gbytes_per_s == 70.742


def test_rccl_single_server_mi300x():
    (run,) = parse_text(read("amd_mi300x_1x8_all_reduce.txt")).runs
    assert (run.tool, run.op, run.ranks, run.nodes, run.gpu) == (
        "rccl-tests",
        "all_reduce",
        8,
        1,
        "AMD Instinct MI300X",
    )
    assert run.rows[-1].busbw_gbytes_per_s == 315.69
    assert run.avg_busbw_gbytes_per_s == 110.464


def test_rccl_two_servers_roce_reads_old_rank_lines_and_nccl_env():
    (run,) = parse_text(read("amd_mi300x_2x8_all_reduce_roce.txt")).runs
    assert (run.ranks, run.nodes, run.gpus_per_node) == (16, 2, 8)
    assert run.rows[-1].nbytes == 17179869184
    env = dict(run.env)
    assert env["NCCL_IB_GID_INDEX"] == "3"
    assert env["NCCL_NET_GDR_LEVEL"] == "3"


def test_tcp_broadcast_with_na_error_column_and_nccl_warn_lines():
    parsed = parse_text(read("nvidia_v100_2x1_broadcast_tcp.txt"))
    (run,) = parsed.runs
    assert (run.op, run.ranks, run.nodes, run.gpus_per_node) == ("broadcast", 2, 2, 1)
    assert run.transport == "Socket"
    assert run.rows[0].wrong == "N/A"
    assert run.rows[0].time_us == 45.82
    assert parsed.nccl_version == "2.9.6+cuda11.2"


def test_partial_table_without_devices_is_kept_with_a_warning():
    parsed = parse_text(read("nvidia_h100_2x1_all_reduce_ib_tree.txt"))
    (run,) = parsed.runs
    assert run.op == "all_reduce"
    assert run.ranks is None and run.nodes is None
    assert [r.nbytes for r in run.rows] == [2097152, 4194304, 8388608, 16777216, 33554432]
    assert any("ranks and servers unknown" in w for w in parsed.warnings)


def test_perftest_ib_write_bw():
    parsed = parse_text(read("perftest_ib_write_bw_roce.txt"))
    assert parsed.runs == ()
    (link,) = parsed.link_runs
    assert (link.tool, link.link_type) == ("ib_write_bw", "RoCE")
    assert link.rows[0].bw_average_gbps == 0.48
    assert link.rows[0].iterations == 224958464


def test_ib_write_lat_format():
    # perftest's latency table layout (perftest/src/perftest_resources.c print header)
    text = (
        "                    RDMA_Write Latency Test\n"
        " Link type       : IB\n"
        " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
        "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]\n"
        " 2       1000          0.95           3.10         0.99               1.00"
        "             0.04            1.08                    3.10\n"
    )
    (link,) = parse_text(text).link_runs
    assert link.tool == "ib_write_lat"
    assert (link.rows[0].lat_typical_us, link.rows[0].lat_p99_us) == (0.99, 1.08)


def test_several_tests_in_one_file_become_several_runs():
    text = read("amd_mi300x_1x8_all_reduce.txt") + "\n" + read("nvidia_v100_2x1_broadcast_tcp.txt")
    runs = parse_text(text).runs
    assert [r.op for r in runs] == ["all_reduce", "broadcast"]
    assert [r.nodes for r in runs] == [1, 2]


def test_mpi_tagged_output_and_collective_test_lines():
    text = "\n".join(
        [
            "[1,0]<stdout>:# Collective test starting: all_gather_perf_mpi",
            "[1,0]<stdout>:# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor)",
            "[1,0]<stdout>:# Using devices",
            "[1,0]<stdout>:#  Rank  0 Group  0 Pid 1 on        lab device  0 [0000:02:00] X",
            "[1,0]<stdout>:#  Rank  1 Group  0 Pid 2 on        lab device  0 [0000:02:00] X",
            "[1,0]<stdout>:     1048576        131072     float    none      -1  4366.46    0.24"
            "    0.12       0  4365.21    0.24    0.12       0",
            "[1,0]<stdout>:# Collective test concluded: all_gather_perf_mpi",
        ]
    )
    (run,) = parse_text(text).runs
    assert (run.op, run.ranks, run.nodes) == ("all_gather", 2, 1)
    assert run.rows[0].busbw_gbytes_per_s == 0.12


def test_text_that_is_not_benchmark_output_names_its_first_line():
    with pytest.raises(NcclParseError) as err:
        parse_text("hello\nthis is a shopping list\n")
    assert err.value.line_number == 1
    assert "hello" in str(err.value)


def test_malformed_row_names_the_line():
    good = read("amd_mi300x_1x8_all_reduce.txt").splitlines()
    bad_index = next(i for i, line in enumerate(good) if line.strip().startswith("1024 "))
    good[bad_index] = "        1024           256     float     sum      -1    fast    0.07"
    with pytest.raises(NcclParseError) as err:
        parse_text("\n".join(good))
    assert err.value.line_number == bad_index + 1
    assert "fast" in str(err.value)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_arbitrary_text_raises_only_the_parser_error(text: str):
    try:
        parsed = parse_text(text)
    except NcclParseError as err:
        assert err.line_number >= 0
        return
    assert parsed.runs or parsed.link_runs


_rowish = st.lists(
    st.one_of(
        st.sampled_from(["8", "-1", "1e400", "nan", "inf", "N/A", "float", "sum", "#", "0"]),
        st.from_regex(r"-?[0-9]{1,25}(\.[0-9]{0,5})?", fullmatch=True),
    ),
    min_size=1,
    max_size=14,
).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(_rowish, max_size=6))
def test_row_like_garbage_after_a_real_header_raises_only_the_parser_error(rows: list[str]):
    head = "\n".join(read("amd_mi300x_1x8_all_reduce.txt").splitlines()[:16])
    try:
        parsed = parse_text(head + "\n" + "\n".join(rows))
    except NcclParseError as err:
        # either a garbage row (after the 16 real lines) or "header but no row" at the header
        assert err.line_number > 16 or "no result row" in str(err)
        return
    assert all(r.time_us >= 0 for run in parsed.runs for r in run.rows)


def test_single_process_sendrecv_takes_ranks_from_the_command_line():
    parsed = parse_text(read("nvidia_a100_1x8_sendrecv.txt"))
    (run,) = parsed.runs
    assert (run.op, run.engine_op, run.ranks, run.nodes, run.gpus_per_node) == (
        "sendrecv",
        "p2p",
        8,
        1,
        8,
    )
    assert [r.wrong for r in run.rows] == ["0", "0", "0", "0"]
    assert run.rows[0].in_place_busbw_gbytes_per_s == 110.76
    assert any("from the command line" in w for w in parsed.warnings)
