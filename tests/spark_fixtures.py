"""Fixtures for the Spark export tests (import them into a test module; conftest.py is not
used, so only the modules that need a JVM start one).

``spark``: ONE ``local[2]`` SparkSession for the whole test run (UI off, two shuffle
partitions, 1 GB driver, UTC session time zone), skipped only when Java is missing.
``types_workdir``: the ``types`` Kart repository (one column of every Kart type) unpacked.
``history_repo``: an fstore repository with a short history (see :func:`build_history`).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Iterator

import pytest

import fstore
from fstore import IRI, BNode, Literal, Var

from tests.kart_fixtures import KART_DIR, unpack_archive

__all__ = ["spark", "java_available", "types_workdir", "history_repo", "build_history", "store_quads", "EX"]

EX = "http://example.org/"
_SESSION = None


def java_available() -> bool:
    """Whether a Java runtime is there for Spark (``JAVA_HOME`` or ``java`` on PATH)."""
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return True
    return shutil.which("java") is not None


@pytest.fixture(scope="session")
def spark():
    """The test run's one local SparkSession."""
    global _SESSION
    if not java_available():
        pytest.skip("Java is missing (no JAVA_HOME, no java on PATH): Spark needs a JVM")
    if _SESSION is None:
        from pyspark.sql import SparkSession

        _SESSION = (
            SparkSession.builder.master("local[2]")
            .appName("datae-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.default.parallelism", "2")
            .config("spark.driver.memory", "1g")
            .config("spark.sql.session.timeZone", "UTC")
            .getOrCreate()
        )
        _SESSION.sparkContext.setLogLevel("ERROR")
    yield _SESSION


def _stop_session() -> None:
    if _SESSION is not None:
        try:
            _SESSION.stop()
        except Exception:  # the JVM may already be gone at exit
            pass


import atexit  # noqa: E402  (stop the JVM once, after every module that used it)

atexit.register(_stop_session)


@pytest.fixture(scope="session")
def types_workdir(tmp_path_factory) -> Path:
    """The ``types`` Kart repository, unpacked once."""
    return unpack_archive(KART_DIR / "types.tgz", tmp_path_factory.mktemp("kart-types"))


def build_history(path: Path) -> tuple[fstore.Repository, dict[str, str]]:
    """A repository with commits c1..c4 on main (c4 merges a branch), covering every kind
    of stored value, graphs (named, default), blank nodes and removals. Returns the repo and
    ``{label: commit id}``."""
    repo = fstore.open(path)
    g1, g2 = IRI(EX + "graph/1"), IRI(EX + "graph/2")
    s = [IRI(f"{EX}s/{i}") for i in range(6)]
    p = [IRI(f"{EX}p/{i}") for i in range(4)]
    ids = {}
    with repo.transaction("main", message="c1", author="t") as tx:
        values = ["text", 7, -2**40, 2**80, 1.5, float("inf"), Decimal("3.25"), True, False, dt.date(2020, 2, 29),
                  dt.datetime(2021, 3, 4, 5, 6, 7), dt.datetime(2021, 3, 4, 5, 6, 7, 123456, tzinfo=dt.timezone.utc),
                  b"\x00\x01bytes", IRI(EX + "o"), BNode("b1"), Literal("chat", lang="fr"),
                  Literal("042", EX + "dt"), Literal("1.0E1", "http://www.w3.org/2001/XMLSchema#double"),
                  Literal("x y", "http://www.w3.org/2001/XMLSchema#token")]
        for i, value in enumerate(values):
            fstore.add(tx, g1 if i % 2 else None, s[i % 6], p[i % 4], value)
        fstore.add(tx, g2, BNode("node"), p[0], "in g2")
    ids["c1"] = tx.commit_id
    with repo.transaction("main", message="c2", author="t") as tx:
        fstore.rm(tx, None, s[0], p[0], "text")
        fstore.add(tx, g2, s[1], p[1], "later")
        for i in range(50):
            fstore.add(tx, g2, s[i % 6], p[2], i)
    ids["c2"] = tx.commit_id
    repo.branch("side", "main")
    with repo.transaction("side", message="side", author="t") as tx:
        fstore.add(tx, g1, s[5], p[3], "from side")
        fstore.rm(tx, g2, s[1], p[1], "later")
    ids["side"] = tx.commit_id
    with repo.transaction("main", message="c3", author="t") as tx:
        fstore.add(tx, None, s[4], p[3], dt.date(1999, 12, 31))
    ids["c3"] = tx.commit_id
    ids["c4"] = repo.merge("main", "side", message="c4")
    return repo, ids


@pytest.fixture(scope="module")
def history_repo(tmp_path_factory) -> Iterator[tuple[fstore.Repository, dict[str, str]]]:
    repo, ids = build_history(tmp_path_factory.mktemp("history") / "store")
    yield repo, ids
    repo.close()


def store_quads(repo: fstore.Repository, ref: str) -> list[tuple]:
    """The quads at ``ref`` as RDF terms (``to_rdf`` of each value), sorted."""
    view = repo.at(ref)
    quads = [tuple(fstore.to_rdf(b[k]) for k in "gspo")
             for b in fstore.from_(view, Var("g"), Var("s"), Var("p"), Var("o"))]
    return sorted(quads, key=repr)
