"""Helpers for tests that run the ``datae`` command: in this process (:func:`run_cli`, with
stderr a :class:`FakeTerminal` and rates read from a :class:`FakeClock` when the test is
about progress lines) or in a subprocess where the process itself is what is tested (exit
codes of the real program, signals, a real terminal: :func:`on_a_terminal`)."""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def checkout_env() -> dict[str, str]:
    """The environment for running the ``datae`` console script (or ``python -m datae``)
    on this checkout: the venv's script would import whichever checkout is installed."""
    extra = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *([extra] if extra else [])])}


@pytest.fixture
def initialised_workdir(tmp_path, monkeypatch):
    """A temporary working directory, made current, holding a new store (``datae init``),
    with ``DATAE_AUTHOR=tester``."""
    from datae.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DATAE_AUTHOR", "tester")
    assert main(["init"]) == 0
    return tmp_path


def run_cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    """``datae ARGV...`` run in this process: its exit code, stdout and stderr."""
    from datae.cli import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# What a terminal is sent besides text: cursor moves, erasures, colours.
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class FakeTerminal(io.StringIO):
    """A stream that says it is a terminal, for ``sys.stderr``; :meth:`seen` is what a
    terminal would have been sent, as text.

    >>> terminal = FakeTerminal()
    >>> terminal.isatty(), terminal.write("\\x1b[2Kdone"), terminal.seen()
    (True, 8, 'done')
    """

    def isatty(self) -> bool:
        return True

    def seen(self) -> str:
        """Everything written, escape sequences removed."""
        return _ESCAPES.sub("", self.getvalue())


def terminal_stderr(monkeypatch: Any) -> FakeTerminal:
    """Make ``sys.stderr`` a :class:`FakeTerminal` for the rest of the test (after
    ``capsys``, which it then replaces), and return it."""
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    return terminal


class FakeClock:
    """Seconds that move only when the test says (:meth:`advance`): a progress line's rates
    and times are then exact.

    >>> clock = FakeClock()
    >>> clock(), clock.advance(1.5), clock()
    (0.0, None, 1.5)
    """

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def on_a_terminal(args: list[str], cwd) -> tuple[bytes, str]:
    """Run ``datae ARGS`` with stderr on a pseudo-terminal: its stdout, and what the
    terminal saw as text (escape sequences removed)."""
    master, slave = pty.openpty()
    with tempfile.TemporaryFile() as stdout:  # a file, not a pipe nobody reads while the child writes
        process = subprocess.Popen([sys.executable, "-m", "datae", *args], cwd=cwd, env=checkout_env(),
                                   stdout=stdout, stderr=slave)
        os.close(slave)
        seen = b""
        while True:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                seen += chunk
            elif process.poll() is not None:
                break
        assert process.wait(timeout=120) == 0
        os.close(master)
        stdout.seek(0)
        return stdout.read(), _ESCAPES.sub("", seen.decode("utf-8", "replace"))
