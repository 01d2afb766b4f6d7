"""JSON bodies, refused with 413 beyond settings.DATA_UPLOAD_MAX_MEMORY_SIZE.

Recent DRF reads JSON through request.body, where Django enforces the limit (RequestDataTooBig,
mapped to 413 by api.errors); older DRF read the stream itself and skipped it. This parser
checks the declared length before reading a byte, whichever DRF is installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework.parsers import JSONParser

from api.errors import PayloadTooLarge


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
        return super().parse(stream, media_type, parser_context)
