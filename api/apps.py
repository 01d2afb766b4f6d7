from __future__ import annotations

from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = "REST API v1"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from advisor.scenarios.signals import run_finished
        from api.receivers import on_run_finished

        run_finished.connect(on_run_finished, dispatch_uid="api.webhooks.on_run_finished")
        # Register the tasks that api.services sends by name.
        import api.tasks  # noqa: F401
