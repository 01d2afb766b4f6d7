"""The parser reads an upload in time linear in its size, whatever the upload holds.

Two backtracking patterns once made a 16 KB upload take ~18 s (a number pattern before a
non-digit, a lazy scan over a long command line) and the parser read full-width and
Arabic-Indic digits as numbers. Here adversarial uploads up to the 512,000-character limit are
parsed under a generous alarm (a quadratic pattern would need hours, not seconds: the guard
is not a speed assertion; bench/parse_bench.py measures the times), and the results are
checked: ASCII digits only, long lines skipped with a warning, rows and fitted samples capped.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.engine.calibration import fabric_fit
from advisor.engine.calibration.fabric_fit import MAX_FIT_SAMPLES, fit_measurement
from advisor.engine.calibration.nccl_tests import (
    MAX_LINE_CHARS,
    MAX_ROWS,
    NcclParseError,
    ParsedText,
    parse_text,
)

LIMIT_CHARS = 512_000  # the upload limit of the web form and the API (MEASUREMENT_TEXT_MAX_CHARS)
GUARD_S = 60  # far above any linear parse of 512,000 characters, far below a quadratic one

DATA = Path(__file__).resolve().parent.parent / "data" / "nccl"
TWO_SERVERS = (DATA / "nvidia_h100_2x8_all_reduce_gcp_a3mega.txt").read_text()


class Stuck(Exception):
    pass


@contextmanager
def guard(seconds: int = GUARD_S) -> Iterator[None]:
    """Fail instead of hanging when parsing does not finish (SIGALRM interrupts the regex
    engine, which checks for signals)."""

    def stuck(signum: int, frame: object) -> None:
        raise Stuck(f"parsing did not finish within {seconds} s")

    previous = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def parse_or_refuse(text: str) -> ParsedText | NcclParseError:
    with guard():
        try:
            return parse_text(text)
        except NcclParseError as exc:
            return exc


def fill(unit: str) -> str:
    """`unit` repeated up to exactly the upload limit."""
    return (unit * (LIMIT_CHARS // len(unit) + 1))[:LIMIT_CHARS]


ADVERSARIAL = {
    "digits and dots, one line": "1." * (LIMIT_CHARS // 2),
    "digits then a letter, one line": "1" * (LIMIT_CHARS - 1) + "x",
    "a row with a 500k-digit time": "8 2 float sum -1 " + "9" * (LIMIT_CHARS - 40) + "x 1 1 0",
    "a command line of _perf": "./all_reduce_perf " + "_perf " * ((LIMIT_CHARS - 18) // 6),
    "a command line of -np": "mpirun " + "-np 1111111111x " * ((LIMIT_CHARS - 7) // 16),
    "lines of digits and dots": fill("1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1x\n"),
    "4,000-character lines of digits": fill("7" * (MAX_LINE_CHARS - 1) + "x\n"),
    "lines of command lines": fill("srun -N 2 -np 16 ./all_reduce_perf -b 8 -e 8G -f 2 -g 1\n"),
    "lines of environment": fill("NCCL_IB_HCA=mlx5_0 NCCL_DEBUG=INFO UCX_TLS=rc\n"),
    "lines of headers": fill("# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592\n"),
    "lines of rank lines": fill("#  Rank  0 Group  0 Pid 1 on host-a device  0 [0x1b] H100\n"),
    "lines of rows": fill("8 2 float sum -1 10.5 0.00 0.00 0 10.4 0.00 0.00 0\n"),
    "full-width digits": fill("８ ２ float sum -1 １０ ０ ０ 0 １０ ０ ０ 0\n"),
}


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_an_adversarial_upload_of_the_largest_size_is_answered(name: str) -> None:
    text = ADVERSARIAL[name]
    assert len(text) <= LIMIT_CHARS

    outcome = parse_or_refuse(text)

    if name == "lines of rows":
        assert isinstance(outcome, NcclParseError)
        assert f"more than {MAX_ROWS} result rows" in str(outcome)
    else:
        # None of these is a benchmark table: each is refused with the reason, naming a line.
        assert isinstance(outcome, NcclParseError), name
        assert "result table" in str(outcome) or "header" in str(outcome) or "row" in str(outcome)
        assert len(str(outcome)) < 600  # the line is quoted shortened, never whole


def test_full_width_and_arabic_indic_digits_are_not_numbers() -> None:
    header = "# nThread 1 nGpus 8\n"
    for digits in ("０１２３４５６７８９", "٠١٢٣٤٥٦٧٨٩"):
        row = "8 2 float sum -1 {t} 0.00 0.00 0\n".format(t=digits[1] + "." + digits[5])
        outcome = parse_or_refuse(header + row)
        assert isinstance(outcome, NcclParseError)
        assert "time" in str(outcome) and "is not a number" in str(outcome)
        size_row = digits[8] + " 2 float sum -1 10.5 0.00 0.00 0\n"
        assert isinstance(parse_or_refuse(header + size_row), NcclParseError)


def test_a_real_log_with_a_very_long_line_still_reads_with_a_warning() -> None:
    text = TWO_SERVERS.replace("\n", "\n" + "x" * (MAX_LINE_CHARS + 1) + "\n", 1)

    parsed = parse_or_refuse(text)

    assert isinstance(parsed, ParsedText)
    (run,) = parsed.runs
    (original,) = parse_text(TWO_SERVERS).runs
    assert (run.op, run.ranks, run.nodes, run.rows) == (
        original.op,
        original.ranks,
        original.nodes,
        original.rows,
    )
    assert f"line 2: longer than {MAX_LINE_CHARS} characters; skipped unread" in parsed.warnings


def test_the_fit_of_a_huge_upload_takes_a_bounded_number_of_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fit runs in the upload's request: whatever the number of rows, at most
    MAX_FIT_SAMPLES enter it (counted by the fit's own model calls)."""
    ranks = "".join(
        f"#  Rank {i:2d} Group  0 Pid {i} on h{i // 8} device  {i % 8} [0x1b] NVIDIA H100\n"
        for i in range(16)
    )
    rows = "".join(
        f"{8 << k} {2 << k} float sum -1 {10 + k}.5 1.00 1.80 0 {10 + k}.4 1.00 1.80 0\n"
        for k in range(30)
    )
    unit = "# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 1\n" + ranks + rows
    parsed = parse_text(unit * 40)  # 1,200 rows
    seen: set[int] = set()
    cost = fabric_fit._cost

    def counting(samples: list[fabric_fit._Sample], *args: object) -> float:
        seen.add(len(samples))
        return cost(samples, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(fabric_fit, "_cost", counting)
    with guard():
        fit = fit_measurement(parsed)

    assert fit.network is not None
    assert max(seen) <= MAX_FIT_SAMPLES
    assert any("enters the fit" in w for w in fit.warnings)


ALPHABET = st.sampled_from(
    [
        "0", "7", "9", ".", "-", "e", "E", "+", " ", "\t", "\n", "x", "#", "_perf", "-np ",
        "-g ", "NCCL_", "=", "float", "sum", "# nThread 1 nGpus 8\n", "[1,0]<stdout>:",
        "８", "٣", "#  Rank  0 Pid 1 on h device 0 [0x1] H100\n", "Avg bus bandwidth : ",
        "RDMA_Write BW Test\n", "#bytes #iterations BW peak[Gb/sec]\n",
    ]
)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(ALPHABET, max_size=400), repeat=st.integers(1, 400))
def test_any_text_is_read_or_refused_with_the_reason(parts: list[str], repeat: int) -> None:
    text = "".join(parts) * repeat
    outcome = parse_or_refuse(text[:LIMIT_CHARS])
    if isinstance(outcome, ParsedText):
        for run in outcome.runs:
            for row in run.rows:
                assert row.nbytes >= 0 and row.time_us >= 0
    else:
        assert str(outcome)
