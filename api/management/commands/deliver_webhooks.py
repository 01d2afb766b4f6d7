"""manage.py deliver_webhooks [--loop]: embedded mode's webhook deliverer.

In embedded mode (no Redis) tasks run inside the web process, so a webhook POST and its
retries would hold the request that finished the run. Deliveries stay pending instead, and
this command, a process of its own (`make run` starts it), makes the attempts that are due.
Services mode does not need it: Celery workers deliver, and beat resends lost messages.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import InterfaceError, OperationalError

from api.services import webhook_deliver_due


class Command(BaseCommand):
    help = "Make the webhook attempts that are due (embedded mode); --loop to keep at it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--loop", action="store_true", help="run until interrupted")
        parser.add_argument("--every", type=float, default=2.0, help="seconds between ticks")

    def handle(self, *args: Any, **options: Any) -> None:
        while True:
            try:
                made = webhook_deliver_due()
            except (OperationalError, InterfaceError) as exc:  # a locked or busy database
                self.stderr.write(f"webhook tick skipped: {exc}")
                made = 0
            if made:
                self.stdout.write(f"{made} webhook attempt(s) made")
            if not options["loop"]:
                return
            time.sleep(max(0.1, float(options["every"])))
