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


_METRIC_NAMES = tuple(f.name for f in dataclasses.fields(Metrics))
"""The fields of a Metrics record, read once (every design's metrics are cleaned)."""


def clean(metrics: Metrics) -> Metrics:
    """The metrics without NaN/inf (a figure the model could not bound is left out)."""
    names = (
        _METRIC_NAMES
        if type(metrics) is Metrics
        else tuple(f.name for f in dataclasses.fields(metrics))
    )
    bad: dict[str, Any] = {
        name: None
        for name in names
        if isinstance(v := getattr(metrics, name), float) and not math.isfinite(v)
    }
    return dataclasses.replace(metrics, **bad) if bad else metrics
