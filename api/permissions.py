"""Who may call the API: an API client, or a logged-in staff (sales) user in the browser."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from advisor.scenarios.selectors import user_is_sales
from api.models import ApiClient


def api_client_of(request: Request) -> ApiClient | None:
    return request.auth if isinstance(request.auth, ApiClient) else None


class IsApiClientOrStaff(BasePermission):
    message = "The API is open to API clients (token) and to signed-in staff."

    def has_permission(self, request: Request, view: Any) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False  # DRF turns this into 401 with the token challenge
        return api_client_of(request) is not None or user_is_sales(request.user)
