"""Fixtures every installation needs: the 'sales' group (sales engineers see all scenarios)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the groups the app relies on (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        _, created = Group.objects.get_or_create(name="sales")
        if created:
            self.stdout.write("created group 'sales'")
