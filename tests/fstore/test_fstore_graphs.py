"""fstore.graphs skips from graph to graph; fstore.estimate stops counting at its cap."""

from __future__ import annotations

import fstore
from fstore import IRI, Var

P = IRI("urn:p")


def test_graphs_skip_scan_edges(tmp_path):
    repo = fstore.open(tmp_path / "r")
    graphs = [None, "a", "a\x00b", "a\x00", 7, 8, IRI("urn:g:" + "x" * 300), IRI("urn:gone")]
    with repo.transaction("main", message="one") as tx:
        for i, g in enumerate(graphs):
            for j in range(3):
                fstore.add(tx, g, IRI(f"urn:s{j}"), P, i)
    with repo.transaction("main", message="two") as tx:
        for j in range(3):
            fstore.rm(tx, IRI("urn:gone"), IRI(f"urn:s{j}"), P, len(graphs) - 1)
    now = fstore.graphs(repo.at("main"))
    assert sorted(map(repr, now)) == sorted(map(repr, graphs[:-1]))
    assert IRI("urn:gone") in fstore.graphs(repo.at("main~1"))
    view = repo.at("main")
    assert fstore.estimate(view, Var("g"), Var("s"), P, Var("o"), 5) == 5
    assert fstore.estimate(view, "a", Var("s"), P, Var("o"), 100) == 3
    assert fstore.estimate(view, IRI("urn:gone"), Var("s"), P, Var("o"), 100) == 0
    repo.close()
