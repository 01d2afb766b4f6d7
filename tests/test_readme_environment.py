"""README's environment table lists every variable the settings read, and nothing else."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _read_by_settings() -> set[str]:
    source = (REPO / "advisor" / "settings.py").read_text()
    # advisor.env's typed readers: env_str("NAME", ...), env_int(\n    "NAME", ...) ...
    return set(re.findall(r"\benv_[a-z]+\(\s*\"([A-Z][A-Z0-9_]*)\"", source))


def _documented() -> set[str]:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Environment variables", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            first_cell = line.split("|")[1]
            names.update(re.findall(r"`([A-Z][A-Z0-9_]*)`", first_cell))
    return names


def test_every_variable_the_settings_read_is_in_the_readme_table() -> None:
    read = _read_by_settings()
    assert len(read) > 30  # the pattern finds the settings' readers
    assert sorted(read - _documented()) == []


def test_the_readme_table_lists_no_variable_the_settings_do_not_read() -> None:
    assert sorted(_documented() - _read_by_settings()) == []
