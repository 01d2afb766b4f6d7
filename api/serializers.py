"""Serializers shared by several API classes: errors, scenario v1 inputs, runs, results.

Scenario v1 is described once, by the engine (advisor.engine.input.spec: its keys, types,
defaults and ranges) and validated by the engine (advisor.scenarios.engine_calls.
validate_inputs), so the API's schema, rules and messages cannot drift from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers

from advisor.engine.input.spec import scenario_json_schema
from advisor.scenarios.catalog_store import catalog_current
from advisor.scenarios.engine_calls import InvalidScenario, validate_inputs
from advisor.scenarios.models import RunStatus

# --- Errors ---------------------------------------------------------------------------------


class ErrorSerializer(serializers.Serializer[Any]):
    # inline_serializer: a declared field named "fields" would shadow Serializer.fields.
    error = inline_serializer(
        name="ErrorDetail",
        fields={
            "code": serializers.CharField(
                help_text="Stable machine-readable code, e.g. validation_error."
            ),
            "message": serializers.CharField(help_text="What went wrong, for a person."),
            "fields": serializers.DictField(
                child=serializers.ListField(child=serializers.CharField()),
                help_text='Per-field messages keyed by dotted path, e.g. "inputs.gpus".',
            ),
        },
    )


# --- Request bodies --------------------------------------------------------------------------


class BodySerializer(serializers.Serializer[Any]):
    """A request body. A field it does not know is refused, naming it, as the engine refuses
    unknown scenario inputs: DRF would silently drop it, so a misspelt field (`measurment`)
    would quietly do something other than what the caller asked."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            known = ", ".join(self.fields)
            unknown = {
                str(name): [f"is not a field of this request (the fields are: {known})"]
                for name in data
                if name not in self.fields
            }
            if unknown:
                raise serializers.ValidationError(unknown)
        return super().to_internal_value(data)


class StrictUUIDField(serializers.UUIDField):
    """An id given as text only: DRF's UUIDField also reads a number (1 became
    00000000-0000-0000-0000-000000000001)."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str):
            self.fail("invalid", value=data)
        return super().to_internal_value(data)


# --- Query parameters ----------------------------------------------------------------------


class QueryParamsSerializer(serializers.Serializer[Any]):
    """Filters from the query string. A parameter given empty is an error, not "no filter":
    DRF would silently ignore it, while the schema (and a client's generated code) says a
    value is required whenever the parameter is present."""

    def to_internal_value(self, data: Any) -> Any:
        blank: dict[str, list[str]] = {
            name: ["may not be blank; leave the parameter out instead"]
            for name, _field in self.fields.items()
            if name in data and str(data.get(name, "")).strip() == ""
        }
        if blank:
            raise serializers.ValidationError(blank)
        return super().to_internal_value(data)


# --- Scenario v1: the engine's one description of its input -------------------------------

SCENARIO_V1_SCHEMA = scenario_json_schema()
"""Published as the `inputs` of every scenario request (advisor.engine.input.spec)."""


@extend_schema_field(SCENARIO_V1_SCHEMA)
class ScenarioInputsField(serializers.JSONField):
    """Scenario v1 inputs, checked by the engine; its messages come back per dotted path."""

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        try:
            validate_inputs(value, catalog=catalog_current())
        except InvalidScenario as exc:
            own = exc.field_errors.pop("inputs", None)
            if own and not exc.field_errors:
                raise serializers.ValidationError(own) from exc
            raise serializers.ValidationError(exc.field_errors) from exc
        return value


# --- Runs and results -----------------------------------------------------------------------


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": True,
        "description": (
            "The engine's result (docs/ENGINE_API.md, 'Result'): recommendation, metrics, "
            "bom, cost, options, break_even, uncertainty, monitoring, assumptions, scaling."
        ),
    }
)
class EngineResultField(serializers.JSONField):
    pass


class AccuracySerializer(serializers.Serializer[Any]):
    """How the answer's family of predictions reads against published measurements it was never
    fitted to: the statement the result page and the PDF print beside the ranges."""

    family = serializers.CharField(
        help_text=(
            "The family the answer's low-high ranges are read from: training, serving "
            "(dense models) or serving-moe (mixture-of-experts models)."
        )
    )
    family_label = serializers.CharField(help_text="The family in words.")
    held_out_mae_pct = serializers.FloatField(
        help_text="Mean absolute error over the family's held-out published measurements (%)."
    )
    held_out_measurements = serializers.IntegerField(min_value=0)
    within_tolerance = serializers.IntegerField(min_value=0)
    caution = serializers.CharField(
        allow_null=True,
        help_text=(
            "Where the answer's capacity falls in a regime whose published runs measure well "
            "below the advisor's figures (a mixture-of-experts model with few active parameters "
            "decoding 350 or more sequences a GPU), how far they fell short; null elsewhere. "
            "The result page and the PDF show it with their warnings."
        ),
    )
    statement = serializers.CharField(help_text="The sentence the page and the PDF print.")


class RunSummarySerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=RunStatus.choices)
    progress = serializers.IntegerField(min_value=0, max_value=100)


@extend_schema_field(OpenApiTypes.URI)
class AbsoluteUrlField(serializers.Field[Any, Any, str, Any]):
    """An absolute URL of the object, built from the request by the owning serializer."""

    def __init__(self, view_name: str, **kwargs: Any) -> None:
        self.view_name = view_name
        kwargs["source"] = "*"
        kwargs["read_only"] = True
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> str:
        from django.urls import reverse

        path = reverse(self.view_name, args=[value.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path
