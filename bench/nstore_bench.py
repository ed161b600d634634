"""Benchmark of the generic n-tuple store (issue 2) against its peers, in one run.

    python -m bench.nstore_bench [--quads 1000000] [--add-quads 100000] [--queries 10000]
                                 [--load-repeat 1] [--repeat 5] [--dir DIR]

Generates quads deterministically (10 graphs, 100,000 subjects, 50 predicates, half of the
objects IRIs and half literals), in shuffled order and as fresh objects (as a parser
would hand them over), then measures side by side:

* loads: ``NStore.bulk_add`` (one transaction), ``NStore.add`` (transactions of 10,000),
  pyoxigraph's on-disk ``Store.bulk_extend`` and ``Store.extend`` (batches of 10,000),
  and raw py-lmdb puts of one key per quad (its packed bytes) in one transaction, in
  input order and sorted with ``putmulti(append=True)``: the engine's floor;
* point lookups: ``NStore.ask`` / ``quad in Store`` / ``lmdb get`` of present quads;
* patterns: subject bound ``from_(Var, s, Var, Var)`` and predicate bound
  ``from_(Var, Var, p, Var)``, counting results, against ``quads_for_pattern``; with,
  for reference, ``NStore.count`` (no decoding) and the okvs alone scanning the same
  key ranges (no splitting, no decoding);
* bytes on disk per quad for each engine (allocated blocks).

Each load runs ``--load-repeat`` times into fresh stores and each lookup ``--repeat``
times; the best time counts (the machine may be shared).

Input preparation (generating quads, converting them to pyoxigraph terms, packing the
raw LMDB keys) is not timed. Every write ends with a durable commit (datae, LMDB) or
``Store.flush()`` (pyoxigraph). The ratio printed is pyoxigraph seconds / datae seconds:
**>= 1 means datae is as fast or faster**.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from itertools import repeat
from typing import Any, Callable

import lmdb

from nstore import IRI, Literal, NStore, Var, okvs, pack
from .timing import timed

EX = "http://example.org/"
XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
SUBJECTS = 100_000
GRAPHS = 10
PREDICATES = 50
BATCH = 10_000
ITEMS = ("graph", "subject", "predicate", "object")


# -- data -----------------------------------------------------------------------------


def generate(count: int, seed: int = 20240101) -> list[tuple[Any, Any, Any, Any]]:
    """``count`` distinct quads (for count <= 1,000,000) in shuffled order.

    Quad i has subject i mod 100,000 and graph (3 * subject + i div 100,000) mod 10, so no
    two share graph and subject below a million; predicates are random; even quads link
    to another subject, odd ones carry a plain, language-tagged or xsd:integer literal.
    """
    rng = random.Random(seed)
    order = list(range(count))
    rng.shuffle(order)
    quads = []
    append = quads.append
    for i in order:
        s, j = i % SUBJECTS, i // SUBJECTS
        graph = IRI(f"{EX}graph/{(3 * s + j) % GRAPHS}")
        predicate = IRI(f"{EX}vocab/p{rng.randrange(PREDICATES)}")
        if i % 2 == 0:
            obj: Any = IRI(f"{EX}resource/s{rng.randrange(SUBJECTS)}")
        elif i % 3 == 0:
            obj = Literal(f"label {rng.randrange(1_000_000)}")
        elif i % 3 == 1:
            obj = Literal(f"some text {rng.randrange(1_000_000)}", lang="en")
        else:
            obj = Literal(str(rng.randrange(1_000_000)), XSD_INTEGER)
        append((graph, IRI(f"{EX}resource/s{s}"), predicate, obj))
    return quads


def to_oxigraph(quads: list) -> list:
    import pyoxigraph as ox

    nodes: dict[str, Any] = {}

    def node(value: str) -> Any:
        found = nodes.get(value)
        if found is None:
            found = nodes[value] = ox.NamedNode(value)
        return found

    def term(value: Any) -> Any:
        if type(value) is IRI:
            return node(value.value)
        datatype = node(value.datatype.value) if value.datatype is not None else None
        return ox.Literal(value.lexical, datatype=datatype, language=value.lang)

    return [ox.Quad(node(s.value), node(p.value), term(o), node(g.value)) for g, s, p, o in quads]


# -- measuring ------------------------------------------------------------------------


class Report:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, float, float, str]] = []

    def add(self, operation: str, engine: str, seconds: float, ops: int, note: str = "") -> None:
        rate = ops / seconds if seconds > 0 else float("inf")
        self.rows.append((operation, engine, seconds, rate, note))
        print(f"{operation:<34} {engine:<26} {seconds:10.3f} s {rate:14,.0f} ops/s  {note}", flush=True)

    def seconds(self, operation: str, engine: str) -> float | None:
        for op, eng, sec, _, _ in self.rows:
            if op == operation and eng == engine:
                return sec
        return None


def disk_bytes(path: str) -> int:
    """Bytes allocated on disk under ``path`` (st_blocks, so sparse files count as used)."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            total += os.stat(os.path.join(root, name)).st_blocks * 512
    return total


