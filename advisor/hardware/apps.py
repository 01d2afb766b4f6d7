from __future__ import annotations

from django.apps import AppConfig


class HardwareConfig(AppConfig):
    name = "advisor.hardware"
    label = "hardware"
    verbose_name = "Hardware catalog"
    default_auto_field = "django.db.models.BigAutoField"
