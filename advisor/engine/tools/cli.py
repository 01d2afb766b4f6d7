"""Command line: ``python -m advisor.engine collective|topology|evaluate|validate``.

Every command prints JSON on stdout.  Bad input prints a message naming the field on stderr
and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.constants import FABRIC_IDS
from advisor.engine.facts.transports import TRANSPORTS
from advisor.engine.model.collectives import ALGORITHMS, BOUNDS, OPS, collective, make_domain
from advisor.engine.model.scaleup import ScaleUp

EXIT_BAD_INPUT = 2
EXIT_VALIDATION_FAILED = 1


class CliError(Exception):
    """Bad command-line input; the message names the flag."""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def _at_least_one(text: str) -> float:
    value = _positive_float(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1 (r of r:1), got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m advisor.engine",
        description="Fabric Advisor analytical engine (JSON on stdout).",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    collective_command = sub.add_parser(
        "collective", help="time, algbw and busbw of one NCCL-style collective"
    )
    collective_command.add_argument("--op", required=True, choices=OPS)
    collective_command.add_argument(
        "--bytes",
        required=True,
        type=_positive_float,
        dest="nbytes",
        help="per-rank buffer size S as in nccl-tests",
    )
    collective_command.add_argument("--gpu", required=True)
    collective_command.add_argument("--nodes", required=True, type=_positive_int)
    collective_command.add_argument("--gpus-per-node", type=_positive_int, default=None)
    collective_command.add_argument("--fabric", choices=FABRIC_IDS, default=None)
    collective_command.add_argument("--nic-gbps", type=_positive_float, default=None)
    collective_command.add_argument("--nics-per-node", type=_positive_int, default=None)
    collective_command.add_argument("--algorithm", choices=ALGORITHMS, default="auto")
    collective_command.add_argument("--oversubscription", type=_at_least_one, default=1.0)
    collective_command.add_argument(
        "--adaptive-routing", choices=("default", "on", "off"), default="default"
    )
    collective_command.add_argument(
        "--in-network-reduction", action="store_true", help="InfiniBand SHARP (CollNet)"
    )
    collective_command.add_argument(
        "--transport",
        choices=sorted(TRANSPORTS),
        default=None,
        help="a network-plugin transport on --fabric roce (AWS EFA through aws-ofi-nccl)",
    )

    topology_command = sub.add_parser("topology", help="size a leaf-spine / fat-tree fabric")
    topology_command.add_argument("--endpoints", required=True, type=_positive_int)
    topology_command.add_argument("--radix", required=True, type=_positive_int)
    topology_command.add_argument("--oversubscription", type=_at_least_one, default=1.0)
    topology_command.add_argument("--rails", type=_positive_int, default=1)

    evaluate_command = sub.add_parser(
        "evaluate", help="evaluate a scenario v1 JSON file (or - for stdin)"
    )
    evaluate_command.add_argument("file")

    validate_command = sub.add_parser(
        "validate", help="predicted vs measured for the calibration rows"
    )
    validate_command.add_argument("--format", choices=("json", "table"), default="json")
    validate_command.add_argument(
        "--write-baseline",
        action="store_true",
        help="write the held-out errors to the committed baseline "
        "(advisor/engine/calibration/data/validation_baseline.json)",
    )
    return parser


def run_collective(args: argparse.Namespace) -> dict[str, Any]:
    gpu = default_catalog().gpu(args.gpu)
    if gpu is None:
        raise CliError(
            f"--gpu: unknown GPU id {args.gpu!r}; known: {', '.join(default_catalog().gpu_ids)}"
        )
    gpus_per_node = args.gpus_per_node or gpu.gpus_per_server
    total = args.nodes * gpus_per_node
    domain = gpus_per_node
    if gpu.scaleup_domain_gpus > gpus_per_node:
        domain = min(gpu.scaleup_domain_gpus, total)
        domain -= domain % gpus_per_node
        domain = max(domain, gpus_per_node)
        if total % domain != 0:
            domain = gpus_per_node
    domains = total // domain
    if domains > 1:
        missing = [
            flag
            for flag, value in (
                ("--fabric", args.fabric),
                ("--nic-gbps", args.nic_gbps),
                ("--nics-per-node", args.nics_per_node),
            )
            if value is None
        ]
        if missing:
            raise CliError(
                f"{', '.join(missing)}: required when the GPUs span more than one server"
            )
    if args.in_network_reduction and args.fabric != "infiniband":
        raise CliError("--in-network-reduction: needs --fabric infiniband (SHARP)")
    if args.transport and args.fabric not in (None, "roce"):
        raise CliError("--transport: EFA is evaluated on --fabric roce (docs/MODEL.md 3)")
    adaptive = {"default": None, "on": True, "off": False}[args.adaptive_routing]
    nics = (args.nics_per_node or 0) * (domain // gpus_per_node)
    results = {}
    for bound in BOUNDS:
        comm_domain = make_domain(
            nodes=domains,
            ranks_per_node=domain,
            scaleup=ScaleUp.of(gpu),
            fabric_id=args.fabric if domains > 1 else None,
            nic_gbps=args.nic_gbps or 0.0,
            nics_per_node=nics,
            oversubscription=args.oversubscription,
            adaptive_routing=adaptive,
            in_network_reduction=args.in_network_reduction,
            bound=bound,
            transport=args.transport,
        )
        try:
            results[bound] = collective(args.op, args.nbytes, comm_domain, args.algorithm)
        except ValueError as exc:
            raise CliError(f"--algorithm: {exc}") from None
    point = results["point"]
    out = point.to_dict()
    out["gpu"] = gpu.id
    out["nodes"] = args.nodes
    out["gpus_per_node"] = gpus_per_node
    out["fabric"] = args.fabric if domains > 1 else None
    if args.transport and domains > 1:
        out["transport"] = args.transport
    out["time_us_range"] = {
        "low": results["low"].time_s * 1e6,
        "high": results["high"].time_s * 1e6,
    }
    out["busbw_GBps_range"] = {
        "low": results["high"].busbw_bytes_per_s / 1e9,
        "high": results["low"].busbw_bytes_per_s / 1e9,
    }
    return out


def run_topology(args: argparse.Namespace) -> dict[str, Any]:
    from advisor.engine.model.topology import size_topology

    try:
        size = size_topology(args.endpoints, args.radix, args.oversubscription, rails=args.rails)
    except ValueError as exc:
        raise CliError(f"--endpoints/--radix: {exc}") from None
    result: dict[str, Any] = size.to_dict()
    return result


def run_evaluate(args: argparse.Namespace) -> dict[str, Any]:
    from advisor.engine import evaluate

    try:
        if args.file == "-":
            text = sys.stdin.read()
        else:
            with open(args.file, encoding="utf-8") as fh:
                text = fh.read()
    except OSError as exc:
        raise CliError(f"FILE: cannot read {args.file!r}: {exc.strerror}") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"FILE: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(raw, dict):
        raise CliError("FILE: must hold a JSON object (scenario v1)")
    return evaluate(raw)


def run_validate(args: argparse.Namespace) -> tuple[dict[str, Any], bool]:
    from advisor.engine.tools.validation import baseline_from_report, validation_report

    report = validation_report()
    if args.write_baseline:
        data_dir = Path(__file__).resolve().parents[1] / "calibration" / "data"
        path = data_dir / "validation_baseline.json"
        path.write_text(json.dumps(baseline_from_report(report), indent=2) + "\n", "utf-8")
        print(f"wrote {path}", file=sys.stderr)
    return report, bool(report["passed"])


def _format_table(report: dict[str, Any]) -> str:
    lines = [
        f"{'id':44} {'use':11} {'metric':22} {'predicted':>11} {'measured':>11} {'error%':>8} "
        f"{'tol%':>5}  ok  loo band"
    ]
    for row in report["rows"]:
        band = ""
        if row.get("loo_low") is not None:
            where = "in" if row["loo_inside"] else "OUT"
            band = f"{row['loo_low']:.4g}..{row['loo_high']:.4g} {where}"
        lines.append(
            f"{row['id']:44} {row['use']:11} {row['metric']:22} {row['predicted']:>11.4g} "
            f"{row['measured']:>11.4g} {row['error_pct']:>8.1f} {row['tolerance_pct']:>5.0f}  "
            f"{'yes' if row['passed'] else 'NO ':3} {band}"
        )
    summary = report.get("summary", {})

    def pct(value: Any) -> str:
        return "-" if value is None else f"{value:.1f} %"

    lines.append("")
    lines.append(
        f"held out: MAE {pct(summary.get('held_out_mae_pct'))} over "
        f"{summary.get('held_out_lines')} lines ({summary.get('held_out_rows')} rows); "
        f"leave-one-out bands hold {summary.get('held_out_loo_inside')} of "
        f"{summary.get('held_out_lines')}; baseline {pct(summary.get('held_out_baseline_mae_pct'))}"
    )
    lines.append(
        f"held out, never looked at: MAE {pct(summary.get('held_out_unseen_mae_pct'))} over "
        f"{summary.get('held_out_unseen_lines')} lines "
        f"({summary.get('held_out_unseen_rows')} rows; "
        f"{summary.get('held_out_looked_at_rows')} held-out rows carry looked_at); "
        f"leave-one-out bands hold {summary.get('held_out_unseen_loo_inside')} of "
        f"{summary.get('held_out_unseen_lines')}"
    )
    for pool, entry in summary.get("held_out_mae_by_pool", {}).items():
        lines.append(
            f"  held out {pool:12} MAE {pct(entry['mae_pct']):>8} over {entry['lines']} lines"
        )
    for kind, entry in summary.get("held_out_unseen_mae_by_kind", {}).items():
        lines.append(
            f"  unseen {kind:12} MAE {pct(entry['mae_pct']):>8} over {entry['lines']} lines"
        )
    for use, entry in summary.get("mae_by_use", {}).items():
        lines.append(f"  {use:12} MAE {pct(entry['mae_pct']):>8} over {entry['lines']} lines")
    for kind, entry in summary.get("mae_by_kind", {}).items():
        lines.append(f"  {kind:12} MAE {pct(entry['mae_pct']):>8} over {entry['lines']} lines")
    checks = summary.get("arithmetic_checks", {})
    lines.append(f"  topology arithmetic: {checks.get('passed')} of {checks.get('total')} exact")
    lines.append(f"passed: {report['passed']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "collective":
            out = run_collective(args)
        elif args.command == "topology":
            out = run_topology(args)
        elif args.command == "evaluate":
            out = run_evaluate(args)
        else:
            report, passed = run_validate(args)
            if args.format == "table":
                print(_format_table(report))
            else:
                print(json.dumps(report, indent=2))
            return 0 if passed else EXIT_VALIDATION_FAILED
    except ScenarioError as exc:
        for field, messages in exc.field_errors.items():
            for message in messages:
                print(f"error: {field}: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except CliError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(json.dumps(out, indent=2))
    return 0
