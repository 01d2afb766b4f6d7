"""Which build of the engine a process runs: the mypyc-compiled modules of ``compiled.txt``
when their build is fresh, their Python source otherwise.

``make compile`` (scripts/compile_engine.py) builds the modules listed in ``compiled.txt`` as C
extensions beside their sources and writes ``compiled.json``: the SHA-256 of each source it
built from and the Python it built for.  Python imports an extension before a source of the
same name, so a build older than an edit would hide the edit; :func:`install` prevents that.
It runs before any engine module is imported and, unless every listed source still has the
digest it was built from (and the Python is the one built for), puts a finder first on
``sys.meta_path`` that loads every listed module from its ``.py``: all of them, because a
compiled module calls the other modules of its group directly, not through ``sys.modules``.
``FABRIC_ENGINE_SOURCE=1`` forces the source (profilers see Python frames only).
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from advisor.engine.build_id import python_digest

PACKAGE_DIR = Path(__file__).resolve().parent
ROOT = PACKAGE_DIR.parents[1]
MODULES_FILE = PACKAGE_DIR / "compiled.txt"
MANIFEST = PACKAGE_DIR / "compiled.json"
FORCE_SOURCE_ENV = "FABRIC_ENGINE_SOURCE"

log = logging.getLogger(__name__)


def compiled_modules() -> tuple[str, ...]:
    """The dotted names of ``compiled.txt`` (comments and blank lines skipped)."""
    lines = MODULES_FILE.read_text(encoding="utf-8").splitlines()
    return tuple(s for line in lines if (s := line.split("#", 1)[0].strip()))


def source_path(module: str) -> Path:
    """The ``.py`` file of a dotted module name under the repository root."""
    return ROOT.joinpath(*module.split(".")).with_suffix(".py")


def source_digest(module: str) -> str:
    return hashlib.sha256(source_path(module).read_bytes()).hexdigest()


def python_tag() -> str:
    """The interpreter an extension is built for (its ABI: implementation, version, cache tag)."""
    return f"{sys.implementation.cache_tag}-{sys.version_info.releaselevel}"


def extension_files() -> list[Path]:
    """Every extension file under the engine's package (the engine has none but a build's:
    the modules' shims and the group's library), whether or not ``compiled.txt`` lists it."""
    return sorted(
        {
            path
            for suffix in importlib.machinery.EXTENSION_SUFFIXES
            for path in PACKAGE_DIR.rglob(f"*{suffix}")
        }
    )


def extension_modules() -> tuple[str, ...]:
    """The dotted names of the source modules that have an extension file (not the group's
    library, which has no source)."""
    names = set()
    for path in extension_files():
        name = ".".join((*path.parent.relative_to(ROOT).parts, path.name.split(".", 1)[0]))
        if source_path(name).exists():
            names.add(name)
    return tuple(sorted(names))


def manifest_is_fresh(modules: Sequence[str]) -> bool:
    """Whether ``compiled.json`` names this Python and exactly ``modules``, each with the
    digest of its source as it is now, and the engine's whole Python source as it is now
    (:func:`advisor.engine.build_id.python_digest`: compiled modules hold other modules'
    ``Final`` constants)."""
    try:
        manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    digests = manifest.get("sources") if isinstance(manifest, dict) else None
    return (
        isinstance(digests, dict)
        and manifest.get("python") == python_tag()
        and set(digests) == set(modules)
        and all(digests[m] == source_digest(m) for m in modules)
        and manifest.get("engine_sources") == python_digest()
    )


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Loads the listed modules from their ``.py`` files, never from an extension."""

    def __init__(self, modules: Sequence[str]) -> None:
        self.modules = frozenset(modules)

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.modules:
            return None
        return importlib.util.spec_from_file_location(fullname, source_path(fullname))


def install() -> str:
    """Decide the build for this process (before any listed module is imported; run once, when
    this module is) and return it: ``"compiled"`` when exactly the listed modules have
    extensions and the manifest is fresh, ``"source"`` otherwise."""
    modules = compiled_modules()
    built = extension_modules()
    if not built:
        return "source"  # nothing compiled
    forced = bool(os.environ.get(FORCE_SOURCE_ENV))
    if not forced and set(built) == set(modules) and manifest_is_fresh(modules):
        return "compiled"
    if not forced:
        log.warning(
            "compiled engine modules are older than their source: running the source "
            "(run `make compile` to build them again)"
        )
    # every module with an extension file too (one compiled.txt no longer lists)
    sys.meta_path.insert(0, _SourceFinder((*modules, *built)))
    return "source"


_BUILD = install()


def engine_build() -> str:
    """The build this process runs (``compiled`` or ``source``), for reports and benches."""
    return _BUILD
