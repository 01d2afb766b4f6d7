"""manage.py revoke_api_client NAME: its token stops working at once (401)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from api.models import ApiClient
from api.services import api_client_revoke


class Command(BaseCommand):
    help = "Revoke an API client's token; its scenarios are kept."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"]
        try:
            client = api_client_revoke(name=name)
        except ApiClient.DoesNotExist as exc:
            raise CommandError(f"no API client named {name!r}") from exc
        assert client.revoked_at is not None
        self.stdout.write(f"Revoked API client {name!r} at {client.revoked_at.isoformat()}.")
