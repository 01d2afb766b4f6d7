"""Numbers, money, durations and percentages as people read them.

One rule per kind of figure, shared by the engine's prose and by every page of the shell
(results, comparison, sweeps, the PDF, the CSV and the API's descriptions).  Every function
takes whatever a stored result holds (a number, a numeric string, None, NaN) and returns
text; a missing or non-finite figure reads as an em dash instead of "nan" or "$inf".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from advisor.engine.facts.constants import over_capacity_ms
from advisor.engine.facts.numbers import finite, finite_or_none

MISSING = "—"
"""What a figure that is absent, not a number, or infinite reads as."""


def significant(value: Any, digits: int = 3) -> str:
    """A figure to `digits` significant digits in plain decimals, never in e-notation:
    1340.2 -> "1,340", 12.46 -> "12.5", 0.00001163 -> "0.0000116"; a dash when missing."""
    number = finite_or_none(value)
    if number is None:
        return MISSING
    if number == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(number)))
    if magnitude >= digits - 1:
        return f"{round(number, digits - 1 - magnitude):,.0f}"
    text = f"{number:,.{digits - 1 - magnitude}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _sign(number: float) -> str:
    return "-" if number < 0 else ""


def _money(value: Any, text_of: Callable[[float], str]) -> str:
    """`text_of` the amount's size, signed; "$0" (never "-$0") when it rounds to nothing."""
    number = finite_or_none(value)
    if number is None:
        return MISSING
    text = text_of(abs(number))
    rounds_to_zero = not text.strip("$0.,")
    return text if rounds_to_zero else _sign(number) + text


def _sentence(size: float) -> str:
    if size >= 1e9 - 5e3:  # what would read "$1,000.00M" reads "$1.00B"
        return f"${size / 1e9:,.2f}B"
    if size >= 1e6:
        return f"${size / 1e6:,.2f}M"
    return f"${size:,.0f}"


def usd(value: Any) -> str:
    """Money in a sentence: "$1.50B" from a billion dollars, "$2.80M" from a million, whole
    dollars below ("$304,000")."""
    return _money(value, _sentence)


def _compact(size: float) -> str:
    if size >= 1e9:
        return f"${size / 1e9:.2f}B"
    if size >= 1e6:
        return f"${size / 1e6:.2f}M"
    if size >= 1e4:
        return f"${size / 1e3:.0f}k"
    return f"${size:,.0f}"


def usd_compact(value: Any) -> str:
    """Money on a card or an axis: "$1.20B", "$2.80M", "$304k" (from $10,000), "$950"."""
    return _money(value, _compact)


def usd_whole(value: Any) -> str:
    """Money in a table or a quote, to the dollar: "$1,228,800"."""
    return _money(value, lambda size: f"${size:,.0f}")


def usd_cents(value: Any) -> str:
    """A price per unit, to the cent: "$2.49" (per GPU-hour, per kWh)."""
    return _money(value, lambda size: f"${size:,.2f}")


def duration(value: Any) -> str:
    """Seconds in the unit a person would use: "850 µs", "12.5 ms", "3.2 s", "42 min", "5 h",
    "3.5 days"."""
    number = finite_or_none(value)
    if number is None:
        return MISSING
    size = abs(number)
    sign = _sign(number)
    if size == 0:
        return "0 s"
    if size < 1e-3:
        return f"{sign}{significant(size * 1e6)} µs"
    if size < 1:
        return f"{sign}{significant(size * 1e3)} ms"
    if size < 120:
        return f"{sign}{significant(size)} s"
    if size < 7200:
        return f"{sign}{significant(size / 60)} min"
    if size < 172800:
        return f"{sign}{significant(size / 3600)} h"
    return f"{sign}{significant(size / 86400)} days"


def milliseconds(value: Any) -> str:
    """A time already in milliseconds (per token, to first token): "4.3 ms"."""
    number = finite_or_none(value)
    return MISSING if number is None else f"{significant(number)} ms"


OVER_CAPACITY: Final = "over an hour (over capacity)"
"""A time to first token at the load model's over-capacity stand-in, in words
(:func:`first_token`): true of an open queue, which grows without bound, and of a closed loop
of users, whose wait is bounded by their cycle but past the hour the stand-in stands for."""


def first_token_over_capacity(closed_loop: bool) -> str:
    """The wait for a first token at the over-capacity stand-in (``constants.SATURATED_S``) as
    a sentence says it: an open arrival rate's queue grows without bound; a closed loop's users
    are finitely many, so each waits at most one cycle of the loop (users / capacity), which is
    then past the hour (docs/MODEL.md 15, "Load")."""
    if closed_loop:
        return "users wait more than an hour for a first token"
    return "the queue for a first token grows without bound"


FIRST_TOKEN_MS_UP_TO: Final = 10_000.0
"""Times to first token up to this many milliseconds are said in ms ("2,340 ms"); longer ones
in the unit a person would use (:func:`duration`: "48.5 s", "3 min")."""


def first_token(value: Any) -> str:
    """A time to first token in milliseconds: :func:`milliseconds` up to
    ``FIRST_TOKEN_MS_UP_TO``, then :func:`duration` (queued users wait minutes: "2.98 min",
    not "179,000 ms"); the load model's stand-in for a queue over capacity
    (:func:`constants.over_capacity_ms`) in words, never "3,600,000 ms"."""
    number = finite_or_none(value)
    if number is not None and over_capacity_ms(number):
        return OVER_CAPACITY
    if number is not None and number > FIRST_TOKEN_MS_UP_TO:
        return duration(number / 1e3)
    return milliseconds(value)


def megabytes(value: Any) -> str:
    """Bytes in decimal megabytes, as every KV-cache size is said: "144 MB" (10^6 bytes, the
    unit the engine's sentences use; a binary MiB labelled MB read 137 for the same cache)."""
    number = finite_or_none(value)
    return MISSING if number is None else f"{number / 1e6:,.0f} MB"


def percent(fraction: Any, digits: int | None = None) -> str:
    """A fraction 0..1 on a page: one decimal below 10 % ("4.2 %"), whole above ("41 %"); or
    always `digits` decimals (a column of GPU idle shares: "41.0 %")."""
    number = finite_or_none(fraction)
    if number is None:
        return MISSING
    if digits is None:
        digits = 1 if abs(number) < 0.1 else 0
    return f"{number * 100:.{digits}f} %"


def percent_in_text(fraction: Any) -> str:
    """A fraction 0..1 in the engine's sentences, one decimal: "41.0%" (0 when missing)."""
    return f"{finite(fraction) * 100:.1f}%"


def number(value: Any) -> str:
    """A count or a measure: integers with thousands separators, others to 3 significant
    digits (one decimal from 100).  Text that is not a number is shown as it is; NaN and
    infinity as a dash."""
    figure = finite_or_none(value)
    if figure is None:
        return MISSING if value in (None, "") or isinstance(value, float) else str(value)
    if figure.is_integer() and abs(figure) < 1e15:
        return f"{int(figure):,}"
    if abs(figure) >= 1e6 or abs(figure) < 100:
        return significant(figure)
    return f"{figure:,.1f}"


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""A spreadsheet runs a cell that starts with one of these as a formula (Excel, LibreOffice,
Google Sheets)."""


def spreadsheet_cell(value: Any) -> Any:
    """A CSV cell that no spreadsheet runs as a formula (CSV injection): text starting with a
    formula character gets a leading apostrophe; numbers and other values stay as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def gbps(value: Any) -> str:
    """A link speed: "400 Gb/s"."""
    figure = finite_or_none(value)
    return MISSING if figure is None else f"{figure:g} Gb/s"
