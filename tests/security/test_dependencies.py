"""Issue 12: there was no lock file. Now every dependency, dev tools included, is pinned with
hashes in requirements-dev.lock (what `make` and so CI install) and the runtime subset in
requirements.lock (what the Docker image installs), both resolved from pyproject.toml; and
`make audit-deps` says plainly when no vulnerability database could be reached."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?==([^ \\;]+)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(path: Path) -> dict[str, tuple[str, int]]:
    """name -> (version, number of sha256 hashes) of a uv/pip-compile hashed lock."""
    out: dict[str, tuple[str, int]] = {}
    current = ""
    for line in path.read_text().splitlines():
        match = REQUIREMENT.match(line)
        if match:
            current = canonical(match.group(1))
            out[current] = (match.group(3), 0)
        elif current and line.strip().startswith("--hash=sha256:"):
            version, hashes = out[current]
            out[current] = (version, hashes + 1)
        elif line and not line.startswith((" ", "#")):
            raise AssertionError(f"{path.name}: not a pinned requirement: {line!r}")
    return out


def declared(group: str) -> list[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    specs = (
        project["dependencies"] if group == "runtime" else project["optional-dependencies"][group]
    )
    return [canonical(re.split(r"[<>=!~\[ ;]", spec, maxsplit=1)[0]) for spec in specs]


@pytest.mark.parametrize("lock", ["requirements.lock", "requirements-dev.lock"])
def test_every_locked_requirement_is_pinned_with_a_hash(lock: str) -> None:
    entries = locked(REPO / lock)
    assert entries
    unhashed = [name for name, (_, hashes) in entries.items() if hashes == 0]
    assert unhashed == []


def test_the_dev_lock_covers_runtime_and_dev_and_the_runtime_lock_agrees_with_it() -> None:
    dev = locked(REPO / "requirements-dev.lock")
    runtime = locked(REPO / "requirements.lock")
    assert [n for n in declared("runtime") + declared("dev") if n not in dev] == []
    assert [n for n in declared("runtime") if n not in runtime] == []
    assert "pytest" not in runtime and "playwright" not in runtime  # the image has no dev tools
    assert {n: v for n, (v, _) in runtime.items() if dev[n][0] != v} == {}


def test_make_and_the_image_install_only_from_the_locks() -> None:
    makefile = (REPO / "Makefile").read_text()
    assert "LOCK := requirements-dev.lock" in makefile
    assert "pip install --quiet --disable-pip-version-check --require-hashes -r $(LOCK)" in makefile
    assert "--no-deps -e ." in makefile
    assert "'.[dev]'" not in makefile  # no unpinned resolution at install time
    dockerfile = (REPO / "Dockerfile").read_text()
    assert "pip install --no-cache-dir --require-hashes -r requirements.lock" in dockerfile
    assert "pip install --no-cache-dir --no-deps ." in dockerfile
    assert "make test" in (REPO / ".ci" / "run").read_text()  # CI installs through make


def load_audit_script() -> Any:
    spec = importlib.util.spec_from_file_location("audit_deps", REPO / "scripts" / "audit_deps.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_audit_deps_says_plainly_when_no_vulnerability_database_is_reachable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    audit = load_audit_script()
    skipped = [{"name": "django", "skip_reason": "Dependency not found on PyPI"}]
    monkeypatch.setattr(audit, "audit", lambda service: (skipped, ""))

    assert audit.main() == 2
    out = capsys.readouterr().out
    assert "NO VULNERABILITY DATABASE REACHABLE: the dependencies were NOT audited." in out


def test_audit_deps_lists_a_vulnerable_package(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    audit = load_audit_script()
    report = [
        {
            "name": "django",
            "version": "5.2.0",
            "vulns": [{"id": "PYSEC-0000-1", "fix_versions": ["5.2.1"]}],
        },
        {"name": "celery", "version": "5.7.0", "vulns": []},
    ]
    monkeypatch.setattr(audit, "audit", lambda service: (report, ""))

    assert audit.main() == 1
    assert "VULNERABLE django 5.2.0: PYSEC-0000-1 (fixed in 5.2.1)" in capsys.readouterr().out


def test_make_has_the_audit_deps_target() -> None:
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^audit-deps: venv\n\t\$\(PY\) scripts/audit_deps.py$", makefile, re.M)
