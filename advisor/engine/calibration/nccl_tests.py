"""Parser for nccl-tests / rccl-tests text output and perftest ``ib_write_bw`` / ``ib_write_lat``.

Pure function :func:`parse_text` turns pasted benchmark output into :class:`ParsedText`.  It
understands several tests in one file (``# Collective test starting: ...`` or a new
``# nThread`` header starts a new run), out-of-place and in-place columns, the ``#wrong`` /
``error`` column with values such as ``N/A``, ``# Using devices`` rank lines (from which ranks,
servers and GPU model follow), MPI output tags such as ``[1,0]<stdout>:``, the command line
(``-np``, ``-x NCCL_...=...``) and ``NCCL_DEBUG`` lines (transport, NICs, NCCL version).

Anything it cannot read raises :class:`NcclParseError` with the 1-based line number and the
line; it never raises anything else (checked by a hypothesis test).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ENGINE_OP",
    "LinkRow",
    "LinkRun",
    "NcclParseError",
    "ParsedText",
    "Row",
    "Run",
    "parse_text",
]

MAX_LINES = 200_000
"""Refuse texts longer than this many lines (the web and API limit the size further)."""
MAX_ROWS = 4_000
"""Refuse texts with more result rows than this (nccl-tests prints ~30 sizes per test; 4,000
rows are 130 tests), so reading an upload stays well under a second."""

ENGINE_OP: dict[str, str] = {
    "all_reduce": "all_reduce",
    "all_gather": "all_gather",
    "reduce_scatter": "reduce_scatter",
    "alltoall": "all_to_all",
    "broadcast": "broadcast",
    "sendrecv": "p2p",
}
"""nccl-tests test name -> op name of :mod:`advisor.engine.model.collectives` (others are kept
but not modelled: reduce, gather, scatter, hypercube)."""


class NcclParseError(ValueError):
    """The text is not nccl-tests/rccl-tests/perftest output, or one line of it is malformed."""

    def __init__(self, message: str, *, line_number: int = 0, line: str = "") -> None:
        self.line_number = line_number
        self.line = line[:200]
        where = f"line {line_number}: " if line_number else ""
        shown = f" ({self.line.strip()!r})" if self.line.strip() else ""
        super().__init__(f"{where}{message}{shown}")


@dataclass(frozen=True)
class Row:
    """One size of one run; times in microseconds, bandwidths in GB/s (1e9 bytes/s)."""

    nbytes: int
    time_us: float
    algbw_gbytes_per_s: float
    busbw_gbytes_per_s: float
    wrong: str | None = None
    in_place_time_us: float | None = None
    in_place_algbw_gbytes_per_s: float | None = None
    in_place_busbw_gbytes_per_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        in_place: dict[str, float] | None = None
        if self.in_place_time_us is not None:
            in_place = {
                "time_us": self.in_place_time_us,
                "algbw_GBps": self.in_place_algbw_gbytes_per_s or 0.0,
                "busbw_GBps": self.in_place_busbw_gbytes_per_s or 0.0,
            }
        return {
            "bytes": self.nbytes,
            "time_us": self.time_us,
            "algbw_GBps": self.algbw_gbytes_per_s,
            "busbw_GBps": self.busbw_gbytes_per_s,
            "wrong": self.wrong,
            "in_place": in_place,
        }


@dataclass(frozen=True)
class Run:
    """One nccl-tests / rccl-tests test (one binary run)."""

    op: str
    """nccl-tests name without ``_perf``: all_reduce, all_gather, alltoall, ... or ``unknown``."""
    tool: str
    """``nccl-tests`` or ``rccl-tests``."""
    ranks: int | None
    nodes: int | None
    gpus_per_node: int | None
    gpu: str | None
    hosts: tuple[str, ...]
    rows: tuple[Row, ...]
    avg_busbw_gbytes_per_s: float | None = None
    transport: str | None = None
    """``IB``, ``RoCE``, ``Socket`` or another NCCL net name when NCCL_DEBUG lines say so."""
    env: tuple[tuple[str, str], ...] = ()
    first_line: int = 0

    @property
    def engine_op(self) -> str | None:
        return ENGINE_OP.get(self.op)

    @property
    def peak_busbw_gbytes_per_s(self) -> float:
        return max((r.busbw_gbytes_per_s for r in self.rows), default=0.0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "tool": self.tool,
            "ranks": self.ranks,
            "nodes": self.nodes,
            "gpus_per_node": self.gpus_per_node,
            "gpu": self.gpu,
            "hosts": list(self.hosts),
            "transport": self.transport,
            "env": dict(self.env),
            "rows": [r.to_dict() for r in self.rows],
            "peak_busbw_GBps": self.peak_busbw_gbytes_per_s,
            "avg_busbw_GBps": self.avg_busbw_gbytes_per_s,
        }


@dataclass(frozen=True)
class LinkRow:
    """One perftest row: bandwidth in Gb/s, or latency in microseconds."""

    nbytes: int
    iterations: int
    bw_peak_gbps: float | None = None
    bw_average_gbps: float | None = None
    lat_min_us: float | None = None
    lat_typical_us: float | None = None
    lat_avg_us: float | None = None
    lat_p99_us: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "bytes": self.nbytes,
            "iterations": self.iterations,
            "bw_peak_Gbps": self.bw_peak_gbps,
            "bw_average_Gbps": self.bw_average_gbps,
            "lat_min_us": self.lat_min_us,
            "lat_typical_us": self.lat_typical_us,
            "lat_avg_us": self.lat_avg_us,
            "lat_p99_us": self.lat_p99_us,
        }


@dataclass(frozen=True)
class LinkRun:
    """One perftest run (``ib_write_bw`` or ``ib_write_lat`` and their read/send siblings)."""

    tool: str
    link_type: str | None
    device: str | None
    rows: tuple[LinkRow, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "link_type": self.link_type,
            "device": self.device,
            "rows": [r.to_dict() for r in self.rows],
        }


@dataclass(frozen=True)
class ParsedText:
    runs: tuple[Run, ...]
    link_runs: tuple[LinkRun, ...]
    warnings: tuple[str, ...]
    nccl_version: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": [r.to_dict() for r in self.runs],
            "link_runs": [r.to_dict() for r in self.link_runs],
            "warnings": list(self.warnings),
            "nccl_version": self.nccl_version,
        }


# ----------------------------------------------------------------------------- regexes
# The text is a user's upload (up to 512,000 characters through the web and the API), so every
# pattern runs in time linear in its line: ASCII only (re.ASCII: full-width or Arabic-Indic
# digits are not numbers), no two quantifiers that can trade the same characters before a
# test that may fail (possessive ``++``/``*+`` where they could), repetition bounded where a
# name is captured, numbers as whole tokens of at most MAX_TOKEN_CHARS, and lines longer than
# MAX_LINE_CHARS skipped unread (no nccl-tests, rccl-tests or perftest line is near that long).
# tests/measurements/test_parser_adversarial.py holds the parser to this with hypothesis and
# counts its work; bench/parse_bench.py times the largest adversarial uploads.

MAX_LINE_CHARS = 4096
"""Longer lines are skipped (with a warning): benchmark lines are a few hundred characters."""
MAX_TOKEN_CHARS = 40
"""A number longer than this is not one nccl-tests or perftest prints."""

_A = re.ASCII
_TAG = re.compile(r"^\s*+\[[0-9]{1,9},[0-9]{1,9}\]<(?:stdout|stderr)>:", _A)
_NAME = r"([a-z_]{1,64}?)_perf"
_OP_NAME = re.compile(r"(?<![A-Za-z0-9_])" + _NAME + r"(?:_mpi)?\b", _A)
_STARTING = re.compile(r"#\s*+Collective test starting:\s*+" + _NAME, _A)
_CONCLUDED = re.compile(r"#\s*+Collective test concluded:\s*+" + _NAME, _A)
_HEADER = re.compile(r"^#?\s*+nThread\s++([0-9]{1,9})\s++nGpus\s++([0-9]{1,9})", _A)
_RANK = re.compile(
    r"^#\s*+Rank\s++([0-9]{1,9})\s++(?:Group\s++[0-9]{1,9}\s++)?Pid\s++[0-9]{1,12}\s++"
    r"on\s++(\S{1,255})\s++device\s++([0-9]{1,9})\s++\[[^\]]{0,255}\]\s*+(.*)$",
    _A,
)
_COLUMNS = re.compile(r"^#\s*+size\s++count\s++type\b", _A)
_AVG = re.compile(r"#\s*+Avg bus bandwidth\s*+:\s*+(\S++)", _A)
_NP_FLAGS = frozenset({"-np", "-n", "--np", "-N", "--ntasks"})
_LAUNCHER = re.compile(r"\b(?:mpirun|mpiexec|srun|torchrun)\b", _A)
_ENV = re.compile(r"\b((?:NCCL|RCCL|UCX|FI)_[A-Z0-9_]{1,64}+)=(\S{0,255}+)", _A)
_NCCL_VERSION = re.compile(r"\b[NR]CCL version\s*+:?\s*+([0-9][^\s]{0,63})", _A)
_NET = re.compile(r"NCCL INFO (?:NET/|Using network )(IB|Socket|[A-Za-z0-9_]{1,64}+)\b(.*)$", _A)
_VIA = re.compile(r"via NET/([A-Za-z0-9_]{1,64})", _A)
_INT = re.compile(r"-?[0-9]{1,19}", _A)
"""Used with fullmatch: a whole token."""
_FLOAT = re.compile(r"-?(?:[0-9]++(?:\.[0-9]*+)?|\.[0-9]++)(?:[eE][-+]?[0-9]++)?", _A)
"""Used with fullmatch: a whole token (at most MAX_TOKEN_CHARS)."""
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}", _A)
"""Used with fullmatch: a whole token."""
_PERF_BW_HEADER = re.compile(r"#bytes\s++#?iterations\s++BW peak\[(Gb|MB|GB)/sec\]", _A)
_PERF_LAT_HEADER = re.compile(r"#bytes\s++#?iterations\s++t_min\[usec\]", _A)
_PERF_TITLE = re.compile(
    r"^\s*+(RDMA_Write|RDMA_Read|Send)\s++[A-Za-z ]{0,64}?(BW|Latency)\s++Test", _A
)
_PERF_LINK = re.compile(r"Link type\s*+:\s*+(\S{1,64})", _A)
_PERF_DEVICE = re.compile(r"Device\s*+:\s*+(\S{1,64})", _A)


_DIGITS = frozenset("0123456789")
# Anything a line that starts with a digit may carry besides a result row (a hostname-prefixed
# NCCL debug line, an environment variable, the test binary): such lines take the full path.
_MARKERS = re.compile(r"CCL|UCX_|FI_|NET/|_perf|Avg bus|Collective test|nThread|#", _A)


def _is_int(tok: str) -> bool:
    return _INT.fullmatch(tok) is not None


def _is_word(tok: str) -> bool:
    return _WORD.fullmatch(tok) is not None


def _flag_value(toks: list[str], flags: frozenset[str]) -> int | None:
    """The integer after the first of `flags` among `toks` (``-np 16``), if any."""
    for i, tok in enumerate(toks[:-1]):
        if tok in flags and _is_int(toks[i + 1]) and not toks[i + 1].startswith("-"):
            return int(toks[i + 1])
    return None


_BUSBW_RATIO = {
    "all_reduce": lambda n: 2.0 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
}


def _infer_op(rows: list[Row], ranks: int) -> str | None:
    """all_reduce or an (n-1)/n collective from nccl-tests' busbw/algbw factor, else None."""
    ratios = [
        r.busbw_gbytes_per_s / r.algbw_gbytes_per_s for r in rows if r.algbw_gbytes_per_s >= 1
    ]
    if not ratios or ranks < 2:
        return None
    ratio = sorted(ratios)[len(ratios) // 2]
    if abs(ratio - 2.0 * (ranks - 1) / ranks) < 0.02 and ranks > 1:
        return "all_reduce"
    return None


def _num(tok: str, line_number: int, line: str, what: str) -> float:
    if len(tok) > MAX_TOKEN_CHARS or _FLOAT.fullmatch(tok) is None:
        raise NcclParseError(f"{what} {tok!r} is not a number", line_number=line_number, line=line)
    value = float(tok)
    if not math.isfinite(value):
        raise NcclParseError(f"{what} {tok!r} is not finite", line_number=line_number, line=line)
    return value


def _op_from(name: str) -> str:
    return name.strip("_")


@dataclass
class _Builder:
    first_line: int
    op: str | None = None
    tool: str = "nccl-tests"
    n_threads: int | None = None
    n_gpus: int | None = None
    ranks: dict[int, tuple[str, str]] = field(default_factory=dict)
    rows: list[Row] = field(default_factory=list)
    avg: float | None = None
    has_redop: bool | None = None
    has_root: bool | None = None

    def empty(self) -> bool:
        return not self.rows and not self.ranks and self.n_gpus is None


@dataclass
class _LinkBuilder:
    tool: str
    link_type: str | None = None
    device: str | None = None
    unit: str | None = None
    kind: str = "bw"
    rows: list[LinkRow] = field(default_factory=list)


class _Parser:
    def __init__(self) -> None:
        self.runs: list[Run] = []
        self.link_runs: list[LinkRun] = []
        self.warnings: list[str] = []
        self.cur: _Builder | None = None
        self.link: _LinkBuilder | None = None
        self.pending_op: str | None = None
        self.np: int | None = None
        self.env: dict[str, str] = {}
        self.transport: str | None = None
        self.nccl_version: str | None = None
        self.rccl = False
        self.header_line = 0
        self.cmd_gpus: int | None = None
        self.cmd_launcher = False
        self.rows_read = 0

    # -- runs ------------------------------------------------------------------------

    def start(self, line_number: int) -> _Builder:
        self.finish()
        self.finish_link()
        self.cur = _Builder(first_line=line_number, op=self.pending_op)
        self.pending_op = None
        if self.rccl:
            self.cur.tool = "rccl-tests"
        return self.cur

    def builder(self, line_number: int) -> _Builder:
        return self.cur if self.cur is not None else self.start(line_number)

    def finish(self) -> None:
        b = self.cur
        self.cur = None
        if b is None or not b.rows:
            return
        op = b.op or "unknown"
        hosts: tuple[str, ...] = ()
        gpu: str | None = None
        ranks: int | None = None
        nodes: int | None = None
        gpn: int | None = None
        if b.ranks:
            ranks = len(b.ranks)
            per_host: dict[str, int] = {}
            for host, _name in b.ranks.values():
                per_host[host] = per_host.get(host, 0) + 1
            hosts = tuple(per_host)
            nodes = len(per_host)
            gpn = max(per_host.values())
            names = [name for _h, name in b.ranks.values() if name]
            gpu = names[0] if names else None
            if len(set(per_host.values())) > 1:
                self.warnings.append(
                    f"{op} (line {b.first_line}): servers run different numbers of ranks "
                    f"({sorted(set(per_host.values()))}); using the largest, {gpn}"
                )
        elif b.n_gpus is not None:
            procs = self.np if self.np is not None else 1
            ranks = procs * b.n_gpus * (b.n_threads or 1)
            if self.np is None:
                nodes, gpn = 1, ranks
            self.warnings.append(
                f"{op} (line {b.first_line}): no '# Using devices' rank lines; "
                f"{ranks} ranks from the header" + ("" if nodes else ", number of servers unknown")
            )
        elif self.cmd_gpus is not None and not self.cmd_launcher:
            # one process driving -g GPUs: a single server
            ranks, nodes, gpn = self.cmd_gpus, 1, self.cmd_gpus
            self.warnings.append(
                f"{op} (line {b.first_line}): no '# Using devices' rank lines; {ranks} ranks "
                "on one server from the command line (-g, no MPI launcher)"
            )
        else:
            self.warnings.append(
                f"{op} (line {b.first_line}): no header and no '# Using devices' lines; "
                "ranks and servers unknown, this run is shown but not fitted"
            )
        if op == "unknown" and ranks:
            inferred = _infer_op(b.rows, ranks)
            if inferred is not None:
                op = inferred
                self.warnings.append(
                    f"run at line {b.first_line}: test name not printed; busbw/algbw = "
                    f"{_BUSBW_RATIO[inferred](ranks):.3f} for {ranks} ranks says {inferred}"
                )
        if op == "unknown":
            self.warnings.append(
                f"run at line {b.first_line}: test name unknown (no '..._perf' command or "
                "'Collective test' line); it is shown but not fitted"
            )
        self.runs.append(
            Run(
                op=op,
                tool=b.tool,
                ranks=ranks,
                nodes=nodes,
                gpus_per_node=gpn,
                gpu=gpu,
                hosts=hosts,
                rows=tuple(b.rows),
                avg_busbw_gbytes_per_s=b.avg,
                transport=self.transport
                or (
                    "Socket"
                    if self.env.get("NCCL_IB_DISABLE") == "1"
                    or self.env.get("NCCL_NET") == "Socket"
                    else None
                ),
                env=tuple(sorted(self.env.items())),
                first_line=b.first_line,
            )
        )

    def finish_link(self) -> None:
        lb = self.link
        self.link = None
        if lb is not None and lb.rows:
            self.link_runs.append(
                LinkRun(tool=lb.tool, link_type=lb.link_type, device=lb.device, rows=tuple(lb.rows))
            )

    # -- rows ------------------------------------------------------------------------

    def data_row(self, toks: list[str], n: int, line: str) -> None:
        b = self.builder(n)
        if len(toks) < 6:
            raise NcclParseError(
                "a table row needs size, count, type, time, algbw and busbw",
                line_number=n,
                line=line,
            )
        nbytes = int(toks[0])
        if nbytes < 0 or not _is_int(toks[1]) or not _is_word(toks[2]):
            raise NcclParseError(
                "expected '<size> <count> <type> ...' with a data type name such as float",
                line_number=n,
                line=line,
            )
        i = 3
        if i < len(toks) and _is_word(toks[i]):  # redop (sum, none, ...)
            i += 1
        rest = toks[i:]
        # root column: an integer followed by the time/bw columns
        if len(rest) in (5, 7, 9) and _is_int(rest[0]):
            rest = rest[1:]
        if len(rest) not in (3, 4, 6, 7, 8):
            raise NcclParseError(
                f"expected 4 (out-of-place) or 8 (with in-place) time/algbw/busbw/wrong "
                f"columns, found {len(rest)}",
                line_number=n,
                line=line,
            )
        with_wrong = len(rest) in (4, 8, 7)
        width = 4 if with_wrong else 3
        t = _num(rest[0], n, line, "time")
        alg = _num(rest[1], n, line, "algbw")
        bus = _num(rest[2], n, line, "busbw")
        wrong = rest[3] if with_wrong else None
        ip_t = ip_alg = ip_bus = None
        tail = rest[width:]
        if len(tail) >= 3:
            ip_t = _num(tail[0], n, line, "in-place time")
            ip_alg = _num(tail[1], n, line, "in-place algbw")
            ip_bus = _num(tail[2], n, line, "in-place busbw")
        if t < 0 or alg < 0 or bus < 0:
            raise NcclParseError(
                "time and bandwidths must not be negative", line_number=n, line=line
            )
        b.rows.append(
            Row(
                nbytes=nbytes,
                time_us=t,
                algbw_gbytes_per_s=alg,
                busbw_gbytes_per_s=bus,
                wrong=wrong,
                in_place_time_us=ip_t,
                in_place_algbw_gbytes_per_s=ip_alg,
                in_place_busbw_gbytes_per_s=ip_bus,
            )
        )

    def link_row(self, toks: list[str], n: int, line: str) -> None:
        lb = self.link
        assert lb is not None
        if len(toks) < 4 or not _is_int(toks[1]):
            raise NcclParseError(
                "a perftest row needs #bytes, #iterations and values", line_number=n, line=line
            )
        nbytes, iters = int(toks[0]), int(toks[1])
        vals = [_num(tok, n, line, "value") for tok in toks[2:]]
        if lb.kind == "bw":
            # perftest MB/sec are 2^20 bytes per second; --report_gbits prints Gb/sec
            scale = {"Gb": 1.0, "MB": 8.0 * 1048576 / 1e9, "GB": 8.0}.get(lb.unit or "Gb", 1.0)
            lb.rows.append(
                LinkRow(
                    nbytes=nbytes,
                    iterations=iters,
                    bw_peak_gbps=vals[0] * scale,
                    bw_average_gbps=vals[1] * scale if len(vals) > 1 else None,
                )
            )
        else:
            lb.rows.append(
                LinkRow(
                    nbytes=nbytes,
                    iterations=iters,
                    lat_min_us=vals[0],
                    lat_typical_us=vals[2] if len(vals) > 2 else None,
                    lat_avg_us=vals[3] if len(vals) > 3 else None,
                    lat_p99_us=vals[5] if len(vals) > 5 else None,
                )
            )

    # -- lines -----------------------------------------------------------------------

    def line(self, raw: str, n: int) -> bool:
        """Consume one line; return True when it was recognised as benchmark output."""
        if len(raw) > MAX_LINE_CHARS:
            self.warnings.append(
                f"line {n}: longer than {MAX_LINE_CHARS} characters; skipped unread"
            )
            return False
        line = _TAG.sub("", raw).rstrip() if raw.lstrip().startswith("[") else raw.rstrip()
        s = line.strip()
        if not s:
            return False
        if s[0] in _DIGITS and not _MARKERS.search(s):
            return self.table_line(s, n, line)  # the common case: a result row
        if "rccl-tests" in s or s.startswith("RCCL version") or "librccl" in s:
            self.rccl = True
            if self.cur is not None:
                self.cur.tool = "rccl-tests"
        m: re.Match[str] | None
        if "_" in s:
            for env_m in _ENV.finditer(s):
                self.env[env_m.group(1)] = env_m.group(2)
        if "CCL version" in s:
            m = _NCCL_VERSION.search(s)
            if m:
                self.nccl_version = m.group(1)
        if "NCCL INFO" in s:
            m = _NET.search(s)
            if m:
                name = m.group(1)
                self.transport = "RoCE" if name == "IB" and "RoCE" in m.group(2) else name
        if "via NET/" in s:
            m = _VIA.search(s)
            if m and self.transport is None:
                self.transport = m.group(1)
        # perftest
        m = _PERF_TITLE.match(s) if s[0] in "RS" else None
        if m:
            self.finish()
            self.finish_link()
            verb = {"RDMA_Write": "write", "RDMA_Read": "read", "Send": "send"}[m.group(1)]
            kind = "bw" if m.group(2) == "BW" else "lat"
            self.link = _LinkBuilder(tool=f"ib_{verb}_{kind}", kind=kind)
            return True
        if self.link is not None:
            m = _PERF_LINK.search(s)
            if m:
                self.link.link_type = "RoCE" if m.group(1) == "Ethernet" else m.group(1)
            m = _PERF_DEVICE.search(s)
            if m:
                self.link.device = m.group(1)
        m = _PERF_BW_HEADER.search(s) if "#bytes" in s else None
        if m:
            if self.link is None:
                self.link = _LinkBuilder(tool="ib_write_bw")
            self.link.kind, self.link.unit = "bw", m.group(1)
            return True
        if "#bytes" in s and _PERF_LAT_HEADER.search(s):
            if self.link is None:
                self.link = _LinkBuilder(tool="ib_write_lat")
            self.link.kind = "lat"
            return True
        # nccl-tests
        m = _STARTING.search(s) if "Collective test" in s else None
        if m:
            self.finish()
            self.pending_op = _op_from(m.group(1))
            return True
        m = _CONCLUDED.search(s) if "Collective test" in s else None
        if m:
            if self.cur is not None and self.cur.op is None:
                self.cur.op = _op_from(m.group(1))
            self.finish()
            return True
        m = _HEADER.match(s) if "nThread" in s else None
        if m:
            self.header_line = self.header_line or n
            b = self.start(n)
            b.n_threads, b.n_gpus = int(m.group(1)), int(m.group(2))
            return True
        m = _RANK.match(s) if "Rank" in s else None
        if m:
            b = self.builder(n)
            if b.rows:
                b = self.start(n)
            b.ranks[int(m.group(1))] = (m.group(2), m.group(4).strip())
            return True
        m = _COLUMNS.match(s)
        if m:
            b = self.builder(n)
            if b.rows:
                b = self.start(n)
            return True
        m = _AVG.search(s) if "Avg bus" in s else None
        if m:
            if self.cur is not None:
                try:
                    self.cur.avg = _num(m.group(1), n, line, "Avg bus bandwidth")
                except NcclParseError:
                    self.warnings.append(f"line {n}: unreadable 'Avg bus bandwidth' value")
            return True
        if s.startswith("#"):
            return s.startswith("# Using devices") or s.startswith("#  ")
        if "_perf" in s:
            m = _OP_NAME.search(s)
            if m:
                if self.cur is not None and self.cur.rows:
                    self.finish()
                if self.cur is not None and self.cur.op is None:
                    self.cur.op = _op_from(m.group(1))
                else:
                    self.pending_op = _op_from(m.group(1))
                np_value = _flag_value(s.split(), _NP_FLAGS)
                if np_value is not None:
                    self.np = np_value
                # -g (GPUs per process) counts after the test binary, not the launcher's.
                after_test = s[s.index("_perf") :].split()
                g_value = _flag_value(after_test, frozenset({"-g"}))
                if g_value is not None:
                    self.cmd_gpus = g_value
                self.cmd_launcher = self.cmd_launcher or bool(_LAUNCHER.search(s))
                return True
        return self.table_line(s, n, line)

    def table_line(self, s: str, n: int, line: str) -> bool:
        """A result row of nccl-tests or perftest (True), or not one (False)."""
        toks = s.split()
        if _is_int(toks[0]):
            self.rows_read += 1
            if self.rows_read > MAX_ROWS:
                raise NcclParseError(
                    f"more than {MAX_ROWS} result rows; send fewer tests at a time",
                    line_number=n,
                    line=line,
                )
            if self.link is not None and self.cur is None:
                self.link_row(toks, n, line)
                return True
            self.data_row(toks, n, line)
            return True
        return False


def parse_text(text: str) -> ParsedText:
    """Parse benchmark output; raise :class:`NcclParseError` naming the line it cannot read."""
    if not isinstance(text, str):
        raise NcclParseError("text must be a string")
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        raise NcclParseError(f"text has {len(lines)} lines; at most {MAX_LINES} are accepted")
    p = _Parser()
    first_unread: tuple[int, str] | None = None
    for n, raw in enumerate(lines, start=1):
        try:
            recognised = p.line(raw, n)
        except NcclParseError:
            raise
        except (ValueError, OverflowError, IndexError, KeyError) as exc:  # defensive
            raise NcclParseError(f"cannot read this line ({exc})", line_number=n, line=raw) from exc
        if not recognised and first_unread is None and raw.strip():
            first_unread = (n, raw)
    p.finish()
    p.finish_link()
    if not p.runs and not p.link_runs:
        if p.header_line:
            raise NcclParseError(
                "a benchmark header is here but no result row follows it (were the rows cut off?)",
                line_number=p.header_line,
                line=lines[p.header_line - 1],
            )
        if first_unread is not None:
            raise NcclParseError(
                "no nccl-tests, rccl-tests or perftest result table found; this line is not "
                "part of one",
                line_number=first_unread[0],
                line=first_unread[1],
            )
        raise NcclParseError("no nccl-tests, rccl-tests or perftest result table found")
    return ParsedText(
        runs=tuple(p.runs),
        link_runs=tuple(p.link_runs),
        warnings=tuple(p.warnings),
        nccl_version=p.nccl_version,
    )
