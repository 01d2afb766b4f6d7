"""Formatting the engine's numbers for people: money, durations, percentages, bandwidth."""

from __future__ import annotations

import math
from typing import Any

from django import template

from frontend.charts import fabric_label as _fabric_label

register = template.Library()


def _f(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


@register.filter
def usd(value: Any) -> str:
    """Compact money: $2.80M, $304k, $950."""
    number = _f(value)
    if number is None:
        return "—"
    sign = "-" if number < 0 else ""
    number = abs(number)
    if number >= 1e9:
        return f"{sign}${number / 1e9:.2f}B"
    if number >= 1e6:
        return f"{sign}${number / 1e6:.2f}M"
    if number >= 1e4:
        return f"{sign}${number / 1e3:.0f}k"
    return f"{sign}${number:,.0f}"


@register.filter
def usd_full(value: Any) -> str:
    number = _f(value)
    return "—" if number is None else f"${number:,.0f}"


@register.filter
def duration(value: Any) -> str:
    """Seconds in the unit a person would use."""
    s = _f(value)
    if s is None:
        return "—"
    if s < 1e-3:
        return f"{s * 1e6:.3g} µs"
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    if s < 120:
        return f"{s:.3g} s"
    if s < 7200:
        return f"{s / 60:.3g} min"
    if s < 172800:
        return f"{s / 3600:.3g} h"
    return f"{s / 86400:.3g} days"


@register.filter
def ms(value: Any) -> str:
    number = _f(value)
    return "—" if number is None else f"{number:.3g} ms"


@register.filter
def pct(value: Any) -> str:
    """A fraction 0..1 as a percentage."""
    number = _f(value)
    if number is None:
        return "—"
    return f"{number * 100:.1f} %" if abs(number) < 0.1 else f"{number * 100:.0f} %"


@register.filter
def num(value: Any) -> str:
    number = _f(value)
    if number is None:
        return "—" if value in (None, "") else str(value)
    if number.is_integer() and abs(number) < 1e15:
        return f"{int(number):,}"
    if abs(number) >= 1e6 or abs(number) < 1e-3:
        return f"{number:.3g}"
    return f"{number:,.3g}" if abs(number) < 100 else f"{number:,.1f}"


@register.filter
def fabric(value: Any) -> str:
    return _fabric_label(str(value or ""))


@register.filter
def gbps(value: Any) -> str:
    number = _f(value)
    return "—" if number is None else f"{number:g} Gb/s"


@register.filter
def humanize_key(value: Any) -> str:
    return str(value or "").replace("_", " ")


@register.filter
def get(mapping: Any, key: Any) -> Any:
    if isinstance(mapping, dict):
        return mapping.get(key)
    return None
