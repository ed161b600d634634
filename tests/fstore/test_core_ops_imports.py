"""What fstore's core and operations may import, counting every import (function-level
and under ``TYPE_CHECKING`` too): the core (``fstore.core``) only nstore, ``fstore.errors``
and itself; the operations (``fstore.ops``) never the facade (``fstore.repository``,
``fstore.view``, ``fstore.transaction``), which delegates to them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FACADE = {"fstore.repository", "fstore.view", "fstore.transaction", "fstore"}


def _imports(path: Path, text: str | None = None) -> set[str]:
    """Every module ``path`` imports (or would, holding ``text``), wherever the import
    statement is."""
    parts = path.with_suffix("").relative_to(ROOT).parts
    package = ".".join(parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text() if text is None else text)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names
                         if (ROOT / Path(*f"{base}.{alias.name}".split("."))).with_suffix(".py").exists())
    return found


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("path", _modules("fstore/core"), ids=lambda p: p.stem)
def test_the_core_imports_only_nstore_the_errors_and_itself(path: Path) -> None:
    project = {name for name in _imports(path) if name.split(".")[0] in ("fstore", "query", "datae")}
    assert {name for name in project if not name.startswith("fstore.core") and name != "fstore.errors"} == set()


@pytest.mark.parametrize("path", _modules("fstore/ops"), ids=lambda p: p.stem)
def test_operations_never_import_the_facade(path: Path) -> None:
    assert _imports(path) & FACADE == set()
    assert {name for name in _imports(path) if name.startswith(("fstore.sync", "fstore.tables", "query", "datae"))} == set()


def test_the_check_sees_imports_in_functions_and_under_type_checking() -> None:
    module = ROOT / "fstore" / "ops" / "diff.py"
    text = ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..view import View\n"
            "def f():\n    from ..repository import Repository\n")
    assert {"fstore.view", "fstore.repository"} <= _imports(module, text)
