from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from advisor.scenarios.selectors import user_is_sales


def roles(request: HttpRequest) -> dict[str, Any]:
    """`is_sales` for the navigation (sales engineers see the workspace)."""
    return {"is_sales": user_is_sales(getattr(request, "user", None))}
