"""Typed readers for settings from the environment.

Each helper fails loudly (ImproperlyConfigured) on a value it cannot read, naming the
variable and the rule, instead of silently falling back to a default.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false, yes/no), got {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from exc
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    return value


def env_choice(name: str, choices: Sequence[str], default: str) -> str:
    value = env_str(name, default).lower()
    if value not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def env_list(name: str, default: Sequence[str] = ()) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_url(name: str, schemes: Sequence[str]) -> str:
    """An optional URL; when set, its scheme must be one of `schemes`."""
    value = env_str(name)
    if value and value.split("://", 1)[0] not in schemes:
        raise ImproperlyConfigured(
            f"{name} must start with one of {', '.join(s + '://' for s in schemes)}, got {value!r}"
        )
    return value
