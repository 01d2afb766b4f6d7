"""CLI contracts: JSON on stdout, field-naming messages on stderr with exit status 2."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.engine.tools.cli import main

ROOT = Path(__file__).resolve().parents[2]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_collective_prints_nccl_tests_style_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        [
            "collective",
            "--op",
            "all_reduce",
            "--bytes",
            "8589934592",
            "--gpu",
            "h100-sxm",
            "--nodes",
            "2",
            "--gpus-per-node",
            "8",
            "--fabric",
            "infiniband",
            "--nic-gbps",
            "400",
            "--nics-per-node",
            "8",
            "--algorithm",
            "ring",
        ],
        capsys,
    )
    assert code == 0
    data = json.loads(out)
    assert {"op", "algorithm", "time_us", "algbw_GBps", "busbw_GBps"} <= data.keys()
    assert data["algorithm"] == "ring"
    assert data["busbw_GBps"] == pytest.approx(data["algbw_GBps"] * 2 * 15 / 16)
    assert 340 < data["busbw_GBps"] < 400


@pytest.mark.parametrize("op", ["all_gather", "reduce_scatter", "all_to_all", "broadcast"])
def test_collective_single_node_needs_no_fabric_flags(
    op: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        ["collective", "--op", op, "--bytes", "1e8", "--gpu", "h100-sxm", "--nodes", "1"], capsys
    )
    assert code == 0
    assert json.loads(out)["op"] == op


def test_collective_across_nodes_without_fabric_flags_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        ["collective", "--op", "all_reduce", "--bytes", "1e6", "--gpu", "h100-sxm", "--nodes", "4"],
        capsys,
    )
    assert code == 2
    assert out == ""
    assert "--fabric" in err


def test_collective_unknown_gpu_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(
        ["collective", "--op", "all_reduce", "--bytes", "1e6", "--gpu", "x9", "--nodes", "1"],
        capsys,
    )
    assert code == 2
    assert "--gpu" in err and "x9" in err


def test_argparse_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(
            [
                "collective",
                "--op",
                "all_reduce",
                "--bytes",
                "-5",
                "--gpu",
                "h100-sxm",
                "--nodes",
                "1",
            ]
        )
    assert info.value.code == 2
    assert "--bytes" in capsys.readouterr().err


def test_topology_prints_switch_counts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["topology", "--endpoints", "2048", "--radix", "64"], capsys)
    assert code == 0
    data = json.loads(out)
    assert (data["tiers"], data["leaf_switches"], data["spine_switches"]) == (2, 64, 32)
    assert {"core_switches", "endpoint_leaf_links", "leaf_spine_links", "spine_core_links"} <= (
        data.keys()
    )


def test_evaluate_reads_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = {
        "workload": "training",
        "model": "llama3-8b",
        "gpu": "h100-sxm",
        "gpus": 16,
        "design": {"fabric": "roce", "nic_gbps": 400, "nics_per_node": 8},
    }
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(scenario)))
    code, out, _ = run(["evaluate", "-"], capsys)
    assert code == 0
    assert "step_time_s" in json.loads(out)["design_evaluation"]["metrics"]


def test_evaluate_reads_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps({"workload": "inference", "model": "llama3-8b", "gpu": "l40s", "gpus": 8})
    )
    code, out, _ = run(["evaluate", str(path)], capsys)
    assert code == 0
    assert json.loads(out)["workload"]["plan"]["tp"] >= 1


def test_evaluate_bad_scenario_names_each_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(
        json.dumps(
            {
                "workload": "training",
                "model": "llama3-8b",
                "gpu": "h100-sxm",
                "gpus": 12,
                "parallelism": {"tp": 3},
            }
        )
    )
    code, out, err = run(["evaluate", str(path)], capsys)
    assert code == 2
    assert out == ""
    assert "gpus:" in err


def test_evaluate_invalid_json_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    code, _, err = run(["evaluate", str(path)], capsys)
    assert code == 2
    assert "not valid JSON" in err


def test_validate_prints_every_row_and_passes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["validate"], capsys)
    data = json.loads(out)
    assert code == 0 and data["passed"] is True
    assert {"predicted", "measured", "error_pct", "tolerance_pct"} <= data["rows"][0].keys()


def test_module_entry_point_runs_as_a_process() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "advisor.engine",
            "collective",
            "--op",
            "all_reduce",
            "--bytes",
            "1048576",
            "--gpu",
            "a100-80gb-sxm",
            "--nodes",
            "1",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["op"] == "all_reduce"


def _efa_8b(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    return run(
        [
            "collective",
            "--op",
            "all_reduce",
            "--bytes",
            "8",
            "--gpu",
            "h100-sxm",
            "--nodes",
            "2",
            "--gpus-per-node",
            "8",
            "--nic-gbps",
            "100",
            "--nics-per-node",
            "32",
            *extra,
        ],
        capsys,
    )


def test_collective_on_efa_takes_the_plugin_transport(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _efa_8b(capsys, "--fabric", "roce", "--transport", "efa-p5")
    assert code == 0
    efa = json.loads(out)
    assert efa["transport"] == "efa-p5"
    code, out, _ = _efa_8b(capsys, "--fabric", "roce")
    roce = json.loads(out)
    assert code == 0 and "transport" not in roce
    # EFA's 20 us step (aws-ofi-nccl) in place of NCCL's few-us verbs latency, twice on 2 servers
    assert efa["time_us"] > roce["time_us"] + 20


def test_collective_efa_on_infiniband_is_refused_naming_the_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _efa_8b(capsys, "--fabric", "infiniband", "--transport", "efa-p5")
    assert code == 2 and out == ""
    assert "--transport: EFA is evaluated on --fabric roce" in err
