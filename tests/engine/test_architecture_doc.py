"""docs/ARCHITECTURE.md says what the code is: its import-contract count and names match
pyproject's import-linter contracts, and its engine module list matches advisor/engine."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "ARCHITECTURE.md").read_text("utf-8")
ENGINE = ROOT / "advisor" / "engine"


def _contracts() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    return [c["name"] for c in config["tool"]["importlinter"]["contracts"]]


def _docstring_only(path: Path) -> bool:
    body = ast.parse(path.read_text("utf-8")).body
    return all(isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) for node in body)


def _engine_modules() -> set[str]:
    """Every engine module; a sub-package's __init__.py that holds only its docstring is the
    package's name, not a module of its own."""
    found = set()
    for path in ENGINE.rglob("*.py"):
        if path.name == "__init__.py" and path.parent != ENGINE and _docstring_only(path):
            continue
        found.add(path.relative_to(ROOT).as_posix())
    return found


def _section(title: str) -> str:
    start = DOC.index(f"## {title}")
    end = DOC.find("\n## ", start + 1)
    return DOC[start : end if end >= 0 else len(DOC)]


def test_the_contract_count_and_names_match_pyproject() -> None:
    said = re.search(r"lint-imports` checks (\d+) contracts", DOC)
    assert said is not None, "ARCHITECTURE.md no longer says how many contracts are checked"
    names = _contracts()
    assert int(said.group(1)) == len(names)
    flat = " ".join(DOC.split())
    missing = [n for n in names if f'"{n}"' not in flat]
    assert not missing, f"contracts not named in ARCHITECTURE.md: {missing}"


def test_the_engine_module_list_matches_the_tree() -> None:
    listed = set(
        re.findall(r"^- `(advisor/engine/[\w/]+\.py)`", _section("The engine's parts"), re.M)
    )
    modules = _engine_modules()
    assert sorted(modules - listed) == [], "engine modules missing from ARCHITECTURE.md"
    assert sorted(listed - modules) == [], "ARCHITECTURE.md lists modules that do not exist"


def test_the_engine_keeps_at_most_a_dozen_modules_at_its_top() -> None:
    top = [p.name for p in ENGINE.iterdir() if p.suffix == ".py"]
    assert len(top) <= 12, top


def test_no_engine_module_is_over_1100_lines_catalog_data_aside() -> None:
    long = {
        path.relative_to(ROOT).as_posix(): n
        for path in ENGINE.rglob("*.py")
        if "catalog" not in path.parts and (n := len(path.read_text("utf-8").splitlines())) > 1100
    }
    assert long == {}


def test_the_engine_has_no_import_circle() -> None:
    """Function-level imports count: grimp sees every import statement."""
    import grimp

    graph = grimp.build_graph("advisor")
    modules = {m for m in graph.modules if m.startswith("advisor.engine.")}
    # a module that reaches itself through the modules it imports is on a circle
    on_circle = sorted(
        m
        for m in modules
        for imported in graph.find_modules_directly_imported_by(m) & modules
        if graph.chain_exists(importer=imported, imported=m)
    )
    assert on_circle == []
