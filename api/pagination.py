"""Limit/offset pages, and their OpenAPI shape for an APIView."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.pagination import LimitOffsetPagination


class ApiPagination(LimitOffsetPagination):
    default_limit = 25
    max_limit = 100


def page_of(item: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """A serializer class documenting {"count", "next", "previous", "results": [item]}."""

    class PageSerializer(serializers.Serializer):
        count = serializers.IntegerField(min_value=0)
        next = serializers.URLField(allow_null=True)
        previous = serializers.URLField(allow_null=True)
        results = item(many=True)

    # Named after the item's API class: "ScenarioListApi.OutputSerializer" -> ScenarioListPage.
    PageSerializer.__qualname__ = item.__qualname__.rsplit(".", 1)[0] + ".PageSerializer"
    return PageSerializer
