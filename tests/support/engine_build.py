"""Tests and the engine's two builds (advisor/engine/_compiled.py): the mypyc-compiled modules
of advisor/engine/compiled.txt, or their Python source."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.engine._compiled import FORCE_SOURCE_ENV, engine_build

ROOT = Path(__file__).resolve().parents[2]


def ran_on_source(request: pytest.FixtureRequest) -> bool:
    """For a test that counts calls by replacing a module's attribute, which a compiled
    module's calls within its group go past: under the compiled build, run this same test in a
    subprocess on the engine's source and assert that it passed (True: the caller returns);
    under the source, False (the caller runs its body)."""
    if engine_build() != "compiled":
        return False
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", request.node.nodeid],
        cwd=ROOT,
        env={**os.environ, FORCE_SOURCE_ENV: "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout
    return True
