"""Build the engine modules of advisor/engine/compiled.txt as C extensions with mypyc
(`make compile`), in place beside their sources, and write advisor/engine/compiled.json (the
digest of each source built from, the Python built for), which advisor/engine/_compiled.py
reads to run the build only while it is fresh.

    .venv/bin/python scripts/compile_engine.py          # build (about 2 minutes on two cores)
    .venv/bin/python scripts/compile_engine.py --clean  # remove the build: the source runs

mypyc ships with mypy (a dev dependency, pinned in requirements-dev.lock) and needs a C
compiler and the Python headers. Exits 1 with the compiler's message when the build fails;
nothing is half-installed then (the old build and manifest are removed first), so the
engine runs from source.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["FABRIC_ENGINE_SOURCE"] = "1"  # this process imports no extension it may replace

from advisor.engine._compiled import (  # noqa: E402
    MANIFEST,
    compiled_modules,
    extension_files,
    python_tag,
    source_digest,
    source_path,
)
from advisor.engine.build_id import python_digest  # noqa: E402

GROUP = "advisor.engine.compiled"
"""mypyc's group: its shared library is advisor/engine/compiled__mypyc*.so, one shim per module."""

SETUP = """
from setuptools import setup
from mypyc.build import mypycify

setup(
    name="fabric-advisor-engine-compiled",
    ext_modules=mypycify(
        ["--config-file", {config!r}, "--cache-dir", {cache!r}, *{paths!r}],
        opt_level="3",
        group_name={group!r},
    ),
    script_args=["build_ext", "--inplace", "--build-temp", {temp!r}],
)
"""
MYPY_CONFIG = """[mypy]
python_version = 3.11
ignore_missing_imports = True
"""
"""mypy's settings for the build: the engine's own (no Django plugins, which would import the
web project's settings; the engine imports no Django)."""


def clean() -> None:
    """Remove the manifest and every extension file under the engine's package (a module
    ``compiled.txt`` no longer lists included)."""
    MANIFEST.unlink(missing_ok=True)
    for path in extension_files():
        path.unlink()


def build() -> int:
    clean()
    modules = compiled_modules()
    digests = {m: source_digest(m) for m in modules}
    engine_sources = python_digest()  # the whole engine: compiled modules hold others' Finals
    paths = [str(source_path(m).relative_to(ROOT)) for m in modules]
    with tempfile.TemporaryDirectory(prefix="mypyc-") as temp:
        config = Path(temp) / "mypy.ini"
        config.write_text(MYPY_CONFIG)
        setup_py = Path(temp) / "setup.py"
        setup_py.write_text(
            SETUP.format(
                config=str(config),
                cache=str(Path(temp) / "mypy-cache"),
                paths=paths,
                group=GROUP,
                temp=str(Path(temp) / "t"),
            )
        )
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, str(setup_py)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        shutil.rmtree(ROOT / "build", ignore_errors=True)
    if done.returncode != 0:
        clean()
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        print("engine not compiled: it runs from source", file=sys.stderr)
        return 1
    if any(source_digest(m) != d for m, d in digests.items()) or python_digest() != engine_sources:
        clean()
        print("a source changed during the build: run it again", file=sys.stderr)
        return 1
    MANIFEST.write_text(
        json.dumps(
            {
                "python": python_tag(),
                "group": GROUP,
                "sources": digests,
                "engine_sources": engine_sources,
            },
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"compiled {len(modules)} engine modules ({len(extension_files())} extension files)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clean", action="store_true", help="remove the build")
    args = parser.parse_args(argv)
    if args.clean:
        clean()
        return 0
    return build()


if __name__ == "__main__":
    sys.exit(main())
