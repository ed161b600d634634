"""schema.org releases benchmark (issue 12, "Storage format v2"): 16 versions of a real
vocabulary, kept as 16 commits by datae and as 16 named graphs by pyoxigraph: time and
bytes on disk.

    python -m bench.schemaorg_bench [--data DIR] [--releases 16] [--repeat 1] [--dir DIR]
    python -m bench.schemaorg_bench --releases 4       # a quick run

The releases are the ``*.nq.gz`` files of ``--data`` (default ``../shared/testdata/schemaorg``
next to the repository), in version order. Both sides parse them with pyoxigraph's parser
(``pyoxigraph.parse``) before any timing; datae gets the terms converted to its values.

* **datae**: one store, one graph ``<https://schema.org/>``; release i is commit i on main,
  which replaces the graph's content with the release: in one ``repo.transaction``, read
  the graph's quads (``fstore.quads``), ``fstore.rm`` those the release no longer has and
  ``fstore.add`` its new ones (the set differences are computed inside the timing);
* **pyoxigraph**: one on-disk ``Store``; release i is named graph ``<https://schema.org/{version}>``,
  loaded with ``Store.bulk_extend``; one ``Store.flush()`` at the end.

Timed: the 16 commits (datae) and the 16 ``bulk_extend`` + ``flush`` (pyoxigraph), in
total and per release. Not timed: reading, decompressing, parsing and converting the
files. Bytes on disk: allocated blocks of each store's directory, after closing it. Each
load runs ``--repeat`` times into fresh stores (best time counts). Ratios: datae /
pyoxigraph, targets time <= 1.0 and bytes <= 0.2.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyoxigraph as ox

import fstore
from fstore import IRI, Var, to_rdf
from nstore.terms import from_oxigraph

from .nstore_bench import disk_bytes, machine

DATA = Path(__file__).resolve().parents[1].parent / "shared/testdata/schemaorg"
GRAPH = IRI("https://schema.org/")
S, P, O = Var("s"), Var("p"), Var("o")


def version(path: Path) -> str:
    """'27.01' of 'schemaorg-current-https-27.01.nq.gz'."""
    found = re.search(r"(\d+(?:\.\d+)*)\.nq\.gz$", path.name)
    if not found:
        raise SystemExit(f"not a schema.org release file: {path}")
    return found.group(1)


def releases(directory: Path, count: int) -> list[tuple[str, list[ox.Quad]]]:
    """The first ``count`` releases in version order, each (version, its quads parsed by
    pyoxigraph, in the named graph of the release)."""
    files = sorted(directory.glob("*.nq.gz"), key=lambda p: [int(x) for x in version(p).split(".")])
    if not files:
        raise SystemExit(f"no *.nq.gz files in {directory} (see --data)")
    loaded = []
    for path in files[:count]:
        name = version(path)
        graph = ox.NamedNode(f"https://schema.org/{name}")
        with gzip.open(path, "rb") as stream:
            quads = [ox.Quad(q.subject, q.predicate, q.object, graph) for q in ox.parse(stream, ox.RdfFormat.N_QUADS)]
        loaded.append((name, quads))
    return loaded


def load_datae(path: str, triples: list[set[tuple]], names: list[str]) -> tuple[list[float], list[str]]:
    repo = fstore.open(path)
    seconds, ids = [], []
    for name, release in zip(names, triples):
        gc.collect()
        start = time.perf_counter()
        with repo.transaction("main", message=f"schema.org {name}", author="schema.org", allow_empty=True) as tx:
            current = {(s, p, o) for _, s, p, o in fstore.quads(tx, GRAPH, S, P, O)}
            for s, p, o in current - release:
                fstore.rm(tx, GRAPH, s, p, o)
            for s, p, o in release - current:
                fstore.add(tx, GRAPH, s, p, o)
        seconds.append(time.perf_counter() - start)
        ids.append(tx.commit_id)
    # Not timed: every commit holds its release exactly.
    for release, commit in zip(triples, ids):
        held = {(s, p, o) for _, s, p, o in fstore.quads(repo.at(commit), GRAPH, S, P, O)}
        assert held == release, (len(held), len(release), len(held ^ release))
    repo.close()
    return seconds, ids


def load_oxigraph(path: str, quads: list[list[ox.Quad]]) -> list[float]:
    store = ox.Store(path)
    seconds = []
    gc.collect()
    for release in quads:
        start = time.perf_counter()
        store.bulk_extend(release)
        seconds.append(time.perf_counter() - start)
    start = time.perf_counter()
    store.flush()
    seconds[-1] += time.perf_counter() - start
    assert len(store) == sum(len(set(r)) for r in quads), len(store)
    del store
    gc.collect()
    return seconds


def bench(args: argparse.Namespace) -> None:
    start = time.perf_counter()
    loaded = releases(Path(args.data), args.releases)
    names = [name for name, _ in loaded]
    ox_quads = [quads for _, quads in loaded]
    # As RDF terms, which is what fstore reads give back (a release is compared with the head).
    triples = [{(from_oxigraph(q.subject), from_oxigraph(q.predicate), to_rdf(from_oxigraph(q.object))) for q in quads}
               for quads in ox_quads]
    total = sum(len(q) for q in ox_quads)
    print(f"# schema.org benchmark: {len(loaded)} releases ({names[0]} .. {names[-1]}), {total:,} quads in all, "
          f"parsed in {time.perf_counter() - start:.1f} s (not timed); {machine()}")
    root = tempfile.mkdtemp(prefix="datae-schemaorg-bench-", dir=args.dir)
    best_datae: list[float] | None = None
    best_ox: list[float] | None = None
    try:
        for attempt in range(args.repeat):
            path = os.path.join(root, f"datae-{attempt}")
            seconds, _ = load_datae(path, triples, names)
            if best_datae is None or sum(seconds) < sum(best_datae):
                best_datae, datae_bytes = seconds, disk_bytes(path)
            shutil.rmtree(path)
            path = os.path.join(root, f"oxigraph-{attempt}")
            seconds = load_oxigraph(path, ox_quads)
            if best_ox is None or sum(seconds) < sum(best_ox):
                best_ox, ox_bytes = seconds, disk_bytes(path)
            shutil.rmtree(path)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert best_datae is not None and best_ox is not None

    print(f"\n{'release':<9} {'quads':>7} {'added':>7} {'removed':>8} {'datae commit':>14} {'pyoxigraph':>12}")
    previous: set = set()
    for name, release, mine, theirs in zip(names, triples, best_datae, best_ox):
        print(f"{name:<9} {len(release):>7,} {len(release - previous):>7,} {len(previous - release):>8,} "
              f"{mine * 1000:>11.1f} ms {theirs * 1000:>9.1f} ms")
        previous = release
    tries = f"best of {args.repeat}" if args.repeat > 1 else "one run"
    datae_s, ox_s = sum(best_datae), sum(best_ox)
    print(f"\n{'engine (' + tries + ')':<44} {'seconds':>8} {'MB on disk':>11} {'bytes/quad':>11}")
    print(f"{'datae: ' + str(len(names)) + ' commits, one graph':<44} {datae_s:>8.2f} {datae_bytes / 1e6:>11.2f} {datae_bytes / total:>11.1f}")
    print(f"{'pyoxigraph: ' + str(len(names)) + ' named graphs':<44} {ox_s:>8.2f} {ox_bytes / 1e6:>11.2f} {ox_bytes / total:>11.1f}")
    print(f"(bytes per quad: per quad of all {len(names)} releases, {total:,})")
    print(f"\n{'ratio':<44} {'value':>6}  target")
    for label, value, target in (("time datae / pyoxigraph", datae_s / ox_s, 1.0), ("bytes datae / pyoxigraph", datae_bytes / ox_bytes, 0.2)):
        print(f"{label:<44} {value:>6.2f}  <= {target}: {'met' if value <= target else 'MISSED'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="quick run: --releases 4")
    parser.add_argument("--data", default=str(DATA), help=f"the directory of the releases (default {DATA})")
    parser.add_argument("--releases", type=int, default=16, help="load only the first N releases (default all 16)")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many loads, each into fresh stores (default 1)")
    parser.add_argument("--dir", default=None, help="where to create the stores (default: the temp dir)")
    bench(parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
