"""Helpers for tests that run the ``datae`` command in a subprocess."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def checkout_env() -> dict[str, str]:
    """The environment for running the ``datae`` console script (or ``python -m datae``)
    on this checkout: the venv's script would import whichever checkout is installed."""
    extra = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *([extra] if extra else [])])}
