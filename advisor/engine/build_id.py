"""What names the engine a result was computed with: its release and a digest of its source
and data, so a changed model or constant reads as another engine (results, caches, the
accuracy page), where a hand-kept number stayed the same while the model changed."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Final

ENGINE_RELEASE: Final = "1.0.0"
"""The engine's release (the API's shape); the digest below tells its builds apart."""
ROOT: Final = Path(__file__).resolve().parent
BUILD_FILES: Final = frozenset({"compiled.json"})
"""Written by ``make compile`` (the build's manifest, with times), not source: a compiled and a
source build of one tree are one engine. Built extensions are not read either: their source
is."""


def content_digest(paths: list[Path], root: Path) -> str:
    """The first 12 hex digits of the SHA-256 of ``paths`` (relative names and bytes, in order)."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _sources(root: Path, suffix: str) -> list[Path]:
    """The engine's files of one kind under ``root`` (``.py`` source, ``.json`` data), sorted."""
    return sorted(
        p
        for p in root.rglob(f"*{suffix}")
        if p.name not in BUILD_FILES and "__pycache__" not in p.parts and p.is_file()
    )


@functools.lru_cache(maxsize=4)
def python_digest(root: Path = ROOT) -> str:
    """The digest of every Python source of the engine (~5 ms, read once per process: the
    compiled-build check and the version below both read it): what a compiled build is built
    from. Not only the compiled modules' own: mypyc writes other modules' ``Final`` constants
    into them (a constant changed in facts/constants.py, which is not compiled, stayed the old
    value in every compiled module that reads it), so any source change makes the build stale."""
    return content_digest(_sources(root, ".py"), root)


def engine_version(root: Path = ROOT) -> str:
    """``ENGINE_RELEASE`` + a digest of the engine's source (:func:`python_digest`) and data
    (constants, catalog, calibration rows) under ``root``: "1.0.0+87b2d7b28325"."""
    data = content_digest(_sources(root, ".json"), root)
    both = hashlib.sha256(f"{python_digest(root)}/{data}".encode()).hexdigest()[:12]
    return f"{ENGINE_RELEASE}+{both}"


def constants_version() -> str:
    """The digest of the performance model's constants module (facts/constants.py)."""
    return "constants-" + content_digest([ROOT / "facts" / "constants.py"], ROOT)
