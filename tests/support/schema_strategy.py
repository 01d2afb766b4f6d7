"""Hypothesis strategies drawn from a JSON schema (the subset the scenario v1 schema uses).

`from_schema(schema, components)` draws values the schema accepts: objects with any subset of
their optional properties, enums, bounded integers and numbers, booleans, short strings,
`oneOf` alternatives, a single `allOf`, `nullable` and `$ref` into `components`.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st


def from_schema(
    schema: dict[str, Any], components: dict[str, Any] | None = None
) -> st.SearchStrategy[Any]:
    components = components or {}
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return from_schema(components[name], components)
    nullable = schema.get("nullable", False)
    if "allOf" in schema and len(schema["allOf"]) == 1:
        base: st.SearchStrategy[Any] = from_schema(schema["allOf"][0], components)
    elif "oneOf" in schema or "anyOf" in schema:
        options = [from_schema(s, components) for s in schema.get("oneOf", schema.get("anyOf"))]
        base = st.one_of(*options)
    elif "enum" in schema:
        values = [v for v in schema["enum"] if v is not None]
        base = st.sampled_from(values) if values else st.none()
        nullable = nullable or None in schema["enum"]
    else:
        kind = schema.get("type")
        if isinstance(kind, list):
            nullable = nullable or "null" in kind
            kind = next(k for k in kind if k != "null")
        if kind == "object":
            base = _object(schema, components)
        elif kind == "integer":
            base = st.integers(
                min_value=int(schema.get("minimum", -(2**31))),
                max_value=int(schema.get("maximum", 2**31)),
            )
        elif kind == "number":
            base = st.floats(
                min_value=float(schema.get("minimum", -1e12)),
                max_value=float(schema.get("maximum", 1e12)),
                allow_nan=False,
                allow_infinity=False,
            )
        elif kind == "boolean":
            base = st.booleans()
        elif kind == "string":
            base = st.text(st.characters(codec="ascii", categories=("L", "N")), max_size=12)
        elif kind == "array":
            base = st.lists(from_schema(schema.get("items", {}), components), max_size=3)
        else:
            raise ValueError(f"no strategy for schema {schema!r}")
    return st.one_of(st.none(), base) if nullable else base


def _object(schema: dict[str, Any], components: dict[str, Any]) -> st.SearchStrategy[Any]:
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    return st.fixed_dictionaries(
        {k: from_schema(v, components) for k, v in properties.items() if k in required},
        optional={
            k: from_schema(v, components) for k, v in properties.items() if k not in required
        },
    )
