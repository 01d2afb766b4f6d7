"""Submit questionnaires from many threads at once against a file SQLite database.

Run by tests/security/test_web_hardening.py in a subprocess (SQLITE_PATH set): prints
"ok N" or the errors. Each thread is a browser with its own database connection, as the
threads of `manage.py runserver` are.
"""

from __future__ import annotations

import os
import sys
import threading

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "advisor.settings")
django.setup()

from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

THREADS = int(sys.argv[1]) if len(sys.argv) > 1 else 8
errors: list[str] = []
done: list[int] = []


def one_customer(index: int) -> None:
    client = Client(REMOTE_ADDR=f"10.0.0.{index + 1}")
    try:
        start = client.post("/start/")
        base = start["Location"].rsplit("/", 2)[0]
        for step, data in (
            ("job", {"workload": "training", "scale": "many"}),
            ("model", {"model_choice": "llama3-8b"}),
            ("hardware", {"gpu": "h100-sxm", "gpus": "16"}),
            ("work", {}),
            ("priorities", {}),
        ):
            response = client.post(f"{base}/{step}/", {"nav": "next", **data})
            assert response.status_code == 302, (step, response.status_code)
        response = client.post(f"{base}/review/", {"nav": "submit", "name": f"c{index}"})
        assert response.status_code == 302 and "/s/" in response["Location"], response
        done.append(index)
    except Exception as exc:  # report every failure, not just the first
        errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        connection.close()


threads = [threading.Thread(target=one_customer, args=(i,)) for i in range(THREADS)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(f"ok {len(done)}" if not errors else "\n".join(errors))
sys.exit(1 if errors else 0)
