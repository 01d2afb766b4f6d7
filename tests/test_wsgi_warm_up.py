"""A fresh web process pays its one-off costs at start, not in its first requests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_a_web_process_has_the_pdf_libraries_loaded_before_its_first_request() -> None:
    """advisor/wsgi.py imports the PDF's matplotlib and fpdf2 (~1.3 s) at start, so the first
    report a process draws does not pay them inside a request."""
    probe = (
        "import sys\n"
        "assert 'matplotlib' not in sys.modules\n"
        "import advisor.wsgi\n"
        "print('advisor.reports.pdf' in sys.modules, 'matplotlib' in sys.modules)\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "advisor.settings"}
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert out.stdout.split()[-2:] == ["True", "True"], out.stderr[-2000:]


FRESH_WEB_PROCESS = """
import gc, sys
import advisor.wsgi
from advisor.engine import ENGINE_VERSION
from frontend.views import _accuracy_context
from django.db import connections
print(
    'frontend.views' in sys.modules,  # the URLconf and its views: imported
    _accuracy_context.cache_info().currsize,  # the accuracy report: built
    gc.get_freeze_count() > 50_000,  # the warm heap: out of the collector's walk
    sum(c.connection is not None for c in connections.all(initialized_only=True)),
)
"""


def test_a_web_process_is_warm_and_frozen_before_its_first_request() -> None:
    """advisor/wsgi.py pays the pages' one-off costs (~3 s of CPU that fell inside the first
    requests of every gunicorn worker under `make load`), freezes the warm heap (full
    collections walking it stalled every thread of a worker) and leaves no database
    connection open for the workers gunicorn forks from it (preload_app)."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "advisor.settings"}
    out = subprocess.run(
        [sys.executable, "-c", FRESH_WEB_PROCESS],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert out.stdout.split()[-4:] == ["True", "1", "True", "0"], out.stderr[-2000:]
