"""`Authorization: Token <key>` against the hashed keys of API clients."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from api.models import ApiClient
from api.selectors import api_client_for_key
from api.services import api_client_touch

KEYWORD = "Token"


class ApiTokenAuthentication(BaseAuthentication):
    """Authenticates as the client's user; `request.auth` is the ApiClient.

    A missing header lets the next authenticator (session) try; a wrong, malformed or
    revoked key is a 401, never a silent fallback to anonymous.
    """

    def authenticate(self, request: Request) -> tuple[Any, ApiClient] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != KEYWORD.lower().encode():
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed(
                "Malformed Authorization header; expected 'Token <key>'."
            )
        try:
            key = parts[1].decode("ascii")
        except UnicodeDecodeError as exc:
            raise exceptions.AuthenticationFailed("Invalid token.") from exc
        client = api_client_for_key(key=key)
        if client is None or not client.user.is_active:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        api_client_touch(client=client)
        return client.user, client

    def authenticate_header(self, request: Request) -> str:
        # Having a challenge is what makes DRF answer 401 (not 403) to anonymous callers.
        return KEYWORD
