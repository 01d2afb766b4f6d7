"""manage.py create_api_client NAME: a new API client; prints its key once."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from api.services import api_client_create


class Command(BaseCommand):
    help = "Create an API client and print its token and webhook secret (shown only once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="Unique name, e.g. the quoting system's: acme-quotes")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            issued = api_client_create(name=options["name"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Created API client {issued.client.name!r}.")
        self.stdout.write("Copy the token now: only its hash is stored, it cannot be shown again.")
        self.stdout.write(f"  token:          {issued.key}")
        self.stdout.write(f"  webhook secret: {issued.webhook_secret}")
        self.stdout.write(f"Use it as: Authorization: Token {issued.key}")
