"""The ``datae`` command as a table of commands (issue 25): ``--help`` lists every command
of :data:`datae.cli.COMMANDS`; ``--version``, ``--help`` and ``CMD --help`` load neither
the store, the query engine nor rich (only the module of the command asked for); each
command's module declares its arguments and handler and never imports ``datae.cli``; the
values the command modules write out to stay light agree with the layers that own them."""

from __future__ import annotations

import ast
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

from datae.cli import COMMANDS, main
from tests.cli_fixtures import ROOT, checkout_env

HEAVY = ("fstore", "query", "nstore", "rich", "lark", "pyoxigraph", "starlette", "prompt_toolkit", "uvicorn",
         "pyarrow", "dulwich")
COMMAND_MODULES = sorted({module for module, _ in COMMANDS.values()})


def imported_packages(*args: str) -> tuple[set[str], str]:
    """The top-level packages ``python -X importtime ARGS`` imports, and its stdout."""
    done = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True, text=True,
                          env=checkout_env(), cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    names = {line.rsplit("|", 1)[1].strip().split(".")[0] for line in done.stderr.splitlines()
             if line.startswith("import time:") and line.count("|") == 2}
    assert "datae" in names  # the output was read: the command's own package is there
    return names, done.stdout


def test_version_imports_nothing_heavy():
    names, out = imported_packages("-m", "datae", "--version")
    assert out.startswith("datae ")
    assert not names & set(HEAVY), sorted(names & set(HEAVY))


def test_help_of_every_command_imports_nothing_heavy():
    """``datae --help`` and each ``datae CMD --help``, in one process: only datae's own
    modules and the standard library are loaded, and every command module was."""
    script = ("import contextlib, io, sys\nfrom datae.cli import COMMANDS, main\n"
              "for argv in [['--help'], *([name, '--help'] for name in COMMANDS)]:\n"
              "    with contextlib.redirect_stdout(io.StringIO()):\n"
              "        try:\n            main(argv)\n        except SystemExit as exit:\n"
              "            assert exit.code == 0, (argv, exit.code)\n"
              "print(' '.join(sorted(name for name in sys.modules if name.startswith('datae.commands.'))))\n")
    names, out = imported_packages("-c", script)
    assert not names & set(HEAVY), sorted(names & set(HEAVY))
    assert out.split() == [f"datae.commands.{module}" for module in COMMAND_MODULES]


