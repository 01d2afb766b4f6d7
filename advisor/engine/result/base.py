"""The conversion every result record shares: ``to_dict`` / ``from_dict`` by the field types
(:class:`Record`), and the error a damaged stored result raises (:class:`ResultFormatError`).

Rules of the conversion (the same for every record of :mod:`advisor.engine.result`):

- A key missing from the dict takes the field's default, so results stored by older engine
  versions still load. Fields marked ``ABSENT`` (default ``None``) are left out of
  ``to_dict`` when ``None``: the engine omits those keys (training results have no
  ``ms_per_token``, a scenario without a ``design`` has no ``design_evaluation``).
- Fields marked ``AT_DEFAULT_ABSENT`` are left out of ``to_dict`` at their default.
- A key the record does not declare is kept in ``extra`` and written back by ``to_dict``,
  so a key a newer engine adds reaches the API unchanged before a field is declared for it.
- Values are not coerced: an ``int`` stays an ``int`` where the field says ``float`` (the
  JSON the API serves keeps ``400``, not ``400.0``). Lists become tuples and back.
- A number, text or flag of the wrong JSON type (``"lots"`` where a price goes) raises
  :class:`ResultFormatError` naming its path: a damaged stored result is refused where it is
  read, not deep inside a page.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar, Union

from advisor.engine.result.dump import (
    EXTRA,
    OMIT_AT_DEFAULT,
    OMIT_WHEN_NONE,
    NotPlain,
    dump,
    register_record_base,
)

__all__ = [
    "ABSENT",
    "AT_DEFAULT_ABSENT",
    "EXTRA",
    "Record",
    "ResultFormatError",
    "stored",
    "stored_object",
    "stored_optional",
]


class ResultFormatError(ValueError):
    """A stored result whose shape this module cannot read (names the path)."""


ABSENT = {OMIT_WHEN_NONE: True}
"""Metadata of a field whose key the engine leaves out when there is no value (``None``)."""

AT_DEFAULT_ABSENT = {OMIT_AT_DEFAULT: True}
"""Metadata of a field whose key the engine leaves out at its default (a design's ``planes``:
said only when the design is split over several)."""


T = TypeVar("T", bound="Record")
S = TypeVar("S", bool, int, float, str)


class Record:
    """Base of every result dataclass: ``from_dict`` / ``to_dict`` by the field types."""

    @classmethod
    def from_dict(cls: type[T], data: Mapping[str, Any] | None) -> T:
        return typing.cast(T, _load(cls, data if data is not None else {}, cls.__name__))

    def to_dict(self) -> dict[str, Any]:
        return typing.cast(dict[str, Any], dump(self))

    def to_plain_dict(self) -> dict[str, Any] | None:
        """``to_dict`` in one walk when it holds only plain JSON values (dicts with text keys,
        lists, text, whole numbers, flags, None and finite floats of exactly those types):
        then equal, type for type, to ``advisor.engine.json_safe(self.to_dict())`` without
        its second walk and copy.  ``None`` otherwise (a non-finite number, any other type):
        the caller takes the careful path, which names where."""
        try:
            return typing.cast(dict[str, Any], dump(self, plain=True))
        except NotPlain:
            return None


register_record_base(Record)

# ------------------------------------------------------------------------- construction

_FROM_FACTORY = object()
"""The default of a field built by its ``default_factory`` (as ``@dataclass``'s own marker)."""

DATACLASS_INITS: dict[type, Any] = {}
"""Per record class whose ``__init__`` :func:`write_record_inits` wrote, the one ``@dataclass``
generated (``tests/engine/test_record_methods.py`` holds the two to the same behaviour)."""


def write_record_inits(namespace: Mapping[str, Any]) -> None:
    """Give every :class:`Record` dataclass defined in ``namespace`` (a module's globals, called
    at its end) an ``__init__`` that stores its fields straight into the instance dict.

    ``@dataclass(frozen=True)`` generates an ``__init__`` that sets each field through
    ``object.__setattr__``: about 0.5 us a field, so the ~50-field ``Metrics`` of each design an
    evaluation scores cost ~5 us to build and the records of one evaluation ~10 % of it.  The
    written ``__init__`` takes the same arguments with the same defaults and stores the same
    values in the same order, and the class stays frozen (its ``__setattr__`` still refuses);
    it is written from the dataclass's fields, as ``@dataclass`` writes its own."""
    module = namespace["__name__"]
    for obj in list(namespace.values()):
        if (
            isinstance(obj, type)
            and issubclass(obj, Record)
            and obj.__module__ == module
            and dataclasses.is_dataclass(obj)
            and obj not in DATACLASS_INITS
        ):
            DATACLASS_INITS[obj] = obj.__init__
            obj.__init__ = _dict_init(obj)


def _dict_init(cls: type) -> Any:
    assert cls.__dataclass_params__.frozen and "__post_init__" not in vars(cls)  # type: ignore[attr-defined]
    scope: dict[str, Any] = {"_FROM_FACTORY": _FROM_FACTORY}
    params: list[str] = []
    body = ["    d = self.__dict__"]
    for f in dataclasses.fields(cls):
        assert not f.kw_only, f"{cls.__name__}.{f.name}: keyword-only fields are not written"
        default, factory = f"_default_{f.name}", f"_factory_{f.name}"
        if f.default is not dataclasses.MISSING:
            scope[default] = f.default
            value = f.name if f.init else default
            if f.init:
                params.append(f"{f.name}={default}")
        elif f.default_factory is not dataclasses.MISSING:
            scope[factory] = f.default_factory
            value = f"{factory}()"
            if f.init:
                params.append(f"{f.name}=_FROM_FACTORY")
                value = f"{factory}() if {f.name} is _FROM_FACTORY else {f.name}"
        else:
            params.append(f.name)
            value = f.name
        body.append(f"    d[{f.name!r}] = {value}")
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(body) + "\n"
    exec(source, scope)  # noqa: S102 - code written from the class's own fields, as @dataclass does
    init = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init


# ------------------------------------------------------------------------------ conversion

_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = typing.get_type_hints(cls)
        _HINTS[cls] = hints
    return hints


def _load(cls: type, data: Any, path: str) -> Any:
    if not isinstance(data, Mapping):
        raise ResultFormatError(f"{path}: expected an object, got {type(data).__name__}")
    hints = _hints(cls)
    kwargs: dict[str, Any] = {}
    names = set()
    for f in dataclasses.fields(cls):
        if f.name == EXTRA:
            continue
        names.add(f.name)
        if f.name in data:
            kwargs[f.name] = _convert(hints[f.name], data[f.name], f"{path}.{f.name}")
    kwargs[EXTRA] = {k: v for k, v in data.items() if k not in names}
    return cls(**kwargs)


def _convert(tp: Any, value: Any, path: str) -> Any:
    if tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        if value is None:
            return None
        arms = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(arms) == 1:
            return _convert(arms[0], value, path)
        for arm in arms:  # str | Mapping[...]: the arm the value's JSON type matches
            if _matches(arm, value):
                return _convert(arm, value, path)
        return value
    if isinstance(tp, type) and issubclass(tp, Record):
        return _load(tp, value, path)
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise ResultFormatError(f"{path}: expected a list, got {type(value).__name__}")
        item = typing.get_args(tp)[0]
        return tuple(_convert(item, v, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is Mapping:
        if not isinstance(value, Mapping):
            raise ResultFormatError(f"{path}: expected an object, got {type(value).__name__}")
        item = typing.get_args(tp)[1]
        return {str(k): _convert(item, v, f"{path}.{k}") for k, v in value.items()}
    if tp is bool and type(value) in (int, float) and value in (0, 1):
        return bool(value)  # results stored before the engine's flags were JSON booleans
    _check_scalar(tp, value, path)
    return value


def _check_scalar(tp: Any, value: Any, path: str) -> None:
    """A stored number, text or flag of the wrong JSON type is refused naming its path (the
    pages would otherwise fail on it far from here); values are still not coerced."""
    if tp is bool:
        ok = isinstance(value, bool)
    elif tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif tp is int:
        ok = (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    elif tp is str:
        ok = isinstance(value, str)
    else:
        return
    if not ok:
        raise ResultFormatError(
            f"{path}: expected {tp.__name__}, got {type(value).__name__} {value!r:.40}"
        )


def _matches(tp: Any, value: Any) -> bool:
    origin = typing.get_origin(tp)
    if origin is Mapping or (isinstance(tp, type) and issubclass(tp, Record)):
        return isinstance(value, Mapping)
    if origin is tuple:
        return isinstance(value, list | tuple)
    return isinstance(tp, type) and isinstance(value, tp)


# ------------------------------------------------------------- other stored JSON, by hand


def stored_object(data: Any, path: str) -> Mapping[str, Any]:
    """``data`` of a stored JSON document checked to be an object (named by ``path``)."""
    if not isinstance(data, Mapping):
        raise ResultFormatError(f"{path}: expected an object, got {type(data).__name__}")
    return data


def stored(data: Mapping[str, Any], key: str, tp: type[S], path: str) -> S:
    """``data[key]`` of a stored JSON object (a measurement's fit, a sweep row: JSON the
    engine wrote and reads back by hand, not a :class:`Record`), checked to be of ``tp``'s
    JSON type as :class:`Record` checks its fields (a float may be stored as an int, an int
    as a whole float, which comes back as an int; other values are not coerced). A missing
    key or a value of another type raises :class:`ResultFormatError` naming ``path.key``."""
    if key not in data:
        raise ResultFormatError(f"{path}.{key}: missing")
    value = data[key]
    _check_scalar(tp, value, f"{path}.{key}")
    return typing.cast(S, int(value) if tp is int else value)


def stored_optional(data: Mapping[str, Any], key: str, tp: type[S], path: str) -> S | None:
    """:func:`stored` where a missing key or ``null`` is ``None``."""
    if data.get(key) is None:
        return None
    return stored(data, key, tp, path)
