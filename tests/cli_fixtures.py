"""Helpers for tests that run the ``datae`` command in a subprocess."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def checkout_env() -> dict[str, str]:
    """The environment for running the ``datae`` console script (or ``python -m datae``)
    on this checkout: the venv's script would import whichever checkout is installed."""
    extra = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *([extra] if extra else [])])}


def run_cli(capsys: Any, *argv: str) -> tuple[int, str, str]:
    """``datae ARGV...`` run in this process: its exit code, stdout and stderr."""
    from datae.cli import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
