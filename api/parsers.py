"""JSON bodies, refused with 413 beyond settings.DATA_UPLOAD_MAX_MEMORY_SIZE, with 400
when nested deeper than JSON_MAX_DEPTH (Python's decoder recurses: 100,000 levels were a 500),
and with 400 naming the field when a key or string carries a control character (PostgreSQL
cannot store NUL; advisor.text_guard).

Recent DRF reads JSON through request.body, where Django enforces the limit (RequestDataTooBig,
mapped to 413 by api.errors); older DRF read the stream itself and skipped it. This parser
checks the declared length before reading a byte, whichever DRF is installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser

from advisor.text_guard import control_character_error, json_strings
from api.errors import PayloadTooLarge

# No request of this API nests deeper than a handful of levels (scenario v1 has three).
JSON_MAX_DEPTH = 32


def json_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether `value` nests containers more than `limit` deep (iteratively: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: list[Any] = list(node.values())
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def content_length(meta: Mapping[str, Any]) -> int:
    try:
        return int(meta.get("CONTENT_LENGTH") or 0)
    except (TypeError, ValueError):
        return 0


class LimitedJSONParser(JSONParser):
    def parse(
        self,
        stream: IO[Any],
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        request = (parser_context or {}).get("request")
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if request is not None and limit is not None and content_length(request.META) > limit:
            raise PayloadTooLarge.over_limit()
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError as exc:
            raise ParseError(
                f"JSON parse error - nested more than {JSON_MAX_DEPTH} levels deep"
            ) from exc
        if json_depth_exceeds(data, JSON_MAX_DEPTH):
            raise ParseError(f"JSON parse error - nested more than {JSON_MAX_DEPTH} levels deep")
        for path, text in json_strings(data):
            message = control_character_error(text)
            if message is not None:
                shown = path.encode("unicode_escape", "backslashreplace").decode("ascii")
                raise ValidationError({shown: [message]})
        return data
