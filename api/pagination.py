"""Limit/offset pages, and their OpenAPI shape for an APIView."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request


class ApiPagination(LimitOffsetPagination):
    """LimitOffsetPagination that refuses a bad limit or offset (400) instead of silently
    falling back to defaults, as the schema promises integers in range."""

    default_limit = 25
    max_limit = 100

    def _param(
        self, request: Request, name: str, *, minimum: int, maximum: int | None
    ) -> int | None:
        raw = request.query_params.get(name)
        if raw is None:
            return None
        try:
            value = int(raw)
        except ValueError:
            value = None
        if value is None or value < minimum or (maximum is not None and value > maximum):
            bound = f"{minimum}-{maximum}" if maximum is not None else f">= {minimum}"
            raise ValidationError({name: [f"must be an integer {bound}"]})
        return value

    def get_limit(self, request: Request) -> int | None:
        limit = self._param(request, self.limit_query_param, minimum=1, maximum=self.max_limit)
        return self.default_limit if limit is None else limit

    def get_offset(self, request: Request) -> int:
        offset = self._param(request, self.offset_query_param, minimum=0, maximum=None)
        return offset or 0


def page_of(item: type[serializers.Serializer[Any]]) -> type[serializers.Serializer[Any]]:
    """A serializer class documenting {"count", "next", "previous", "results": [item]}."""

    class PageSerializer(serializers.Serializer[Any]):
        count = serializers.IntegerField(min_value=0)
        next = serializers.URLField(allow_null=True)
        previous = serializers.URLField(allow_null=True)
        results = item(many=True)

    # Named after the item's API class: "ScenarioListApi.OutputSerializer" -> ScenarioListPage.
    PageSerializer.__qualname__ = item.__qualname__.rsplit(".", 1)[0] + ".PageSerializer"
    return PageSerializer
