"""The ``datae`` command as a table of commands (issue 25): ``--help`` lists every command
of :data:`datae.cli.COMMANDS`; ``--version``, ``--help`` and ``CMD --help`` load neither
the store, the query engine nor rich (only the module of the command asked for); each
command's module declares its arguments and handler and never imports ``datae.cli``; the
values the command modules write out to stay light agree with the layers that own them."""

from __future__ import annotations

import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

from datae.cli import COMMANDS, main
from tests.cli_fixtures import ROOT, checkout_env
from tests.test_layers import imports_of, project_modules

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


LIGHT = sorted([*(ROOT / "datae" / "commands").glob("*.py"), ROOT / "datae" / "context.py"])
# What a command module may import inside a function, and why: the layers below and the
# modules that load rich, prompt_toolkit or starlette, so that declaring the command's
# arguments (datae CMD --help) loads none of them. Anything else belongs at the top. (That
# nothing below the table imports it, and every function-level import has its reason in
# one place: tests/test_layers.py.)
LAZY_LOADS = ("fstore", "query", "nstore", "lmdb", "datae.progress", "datae.repl", "datae.server")


def imports(path: Path) -> list:
    """Every import of ``path`` of datae's packages or a heavy dependency (the layer test's
    reader)."""
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return imports_of(module, path.read_text(), False, set(project_modules()), (*HEAVY, "datae", "lmdb"))


@pytest.mark.parametrize("path", LIGHT, ids=lambda path: path.stem)
def test_command_modules_load_only_the_standard_library_and_commands(path):
    """What ``datae CMD --help`` loads imports, at its top level, only the standard library
    and datae's command modules; inside functions, only the lazy loads."""
    ours = ("datae.context", "datae.commands")
    for found in imports(path):
        if found.lazy:
            assert found.typing_only or found.target.startswith(LAZY_LOADS), found.where()
        else:
            assert found.target.split(".")[0] not in HEAVY and found.target.startswith(ours), found.where()


def test_the_table_imports_a_command_s_module_only():
    """datae/cli.py imports only the context at its top, and a command's module by name from
    the table (import_module) when it runs."""
    found = {(i.target, i.lazy) for i in imports(ROOT / "datae" / "cli.py")}
    assert {target for target, lazy in found if not lazy} == {"datae.context"}
    assert {target for target, lazy in found if lazy} <= {f"datae.commands.{name}" for name in COMMAND_MODULES}


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
