"""SPARQL over tables benchmark: a table read through the W3C Direct Mapping (``GRAPH
<urn:datae:dataset:NAME>``, see docs/query.md) beside pyoxigraph holding the same triples,
measured in the same run.

The table is ``bench.tables_bench``'s 10-column table (the key ``fid`` and nine columns).
pyoxigraph gets the Direct-Mapping triples datae answers for ``?s ?p ?o`` in the table's
graph (loaded in memory with ``bulk_extend``), so both answer the same queries on the same
data:

* key lookup: ``<T/fid=K> ?p ?o`` for 500 keys spread over the table, one query each
  (parse, plan, run): a primary-key lookup in datae, an index lookup in pyoxigraph.
* column scan: ``?s <T#value> ?v`` over every row (one column of each row's blob).
* filtered scan: ``COUNT`` of ``?s <T#category> "road"`` (a bound object on a non-key column:
  a scan of that column in datae, an index lookup in pyoxigraph).
* join with quads: 1,000 quads ``?x <urn:likes> ?row`` joined with the rows' ``#name``
  (one key lookup per quad).

Usage: ``python -m bench.tables_sparql_bench [--sizes 10000,100000]``; prints times and
the ratios datae / pyoxigraph (> 1: datae is slower).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from typing import Any

import pyoxigraph as ox

import fstore
import fstore.tables as tables
from bench.tables_bench import SCHEMA, rows
from bench.timing import timed
from query import execute
from nstore.terms import to_oxigraph as to_ox

T = "urn:datae:dataset:bench"
XSD = "http://www.w3.org/2001/XMLSchema#"
LOOKUPS = 500
LINKS = 1000


def queries(n: int) -> dict[str, Any]:
    """The measured queries: a name -> a list of query texts (run one after another)."""
    step = max(1, n // LOOKUPS)
    return {
        "key lookup (one query per key)": [f"SELECT ?p ?o WHERE {{ GRAPH <{T}> {{ <{T}/fid={k}> ?p ?o }} }}"
                                           for k in range(0, n, step)][:LOOKUPS],
        "column scan (?s <T#value> ?v)": [f"SELECT ?s ?v WHERE {{ GRAPH <{T}> {{ ?s <{T}#value> ?v }} }}"],
        "filtered scan (COUNT ?s <T#category> \"road\")":
            [f'SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{T}> {{ ?s <{T}#category> "road" }} }}'],
        f"join {LINKS} quads with rows (#name)":
            [f"SELECT ?x ?name WHERE {{ ?x <urn:likes> ?r . GRAPH <{T}> {{ ?r <{T}#name> ?name }} }}"],
    }


def solutions_as_text(view: Any, store: ox.Store, texts: list[str]) -> tuple[list[tuple], list[tuple]]:
    """Every solution of ``texts`` from datae and from pyoxigraph, sorted, each value as a
    comparable key (not timed: it checks what was counted)."""
    ours, theirs = [], []
    for text in texts:
        result = execute(view, text)
        ours += [tuple(_key(to_ox(row[v])) if row.get(v) is not None else () for v in result.vars) for row in result]
        solutions = store.query(text)
        names = [v.value for v in solutions.variables]
        theirs += [tuple(_key(s[n]) if s[n] is not None else () for n in names) for s in solutions]
    return sorted(ours), sorted(theirs)


_NUMBERS = {XSD + name for name in ("double", "float", "decimal", "integer")}


def _key(term: Any) -> tuple:
    """A term by value: numbers compare as numbers (datae writes the canonical ``0.0E0``
    where pyoxigraph keeps ``0``), anything else as its N-Triples text."""
    if isinstance(term, ox.Literal) and term.datatype.value in _NUMBERS:
        return ("number", float(term.value))
    return ("term", str(term))


def bench_size(n: int, root: str) -> dict[str, tuple[float, float, int]]:
    """``{case: (datae seconds, pyoxigraph seconds, solutions)}`` for a table of ``n`` rows."""
    repo = fstore.open(os.path.join(root, f"datae-{n}"), map_size=32 << 30)
    step = max(1, n // LINKS)
    links = [(None, fstore.IRI(f"urn:x{i}"), fstore.IRI("urn:likes"), fstore.IRI(f"{T}/fid={i * step}"))
             for i in range(min(LINKS, n))]
    with repo.transaction("main", message="import") as tx:
        tables.create(tx, "bench", SCHEMA).insert_many(rows(n))
        for quad in links:
            fstore.add(tx, *quad)
    view = repo.at("main")
    store = ox.Store()
    graph = ox.NamedNode(T)
    triples = execute(view, f"SELECT ?s ?p ?o WHERE {{ GRAPH <{T}> {{ ?s ?p ?o }} }}")
    store.bulk_extend(ox.Quad(to_ox(r["s"]), to_ox(r["p"]), to_ox(r["o"]), graph) for r in triples)
    store.bulk_extend(ox.Quad(to_ox(s), to_ox(p), to_ox(o)) for _, s, p, o in links)
    out = {}
    for case, texts in queries(n).items():
        def datae() -> int:
            return sum(sum(1 for _ in execute(view, text)) for text in texts)

        def oxigraph() -> int:
            return sum(sum(1 for _ in store.query(text)) for text in texts)

        datae()  # warm: the planner's row counts are kept per view
        seconds, found = timed(datae)
        ox_seconds, ox_found = timed(oxigraph)
        assert found == ox_found, (case, found, ox_found)
        same = solutions_as_text(view, store, texts)  # the values too (a COUNT is one row either way)
        assert same[0] == same[1], case
        out[case] = (seconds, ox_seconds, found)
    repo.close()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated row counts")
    parser.add_argument("--dir", default=None, help="where the stores go (default: a temporary directory)")
    args = parser.parse_args(argv)
    root = args.dir or tempfile.mkdtemp(prefix="datae-tables-sparql-bench-")
    os.makedirs(root, exist_ok=True)
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            print(f"--- {n:,} rows x {len(SCHEMA)} columns ({n * (len(SCHEMA) + 1):,} triples, fewer nulls)", flush=True)
            for case, (datae, oxigraph, found) in bench_size(n, root).items():
                print(f"{case:48s} datae {datae * 1e3:9.1f} ms  pyoxigraph {oxigraph * 1e3:9.1f} ms  "
                      f"ratio {datae / oxigraph:5.1f}x  ({found:,} solutions)", flush=True)
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
