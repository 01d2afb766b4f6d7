"""Small helpers shared by the recommendation modules (numbers and money as text)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any


def num(x: Any, default: float = 0.0) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return default
    return v if math.isfinite(v) else default


def rnd(x: float) -> float:
    return round(x, 6) if math.isfinite(x) else 0.0


def clean(m: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the metrics without NaN/inf (JSON-safe)."""
    out = dict(m)
    for k, v in out.items():
        if isinstance(v, float):
            if not math.isfinite(v):
                out[k] = None
        elif isinstance(v, Mapping):
            out[k] = clean(v)
    return out


def pct(x: Any) -> str:
    return f"{num(x) * 100:.1f}%"


def usd(x: float) -> str:
    if abs(x) >= 1e6:
        return f"${x / 1e6:,.2f}M"
    return f"${x:,.0f}"


def usd2(x: float) -> str:
    return f"${x:,.2f}"
