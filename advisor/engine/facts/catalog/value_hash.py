"""The value hash a frozen catalog record (a GPU, a model) computes once and keeps: the
planner keys its caches by the GPU and the model, and hashing every field on each of
thousands of look-ups cost more than the arithmetic saved.  A record uses it as

    __hash__ = cached_value_hash  # the function itself: one Python call per hash, not two

    def __getstate__(self) -> dict[str, Any]:
        return state_without_value_hash(self)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from operator import attrgetter
from typing import Any

__all__ = ["cached_value_hash", "state_without_value_hash"]

_KEY = "_value_hash"

_FIELD_VALUES: dict[type, Callable[[Any], tuple[Any, ...]]] = {}
"""Per record class (a handful), the tuple of the field values the dataclass's own hash reads
(compared fields not marked ``hash=False``), in the fields' order: ``dataclasses.fields``
walked on every new object cost more than the hash itself."""


def _field_values(record: Any) -> tuple[Any, ...]:
    cls = type(record)
    get = _FIELD_VALUES.get(cls)
    if get is None:
        names = tuple(f.name for f in fields(record) if f.compare and f.hash is not False)
        # attrgetter of two or more names returns their values' tuple, of one the value
        get = (
            attrgetter(*names)
            if len(names) > 1
            else lambda obj: tuple(getattr(obj, n) for n in names)
        )
        _FIELD_VALUES[cls] = get
    return get(record)


def cached_value_hash(record: Any) -> int:
    """The hash of the dataclass ``record``'s hashed field values, computed on first use and kept
    on the object.  Equal records hash equal, as the dataclass's own hash."""
    cached: int | None = record.__dict__.get(_KEY)
    if cached is None:
        cached = hash(_field_values(record))
        object.__setattr__(record, _KEY, cached)
    return cached


def state_without_value_hash(record: Any) -> dict[str, Any]:
    """``record``'s pickled state without the kept hash: string hashes differ between
    processes, so a pickled copy hashes itself again."""
    return {k: v for k, v in record.__dict__.items() if k != _KEY}
