"""The engine's compiled build (advisor/engine/_compiled.py, `make compile`): the same answers
to the byte as its source, used only while it is fresh."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from advisor.engine import _compiled, evaluate
from advisor.engine.build_id import python_digest
from tests.support.engine_build import ROOT

# a training job on many designs, a MoE training job, a disaggregated MoE fleet, a dense fleet
SCENARIOS = [
    {"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 512},
    {"workload": "training", "model": "mixtral-8x7b", "gpu": "h200-sxm", "gpus": 128},
    {
        "workload": "inference",
        "model": "deepseek-v3",
        "gpu": "h800-sxm",
        "gpus": 96,
        "inference": {"deployment": "disaggregated"},
    },
    {"workload": "inference", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 32},
]

SOURCE_ANSWERS = """
import json, sys
from advisor.engine import evaluate
from advisor.engine._compiled import engine_build
assert engine_build() == "source", engine_build()
print(json.dumps([evaluate(s) for s in json.loads(sys.stdin.read())]))
"""


def _require_compiled() -> None:
    if _compiled.engine_build() == "compiled":
        return
    if os.environ.get("FABRIC_REQUIRE_SERVICES") == "1":  # `make test` builds it first
        pytest.fail("`make test` runs the compiled engine, but this process runs its source")
    # a bare pytest on a tree never built (or edited since): nothing compiled to compare
    pytest.skip("this process runs the engine's source (no fresh build): `make compile` first")


def test_the_compiled_engine_answers_as_its_source_to_the_byte() -> None:
    _require_compiled()
    compiled = json.dumps([evaluate(s) for s in SCENARIOS])
    done = subprocess.run(
        [sys.executable, "-c", SOURCE_ANSWERS],
        input=json.dumps(SCENARIOS),
        cwd=ROOT,
        env={**os.environ, _compiled.FORCE_SOURCE_ENV: "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    assert done.stdout.strip() == compiled


def test_every_listed_module_runs_compiled() -> None:
    _require_compiled()
    for name in _compiled.compiled_modules():
        assert Path(importlib.import_module(name).__file__ or "").suffix == ".so", name


def test_a_changed_source_or_another_python_makes_the_build_stale(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    modules = _compiled.compiled_modules()
    manifest = tmp_path / "compiled.json"
    monkeypatch.setattr(_compiled, "MANIFEST", manifest)
    digests = {m: _compiled.source_digest(m) for m in modules}

    def write(python: str, sources: dict[str, str], engine: str = python_digest()) -> None:
        manifest.write_text(
            json.dumps({"python": python, "sources": sources, "engine_sources": engine})
        )

    write(_compiled.python_tag(), digests)
    assert _compiled.manifest_is_fresh(modules)
    # a module that is not compiled changed (facts/constants.py, whose Final constants mypyc
    # wrote into the compiled modules): the build is stale too
    write(_compiled.python_tag(), digests, engine="0" * 12)
    assert not _compiled.manifest_is_fresh(modules)
    write(_compiled.python_tag(), {**digests, modules[0]: "0" * 64})
    assert not _compiled.manifest_is_fresh(modules)
    write("cpython-312-final", digests)
    assert not _compiled.manifest_is_fresh(modules)
    write(_compiled.python_tag(), {m: d for m, d in digests.items() if m != modules[-1]})
    assert not _compiled.manifest_is_fresh(modules)
    manifest.unlink()
    assert not _compiled.manifest_is_fresh(modules)


def test_a_stale_build_loads_every_listed_module_from_its_source() -> None:
    finder = _compiled._SourceFinder(_compiled.compiled_modules())
    for name in _compiled.compiled_modules():
        spec = finder.find_spec(name, None)
        assert spec is not None and spec.origin == str(_compiled.source_path(name)), name
    assert finder.find_spec("advisor.engine.model.nccl_tree", None) is None
