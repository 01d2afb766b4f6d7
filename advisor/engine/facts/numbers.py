"""A figure as a finite float, or None / a default when it is absent, not a number, NaN or
infinite: the rule every page, sentence and cost of the engine reads numbers by
(:mod:`advisor.engine.facts.formatting` writes them as text with it).  Compiled with the
engine's hot modules (``compiled.txt``): the recommendation asks it ~3,000 times an evaluation.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["finite", "finite_or_none"]


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