def test_help_lists_every_command_with_its_line(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--help"])
    assert exit.value.code == 0
    text = "".join(capsys.readouterr().out.split())  # argparse wraps the lines, at hyphens too
    for name, (_, help) in COMMANDS.items():
        assert name + "".join(help.split()) in text, name


@pytest.mark.parametrize("name", list(COMMANDS))
def test_command_help_is_the_command_s_own(name, capsys):
    """``datae CMD --help`` is CMD's parser, its arguments declared: the usage names the
    command and its description is the table's line."""
    with pytest.raises(SystemExit) as exit:
        main([name, "--help"])
    assert exit.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: datae {name} ")
    assert "".join(COMMANDS[name][1].split()) in "".join(text.split())  # wrapped at spaces and hyphens


@pytest.mark.parametrize("module", COMMAND_MODULES)
def test_command_modules_declare_and_run_their_commands(module):
    loaded = import_module(f"datae.commands.{module}")
    for name, (owner, _) in COMMANDS.items():
        if owner == module:
            assert callable(getattr(loaded, f"{name}_arguments")), name
            assert callable(getattr(loaded, f"cmd_{name}")), name


def test_every_command_module_is_in_the_table():
    found = {path.stem for path in (ROOT / "datae" / "commands").glob("*.py") if path.stem != "__init__"}
    assert found == set(COMMAND_MODULES)


def imported(node: ast.AST, path: Path) -> set[str]:
    """The modules an import statement of ``path`` names, as absolute names (relative ones
    resolved in ``datae.commands`` or ``datae``; ``from X import y`` names X and X.y)."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    if not isinstance(node, ast.ImportFrom):
        return set()
    package = "datae.commands" if path.parent.name == "commands" else "datae"
    base = package.rsplit(".", node.level - 1)[0] if node.level else ""
    module = ".".join(part for part in (base, node.module or "") if part)
    return {module, *(f"{module}.{alias.name}" for alias in node.names)}


def top_level_imports(path: Path) -> set[str]:
    """The modules ``path`` imports at its top level (not under ``if TYPE_CHECKING``)."""
    return {name for node in ast.parse(path.read_text()).body for name in imported(node, path)}


def every_import(path: Path) -> set[str]:
    """Every module ``path`` imports anywhere, function level too."""
    return {name for node in ast.walk(ast.parse(path.read_text())) for name in imported(node, path)}


@pytest.mark.parametrize("path", sorted([*(ROOT / "datae" / "commands").glob("*.py"), ROOT / "datae" / "context.py"]),
                         ids=lambda path: path.stem)
def test_command_modules_stay_light_and_never_import_the_cli(path):
    """What ``datae CMD --help`` loads imports, at its top level, only the standard library
    and datae's command modules; and no module below the table imports the table."""
    assert "datae.cli" not in every_import(path)
    ours = ("datae.context", *(f"datae.commands.{module}" for module in COMMAND_MODULES))
    for name in top_level_imports(path):
        assert name.split(".")[0] not in HEAVY, name
        assert name.split(".")[0] != "datae" or name.startswith(ours), name


# What a command module may import inside a function, and why: the layers below and the
# modules that load rich, prompt_toolkit or starlette, so that declaring the command's
# arguments (datae CMD --help) loads none of them. Anything else belongs at the top.
LAZY_LOADS = ("fstore", "query", "nstore", "lmdb", "datae.progress", "datae.repl", "datae.server")


def function_level_imports(path: Path) -> set[str]:
    """The modules ``path`` imports inside its functions."""
    functions = [node for node in ast.walk(ast.parse(path.read_text()))
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return {name for function in functions for node in ast.walk(function)
            if isinstance(node, (ast.Import, ast.ImportFrom)) for name in imported(node, path)}


@pytest.mark.parametrize("path", sorted([*(ROOT / "datae" / "commands").glob("*.py"), ROOT / "datae" / "context.py"]),
                         ids=lambda path: path.stem)
def test_function_level_imports_are_the_lazy_loads(path):
    for name in function_level_imports(path):
        assert name.split(".")[0] in LAZY_LOADS or name.startswith(LAZY_LOADS[4:]), name


def test_the_table_imports_a_command_s_module_only():
    """datae/cli.py imports, inside functions, only importlib.metadata (for --version); a
    command's module it imports by name from the table (import_module)."""
    assert {name.split(".")[0] for name in function_level_imports(ROOT / "datae" / "cli.py")} == {"importlib"}


def test_repl_and_progress_never_import_the_cli():
    for name in ("repl.py", "repl_text.py", "progress.py"):
        assert "datae.cli" not in every_import(ROOT / "datae" / name), name


def test_the_values_written_out_for_help_agree_with_their_owners():
    """The defaults and choices the commands declare without loading the layers below."""
    import query.limits
    from datae import context
    from datae.commands import data, merge_requests
    from fstore.core.storage import DEFAULT_BRANCH
    from fstore.rdf import FORMAT_NAMES
    from fstore.sync.merge_requests import STATES

    assert data.RDF_FORMATS == FORMAT_NAMES
    assert (context.MAX_HELD_ROWS, context.MAX_HELD_BYTES, context.MAX_VALUE_LENGTH) == \
        (query.limits.MAX_HELD_ROWS, query.limits.MAX_HELD_BYTES, query.limits.MAX_VALUE_LENGTH)
    assert merge_requests.STATES == STATES
    assert merge_requests.DEFAULT_BRANCH == DEFAULT_BRANCH
