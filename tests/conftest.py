"""Generic fixtures shared by the whole test suite (keep layer-specific ones in their files)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from nstore import okvs
from tests.profiles import PROFILE  # importing it loads the Hypothesis profile


@pytest.fixture
def tmp_store(tmp_path: Path) -> Path:
    """A fresh directory path for one store (not created yet, as on a user's first run)."""
    return tmp_path / "store"


@pytest.fixture
def db(tmp_store: Path) -> Iterator[okvs.Okvs]:
    """An open okvs in ``tmp_store``, closed after the test."""
    handle = okvs.open(tmp_store)
    yield handle
    handle.close()


def pytest_report_header() -> str:
    return f"hypothesis profile: {PROFILE} (HYPOTHESIS_PROFILE: ci, dev or deep)"
