"""The engine's version names its build: a changed model, constant or data file is another
engine (a hand-kept "1.0.0" and "2025.11.1" stayed the same while the model changed, so the
accuracy page, cached a day by the version, could show the last build's figures)."""

from __future__ import annotations

import re
from pathlib import Path

from advisor.engine import ENGINE_VERSION, evaluate
from advisor.engine.build_id import ENGINE_RELEASE, content_digest, engine_version
from advisor.engine.facts.constants import CONSTANTS_VERSION


def test_the_version_is_the_release_and_a_digest_of_the_source_and_data() -> None:
    assert re.fullmatch(re.escape(ENGINE_RELEASE) + r"\+[0-9a-f]{12}", ENGINE_VERSION)
    assert engine_version() == ENGINE_VERSION  # the same tree, the same version
    assert re.fullmatch(r"constants-[0-9a-f]{12}", CONSTANTS_VERSION)
    result = evaluate({"workload": "training", "model": "llama3-8b", "gpu": "h100-sxm", "gpus": 8})
    assert (result["engine_version"], result["constants_version"]) == (
        ENGINE_VERSION,
        CONSTANTS_VERSION,
    )
    assert len(ENGINE_VERSION) <= 32  # the runs' engine_version column


def test_a_tree_is_one_engine_compiled_or_not(tmp_path: Path) -> None:
    """``make compile`` writes advisor/engine/compiled.json (with build times): a compiled and a
    source build of one tree are one engine; a changed source or data file is another."""
    (tmp_path / "model.py").write_text("X = 1\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "rows.json").write_text("[]")
    source = engine_version(tmp_path)
    (tmp_path / "compiled.json").write_text('{"built": "2026-12-07T23:29:00"}')
    (tmp_path / "model.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    assert engine_version(tmp_path) == source
    (tmp_path / "data" / "rows.json").write_text("[1]")
    assert engine_version(tmp_path) != source


def test_any_changed_byte_or_name_is_another_digest(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("X = 1\n")
    (tmp_path / "b.json").write_text("{}")
    files = [tmp_path / "a.py", tmp_path / "b.json"]
    before = content_digest(files, tmp_path)
    assert content_digest(files, tmp_path) == before
    (tmp_path / "a.py").write_text("X = 2\n")
    changed = content_digest(files, tmp_path)
    assert changed != before
    (tmp_path / "a.py").rename(tmp_path / "c.py")
    assert content_digest([tmp_path / "c.py", tmp_path / "b.json"], tmp_path) != changed
