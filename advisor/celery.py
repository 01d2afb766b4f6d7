"""The Celery app. Workers start with `celery -A advisor.celery worker`."""

from __future__ import annotations

import os

from celery import Celery, Task
from celery.signals import task_postrun, task_prerun, worker_init, worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "advisor.settings")

app = Celery("advisor")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def _plain_database_connections(**_: object) -> None:
    """A worker process runs one task at a time, and Celery's Django fix-up closes a pooled
    process's whole pool around every task: a worker uses plain connections, not the web's
    pool (advisor.db_pool). Runs in the worker's main process, before it forks its pool."""
    from advisor.db_pool import use_plain_connections

    use_plain_connections()


@worker_process_init.connect
def _warm_up_engine(**_: object) -> None:
    """Each worker process pays the engine's process constants at start, not in its first
    run (advisor.scenarios.engine_calls.warm_up), and Plotly's validators, not in the first
    figures it draws ahead (advisor.scenarios.figures.warm_up, ~0.3 s), then freezes what it
    holds so the garbage collector does not walk it again in every full collection
    (advisor.heap)."""
    import logging

    from advisor.heap import freeze_heap
    from advisor.scenarios.engine_calls import warm_up
    from advisor.scenarios.figures import warm_up as warm_up_figures

    warm_up()
    try:
        warm_up_figures()
    except Exception:  # a warm-up never stops a worker from starting
        logging.getLogger(__name__).exception("figures warm-up failed")
    freeze_heap()


@task_prerun.connect
@task_postrun.connect
def _database_as_for_a_request(task: Task | None = None, **_: object) -> None:
    """Before and after each task, a connection is closed as Django closes one around a
    request: when it broke or is older than settings.DATABASE_CONN_MAX_AGE (its health is
    checked again at its next use: CONN_HEALTH_CHECKS). Celery's Django fix-up closed it
    before and after every task instead (settings.CELERY_DB_REUSE_MAX now leaves that to
    this), so each run opened a new PostgreSQL session.

    Not for a task run eagerly (in-process tasks: `make run`'s embedded default, the tests):
    its connection is the caller's, inside the caller's request or transaction, and closing
    it there broke the caller's next query ("the connection is closed"). Celery's own fix-up
    skips eager tasks the same way (celery/fixups/django.py, on_task_prerun)."""
    if task is not None and getattr(task.request, "is_eager", False):
        return
    from django.db import close_old_connections

    close_old_connections()
