"""Helpers shared by the recommendation modules: finite numbers and JSON-safe metrics.

Money and percentages as text are advisor.engine.facts.formatting's rules; `usd` and `num` are
re-exported here for the recommendation modules that import them from this one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from advisor.engine.facts.formatting import finite as num
from advisor.engine.facts.formatting import usd as usd

__all__ = ["clean", "num", "rounded", "usd"]


def rounded(value: float) -> float:
    """`value` to 6 decimals for the stored result (0 when it is NaN or infinite)."""
    return round(value, 6) if math.isfinite(value) else 0.0


def clean(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the metrics without NaN/inf (JSON-safe)."""
    out = dict(metrics)
    for key, value in out.items():
        if isinstance(value, float):
            if not math.isfinite(value):
                out[key] = None
        elif isinstance(value, Mapping):
            out[key] = clean(value)
    return out
