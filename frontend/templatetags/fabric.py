"""Template filters for the engine's numbers and ids: each delegates to the one rule in
advisor.engine.formatting or advisor.engine.vocabulary, so pages, the PDF and the API say the
same thing."""

from __future__ import annotations

from typing import Any

from django import template

from advisor.engine import formatting
from advisor.engine.vocabulary import fabric_label

register = template.Library()


@register.filter
def usd(value: Any) -> str:
    """Compact money: $2.80M, $304k, $950."""
    return formatting.usd_compact(value)


@register.filter
def usd_full(value: Any) -> str:
    """Money to the dollar: $1,228,800."""
    return formatting.usd_whole(value)


@register.filter
def duration(value: Any) -> str:
    """Seconds in the unit a person would use."""
    return formatting.duration(value)


@register.filter
def ms(value: Any) -> str:
    return formatting.milliseconds(value)


@register.filter
def pct(value: Any) -> str:
    """A fraction 0..1 as a percentage."""
    return formatting.percent(value)


@register.filter
def num(value: Any) -> str:
    return formatting.number(value)


@register.filter
def fabric(value: Any) -> str:
    return fabric_label(str(value or ""))


@register.filter
def gbps(value: Any) -> str:
    return formatting.gbps(value)


@register.filter
def humanize_key(value: Any) -> str:
    return str(value or "").replace("_", " ")


@register.filter
def get(mapping: Any, key: Any) -> Any:
    if isinstance(mapping, dict):
        return mapping.get(key)
    return None
