"""The package structure, read from every import statement of the four packages: at
module level, in function bodies, under ``TYPE_CHECKING`` and in ``try``/``except``
(and ``importlib.import_module("...")`` of a literal name).

1. Layers import only downwards: nstore -> fstore -> query -> datae.
2. No import loop inside any of the four packages (over all imports, lazy ones included:
   a loop dodged by importing inside a function is still a loop).
3. ``fstore.core`` imports only nstore, fstore.core and fstore.errors; ``fstore.ops`` and
   ``fstore.sync`` never import the facade (the package ``fstore``, ``fstore.repository``,
   ``fstore.view``, ``fstore.transaction``, ``fstore.api``); ``fstore.ops`` imports neither
   sync nor the tables (a plug-in gives it what it needs of them).
4. ``query`` imports from fstore only its public API: ``fstore``, ``fstore.rdf``,
   ``fstore.errors``.
5. No module of ``datae`` but the entry point imports ``datae.cli``: command modules
   import a small context module, never the parser that dispatches to them.
6. Every import that runs only when a function is called is named in ``LAZY`` with the
   reason it is not at the top; an entry that no longer matches an import fails too, so the
   table stays true. (Imports under ``TYPE_CHECKING`` never run; they count in 1-5.)
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["nstore", "fstore", "query", "datae"]

# (importing module, imported module) -> why the import is inside a function or under
# TYPE_CHECKING rather than at the top of the module. Keep one line per pair; the
# failure message of test_every_lazy_import_has_a_reason prints lines ready to paste.
LAZY: dict[tuple[str, str], str] = {
    # The CLI: `datae --help`, `datae --version` and `datae CMD --help` load none of the
    # layers below (tests/datae/test_cli_table.py); a command's handler loads what it uses.
    ("datae.commands.*", "*"): "a command loads the store, the query engine, rich or the server when it runs",
    ("datae.context", "*"): "the shared helpers of commands load the store only when a command calls them",
    # Optional or costly dependencies, loaded by the one call that needs them.
    ("fstore.tables.dataset", "fstore.tables.arrow_batches"): "pyarrow is optional: Table.to_arrow alone needs it",
    ("fstore.tables.store", "fstore.tables.arrow_batches"): "pyarrow is optional: TableWriter.to_arrow alone needs it",
    ("fstore.export.sparktypes", "fstore.export.arrow"): "Spark's types need no pyarrow; only their Arrow side does",
    ("fstore.sync.remotes", "fstore.sync.http_client"): "http.client (14 ms) loads only for an http:// remote",
    ("nstore.okvs", "nstore.btree"): "only verify walks the B-trees",
}

# The modules of fstore that make up the facade: operations and sync take a Snapshot,
# a Writer or a Storage, never these.
FACADE = {"fstore", "fstore.repository", "fstore.view", "fstore.transaction", "fstore.api"}
# What the query engine may see of fstore: its public API.
FSTORE_PUBLIC = {"fstore", "fstore.rdf", "fstore.errors"}
# The only modules that may import the CLI's parser: the `python -m datae` entry point.
CLI_ENTRY_POINTS = {"datae.__main__"}


@dataclass(frozen=True)
class Import:
    """One project module one import statement names."""

    module: str  # the importing module
    target: str  # the imported project module
    line: int
    lazy: bool  # inside a function body or under TYPE_CHECKING: not run when the module loads
    typing_only: bool = False  # under TYPE_CHECKING: never run

    def where(self) -> str:
        return f"{module_path(self.module)}:{self.line}: {self.module} imports {self.target}"


def project_modules(root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> source file, for the four packages."""
    modules = {}
    for package in LAYERS:
        for path in (root / package).rglob("*.py"):
            parts = path.with_suffix("").relative_to(root).parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def module_path(module: str) -> str:
    path = project_modules().get(module)
    return str(path.relative_to(ROOT)) if path else module


