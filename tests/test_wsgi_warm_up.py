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
