"""The package structure: layers import only downwards (terms in nstore -> nstore -> fstore
-> query -> datae, the app) and fstore has no import loop (the tables are above the versioned core, which
reaches them only through ``fstore.extensions``). Module-level imports are read from the
source; imports under ``TYPE_CHECKING`` do not count."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["nstore", "fstore", "query", "datae"]


def import_graph(package: str) -> dict[str, set[str]]:
    """Module -> the project modules it imports when it is loaded."""
    modules = {}
    for path in (ROOT / package).rglob("*.py"):
        parts = path.with_suffix("").relative_to(ROOT).parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package_name = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        found: set[str] = set()
        for node in _loaded_imports(ast.parse(path.read_text()).body):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
                continue
            base = node.module or ""
            if node.level:
                parts = package_name.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
            found.update(submodules or [base])
        graph[name] = {target for target in found if target != name}
    return graph


def _loaded_imports(body: list) -> list:
    """The import statements that run when the module loads (function bodies excluded)."""
    found = []
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" not in ast.unparse(node.test):
            found += _loaded_imports(node.body) + _loaded_imports(node.orelse)
        elif isinstance(node, ast.Try):
            found += _loaded_imports(node.body)
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for target in graph.get(module, ()):
            if target not in graph:
                continue
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    return found


def test_fstore_and_nstore_have_no_import_loop():
    assert cycles(import_graph("fstore")) == []
    assert cycles(import_graph("nstore")) == []


def test_layers_import_only_downwards():
    for position, layer in enumerate(LAYERS):
        above = LAYERS[position + 1:]
        for module, targets in import_graph(layer).items():
            upward = sorted(t for t in targets if t.split(".")[0] in above)
            assert upward == [], f"{module} imports {upward}, a layer above it"


def test_the_checker_sees_a_loop():
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    graph = import_graph("fstore")
    assert "fstore.core.heads" in graph["fstore.core.history"] and "nstore.dictionary" in graph["fstore.core.history"]
    assert "fstore.tables.wkb" in graph["fstore.tables.wkt"]  # `from . import wkb`
    assert "fstore.tables" not in graph["fstore.view"]  # table reads come through fstore.extensions