def imports_of(module: str, source: str, is_package: bool, known: set[str],
               packages: tuple[str, ...] = tuple(LAYERS)) -> list[Import]:
    """Every import of a module of ``packages`` in ``source`` (the text of ``module``),
    lazy or not.

    ``from a import b`` names the module ``a.b`` when it is one of ``known``, else ``a``.
    """
    package = module if is_package else module.rpartition(".")[0]
    found: list[Import] = []

    def resolve(node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        base = node.module or ""
        if node.level:
            parts = package.split(".")
            parts = parts[: len(parts) - node.level + 1]
            base = ".".join(parts + ([base] if base else []))
        submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known]
        return submodules or [base]

    def add(targets: list[str], line: int, lazy: bool, typing_only: bool) -> None:
        for target in targets:
            if target.split(".")[0] in packages and target != module:
                found.append(Import(module, target, line, lazy, typing_only))

    def visit(node: ast.AST, lazy: bool, typing_only: bool = False) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            add(resolve(node), node.lineno, lazy, typing_only)
            return
        if isinstance(node, ast.Call) and _is_import_call(node.func) and node.args:
            name = node.args[0]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                add([name.value], node.lineno, lazy, typing_only)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            # Decorators and defaults run at load; the body when called.
            body = node.body if isinstance(node.body, list) else [node.body]
            for child in ast.iter_child_nodes(node):
                visit(child, lazy or any(child is statement for statement in body), typing_only)
            return
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            visit(node.test, lazy, typing_only)
            for child in node.body:
                visit(child, True, True)
            for child in node.orelse:
                visit(child, lazy, typing_only)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, lazy, typing_only)

    visit(ast.parse(source), False)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _is_import_call(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id in ("import_module", "__import__"))


def all_imports(root: Path = ROOT) -> list[Import]:
    """Every project import of the four packages."""
    modules = project_modules(root)
    known = set(modules)
    found = []
    for name, path in sorted(modules.items()):
        found += imports_of(name, path.read_text(), path.name == "__init__.py", known)
    return found


def import_graph(package: str, imports: list[Import] | None = None) -> dict[str, set[str]]:
    """Module of ``package`` -> the project modules it imports (lazily or not)."""
    graph: dict[str, set[str]] = {}
    for name in project_modules():
        if name.split(".")[0] == package:
            graph[name] = set()
    for found in all_imports() if imports is None else imports:
        if found.module in graph:
            graph[found.module].add(found.target)
    return graph


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

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _report(what: str, faults: list[str]) -> str:
    return f"{len(faults)} {what}:\n  " + "\n  ".join(faults)


def _fail_if(what: str, faults: list[str]) -> None:
    """Fail with one line per fault (no traceback: the list is the message)."""
    if faults:
        pytest.fail(_report(what, faults), pytrace=False)


def test_layers_import_only_downwards():
    faults = [found.where() for found in all_imports()
              if LAYERS.index(found.target.split(".")[0]) > LAYERS.index(found.module.split(".")[0])]
    _fail_if("imports of a layer above", faults)


def test_no_import_loop_in_any_package():
    imports = all_imports()
    loops = {package: cycles(import_graph(package, imports)) for package in LAYERS}
    faults = []
    for package, components in loops.items():
        for component in components:
            inside = set(component)
            edges = sorted({f"{found.module} -> {found.target} (line {found.line}{', lazy' if found.lazy else ''})"
                            for found in imports if found.module in inside and found.target in inside})
            faults.append(f"{package}: {len(component)} modules: " + ", ".join(component)
                          + "\n      " + "\n      ".join(edges))
    _fail_if("import loops", faults)


def test_fstore_core_ops_and_sync_stay_below_the_facade():
    faults = []
    for found in all_imports():
        if _under(found.module, "fstore.core"):
            allowed = _under(found.target, "nstore") or _under(found.target, "fstore.core") \
                or found.target == "fstore.errors"
            if not allowed:
                faults.append(found.where() + " (core imports only nstore, fstore.core, fstore.errors)")
        elif _under(found.module, "fstore.ops") or _under(found.module, "fstore.sync"):
            if found.target in FACADE:
                faults.append(found.where() + " (operations and sync never import the facade)")
            if _under(found.module, "fstore.ops") and (_under(found.target, "fstore.sync")
                                                       or _under(found.target, "fstore.tables")):
                faults.append(found.where() + " (operations import neither sync nor the tables)")
    _fail_if("imports across fstore's inner layers", faults)