def machine() -> str:
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{os.cpu_count()} CPUs ({model}), Python {platform.python_version()}, "
        f"py-lmdb {lmdb.__version__} (LMDB {'.'.join(map(str, lmdb.version()))}), "
        f"pyoxigraph {__import__('pyoxigraph').__version__}, load average {load:.2f} at start"
    )


# -- engines --------------------------------------------------------------------------


def datae_store(path: str) -> tuple[okvs.Okvs, NStore]:
    db = okvs.open(path, map_size=16 << 30)
    return db, NStore(db, ("bench",), ITEMS)


def bench(args: argparse.Namespace) -> Report:
    report = Report()
    root = tempfile.mkdtemp(prefix="nstore-bench-", dir=args.dir)
    try:
        return _bench(args, report, root)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"stores kept under {root}")


def _bench(args: argparse.Namespace, report: Report, root: str) -> Report:
    import pyoxigraph as ox

    n = args.quads
    print(f"# nstore benchmark: {n:,} quads; {machine()}")
    start = time.perf_counter()
    quads = generate(n)
    print(f"# generated {n:,} quads in {time.perf_counter() - start:.1f} s (not timed below)")
    oxquads = to_oxigraph(quads)
    raw_keys = [pack(*quad) for quad in quads]
    rng = random.Random(7)
    sample = rng.sample(range(n), min(args.queries, n))
    subjects = [IRI(f"{EX}resource/s{rng.randrange(min(SUBJECTS, n))}") for _ in range(args.queries)]
    predicates = [IRI(f"{EX}vocab/p{i}") for i in rng.sample(range(PREDICATES), args.predicates)]
    adds = min(args.add_quads, n)
    subset = f"first {adds:,} quads" if adds < n else ""
    print(f"# loading ({args.load_repeat} time(s) per engine)...", flush=True)

    # -- loads --
    # Each load runs --load-repeat times into a fresh store, alternating engines, and the
    # best time counts (the machine may be shared); the last stores serve the lookups.
    sorted_keys = sorted(set(raw_keys))
    distinct = len(sorted_keys)
    best: dict[str, float] = {}

    def load(name: str, seconds: float) -> None:
        best[name] = min(best.get(name, float("inf")), seconds)

    for attempt in range(args.load_repeat):
        last = attempt == args.load_repeat - 1
        path = os.path.join(root, f"datae-{attempt}")
        db, store = datae_store(path)

        def datae_bulk() -> int:
            with db.transaction(write=True) as tx:
                return store.bulk_add(tx, quads)

        seconds, added = timed(datae_bulk)
        assert added == distinct, (added, distinct)
        load("datae bulk_add", seconds)

        ox_path = os.path.join(root, f"oxigraph-{attempt}")
        oxstore = ox.Store(ox_path)

        def ox_bulk() -> None:
            oxstore.bulk_extend(oxquads)
            oxstore.flush()

        load("pyoxigraph bulk_extend", timed(ox_bulk)[0])

        raw_path = os.path.join(root, f"lmdb-{attempt}")
        env = lmdb.open(raw_path, map_size=16 << 30)

        def raw_put() -> None:
            with env.begin(write=True) as txn:
                put = txn.put
                for key in raw_keys:
                    put(key, b"")

        load("lmdb put (floor)", timed(raw_put)[0])

        sorted_path = os.path.join(root, f"lmdb-sorted-{attempt}")
        env_sorted = lmdb.open(sorted_path, map_size=16 << 30)

        def raw_append() -> None:
            with env_sorted.begin(write=True) as txn:
                txn.cursor().putmulti(zip(sorted_keys, repeat(b"")), append=True)

        load("lmdb putmulti append", timed(raw_append)[0])
        env_sorted.close()
        shutil.rmtree(sorted_path)

        add_path = os.path.join(root, f"datae-add-{attempt}")
        add_db, add_store = datae_store(add_path)

        def datae_add() -> None:
            for start in range(0, adds, BATCH):
                with add_db.transaction(write=True) as tx:
                    add = add_store.add
                    for quad in quads[start : start + BATCH]:
                        add(tx, *quad)

        load("datae add", timed(datae_add)[0])
        add_db.close()
        shutil.rmtree(add_path)

        ox_add_path = os.path.join(root, f"oxigraph-add-{attempt}")
        ox_add = ox.Store(ox_add_path)

        def ox_extend() -> None:
            for start in range(0, adds, BATCH):
                ox_add.extend(oxquads[start : start + BATCH])
            ox_add.flush()

        load("pyoxigraph extend", timed(ox_extend)[0])
        del ox_add
        gc.collect()
        shutil.rmtree(ox_add_path, ignore_errors=True)
        if not last:
            db.close()
            env.close()
            del oxstore
            gc.collect()
            for where in (path, ox_path, raw_path):
                shutil.rmtree(where, ignore_errors=True)
    del sorted_keys
    print(f"{'operation':<34} {'engine':<26} {'seconds':>12} {'ops/s':>20}")
    tries = f"best of {args.load_repeat}" if args.load_repeat > 1 else ""
    report.add("load bulk", "datae bulk_add", best["datae bulk_add"], n, "; ".join(filter(None, ["one transaction", tries])))
    report.add("load bulk", "pyoxigraph bulk_extend", best["pyoxigraph bulk_extend"], n, tries)
    report.add("load bulk", "lmdb put (floor)", best["lmdb put (floor)"], n, "; ".join(filter(None, ["1 key/quad, input order", tries])))
    report.add(
        "load bulk", "lmdb putmulti append", best["lmdb putmulti append"], n,
        "; ".join(filter(None, ["1 key/quad, presorted (sort not timed)", tries])),
    )
    report.add("load add", "datae add", best["datae add"], adds, "; ".join(filter(None, [f"txns of {BATCH:,}", subset, tries])))
    report.add(
        "load add", "pyoxigraph extend", best["pyoxigraph extend"], adds,
        "; ".join(filter(None, [f"batches of {BATCH:,}", subset, tries])),
    )

    # -- point lookups --
    probes = [quads[i] for i in sample]
    ox_probes = [oxquads[i] for i in sample]
    raw_probes = [raw_keys[i] for i in sample]

    def datae_ask() -> int:
        with db.transaction() as tx:
            ask = store.ask
            return sum(ask(tx, *quad) for quad in probes)

    def ox_ask() -> int:
        return sum(quad in oxstore for quad in ox_probes)

    def raw_get() -> int:
        with env.begin() as txn:
            get = txn.get
            return sum(get(key) is not None for key in raw_probes)

    for engine, function in (("datae ask", datae_ask), ("pyoxigraph __contains__", ox_ask), ("lmdb get (floor)", raw_get)):
        seconds, found = timed(function, args.repeat)
        assert found == len(probes), (engine, found)
        report.add("ask (present quads)", engine, seconds, len(probes))

    # -- patterns --
    def datae_pattern(patterns: list, counting: bool) -> Callable[[], int]:
        def run() -> int:
            total = 0
            with db.transaction() as tx:
                for pattern in patterns:
                    if counting:
                        total += store.count(tx, *pattern)
                    else:
                        for _ in store.from_(tx, *pattern):
                            total += 1
            return total

        return run

    def ox_pattern(patterns: list) -> Callable[[], int]:
        def run() -> int:
            total = 0
            for pattern in patterns:
                for _ in oxstore.quads_for_pattern(*pattern):
                    total += 1
            return total

        return run

    def scan_pattern(prefixes: list[bytes]) -> Callable[[], int]:
        def run() -> int:
            total = 0
            with db.transaction() as tx:
                for key_prefix in prefixes:
                    for _ in tx.prefix(key_prefix):
                        total += 1
            return total

        return run

    g, s, p, o = Var("g"), Var("s"), Var("p"), Var("o")
    cases = [
        (
            "pattern (?g s ?p ?o)",
            [(g, subject, p, o) for subject in subjects],
            [(ox.NamedNode(subject.value), None, None, None) for subject in subjects],
        ),
        (
            "pattern (?g ?s p ?o)",
            [(g, s, predicate, o) for predicate in predicates],
            [(None, ox.NamedNode(predicate.value), None, None) for predicate in predicates],
        ),
    ]
    for operation, patterns, ox_patterns in cases:
        seconds, results = timed(datae_pattern(patterns, False), args.repeat)
        note = f"{len(patterns):,} queries, {results:,} results"
        report.add(operation, "datae from_", seconds, len(patterns), f"{note}; {results / seconds:,.0f} results/s")
        seconds, ox_results = timed(ox_pattern(ox_patterns), args.repeat)
        assert ox_results == results, (operation, ox_results, results)
        report.add(operation, "pyoxigraph quads_for_pattern", seconds, len(patterns), f"{results / seconds:,.0f} results/s")
        seconds, counted = timed(datae_pattern(patterns, True), args.repeat)
        assert counted == results
        report.add(operation, "datae count (no decoding)", seconds, len(patterns), f"{results / seconds:,.0f} results/s")
        # The keys a pattern reads, scanned through the okvs alone (no split, no decoding).
        key_prefixes = [store._plan(pattern)[0] for pattern in patterns]
        seconds, scanned = timed(scan_pattern(key_prefixes), args.repeat)
        assert scanned == results
        report.add(operation, "okvs prefix scan (floor)", seconds, len(patterns), f"{results / seconds:,.0f} results/s")

    # -- disk --
    db.close()
    env.close()
    del oxstore
    gc.collect()
    print()
    for engine, where in (("datae", path), ("pyoxigraph", ox_path), ("lmdb (1 key/quad)", raw_path)):
        size = disk_bytes(where)
        print(f"disk {engine:<22} {size / 1e6:10.1f} MB {size / n:8.1f} bytes/quad")
    print()
    print("ratio = pyoxigraph seconds / datae seconds (>= 1: datae as fast or faster)")
    for operation, engine in (
        ("load bulk", "datae bulk_add"),
        ("load add", "datae add"),
        ("ask (present quads)", "datae ask"),
        ("pattern (?g s ?p ?o)", "datae from_"),
        ("pattern (?g ?s p ?o)", "datae from_"),
    ):
        mine = report.seconds(operation, engine)
        peer = [sec for op, eng, sec, _, _ in report.rows if op == operation and eng.startswith("pyoxigraph")][0]
        target = 1.0 if operation.startswith("load bulk") else 0.5 if operation.startswith("pattern") else None
        verdict = "" if target is None else f"  target >= {target}: {'met' if peer / mine >= target else 'MISSED'}"
        print(f"ratio {operation:<28} {engine:<16} {peer / mine:6.2f}{verdict}")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quads", type=int, default=1_000_000, help="quads to generate (default 1,000,000)")
    parser.add_argument("--add-quads", type=int, default=100_000, help="quads loaded through add / extend (default 100,000)")
    parser.add_argument("--queries", type=int, default=10_000, help="asks and subject-bound queries (default 10,000)")
    parser.add_argument("--predicates", type=int, default=10, help="predicate-bound queries (default 10 of the 50)")
    parser.add_argument("--repeat", type=int, default=5, help="best of this many runs for lookups (default 5)")
    parser.add_argument("--load-repeat", type=int, default=1, help="best of this many loads, each into a fresh store (default 1)")
    parser.add_argument("--dir", default=None, help="where to create the stores (default: the temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the stores after the run")
    args = parser.parse_args(argv)
    bench(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
