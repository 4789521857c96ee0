"""The suite keeps its own house rules: shared helpers live in helper modules, temp files in pytest's."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

TESTS = REPO / "tests"


def _modules() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if "broken_plugins" not in p.parts)


def _imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_no_test_module_imports_another() -> None:
    offenders = {
        str(path.relative_to(REPO)): sorted(
            n for n in _imported(path) if n.split(".")[-1].startswith("test_")
        )
        for path in _modules()
    }
    assert {k: v for k, v in offenders.items() if v} == {}, (
        "move shared helpers into a tests/<helper>.py module"
    )


def test_temporary_folders_are_made_inside_pytests_temporary_root() -> None:
    """`tempfile.mkdtemp()` / `TemporaryDirectory()` without `dir=` leave folders pytest never cleans."""
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", None)
                in (
                    "mkdtemp",
                    "TemporaryDirectory",
                )
                and not any(k.arg == "dir" for k in node.keywords)
            ):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert [o for o in offenders if o.split(":")[0] not in SHORT_PATHS] == []


SHORT_PATHS = {
    "tests/pg.py": "a PostgreSQL socket path must stay under 108 bytes; it removes its folder",
}
"""Modules allowed a temporary folder outside pytest's (each cleans up after itself)."""
