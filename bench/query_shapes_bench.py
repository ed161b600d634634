"""SPARQL shapes the other benchmarks do not contain, on real data: one schema.org release
(``bench/demo_data``, about 17,000 quads loaded into the default graph), queried by datae
and by pyoxigraph (an on-disk ``Store``, default graph as the union of its graphs). Six
shapes: a property path (``rdfs:subClassOf*``), a two-pattern join on a constant, a
grouped count with ORDER BY, REGEX over labels, OPTIONAL with ORDER BY and LIMIT, and
FILTER NOT EXISTS. Each is the best of ``--repeat`` runs; the row counts of both stores
must agree. How cost grows with the store is measured by ``bench.query_bench``; this one
checks that its ratios hold on other shapes.

    python -m bench.query_shapes_bench [--release 29.0] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gzip
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import pyoxigraph as ox

import fstore
from fstore.rdf import load
from query import execute

from .nstore_bench import machine

DATA = Path(__file__).resolve().parent / "demo_data" / "schemaorg"
PREFIXES = ("PREFIX schema: <https://schema.org/> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
            "PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> ")
QUERIES = {
    "subclass path": "SELECT ?c WHERE { ?c rdfs:subClassOf* schema:CreativeWork }",
    "domain join": "SELECT ?p ?r WHERE { ?p schema:domainIncludes schema:Person ; schema:rangeIncludes ?r }",
    "count by type": "SELECT ?t (COUNT(?s) AS ?n) WHERE { ?s rdf:type ?t } GROUP BY ?t ORDER BY DESC(?n)",
    "regex on labels": "SELECT ?s ?l WHERE { ?s rdfs:label ?l FILTER(REGEX(STR(?l), '^Med')) }",
    "optional comment": "SELECT ?s ?c WHERE { ?s a rdfs:Class OPTIONAL { ?s rdfs:comment ?c } } ORDER BY ?s LIMIT 200",
    "not exists": "SELECT ?p WHERE { ?p a rdf:Property FILTER NOT EXISTS { ?p schema:rangeIncludes schema:Text } }",
}


def best(repeat: int, run: Callable[[], int]) -> tuple[float, int]:
    """The fastest of ``repeat`` runs (seconds) and the rows the last one gave."""
    fastest, rows = float("inf"), 0
    for _ in range(repeat):
        start = time.perf_counter()
        rows = run()
        fastest = min(fastest, time.perf_counter() - start)
    return fastest, rows


def stores(source: Path) -> tuple[Any, ox.Store]:
    """The release in a new datae store (its default graph) and in a pyoxigraph store."""
    repo = fstore.open(tempfile.mkdtemp())
    with repo.transaction("main", message=source.name) as tx:
        load(tx, str(source), "nq", graph=None)  # every quad into the default graph
    store = ox.Store(tempfile.mkdtemp())  # on disk, as datae
    with gzip.open(source, "rb") as lines:
        store.load(lines, ox.RdfFormat.N_QUADS)
    return repo, store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", default="29.0", help="the schema.org release in bench/demo_data")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    source = DATA / f"schemaorg-current-https-{args.release}.nq.gz"
    repo, store = stores(source)
    view = repo.at("main")
    print(f"# SPARQL shapes on schema.org {args.release}; {machine()}")
    print(f"{'query':<18} {'rows':>6} {'datae':>11} {'pyoxigraph':>11} {'ratio':>7}")
    for name, text in QUERIES.items():
        query = PREFIXES + text
        ours, ours_rows = best(args.repeat, lambda: sum(1 for _ in execute(view, query)))
        peer, peer_rows = best(args.repeat, lambda: sum(1 for _ in store.query(query, use_default_graph_as_union=True)))
        if ours_rows != peer_rows:
            raise SystemExit(f"{name}: datae gave {ours_rows} rows, pyoxigraph {peer_rows}")
        print(f"{name:<18} {ours_rows:>6} {ours * 1000:>8.2f} ms {peer * 1000:>8.2f} ms {ours / peer:>7.2f}")
    repo.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
