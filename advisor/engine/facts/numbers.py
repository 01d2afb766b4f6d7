"""A figure as a finite float, or None / a default when it is absent, not a number, NaN or
infinite: the rule every page, sentence and cost of the engine reads numbers by
(:mod:`advisor.engine.facts.formatting` writes them as text with it).  Compiled with the
engine's hot modules (``compiled.txt``): the recommendation asks it ~3,000 times an evaluation.
"""

from __future__ import annotations

import math
from typing import Any, Final

__all__ = ["finite", "finite_or_none", "to_significant"]


def finite_or_none(value: Any) -> float | None:
    """`value` as a finite float, or None when it is absent, not a number, NaN or infinite."""
    if value is None:
        return None  # the common absent figure, without raising and catching float's TypeError
    if isinstance(value, bool):
        return float(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def finite(value: Any, default: float = 0.0) -> float:
    """`value` as a finite float, else `default`."""
    number = finite_or_none(value)
    return default if number is None else number


_POW10: tuple[float, ...] = tuple(float(10**k) for k in range(23))
"""10**0 .. 10**22, each a double exactly."""
_NEAR_TIE: Final = 1e-9
"""How close to half a unit a scaled figure may come before :func:`to_significant` leaves it
to the decimal conversion: the scaling's error is below 10**digits x 2**-53 (1.2e-10 at six
digits)."""


def to_significant(value: float, digits: int) -> float:
    """``float(f"{value:.{digits}g}")`` (``digits`` 1 to 6), the same double without writing
    and reading the decimal text where that is sure: a positive figure between 1e-15 and 1e15
    is scaled to ``digits`` integer digits by an exact power of ten (one rounding), and unless
    it lies within :data:`_NEAR_TIE` of a half unit it rounds as its exact value does; that
    integer over (or times) the same exact power of ten is then the double nearest the
    decimal, as the text's reading is.  Anything else (zero, negative, non-finite, near a
    tie, more digits) goes through the text."""
    if 1e-15 < value < 1e15 and 1 <= digits <= 6:
        pow10 = _POW10
        low, high = pow10[digits - 1], pow10[digits]
        if value >= 1.0:
            # the decimal exponent by comparing with exact powers of ten (below 1e15)
            exponent = 0
            while value >= pow10[exponent + 1]:
                exponent += 1
        else:
            exponent = math.floor(math.log10(value))
        k = digits - 1 - exponent
        scaled = _scaled(value, k, pow10)
        if scaled < low:
            k += 1
            scaled = _scaled(value, k, pow10)
        elif scaled >= high:
            k -= 1
            scaled = _scaled(value, k, pow10)
        if low <= scaled < high:
            whole = math.floor(scaled)
            part = scaled - whole
            if abs(part - 0.5) > _NEAR_TIE:
                n = float(whole + 1 if part > 0.5 else whole)
                return n / pow10[k] if k >= 0 else n * pow10[-k]
    return float(f"{value:.{digits}g}")


def _scaled(value: float, k: int, pow10: tuple[float, ...]) -> float:
    """``value`` x 10**k in floating point (one rounding); NaN when ``k`` is beyond +-22."""
    if 0 <= k <= 22:
        return value * pow10[k]
    if -22 <= k < 0:
        return value / pow10[-k]
    return math.nan
