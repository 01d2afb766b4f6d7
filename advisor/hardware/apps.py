from __future__ import annotations

from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


class HardwareConfig(AppConfig):
    name = "advisor.hardware"
    label = "hardware"
    verbose_name = "Hardware catalog"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        post_migrate.connect(_reapply_catalog_edits, sender=self)


def _reapply_catalog_edits(**kwargs: Any) -> None:
    """Every deploy migrates: that is when an engine upgrade's built-in catalog reaches the
    staff-edited one (never while a page reads the current catalog)."""
    from advisor.hardware.services import catalog_reapply_edits  # models load after ready()

    catalog_reapply_edits()
