"""Where the tests find the project and the shared test material, wherever a test file sits.

The shared material (``../shared``: Kart's repositories, the schema.org releases, the
scripts that fetch the W3C suites and pycountry) sits beside the project's CI checkout and
nowhere else: a user's clone has none. A test that needs it asks :func:`shared` for the
path, and is skipped, saying what is missing, when it is not there; with
``DATAE_REQUIRE_SHARED=1`` (as ``.ci/run`` sets) a missing file fails instead, so CI
cannot pass by skipping. The demo's data (``bench/demo_data``) ships with the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

__all__ = ["PROJECT", "SHARED", "DEMO_DATA", "shared", "missing"]

PROJECT = Path(__file__).resolve().parents[1]
"""The project's root (pyproject.toml, docs/, .cache/)."""

SHARED = Path(os.environ.get("DATAE_SHARED") or PROJECT.parent / "shared")
"""Test material written by others (testdata/, scripts/, seeds/), beside the checkout
(``$DATAE_SHARED`` names another place)."""

DEMO_DATA = PROJECT / "bench" / "demo_data"
"""Real data in the repository itself: six schema.org releases and Kart's ``points.tgz``."""


def shared(*parts: str) -> Path:
    """The path ``SHARED/parts…`` if it exists; else the calling test (or, at import, its
    module) is skipped, or failed under ``DATAE_REQUIRE_SHARED=1``."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        missing(f"needs the shared test material {path} (beside the project's CI checkout; a clone has none)")
    return path


def missing(reason: str) -> None:
    """Skip the calling test (or, at import, its module) for want of shared material, saying
    ``reason``; fail instead under ``DATAE_REQUIRE_SHARED=1``."""
    if os.environ.get("DATAE_REQUIRE_SHARED") == "1":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason, allow_module_level=True)
