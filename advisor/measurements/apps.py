from __future__ import annotations

from django.apps import AppConfig


class MeasurementsConfig(AppConfig):
    name = "advisor.measurements"
    label = "measurements"
    verbose_name = "Measurements"
    default_auto_field = "django.db.models.BigAutoField"
