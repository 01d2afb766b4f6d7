"""What names the engine a result was computed with: its release and a digest of its source
and data, so a changed model or constant reads as another engine (results, caches, the
accuracy page), where a hand-kept number stayed the same while the model changed."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Final

ENGINE_RELEASE: Final = "1.0.0"
"""The engine's release (the API's shape); the digest below tells its builds apart."""
ROOT: Final = Path(__file__).resolve().parent
DIGEST_SUFFIXES: Final = (".py", ".json")
"""The engine's source and data (constants, catalog, calibration rows); not built extensions,
whose source is hashed already."""
BUILD_FILES: Final = frozenset({"compiled.json"})
"""Written by ``make compile`` (the build's manifest, with times), not source: a compiled and a
source build of one tree are one engine."""


def content_digest(paths: list[Path], root: Path) -> str:
    """The first 12 hex digits of the SHA-256 of ``paths`` (relative names and bytes, in order)."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def engine_version(root: Path = ROOT) -> str:
    """``ENGINE_RELEASE`` + the digest of every source and data file of the engine under
    ``root`` (~12 ms, once per process): "1.0.0+87b2d7b28325"."""
    files = sorted(
        p
        for p in root.rglob("*")
        if p.suffix in DIGEST_SUFFIXES
        and p.name not in BUILD_FILES
        and "__pycache__" not in p.parts
        and p.is_file()
    )
    return f"{ENGINE_RELEASE}+{content_digest(files, root)}"


def python_digest(root: Path = ROOT) -> str:
    """The digest of every Python source of the engine: what a compiled build is built from.
    Not only the compiled modules' own: mypyc writes other modules' ``Final`` constants into
    them (a constant changed in facts/constants.py, which is not compiled, stayed the old value
    in every compiled module that reads it), so any source change makes the build stale."""
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    return content_digest(files, root)


def constants_version() -> str:
    """The digest of the performance model's constants module (facts/constants.py)."""
    return "constants-" + content_digest([ROOT / "facts" / "constants.py"], ROOT)
