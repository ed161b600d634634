"""The engine's source protocol and the store's adapter to it: the engine asks a view or
transaction for its source (``view.query_source()``), learns about table graphs from the
source, and imports nothing of fstore's internals."""

from __future__ import annotations

import ast
import tempfile
from pathlib import Path

import pytest

import fstore
import fstore.tables as tables
from query import IRI, Literal, MemorySource, Source, as_source, execute
from query.algebra import Var
from query.source import table_graph_test

QUERY = Path(__file__).resolve().parents[2] / "query"
TOWNS = IRI("urn:datae:dataset:towns")

# What query/ may import of fstore: its public API, the RDF syntaxes and the errors.
PUBLIC = {"fstore", "fstore.rdf", "fstore.errors"}
# Moving into nstore's one term module (issue 25, item 5); they go with it.
TERM_MODULES_BEING_MOVED = {"termsyntax.py": "fstore.core.values", "terms_ox.py": "fstore.core.values"}


@pytest.fixture()
def repo():
    repo = fstore.open(tempfile.mkdtemp())
    with repo.transaction("main", message="add") as tx:
        fstore.add(tx, IRI("urn:g"), IRI("urn:a"), IRI("urn:p"), 1)
        t = tables.create(tx, "towns", [
            {"id": "k", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0},
            {"id": "n", "name": "name", "dataType": "text"}])
        t.insert({"fid": 1, "name": "Ōtaki"})
    yield repo
    repo.close()


def test_the_store_gives_its_source(repo) -> None:
    """as_source asks the view (or transaction) for its adapter, which speaks the protocol,
    table graphs included; an object that is neither a source nor a store view is refused."""
    view = repo.at("main")
    source = as_source(view)
    assert isinstance(source, Source) and source.view is view
    assert source.is_table_graph(TOWNS) and not source.is_table_graph(IRI("urn:g"))
    assert source.graphs() == [IRI("urn:g")]  # a table graph is never listed
    names = [b["n"] for b in source.match((TOWNS, Var("r"), IRI("urn:datae:dataset:towns#name"), Var("n")))]
    assert names == [Literal("Ōtaki")]
    with repo.transaction("main", message="more") as tx:
        fstore.add(tx, IRI("urn:h"), IRI("urn:a"), IRI("urn:p"), 2)
        assert sorted(g.value for g in as_source(tx).graphs()) == ["urn:g", "urn:h"]  # its own writes
    with pytest.raises(TypeError, match="not a query source"):
        as_source(object())


def test_table_graphs_are_what_the_source_says(repo) -> None:
    """The engine keeps a table graph out of GRAPH ?g because fstore's source says it is
    one; a source without table graphs (MemorySource) has the same IRI as a plain graph."""
    text = "SELECT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"
    assert {row["g"] for row in execute(repo.at("main"), text)} == {IRI("urn:g")}
    memory = MemorySource([(TOWNS, IRI("urn:a"), IRI("urn:p"), Literal("x"))])
    assert not table_graph_test(memory)(TOWNS)
    assert [row["g"] for row in execute(memory, text)] == [TOWNS]


def test_changes_of_a_table_come_from_the_source(repo) -> None:
    """CHANGES over a table graph asks the source at the end for the rows' changes."""
    before = repo.resolve("main")
    with repo.transaction("main", message="rename") as tx:
        tx.table("towns").update({"fid": 1, "name": "Otaki"})
    text = (f"SELECT ?op ?n CHANGES FROM <{before}> TO <main> WHERE {{ GRAPH <{TOWNS.value}> "
            f"{{ ?r <urn:datae:dataset:towns#name> ?n }} }} ORDER BY ?op")
    assert [(row["op"].value, row["n"].value) for row in execute(repo.at("main"), text)] == [("+", "Otaki"), ("-", "Ōtaki")]
    added, removed = as_source(repo.at("main")).table_changes(as_source(repo.at(before)), TOWNS)
    assert [q[3] for q in added if q[2] == IRI("urn:datae:dataset:towns#name")] == [Literal("Otaki")]
    assert len(removed) == len(added) == 1


def test_the_engine_imports_only_fstores_public_api() -> None:
    """Every import of fstore in query/ (function-level ones too) is of the public API."""
    found = []
    for path in sorted(QUERY.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else [])
            for name in names:
                if name.split(".")[0] == "fstore" and name not in PUBLIC and TERM_MODULES_BEING_MOVED.get(path.name) != name:
                    found.append(f"{path.name}: {name}")
    assert found == []
