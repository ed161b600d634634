"""Where the tests find the project and the shared test material, wherever a test file sits."""

from __future__ import annotations

from pathlib import Path

__all__ = ["PROJECT", "SHARED"]

PROJECT = Path(__file__).resolve().parents[1]
"""The project's root (pyproject.toml, docs/, .cache/)."""

SHARED = PROJECT.parent / "shared"
"""Test material written by others (testdata/, scripts/, seeds/), beside the checkout."""
