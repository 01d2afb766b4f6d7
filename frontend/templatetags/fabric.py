"""Template filters for the engine's numbers and ids: each delegates to the one rule in
advisor.engine.facts.formatting or advisor.engine.facts.vocabulary, so pages, the PDF and the
API say the same thing."""

from __future__ import annotations

from typing import Any

from django import template

from advisor.engine.facts import formatting
from advisor.engine.facts.constants import over_capacity_ms
from advisor.engine.facts.numbers import finite_or_none
from advisor.engine.facts.vocabulary import fabric_label

register = template.Library()


# Each number filter is the one rule in advisor.engine.facts.formatting, under the name
# templates use.
register.filter("usd", formatting.usd_compact)  # $2.80M, $304k, $950
register.filter("usd_full", formatting.usd_whole)  # $1,228,800
register.filter("duration", formatting.duration)  # seconds in the unit a person would use
register.filter("ms", formatting.milliseconds)
register.filter("first_token", formatting.first_token)  # a queue over capacity in words
register.filter("pct", formatting.percent)  # a fraction 0..1 as a percentage
register.filter("num", formatting.number)
register.filter("sig", formatting.significant)  # 3 significant digits, as the sentences say
register.filter("gbps", formatting.gbps)
register.filter("megabytes", formatting.megabytes)  # 144 MB (decimal, as the sentences say)


@register.filter
def over_capacity(value_ms: Any) -> bool:
    """A time in milliseconds at the load model's over-capacity stand-in
    (``constants.over_capacity_ms``), which no sentence gives a share of."""
    number = finite_or_none(value_ms)
    return number is not None and over_capacity_ms(number)


@register.filter
def fabric(value: Any) -> str:
    return fabric_label(str(value or ""))


@register.filter
def humanize_key(value: Any) -> str:
    return str(value or "").replace("_", " ")


@register.filter
def get(mapping: Any, key: Any) -> Any:
    if isinstance(mapping, dict):
        return mapping.get(key)
    return None
