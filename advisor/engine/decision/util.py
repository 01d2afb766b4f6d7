"""Helpers shared by the recommendation modules: finite numbers and JSON-safe metrics.

Money and percentages as text are advisor.engine.facts.formatting's rules; `usd` and `num` are
re-exported here for the recommendation modules that import them from this one.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from advisor.engine.facts.formatting import finite as num
from advisor.engine.facts.formatting import usd as usd
from advisor.engine.result.records import Metrics

__all__ = ["clean", "num", "rounded", "usd"]


def rounded(value: float) -> float:
    """`value` to 6 decimals for the stored result (0 when it is NaN or infinite)."""
    return round(value, 6) if math.isfinite(value) else 0.0


def clean(metrics: Metrics) -> Metrics:
    """The metrics without NaN/inf (a figure the model could not bound is left out).

    Reads the record's fields from its ``__dict__`` (a dataclass without slots keeps every
    field there, set in the field order by its ``__init__``), one look-up fewer per field of
    every design's metrics than ``getattr`` by name."""
    bad: dict[str, Any] = {
        name: None
        for name, v in vars(metrics).items()
        if isinstance(v, float) and not math.isfinite(v)
    }
    return dataclasses.replace(metrics, **bad) if bad else metrics
