"""A record written as JSON values (``Record.to_dict`` / ``to_plain_dict``): compiled with the
engine's hot modules (``compiled.txt``), since every evaluation writes its ~1,500 records
once (its answer's JSON), ~1 ms as interpreted Python."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any, Final

EXTRA: Final = "extra"
"""The field of every record that keeps the keys of a stored result it does not declare."""
OMIT_WHEN_NONE: Final = "omit_when_none"
"""Field metadata: the key is left out when the value is None."""
OMIT_AT_DEFAULT: Final = "omit_when_default"
"""Field metadata: the key is left out at the field's default."""

_RECORD: list[type] = []
"""The records' base class (``result.base.Record``, which imports this module and registers
itself: :func:`register_record_base`)."""


def register_record_base(cls: type) -> None:
    _RECORD[:] = [cls]


_DUMP_FIELDS: dict[type, tuple[tuple[str, bool, bool, Any], ...]] = {}
"""Per record class, its fields as :func:`dump` writes them: (name, omitted when None,
omitted at its default, the default), ``extra`` left out (read once per class instead of
``dataclasses.fields`` and two metadata look-ups per field of every record written)."""


def _dump_fields(cls: type) -> tuple[tuple[str, bool, bool, Any], ...]:
    hit = _DUMP_FIELDS.get(cls)
    if hit is None:
        hit = tuple(
            (
                f.name,
                bool(f.metadata.get(OMIT_WHEN_NONE)),
                bool(f.metadata.get(OMIT_AT_DEFAULT)),
                f.default,
            )
            for f in dataclasses.fields(cls)
            if f.name != EXTRA
        )
        _DUMP_FIELDS[cls] = hit
    return hit


class NotPlain(Exception):
    """:func:`dump` with ``plain`` met a value that is not plain, finite JSON."""


def dump(value: Any, plain: bool = False) -> Any:
    """A record as dicts, lists and scalars: each record class's fields as
    :func:`_dump_fields` lists them, then its extra keys.  With ``plain``, it refuses
    (:class:`NotPlain`) what ``json_safe`` would not copy as it is: a float that is not
    finite, a value of a type other than the exact JSON ones (which it otherwise passes
    through); and it writes the extra keys as text, as ``json_safe`` writes them."""
    kind = type(value)
    if kind is float:
        if plain and not math.isfinite(value):
            raise NotPlain
        return value
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if isinstance(value, _RECORD[0]):
        out: dict[str, Any] = {}
        # a record is a dataclass without slots: every field is in its instance dict (one
        # look-up there instead of an attribute look-up through its class per field)
        fields: dict[str, Any] = value.__dict__
        for name, omit_none, omit_default, default in _dump_fields(kind):
            item = fields[name]
            if item is None and omit_none:
                continue
            if omit_default and item == default:
                continue
            # a scalar field (most of them) is written here, as the call would write it
            leaf = type(item)
            if leaf is float:
                if plain and not math.isfinite(item):
                    raise NotPlain
                out[name] = item
            elif leaf is str or leaf is int or leaf is bool or item is None:
                out[name] = item
            else:
                out[name] = dump(item, plain)
        for k, v in fields[EXTRA].items():
            out[str(k) if plain else k] = dump(v, plain)
        return out
    if isinstance(value, (tuple, list)):
        return [dump(v, plain) for v in value]
    if isinstance(value, Mapping):
        return {str(k): dump(v, plain) for k, v in value.items()}
    if plain:
        raise NotPlain
    return value