def test_query_sees_only_the_public_api_of_fstore():
    faults = [found.where() for found in all_imports()
              if _under(found.module, "query") and _under(found.target, "fstore")
              and found.target not in FSTORE_PUBLIC]
    _fail_if(f"imports of fstore internals by query (allowed: {sorted(FSTORE_PUBLIC)})", faults)


def test_command_modules_never_import_the_cli():
    faults = [found.where() for found in all_imports()
              if found.target == "datae.cli" and found.module not in CLI_ENTRY_POINTS]
    _fail_if("imports of datae.cli (use the context module)", faults)


def _matches(pair: tuple[str, str], found: Import) -> bool:
    return fnmatch(found.module, pair[0]) and fnmatch(found.target, pair[1])


def reason_for(found: Import) -> str | None:
    """The reason LAZY gives for an import: its exact pair, else the first pattern (``*``)
    that matches it."""
    exact = LAZY.get((found.module, found.target))
    if exact is not None:
        return exact
    return next((reason for pair, reason in LAZY.items() if _matches(pair, found)), None)


def test_every_lazy_import_has_a_reason():
    lazy = [found for found in all_imports() if found.lazy and not found.typing_only]
    missing: dict[tuple[str, str], list[Import]] = {}
    for found in lazy:
        if reason_for(found) is None:
            missing.setdefault((found.module, found.target), []).append(found)
    stale = sorted(pair for pair in LAZY if not any(_matches(pair, found) for found in lazy))
    message = []
    if missing:
        message.append(_report("lazy imports with no reason in LAZY", [
            found.where() for pair in sorted(missing) for found in missing[pair]]))
        message.append("ready to paste into LAZY (write the reason):\n" + "\n".join(
            f'    ("{module}", "{target}"): "lazy: ",' for module, target in sorted(missing)))
    if stale:
        message.append(_report("LAZY entries that match no lazy import any more (remove them)",
                               [f"{pair}: {LAZY[pair]}" for pair in stale]))
    if message:
        pytest.fail("\n\n".join(message), pytrace=False)


def test_every_reason_says_something():
    assert all(reason.strip() and reason.strip() != "lazy:" for reason in LAZY.values())


def test_the_checker_sees_every_kind_of_import():
    known = {"p", "p.a", "p.b", "p.c", "p.d", "p.e", "p.f", "p.g", "p.h"}
    source = (
        "from typing import TYPE_CHECKING\n"
        "import p.a\n"
        "try:\n    from . import b\nexcept ImportError:\n    pass\n"
        "if TYPE_CHECKING:\n    from .c import Thing\n"
        "else:\n    from p import h\n"
        "def f(x=None):\n    from .d import y\n    return y\n"
        "class K:\n    from . import e\n    def m(self):\n        import p.f\n"
        "def g():\n    import importlib\n    return importlib.import_module('p.g')\n"
    )
    found = {(i.target, i.line, i.lazy) for i in imports_of("p.mod", source, False, known, ("p",))}
    assert found == {("p.a", 2, False), ("p.b", 4, False), ("p.c", 8, True), ("p.h", 10, False),
                     ("p.d", 12, True), ("p.e", 15, False), ("p.f", 17, True), ("p.g", 20, True)}
    # relative imports from a package's __init__ and from two levels up
    assert [i.target for i in imports_of("p.q", "from .a import x\nfrom .. import z", True, known, ("p",))] \
        == ["p.q.a", "p"]


def test_the_checker_sees_a_loop():
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    graph = import_graph("fstore")
    assert "fstore.core.heads" in graph["fstore.core.history"] and "nstore.dictionary" in graph["fstore.core.history"]
    assert "fstore.tables.wkb" in graph["fstore.tables.wkt"]  # `from . import wkb`
