"""Real Celery worker processes for integration and fault tests.

Workers run as separate OS processes against the real Redis broker and the pytest-django
test database, exactly as production workers run against production's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
READY_TIMEOUT_S = 60.0


def database_url_for(settings_dict: dict[str, object]) -> str:
    """A DATABASE_URL that points a worker at the same (test) database as this process."""
    user = settings_dict.get("USER") or "postgres"
    password = settings_dict.get("PASSWORD") or ""
    auth = f"{user}:{password}@" if password else f"{user}@"
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or 5432
    return f"postgresql://{auth}{host}:{port}/{settings_dict['NAME']}"


@dataclass
class WorkerProcess:
    name: str
    process: subprocess.Popen[str]
    log: list[str] = field(default_factory=list)
    _ready: threading.Event = field(default_factory=threading.Event)
    ready_marker: str = " ready."

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.log.append(line.rstrip())
            if self.ready_marker in line:
                self._ready.set()

    def wait_ready(self) -> None:
        if not self._ready.wait(READY_TIMEOUT_S):
            self.stop()
            raise RuntimeError(f"worker {self.name} not ready:\n" + "\n".join(self.log[-40:]))

    def kill(self) -> None:
        """kill -9 the whole worker (parent and pool children), as a crash would."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


def _start_celery(
    name: str,
    args: list[str],
    *,
    database_url: str,
    extra_env: dict[str, str] | None,
    ready_marker: str = " ready.",
) -> WorkerProcess:
    """Start a `celery -A advisor.celery ...` process on `database_url`; wait until ready."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "DJANGO_SETTINGS_MODULE": "advisor.settings",
        "PYTHONUNBUFFERED": "1",
        **(extra_env or {}),
    }
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "celery"), "-A", "advisor.celery", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    celery = WorkerProcess(name=name, process=process, ready_marker=ready_marker)
    threading.Thread(target=celery._pump, daemon=True).start()
    celery.wait_ready()
    return celery


def start_worker(
    *, name: str, database_url: str, concurrency: int = 1, extra_env: dict[str, str] | None = None
) -> WorkerProcess:
    args = [
        "worker",
        "--loglevel=INFO",
        f"--concurrency={concurrency}",
        "--pool=prefork",
        f"--hostname={name}@%h",
        "--without-gossip",
        "--without-mingle",
    ]
    return _start_celery(name, args, database_url=database_url, extra_env=extra_env)


def start_beat(
    *, database_url: str, schedule_path: str, extra_env: dict[str, str] | None = None
) -> WorkerProcess:
    """Start `celery beat` (the reconciler's clock) as its own process, like production."""
    args = ["beat", "--loglevel=INFO", f"--schedule={schedule_path}", "--max-interval=1"]
    return _start_celery(
        "beat", args, database_url=database_url, extra_env=extra_env, ready_marker="beat: Starting"
    )


def wait_until(predicate: object, *, timeout_s: float, interval_s: float = 0.2) -> bool:
    """Poll `predicate()` until it is true or the timeout passes (a wait, not a timing assert)."""
    assert callable(predicate)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval_s)
    return bool(predicate())


def stop_all(workers: Iterator[WorkerProcess] | list[WorkerProcess]) -> None:
    for worker in workers:
        worker.stop()
