"""Fixtures and helpers for the query-layer tests: small stores loaded through fstore, and
the same data in pyoxigraph for differential testing."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator

import pyoxigraph as ox

ROOT = Path(__file__).resolve().parent.parent

import fstore
from nstore.terms import from_oxigraph, to_rdf
from nstore.terms import to_oxigraph as to_ox

__all__ = ["fstore_repo", "fstore_view", "oxigraph_store", "ox_rows", "to_ox", "from_ox"]


def from_ox(term: Any) -> Any:
    """The RDF term (not the stored value) of a pyoxigraph term, None for None: what the
    query engine's results hold, to compare with Oxigraph's."""
    return None if term is None else to_rdf(from_oxigraph(term))


@contextlib.contextmanager
def fstore_repo(quads: Iterable[tuple]) -> Iterator[Any]:
    """A fresh fstore repository whose branch ``main`` holds ``quads`` in one commit (none
    if there are no quads; graph None: default graph), removed afterwards."""
    folder = tempfile.mkdtemp(prefix="datae-query-")
    repo = fstore.open(folder)
    try:
        quads = list(quads)
        if quads:
            with repo.transaction("main", message="test data", author="tests") as tx:
                for quad in quads:
                    fstore.add(tx, *quad)
        yield repo
    finally:
        repo.close()
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def fstore_view(quads: Iterable[tuple]) -> Iterator[Any]:
    """A view of :func:`fstore_repo` at ``main``."""
    with fstore_repo(quads) as repo:
        yield repo.at("main")


def oxigraph_store(quads: Iterable[tuple]) -> ox.Store:
    """An in-memory pyoxigraph store with the same quads."""
    store = ox.Store()
    for g, s, p, o in quads:
        store.add(ox.Quad(to_ox(s), to_ox(p), to_ox(o), to_ox(g)))
    return store


def ox_rows(store: ox.Store, text: str) -> Any:
    """pyoxigraph's answer: a list of dicts (SELECT), a bool (ASK) or a list of triples."""
    result = store.query(text)
    if isinstance(result, ox.QueryBoolean):
        return bool(result)
    if isinstance(result, ox.QuerySolutions):
        names = [v.value for v in result.variables]
        rows = []
        for solution in result:
            row = {}
            for name in names:
                value = solution[name]
                if value is not None:
                    row[name] = from_ox(value)
            rows.append(row)
        return rows
    return [(from_ox(t.subject), from_ox(t.predicate), from_ox(t.object)) for t in result]
