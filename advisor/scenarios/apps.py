from __future__ import annotations

from django.apps import AppConfig


class ScenariosConfig(AppConfig):
    name = "advisor.scenarios"
    label = "scenarios"
    verbose_name = "Scenarios"

    def ready(self) -> None:
        # Bind @shared_task to our Celery app in every process that loads Django.
        import advisor.celery

        # Register the tasks that advisor.scenarios.claims sends by name.
        import advisor.scenarios.tasks  # noqa: F401
