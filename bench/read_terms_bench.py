"""Reading quads back as terms that equal what was written (issue 24): every quad of a store
read as RDF terms into a list, into a set, and checked against the written Python values
with ``==`` (the equality that makes ``Literal("7", xsd:integer) == 7``), side by side with
pyoxigraph reading the same quads (``quads_for_pattern`` into a list and a set). Two sizes,
to show the cost is O(n).

    python -m bench.read_terms_bench [--sizes 20000,200000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile

import pyoxigraph as ox

import fstore
from fstore import IRI, Var

from .timing import timed


def generate(count: int) -> list[tuple]:
    """Quads whose objects are plain Python values: ints, strings, floats, in turn."""
    values = (lambda i: i, lambda i: f"text {i}", lambda i: i * 0.5)
    return [(None, IRI(f"urn:s{i}"), IRI(f"urn:p{i % 7}"), values[i % 3](i)) for i in range(count)]


def to_ox(quad: tuple) -> ox.Quad:
    _, s, p, o = quad
    term = fstore.to_rdf(o)
    literal = ox.Literal(term.lexical, datatype=ox.NamedNode(term.datatype.value) if term.datatype else None)
    return ox.Quad(ox.NamedNode(s.value), ox.NamedNode(p.value), literal, ox.DefaultGraph())


def run(count: int, repeat: int) -> None:
    written = generate(count)
    folder = tempfile.mkdtemp()
    repo = fstore.open(folder)
    try:
        with repo.transaction("main", message="load") as tx:
            fstore.add_many(tx, written)
        view = repo.at("main")
        store = ox.Store()
        store.bulk_extend([to_ox(q) for q in written])
        pattern = (None, Var("s"), Var("p"), Var("o"))
        rows = [
            ("into a list", lambda: list(fstore.quads(view, *pattern)), lambda: list(store.quads_for_pattern(None, None, None))),
            ("into a set", lambda: set(fstore.quads(view, *pattern)), lambda: set(store.quads_for_pattern(None, None, None))),
        ]
        for name, ours, theirs in rows:
            mine, _ = timed(ours, repeat)
            peer, _ = timed(theirs, repeat)
            print(f"{count:>9,} quads  {name:<22} datae {mine:7.3f} s  pyoxigraph {peer:7.3f} s  {mine / peer:5.1f}x"
                  f"  ({mine / count * 1e6:.2f} µs a quad)")
        read = set(fstore.quads(view, *pattern))
        equal, _ = timed(lambda: read == set(written), repeat)
        print(f"{count:>9,} quads  {'set(read) == written':<22} datae {equal:7.3f} s  "
              f"(the terms read equal the values written: {read == set(written)})")
    finally:
        repo.close()
        shutil.rmtree(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,200000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        run(size, args.repeat)


if __name__ == "__main__":
    main()
