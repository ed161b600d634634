"""RDF syntaxes in and out (issue 16): datae against pyoxigraph in each of the six syntaxes.

    python -m bench.rdf_formats_bench [--sizes 20000,200000] [--repeat 3] [--formats nq,ttl]

The quads are ``bench.data.generate_quads`` (10 graphs, half IRIs, half literals with and
without a language); the triples formats (nt, ttl, rdf) get them all in the default graph.
For each syntax and size, best of ``--repeat`` (the collector paused, as ``load`` pauses it):

* **parse**: ``list(fstore.rdf.parse(data, fmt))`` (pyoxigraph's parser, then each term
  made an fstore value) against ``list(pyoxigraph.parse(data, fmt))`` (the parser alone,
  the floor any wrapper of it can reach);
* **export**: what ``datae export`` does, ``fstore.quads`` (values) at the head then
  ``fstore.rdf.serialize`` into a buffer, against ``pyoxigraph.Store.dump`` of the same
  quads (its store read and its writer); split in two on datae's side: **read**, the quads
  of ``fstore.quads`` at the head taken one by one and dropped, and **write**,
  ``serialize`` of the quads already read (a list), each against the same ``dump``;
* **progress**: ``fstore.rdf.load`` of the N-Quads into a transaction (aborted) with a
  progress callback against without one: what the terminal's progress line costs.

Printed: seconds for each, and the ratios datae / pyoxigraph.
"""

from __future__ import annotations

import argparse
import io
import tempfile
from typing import Any, Callable, Iterable

import pyoxigraph as ox

import fstore
from fstore.rdf import FORMAT_NAMES, FORMATS, load, parse, serialize
from nstore.terms import to_oxigraph

from .data import generate_quads
from .timing import timed


def measure(size: int, repeat: int, formats: tuple[str, ...] = FORMAT_NAMES) -> None:
    quads = list(generate_quads(size))
    as_triples = [(None, s, p, o) for _, s, p, o in quads]
    with tempfile.TemporaryDirectory() as directory:
        repos = {}
        for name, rows in (("quads", quads), ("triples", as_triples)):
            repo = repos[name] = fstore.open(f"{directory}/{name}")
            with repo.transaction("main", message="bench") as tx:
                fstore.add_many(tx, rows)
        print(f"\n{size:,} quads")
        print(f"{'syntax':<7} {'parse datae':>12} {'pyoxigraph':>11} {'ratio':>6}   {'export datae':>13} "
              f"{'pyoxigraph':>11} {'ratio':>6}   {'read':>6} {'ratio':>6}   {'write':>6} {'ratio':>6}   {'MB':>6}")
        pattern = (fstore.Var("g"), fstore.Var("s"), fstore.Var("p"), fstore.Var("o"))
        for fmt in formats:
            rdf_format = FORMATS[fmt]
            kind = "quads" if rdf_format.supports_datasets else "triples"
            rows = quads if kind == "quads" else as_triples
            data = serialize(rows, fmt)
            ox_store = ox.Store()
            ox_store.bulk_extend(ox.Quad(to_oxigraph(s), to_oxigraph(p), to_oxigraph(o), to_oxigraph(g))
                                 for g, s, p, o in rows)
            datae_parse = timed(lambda: list(parse(data, fmt)), repeat)[0]
            ox_parse = timed(lambda: list(ox.parse(data, rdf_format)), repeat)[0]
            view = repos[kind].at("main")

            def datae_export() -> None:
                serialize(fstore.quads(view, *pattern, terms=False), fmt, io.BytesIO())

            def ox_export() -> None:
                if rdf_format.supports_datasets:
                    ox_store.dump(io.BytesIO(), rdf_format)
                else:
                    ox_store.dump(io.BytesIO(), rdf_format, from_graph=ox.DefaultGraph())

            datae_out = timed(datae_export, repeat)[0]
            ox_out = timed(ox_export, repeat)[0]
            read = timed(lambda: _drain(fstore.quads(view, *pattern, terms=False)), repeat)[0]  # beside its dump
            write = timed(lambda: serialize(rows, fmt, io.BytesIO()), repeat)[0]
            print(f"{fmt:<7} {datae_parse:>11.3f}s {ox_parse:>10.3f}s {datae_parse / ox_parse:>5.1f}x   "
                  f"{datae_out:>12.3f}s {ox_out:>10.3f}s {datae_out / ox_out:>5.1f}x   "
                  f"{read:>5.3f}s {read / ox_out:>5.2f}x   {write:>5.3f}s {write / ox_out:>5.2f}x   {len(data) / 1e6:>6.1f}")
        nquads = serialize(quads, "nq")
        repo = repos["quads"]

        def load_aborted(progress) -> Callable[[], None]:
            def run() -> None:
                try:
                    with repo.transaction("bench", message="m") as tx:
                        load(tx, nquads, "nq", progress=progress)
                        raise KeyboardInterrupt  # abort: measure reading and staging only
                except KeyboardInterrupt:
                    pass
            return run

        repo.branch("bench", "main")
        silent = timed(load_aborted(None), repeat)[0]
        told = timed(load_aborted(lambda phase, done, total: None), repeat)[0]
        print(f"load (parse + stage) without progress {silent:.3f}s, with a progress callback {told:.3f}s: "
              f"{(told / silent - 1) * 100:+.1f}%")
        for repo in repos.values():
            repo.close()


def _drain(items: Iterable[Any]) -> None:
    for _ in items:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="20000,200000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--formats", default=",".join(FORMAT_NAMES), help="the syntaxes to measure (default: all six)")
    args = parser.parse_args()
    formats = tuple(args.formats.split(","))
    for size in (int(text) for text in args.sizes.split(",")):
        measure(size, args.repeat, formats)


if __name__ == "__main__":
    main()
