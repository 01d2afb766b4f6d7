"""Acceptance test plan for a recommended design, and grading a measurement against it.

For 2 servers, one leaf (or rail group) and the whole job, the plan lists the bus bandwidth
nccl-tests / rccl-tests must show for ``all_reduce``, ``all_gather``, ``reduce_scatter`` and
``alltoall`` at sizes 8 B .. 8 GB, with the exact commands and NCCL environment.

Expected range: the engine's own collective model (:mod:`advisor.engine.model.collectives`, NCCL's
``auto`` algorithm choice) on the recommended design, ``high`` = optimistic bound (best
published wire efficiency, topology-aware placement), ``low`` = pessimistic bound (worst
published efficiency, ECMP collisions on cross-leaf traffic).  A check passes when the measured
time is at most the pessimistic time x (1 + :data:`PASS_TOLERANCE`) + :data:`LATENCY_ALLOWANCE_S`
(nccl-tests' own average-bus-bandwidth check, ``check_avg_bw`` in src/common.cu, fails below
0.9 x the expected value).
Thresholds are on time, not on printed busbw, because nccl-tests prints busbw with two
decimals (0.00 GB/s for every size below a few kB).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from advisor.engine.calibration.fabric_fit import MAX_TIME_US, MIN_TIME_US
from advisor.engine.calibration.nccl_tests import ENGINE_OP, ParsedText
from advisor.engine.facts.catalog import Catalog, default_catalog
from advisor.engine.facts.constants import RAIL_GROUP_NODES, busbw_factor
from advisor.engine.facts.formatting import significant
from advisor.engine.facts.vocabulary import fabric_label
from advisor.engine.model.collectives import collective_time_s, make_domain
from advisor.engine.model.scaleup import ScaleUp
from advisor.engine.result.records import EngineResult

__all__ = [
    "ACCEPTANCE_OPS",
    "ACCEPTANCE_SIZES",
    "PASS_TOLERANCE",
    "AcceptanceCheck",
    "AcceptancePlan",
    "GradedCheck",
    "Grading",
    "acceptance_plan",
    "grade",
    "plan_markdown",
]

ACCEPTANCE_OPS: tuple[str, ...] = ("all_reduce", "all_gather", "reduce_scatter", "alltoall")
ACCEPTANCE_SIZES: tuple[int, ...] = tuple(8 ** (i + 1) for i in range(11))
"""8 B, 64 B, 512 B, 4 KiB, 32 KiB, 256 KiB, 2 MiB, 16 MiB, 128 MiB, 1 GiB, 8 GiB."""
PASS_TOLERANCE = 0.10
"""A check passes when measured time <= pessimistic model time x (1 + this) + allowance."""
LATENCY_ALLOWANCE_S = 10e-6
"""Added to every threshold: NCCL's tuning latencies rank algorithms, they are not absolute
(kernel launch and proxy wake-up add a few microseconds per call in nccl-tests' timing).
Engineering estimate; it only matters for latency-bound sizes."""

_ENV: dict[str, tuple[tuple[str, str, str], ...]] = {
    "infiniband": (
        ("NCCL_IB_HCA", '"$COMPUTE_HCAS"', "only the compute-fabric HCAs (one per rail)"),
        ("NCCL_SOCKET_IFNAME", '"$MGMT_IF"', "bootstrap over the management net"),
        ("NCCL_DEBUG", "INFO", "the log must show 'NET/IB : Using' every HCA"),
        ("NCCL_DEBUG_SUBSYS", "INIT,NET", "transport selection only"),
    ),
    "roce": (
        ("NCCL_IB_HCA", '"$COMPUTE_HCAS"', "only the compute-fabric NICs (one per rail)"),
        ("NCCL_IB_GID_INDEX", "3", "RoCE v2 GID (check with show_gids)"),
        ("NCCL_IB_TC", '"$LOSSLESS_TC"', "the PFC/ECN class of your switch config"),
        ("NCCL_SOCKET_IFNAME", '"$MGMT_IF"', "bootstrap over the management net"),
        ("NCCL_DEBUG", "INFO", "the log must show 'NET/IB : Using' every NIC with /RoCE"),
        ("NCCL_DEBUG_SUBSYS", "INIT,NET", "transport selection only"),
    ),
    "ethernet": (
        ("NCCL_IB_DISABLE", "1", "TCP sockets (no RDMA in this design)"),
        ("NCCL_SOCKET_IFNAME", '"$DATA_IFS"', "the NICs of the GPU fabric"),
        ("NCCL_SOCKET_NTHREADS", "4", "more sockets per peer for 100G+ (NCCL env docs)"),
        ("NCCL_NSOCKS_PERTHREAD", "4", "NTHREADS x NSOCKS must stay <= 64"),
        ("NCCL_DEBUG", "INFO", "the log must show 'NET/Socket : Using' the data interfaces"),
    ),
}

_LOOK_AT: dict[str, tuple[str, ...]] = {
    "infiniband": (
        "ibstat: every HCA Active at the expected rate (e.g. 400 Gb/sec NDR)",
        "perfquery -x on each port: PortXmitWait (congestion), SymbolErrorCounter, "
        "LinkDownedCounter, PortRcvErrors",
        "ibdiagnet on the fabric: bad links, wrong cabling of rails",
        "NCCL_DEBUG=INFO output: every HCA listed in 'NET/IB : Using', GDR enabled",
    ),
    "roce": (
        "ethtool -S <if>: rx_prio<N>_pause / tx_prio<N>_pause (PFC storms), "
        "rx_discards_phy, out_of_buffer",
        "/sys/class/infiniband/<dev>/ports/1/hw_counters: np_cnp_sent, rp_cnp_handled "
        "(ECN / DCQCN reacting), out_of_sequence, packet_seq_err",
        "switch: PFC pause frames, ECN-marked packets and buffer drops per port, MTU 9000 end "
        "to end",
        "NCCL_DEBUG=INFO output: every NIC listed with '/RoCE', GID index 3",
    ),
    "ethernet": (
        "nstat / netstat -s: TcpRetransSegs growing during the test",
        "ethtool -S <if>: rx_missed_errors, rx_dropped; interface MTU 9000",
        "NCCL_DEBUG=INFO output: 'NET/Socket : Using' all data interfaces",
        "CPU: the NCCL proxy threads are not starved (top during the test)",
    ),
    "scaleup": (
        "nvidia-smi topo -m (NVLink on every GPU pair) / rocm-smi --showtopo (xGMI)",
        "nvidia-smi nvlink -e (NVLink error counters) / rocm-smi --showxgmierr",
        "GPU clocks and power: nvidia-smi -q -d CLOCK,POWER during the test",
    ),
}


@dataclass(frozen=True)
class AcceptanceCheck:
    scope: str
    """``2 servers``, ``one leaf (N servers)``, ``one rail group (N servers)``, ``whole job``."""
    op: str
    nodes: int
    gpus: int
    nbytes: int
    expected_low_gbytes_per_s: float
    expected_high_gbytes_per_s: float
    max_time_us: float
    """Pass threshold: pessimistic model time x (1 + PASS_TOLERANCE)."""
    command: str

    @property
    def threshold_busbw_gbytes_per_s(self) -> float:
        factor = busbw_factor(ENGINE_OP[self.op], self.gpus)
        return self.nbytes / (self.max_time_us * 1e-6) * factor / 1e9

    def expected_range(self, dash: str = " - ") -> str:
        """The expected busbw as a reader takes it: "336 - 361", or one figure where both
        worlds read the same to three digits (two servers of one leaf see no congestion,
        the only thing the bounds move: "459 - 459" read as a mistake)."""
        low = significant(self.expected_low_gbytes_per_s, 3)
        high = significant(self.expected_high_gbytes_per_s, 3)
        return low if low == high else f"{low}{dash}{high}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "op": self.op,
            "nodes": self.nodes,
            "gpus": self.gpus,
            "bytes": self.nbytes,
            "expected_busbw_GBps": {
                "low": self.expected_low_gbytes_per_s,
                "high": self.expected_high_gbytes_per_s,
            },
            "pass_busbw_GBps": self.threshold_busbw_gbytes_per_s,
            "max_time_us": self.max_time_us,
            "command": self.command,
        }


@dataclass(frozen=True)
class AcceptancePlan:
    title: str
    fabric: str | None
    gpu_id: str
    gpus_per_node: int
    tool: str
    """``nccl-tests`` or ``rccl-tests`` (AMD GPUs)."""
    scopes: tuple[tuple[str, int], ...]
    env: tuple[tuple[str, str, str], ...]
    checks: tuple[AcceptanceCheck, ...]
    commands: tuple[tuple[str, str, str], ...]
    """(scope, mpirun line, srun line) per scope and op, one ``-b 8 -e 8G`` run each."""
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "fabric": self.fabric,
            "gpu": self.gpu_id,
            "gpus_per_node": self.gpus_per_node,
            "tool": self.tool,
            "scopes": [{"scope": s, "nodes": n} for s, n in self.scopes],
            "env": [{"name": k, "value": v, "why": w} for k, v, w in self.env],
            "pass_rule": (
                f"measured time <= pessimistic model time x {1 + PASS_TOLERANCE:.2f} "
                f"+ {LATENCY_ALLOWANCE_S * 1e6:.0f} us (equivalently busbw >= pass_busbw_GBps)"
            ),
            "checks": [c.to_dict() for c in self.checks],
            "commands": [{"scope": s, "mpirun": m, "srun": r} for s, m, r in self.commands],
            "notes": list(self.notes),
        }


def _scopes(nodes: int, leaves: int, rail: bool, nics_per_node: int) -> list[tuple[str, int]]:
    """The scopes to test: 2 servers, one leaf or rail group (``leaves`` leaf switches, 0
    when the design's topology is not known) and the whole job."""
    scopes: list[tuple[str, int]] = []
    if nodes >= 2:
        scopes.append(("2 servers", 2))
    if leaves > 0 and nodes > 2:
        per_leaf = nodes * max(1, nics_per_node) // leaves if rail else nodes // leaves
        per_leaf = max(2, min(nodes, per_leaf or RAIL_GROUP_NODES))
        label = "one rail group" if rail else "one leaf"
        if 2 < per_leaf < nodes:
            scopes.append((f"{label} ({per_leaf} servers)", per_leaf))
        elif per_leaf >= nodes:
            scopes.append((f"whole job = {label} ({nodes} servers)", nodes))
            return scopes
    if nodes > 2:
        scopes.append((f"whole job ({nodes} servers)", nodes))
    if nodes <= 1:
        scopes.append(("1 server", 1))
    return scopes


OP_WORDS = {
    "all_reduce": "all-reduce",
    "all_gather": "all-gather",
    "reduce_scatter": "reduce-scatter",
    "alltoall": "all-to-all",
    "sendrecv": "send/receive",
    "broadcast": "broadcast",
}
"""nccl-tests operations in words (their binaries keep their names: all_reduce_perf)."""
SHELL_VARIABLES: dict[str, str] = {
    "COMPUTE_HCAS": "the compute-fabric HCAs, one per rail (e.g. mlx5_0,mlx5_1,...; ibdev2netdev)",
    "MGMT_IF": "the management interface NCCL bootstraps over (e.g. eno1)",
    "LOSSLESS_TC": "the traffic class of your switches' PFC/ECN (lossless) queue",
    "DATA_IFS": "the GPU fabric's interfaces (e.g. ens1f0,ens2f0)",
}
"""The commands read these shell variables instead of pasting placeholders a shell would
misread (<...> is a redirection); set them once before running the commands."""


def _every_domain_note(nodes: int, domain_servers: int) -> tuple[str]:
    """Where a plan without a compute fabric runs: on every server or NVLink domain."""
    one = "server" if domain_servers == 1 else f"NVLink domain of {domain_servers} servers"
    many = "servers" if domain_servers == 1 else "NVLink domains"
    return (
        f"No compute fabric: the GPUs talk only inside each {one}, so these tests run on every "
        f"one of the {nodes // domain_servers:,} {many}; the storage / in-band Ethernet carries "
        "no NCCL traffic and is not tested here.",
    )


def _domain_scope(servers: int) -> tuple[str, int]:
    """The one scope of a plan without a compute fabric: a server, or the servers of one NVLink
    domain (an NVL72 rack's 18 trays) whose GPUs talk over NVLink."""
    return ("1 server", 1) if servers <= 1 else (f"one NVLink domain ({servers} servers)", servers)


def _binary(op: str) -> str:
    return f"./build/{op}_perf"


def _commands(
    scope: str, nodes: int, gpn: int, op: str, env: tuple[tuple[str, str, str], ...]
) -> tuple[str, str]:
    args = "-b 8 -e 8G -f 2 -g 1 -w 5 -n 20"
    xs = " ".join(f"-x {k}={v}" for k, v, _w in env)
    mpirun = (
        f"mpirun -np {nodes * gpn} -N {gpn} --hostfile hosts_{nodes}.txt --bind-to numa "
        f"{xs} {_binary(op)} {args}"
    ).replace("  ", " ")
    exports = " ".join(f"{k}={v}" for k, v, _w in env)
    srun = (
        f"{exports} srun --nodes={nodes} --ntasks-per-node={gpn} --gpus-per-node={gpn} "
        f"--mpi=pmix {_binary(op)} {args}"
    ).strip()
    return mpirun, srun


def acceptance_plan(
    result: EngineResult,
    *,
    catalog: Catalog | None = None,
    given_design: bool = False,
) -> AcceptancePlan:
    """Plan for the recommended design of an engine result (``evaluate_typed`` output, or a
    stored run read by ``advisor.scenarios.results.stored_result``).

    ``given_design=True`` (or a result without a recommendation) plans the scenario's own
    ``design`` instead.  Raises ValueError when the result names no GPU or no design.
    """
    typed = result
    cat = catalog or default_catalog()
    scenario = typed.scenario
    gpu = cat.gpu(scenario.gpu)
    if gpu is None:
        raise ValueError("result has no known scenario.gpu")
    gpn = int(scenario.gpus_per_node or gpu.gpus_per_server)
    gpus = int(scenario.gpus or gpn)
    nodes = max(1, gpus // max(1, gpn))
    rec = typed.recommendation
    given = typed.design_evaluation.design if typed.design_evaluation is not None else None
    use_given = given is not None and ((given_design and bool(given.fabric)) or not rec.fabric)
    if given is not None and use_given:
        fabric_id, nic_gbps, nics = given.fabric, given.nic_gbps, given.nics_per_node
        oversub = float(given.oversubscription or 1.0)
        leaves, rail = 0, False  # the given design's topology is not in the result
    else:
        fabric_id, nic_gbps, nics = rec.fabric, rec.nic_gbps, rec.nics_per_node
        oversub = float(rec.topology.oversubscription or 1.0)
        leaves, rail = int(rec.topology.leaf_switches or 0), rec.topology.rail_optimized
    # an answer without a compute fabric keeps GPU traffic inside each scale-up domain: its
    # ethernet ports carry storage and users, not NCCL, so the domain alone is tested
    scale_up_only = nodes <= 1 or (not use_given and not rec.needs_compute_fabric)
    fabric = None if scale_up_only else fabric_id
    nic_gbps = float(nic_gbps or 0.0)
    nics = int(nics or 0)
    if not scale_up_only and (not fabric or nic_gbps <= 0 or nics <= 0):
        raise ValueError("result has no recommended or given network design to plan for")
    env = _ENV.get(str(fabric), ()) if fabric else ()
    tool = "rccl-tests" if gpu.vendor == "AMD" else "nccl-tests"
    domain_servers = min(nodes, max(1, int(typed.workload.scaleup_domain_gpus or gpn) // gpn))
    scopes = (
        [_domain_scope(domain_servers)] if scale_up_only else _scopes(nodes, leaves, rail, nics)
    )
    checks: list[AcceptanceCheck] = []
    commands: list[tuple[str, str, str]] = []
    for scope, n in scopes:
        for op in ACCEPTANCE_OPS:
            mpirun, srun = _commands(scope, n, gpn, op, env)
            commands.append((f"{scope}: {OP_WORDS.get(op, op)}", mpirun, srun))
            engine_op = ENGINE_OP[op]
            doms = {
                bound: make_domain(  # one scale-up domain is one node of n servers' GPUs
                    nodes=1 if fabric is None else n,
                    ranks_per_node=n * gpn if fabric is None else gpn,
                    scaleup=ScaleUp.of(gpu),
                    fabric_id=fabric if n > 1 else None,
                    nic_gbps=nic_gbps,
                    nics_per_node=nics,
                    oversubscription=oversub,
                    bound=bound,
                )
                for bound in ("low", "high")
            }
            ranks = n * gpn
            factor = busbw_factor(engine_op, ranks)
            for size in ACCEPTANCE_SIZES:
                t_fast = collective_time_s(engine_op, float(size), doms["low"])[0]
                t_slow = collective_time_s(engine_op, float(size), doms["high"])[0]
                if t_fast <= 0 or t_slow <= 0 or not math.isfinite(t_slow):
                    continue
                checks.append(
                    AcceptanceCheck(
                        scope=scope,
                        op=op,
                        nodes=n,
                        gpus=ranks,
                        nbytes=size,
                        expected_low_gbytes_per_s=size / t_slow * factor / 1e9,
                        expected_high_gbytes_per_s=size / t_fast * factor / 1e9,
                        max_time_us=(t_slow * (1.0 + PASS_TOLERANCE) + LATENCY_ALLOWANCE_S) * 1e6,
                        command=mpirun,
                    )
                )
    label = (
        f"{fabric_label(fabric)} {nics} x {nic_gbps:g}G per server"
        if fabric
        else "single server (scale-up)"
        if nodes <= 1
        else "no compute fabric (scale-up only)"
    )
    every = _every_domain_note(nodes, domain_servers) if fabric is None and nodes > 1 else ()
    notes = (
        f"Run each command once the fabric is cabled and the servers are in the job's "
        f"placement; {tool} prints one row per size: compare the out-of-place 'time' column.",
        f"A check passes when time <= the pessimistic model time + {PASS_TOLERANCE:.0%} + "
        f"{LATENCY_ALLOWANCE_S * 1e6:.0f} us (busbw at or above the pass threshold); 'high' "
        "is what a "
        "well-tuned fabric reaches.",
        "Upload the output (all tests in one file is fine) to grade it against this plan.",
        *every,
        *(
            f"Set {name} first ({what}): export {name}=..."
            for name, what in SHELL_VARIABLES.items()
            if any(f"${name}" in value for _k, value, _w in env)
        ),
    )
    return AcceptancePlan(
        title=f"Acceptance test plan: {gpus} x {gpu.name}, {label}",
        fabric=fabric,
        gpu_id=gpu.id,
        gpus_per_node=gpn,
        tool=tool,
        scopes=tuple(scopes),
        env=env,
        checks=tuple(checks),
        commands=tuple(commands),
        notes=notes,
    )


# ----------------------------------------------------------------------------- grading


@dataclass(frozen=True)
class GradedCheck:
    check: AcceptanceCheck
    measured_busbw_gbytes_per_s: float | None
    measured_time_us: float | None
    passed: bool | None
    """None when the measurement has no row for this check."""
    look_at: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        out = self.check.to_dict()
        out.update(
            {
                "measured_busbw_GBps": self.measured_busbw_gbytes_per_s,
                "measured_time_us": self.measured_time_us,
                "passed": self.passed,
                "look_at": list(self.look_at),
            }
        )
        return out


@dataclass(frozen=True)
class Grading:
    checks: tuple[GradedCheck, ...]
    passed: bool
    """At least one check measured and none failed."""
    complete: bool
    """Every check of the plan was measured."""
    summary: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "complete": self.complete,
            "summary": self.summary,
            "measured": sum(1 for c in self.checks if c.passed is not None),
            "failed": sum(1 for c in self.checks if c.passed is False),
            "checks": [c.to_dict() for c in self.checks],
        }


def _look_at(plan: AcceptancePlan, check: AcceptanceCheck, time_us: float) -> tuple[str, ...]:
    hints: list[str] = []
    latency_bound = check.nbytes <= 64 * 1024
    if check.nodes <= 1:
        return _LOOK_AT["scaleup"]
    if latency_bound:
        hints.append(
            f"small message ({check.nbytes} B) {time_us:.1f} us vs at most "
            f"{check.max_time_us:.1f} us: latency - check that NCCL uses the RDMA transport "
            "(not NET/Socket), GPUDirect RDMA is on and ranks are pinned near their NIC"
        )
    else:
        hints.append(
            f"{check.nbytes} B reach {check.nbytes / (time_us * 1e-6) / 1e9:.1f} GB/s algbw: "
            "bandwidth - check every NIC runs at line rate and carries traffic"
        )
    if check.scope.startswith("whole job") or check.scope.startswith("one "):
        hints.append(
            "if the 2-server checks pass but this scope fails, look at the spine / uplinks: "
            "oversubscription, ECMP collisions, adaptive routing"
        )
    hints.extend(_LOOK_AT.get(str(plan.fabric), ()))
    return tuple(hints)


def grade(plan: AcceptancePlan, parsed: ParsedText) -> Grading:
    """Grade a parsed measurement against the plan (runs matched by op, servers and GPUs)."""
    table: dict[tuple[str, int, int], dict[int, float]] = {}
    for run in parsed.runs:
        if not run.nodes or not run.ranks:
            continue
        rows = table.setdefault((run.op, run.nodes, run.ranks), {})
        for row in run.rows:
            if MIN_TIME_US <= row.time_us <= MAX_TIME_US:
                rows[row.nbytes] = row.time_us
    graded: list[GradedCheck] = []
    for c in plan.checks:
        t = table.get((c.op, c.nodes, c.gpus), {}).get(c.nbytes)
        if t is None:
            graded.append(GradedCheck(c, None, None, None, ()))
            continue
        factor = busbw_factor(ENGINE_OP[c.op], c.gpus)
        busbw = c.nbytes / (t * 1e-6) * factor / 1e9
        ok = t <= c.max_time_us
        graded.append(GradedCheck(c, busbw, t, ok, () if ok else _look_at(plan, c, t)))
    measured = [g for g in graded if g.passed is not None]
    failed = [g for g in measured if g.passed is False]
    passed = bool(measured) and not failed
    complete = len(measured) == len(graded)
    if not measured:
        summary = (
            "The measurement has no run matching this plan (same test, servers and GPUs); "
            "nothing graded."
        )
    else:
        summary = (
            f"{len(measured)} of {len(graded)} checks measured, {len(failed)} failed: "
            + ("PASS" if passed else "FAIL")
            + ("" if complete else " (incomplete: run the missing scopes and tests)")
        )
    return Grading(checks=tuple(graded), passed=passed, complete=complete, summary=summary)


# ----------------------------------------------------------------------------- markdown


def _size(nbytes: int) -> str:
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= div and nbytes % div == 0:
            return f"{nbytes // div} {unit}"
    return f"{nbytes} B"


def plan_markdown(plan: AcceptancePlan, grading: Grading | None = None) -> str:
    """The plan (and optionally a grading) as a Markdown document."""
    out = [f"# {plan.title}", ""]
    out += [f"- {n}" for n in plan.notes]
    out += ["", "## NCCL environment", ""]
    if plan.env:
        out += ["| variable | value | why |", "|---|---|---|"]
        out += [f"| `{k}` | `{v}` | {w} |" for k, v, w in plan.env]
    else:
        out.append("Single server: no network variables; NCCL uses NVLink / xGMI.")
    out += ["", "## Commands", ""]
    for scope, mpirun, srun in plan.commands:
        out += [f"### {scope}", "", "```sh", mpirun, "# or with Slurm:", srun, "```", ""]
    graded = {id(g.check): g for g in grading.checks} if grading else {}
    out += ["## Expected bus bandwidth and pass thresholds", ""]
    if grading is not None:
        out += [f"**Result: {grading.summary}**", ""]
    for scope, _n in plan.scopes:
        for op in ACCEPTANCE_OPS:
            rows = [c for c in plan.checks if c.scope == scope and c.op == op]
            if not rows:
                continue
            out += [f"### {scope}: {op} ({rows[0].gpus} GPUs)", ""]
            head = "| size | expected busbw GB/s (low-high) | pass if busbw >= | max time us |"
            sep = "|---|---|---|---|"
            if grading is not None:
                head += " measured busbw | result |"
                sep += "---|---|"
            out += [head, sep]
            for c in rows:
                line = (
                    f"| {_size(c.nbytes)} | {c.expected_range()} | "
                    f"{significant(c.threshold_busbw_gbytes_per_s, 3)} "
                    f"| {c.max_time_us:.1f} |"
                )
                g = graded.get(id(c))
                if grading is not None and g is not None:
                    if g.passed is None:
                        line += " - | not measured |"
                    else:
                        line += (
                            f" {significant(g.measured_busbw_gbytes_per_s or 0, 3)} | "
                            f"{'pass' if g.passed else 'FAIL'} |"
                        )
                out.append(line)
            out.append("")
    if grading is not None:
        failures = [g for g in grading.checks if g.passed is False]
        if failures:
            out += ["## What to look at", ""]
            seen: set[str] = set()
            for g in failures:
                for hint in g.look_at:
                    if hint not in seen:
                        seen.add(hint)
                        out.append(f"- {hint}")
            out.append("")
    return "\n".join(out)
