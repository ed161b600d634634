"""Plug-ins register at open, per repository (issue 25.4): no registry is filled by an
import, so a store opened without the tables plug-in has no table functions and no table
merger, whatever other stores in the process use."""

from __future__ import annotations

import pytest

import fstore
from fstore.errors import FstoreError
from fstore.ops.three_way import graph_mergers
from fstore.plugins import DEFAULT_PLUGINS, DeferredMerger, Plugins, load_plugins
from fstore.tables.mapping import dataset_graph
from fstore.tables.row_merge import TableMerger

COLUMNS = [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0}]


def test_a_store_opens_with_the_tables_plug_in_by_default(tmp_path):
    with fstore.open(tmp_path) as repo:
        assert repo.plugins.names == DEFAULT_PLUGINS == ("fstore.tables.plugin",)
        with repo.storage.read() as snapshot:
            [merger] = graph_mergers(snapshot)
        assert merger.claims(dataset_graph("t")) and not merger.claims(fstore.IRI("urn:g"))
        with repo.transaction("main", message="t") as tx:
            fstore.tables.create(tx, "t", COLUMNS).insert({"k": 1})
        assert repo.at("main").table("t").get(1) == {"k": 1}


def test_a_store_opened_without_plug_ins_has_none_of_theirs(tmp_path):
    with fstore.open(tmp_path / "plain", plugins=()) as plain, fstore.open(tmp_path / "with") as full:
        with plain.storage.read() as ours, full.storage.read() as theirs:
            assert graph_mergers(ours) == [] and len(graph_mergers(theirs)) == 1
        with pytest.raises(FstoreError, match="provides table_at"):
            plain.at("main").table("t")
        with pytest.raises(FstoreError, match="provides open_table"), plain.transaction("main", message="x") as tx:
            tx.table("t")
        with pytest.raises(FstoreError, match="provides table_diff"):
            plain.table_diff("main", "main", "t")


def test_a_store_without_plug_ins_still_answers_quad_queries_and_shows_commits(tmp_path):
    from query import execute

    with fstore.open(tmp_path, plugins=()) as plain:
        with plain.transaction("main", message="one quad") as tx:
            fstore.add(tx, None, fstore.IRI("urn:s"), fstore.IRI("urn:p"), "o")
        rows = list(execute(plain.at("main"), "SELECT ?o WHERE { ?s ?p ?o }"))
        assert [row["o"] for row in rows] == [fstore.Literal("o")]
        shown = plain.show("main")
        assert len(shown.quads) == 1 and shown.tables == {}


def test_a_plug_in_is_a_module_with_register(tmp_path, monkeypatch):
    import sys
    import types

    module = types.ModuleType("fake_plugin")
    seen: list[Plugins] = []

    def register(plugins: Plugins) -> None:
        seen.append(plugins)
        plugins.provide("table_at", lambda view, name: ("fake", name))

    module.register = register  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_plugin", module)
    plugins = load_plugins(("fake_plugin",))
    assert seen == [plugins] and plugins.graph_mergers == []
    with fstore.open(tmp_path, plugins=("fake_plugin",)) as repo:
        assert repo.at("main").table("x") == ("fake", "x")
        assert len(seen) == 2  # registered again for this repository, into its own Plugins


def test_a_merger_given_by_reference_is_made_at_its_first_merge():
    made = []

    class Recording(TableMerger):
        def __init__(self) -> None:
            made.append(self)

        def merge(self, sides, graph, conflicts, policy):
            return ("merged", graph)

    import sys
    import types

    module = types.ModuleType("fake_merger")
    module.Recording = Recording  # type: ignore[attr-defined]
    sys.modules["fake_merger"] = module
    try:
        plugins = Plugins()
        plugins.add_graph_merger("fake_merger:Recording", claims=lambda graph: graph == "g")
        [merger] = plugins.graph_mergers
        assert isinstance(merger, DeferredMerger) and made == []
        assert merger.claims("g") and not merger.claims("h")
        assert merger.merge(None, "g", [], "abort") == ("merged", "g") == merger.merge(None, "g", [], "abort")
        assert len(made) == 1
        with pytest.raises(FstoreError, match="needs claims"):
            plugins.add_graph_merger("fake_merger:Recording")
    finally:
        del sys.modules["fake_merger"]
