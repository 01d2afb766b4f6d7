"""Helpers shared by the recommendation modules: finite numbers and JSON-safe metrics.

Money and percentages as text are advisor.engine.facts.formatting's rules; `usd` and `num` are
re-exported here for the recommendation modules that import them from this one.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from advisor.engine.facts.formatting import usd as usd
from advisor.engine.facts.numbers import finite as num
from advisor.engine.result.records import Metrics

__all__ = ["cents", "clean", "num", "rounded", "usd"]


def rounded(value: float) -> float:
    """`value` to 6 decimals for the stored result (0 when it is NaN or infinite)."""
    return round(value, 6) if math.isfinite(value) else 0.0


def cents(value: float) -> float:
    """``round(value, 2)``, the same float (money to the cent), without the decimal conversion
    ``round`` makes (about 1 us: a price is rounded ~15 times per design scored) when the
    answer is plain: ``value x 100`` within a quarter of an integer ``k`` far below 2^53.

    Why it is the same float: the computed ``value x 100`` is within 2^-53 of its magnitude
    (under 0.12 below 10^15) of the exact product, so the exact product is within 0.37 of
    ``k`` and ``round``'s correctly rounded decimal is ``k / 100``; ``round`` returns the
    double nearest to that decimal, and IEEE division of the exact doubles ``k`` and 100 is
    that double.  A zero keeps ``value``'s sign (``round(-0.001, 2)`` is ``-0.0``); anything
    else (a half cent, NaN, infinity, a huge figure) is left to ``round``.
    ``tests/engine/test_cents.py`` holds it to ``round`` on a million figures."""
    scaled = value * 100.0
    if -1e15 < scaled < 1e15:
        whole = math.floor(scaled + 0.5)
        if abs(scaled - whole) < 0.25:
            return whole / 100.0 if whole else math.copysign(0.0, value)
    return round(value, 2)


def clean(metrics: Metrics) -> Metrics:
    """The metrics without NaN/inf (a figure the model could not bound is left out).

    Reads the record's fields from its ``__dict__`` (a dataclass without slots keeps every
    field there, set in the field order by its ``__init__``), one look-up fewer per field of
    every design's metrics than ``getattr`` by name."""
    figures = vars(metrics)
    for v in figures.values():
        if isinstance(v, float) and not math.isfinite(v):
            break
    else:
        return metrics  # every figure finite (most metrics): nothing to leave out
    bad: dict[str, Any] = {
        name: None for name, v in figures.items() if isinstance(v, float) and not math.isfinite(v)
    }
    return dataclasses.replace(metrics, **bad)
