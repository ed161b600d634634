"""Generic fixtures shared by the whole test suite (keep layer-specific ones in their files),
and the grouping that lets ``pytest -n 2 --dist loadgroup`` (``make test``) pay for each
expensive fixture once: the tests of one module-scoped fixture run on one worker, and every
test of the Spark session on one worker (one JVM for the run)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from nstore import okvs
from tests.profiles import PROFILE  # importing it loads the Hypothesis profile

# Session fixtures that must exist once per run (a JVM each): their tests share one group.
ONE_PER_RUN = ("spark",)


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


def xdist_group_of(item: pytest.Item) -> str | None:
    """The pytest-xdist group an item belongs to: ``spark`` for a test of the run's one
    SparkSession, its module's path for a test of a module-scoped fixture (built once, on
    the worker that runs them all), else None (any worker)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:  # a doctest
        return None
    if any(name in info.name2fixturedefs for name in ONE_PER_RUN):
        return ONE_PER_RUN[0]
    for definitions in info.name2fixturedefs.values():
        if any(definition.scope in ("module", "package") for definition in definitions):
            return item.nodeid.split("::", 1)[0]
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist reads the marks (its own hook names the group)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        group = xdist_group_of(item)
        if group is None:
            continue
        item.add_marker(pytest.mark.xdist_group(group))
        if getattr(config.option, "loadgroup", False) and hasattr(item, "_id"):
            # A worker under --dist loadgroup tells the scheduler the group as a node-id
            # suffix; pytest-xdist 3.8 writes it to _nodeid, which pytest 9 no longer reads
            # (the id is _id), so every group would be split across workers: write it here.
            from _pytest.nodeid import NodeId

            item._id = NodeId.parse(f"{item.nodeid}@{group}")
