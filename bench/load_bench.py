"""Bulk load benchmark (issue 12, "Storage format v2"): one big commit, datae against
pyoxigraph, time and bytes on disk.

    python -m bench.load_bench [--quads 1000000] [--repeat 1] [--dir DIR]
    python -m bench.load_bench --quads 50000          # a quick run

The quads are those of ``bench/nstore_bench.py`` (its ``generate``: 10 graphs, 100,000
subjects, 50 predicates, half the objects IRIs and half literals, shuffled, fresh
objects), loaded three ways into fresh on-disk stores:

* **datae add**: ``fstore.add`` of every quad in one ``repo.transaction`` (one commit on
  main, durable); timed from opening the transaction to the end of the commit;
* **datae add_many**: the same with one ``fstore.add_many`` of the list of quads (the
  bulk path, as ``bulk_extend`` is pyoxigraph's);
* **datae import**: ``datae import FILE -m MSG`` (run as ``python -m datae --repo DIR
  import FILE -m MSG`` in a child process; the graphs of the file are kept) on a store made
  by ``datae init``; the N-Quads file is written first with pyoxigraph's serializer. Timed:
  the whole child process, so Python's start-up and imports count (printed apart: the time
  of ``datae --help``); not timed: writing the file, ``datae init``;
* **pyoxigraph**: ``Store.bulk_extend`` of the quads (already pyoxigraph terms; converting
  is not timed) then ``Store.flush()``;
* **py-lmdb floor**: every key and value the ``datae add`` store holds afterwards, read out
  of it (not timed) and written by raw py-lmdb into a fresh environment opened as datae
  opens its own: one ``putmulti(append=True)`` of the pairs in key order, then the
  commit. Since format 4 these are a few thousand blocks, so this floor is tiny;
* **py-lmdb floor, one pair a key**: the same store's *logical* pairs (its blocks decoded:
  every index key, record and dictionary entry as its own pair, what format 3 wrote)
  written the same way: the least any layout writing each key as an LMDB pair can cost
  from Python (no encoding, no sorting, no lookups), the floor issue 26 measures datae
  against (target: datae within 3x of it);
* **one quad at a time**: ``fstore.add`` of the first ``--each`` quads (default 20,000)
  in one transaction against pyoxigraph's ``Store.add`` of the same quads, each its own
  write (pyoxigraph has no transaction grouping adds), then ``flush``; the bench's own
  objects (the million quads, twice) frozen out of the garbage collector's sight meanwhile
  (``gc.freeze``), as an application's long-lived data is after its start.

Printed: seconds, quads/s and bytes on disk (allocated blocks of the store directory, after
closing it) of each, then the ratios pyoxigraph seconds / datae seconds (issue 26's
targets: >= 1.5 for ``add_many`` and ``import``, >= 1.0 one quad at a time) and datae
bytes / pyoxigraph bytes (target <= 0.8, stretch <= 0.5). Each load runs ``--repeat``
times into a fresh store, the engines taking turns; the best time counts.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import lmdb
import pyoxigraph as ox

import fstore
from fstore import Var
from fstore.core.layout import BLOCKED
from nstore import okvs
from nstore.blocks import Blocks

from .nstore_bench import disk_bytes, generate, machine, to_oxigraph

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "datae", *args]


def run_cli(command: list[str]) -> float:
    """Seconds the command took (it must succeed); this checkout's packages come first."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return seconds


def stored_pairs(path: str) -> list[tuple[bytes, bytes]]:
    """Every (key, value) of the store at ``path``, in key order."""
    with okvs.open(path, readonly=True) as db, db.transaction() as tx:
        return list(tx.range())


def logical_pairs(path: str) -> list[tuple[bytes, bytes]]:
    """Every (key, value) the store at ``path`` holds as its layers see them (its blocks
    decoded), in key order: what a store writing each key as an LMDB pair would hold."""
    spaces = [Blocks.under(prefix) for prefix in BLOCKED]
    with okvs.open(path, readonly=True) as db, db.transaction() as tx:
        plain = [(key, value) for key, value in tx.range()
                 if not any(space.start <= key < space.end + b"\xff" for space in spaces)]
        return sorted(plain + [pair for space in spaces for pair in space.range(tx)])


def raw_write(path: str, pairs: list[tuple[bytes, bytes]]) -> float:
    """Seconds raw py-lmdb takes to write ``pairs`` (in key order) into a fresh
    environment at ``path`` opened as ``nstore.okvs`` opens one (one database), with one
    ``putmulti(append=True)``, and commit."""
    env = lmdb.open(path, map_size=1 << 36, subdir=True, max_dbs=0, max_readers=512, readahead=False, lock=True)
    try:
        gc.collect()
        start = time.perf_counter()
        with env.begin(write=True) as txn:
            txn.cursor().putmulti(pairs, append=True)
        return time.perf_counter() - start
    finally:
        env.close()


def bench(args: argparse.Namespace) -> None:
    n = args.quads
    print(f"# load benchmark: {n:,} quads in one commit; {machine()}")
    root = tempfile.mkdtemp(prefix="datae-load-bench-", dir=args.dir)
    try:
        start = time.perf_counter()
        quads = generate(n)
        distinct = len(set(quads))
        oxquads = to_oxigraph(quads)
        nquads = os.path.join(root, "quads.nq")
        ox.serialize(oxquads, nquads, ox.RdfFormat.N_QUADS)
        print(f"# generated {n:,} quads ({distinct:,} distinct), converted and written to an N-Quads file "
              f"({os.path.getsize(nquads) / 1e6:.1f} MB) in {time.perf_counter() - start:.1f} s (not timed)")
        startup = min(run_cli(cli("--help")) for _ in range(3))
        best: dict[str, float] = {}
        size: dict[str, int] = {}
        keys = [0, 0, 0]  # pairs in the datae store, their bytes, and its logical pairs
        for attempt in range(args.repeat):
            for engine in ("datae add", "datae add_many"):
                # datae: fstore.add of each quad, or one fstore.add_many, in one transaction
                path = os.path.join(root, f"datae-{attempt}")
                repo = fstore.open(path)
                gc.collect()
                start = time.perf_counter()
                with repo.transaction("main", message=f"{n:,} quads", author="bench") as tx:
                    if engine == "datae add_many":
                        fstore.add_many(tx, quads)
                    else:
                        add = fstore.add
                        for quad in quads:
                            add(tx, *quad)
                seconds = time.perf_counter() - start
                stored = fstore.count(repo.at("main"), Var("g"), Var("s"), Var("p"), Var("o"))
                assert stored == distinct, (stored, distinct)
                repo.close()
                best[engine] = min(best.get(engine, float("inf")), seconds)
                size[engine] = disk_bytes(path)
                pairs = stored_pairs(path)
                logical = logical_pairs(path)
                shutil.rmtree(path)

            # py-lmdb floors: the same keys and values (and their logical pairs), written
            # in key order by raw py-lmdb
            for engine, written in (("py-lmdb floor", pairs), ("floor, pair a key", logical)):
                path = os.path.join(root, f"lmdb-floor-{attempt}")
                best[engine] = min(best.get(engine, float("inf")), raw_write(path, written))
                size[engine] = disk_bytes(path)
                shutil.rmtree(path)
            keys[0], keys[1] = len(pairs), sum(len(k) + len(v) for k, v in pairs)
            keys[2] = len(logical)
            del pairs, logical

            # one quad at a time: fstore.add in one transaction, pyoxigraph's add each. The
            # bench's own millions of objects are frozen out of the collector's sight (for
            # both engines), or its full collections during the loops would be timed too.
            each = quads[: args.each]
            gc.collect()
            gc.freeze()
            path = os.path.join(root, f"datae-each-{attempt}")
            repo = fstore.open(path)
            gc.collect()
            start = time.perf_counter()
            with repo.transaction("main", message="each", author="bench") as tx:
                for quad in each:
                    fstore.add(tx, *quad)
            best["datae add, each"] = min(best.get("datae add, each", float("inf")), time.perf_counter() - start)
            size["datae add, each"] = disk_bytes(path)
            repo.close()
            shutil.rmtree(path)
            path = os.path.join(root, f"oxigraph-each-{attempt}")
            store = ox.Store(path)
            gc.collect()
            start = time.perf_counter()
            for quad in oxquads[: args.each]:
                store.add(quad)
            store.flush()
            best["pyoxigraph add"] = min(best.get("pyoxigraph add", float("inf")), time.perf_counter() - start)
            gc.unfreeze()
            del store
            gc.collect()
            size["pyoxigraph add"] = disk_bytes(path)
            shutil.rmtree(path)

            # datae import of the N-Quads file, in a child process
            path = os.path.join(root, f"datae-import-{attempt}")
            os.mkdir(path)
            run_cli(cli("init", path))
            seconds = run_cli(cli("--repo", path, "import", nquads, "-m", f"{n:,} quads"))
            with fstore.open(os.path.join(path, ".datae")) as repo:
                stored = fstore.count(repo.at("main"), Var("g"), Var("s"), Var("p"), Var("o"))
            assert stored == distinct, (stored, distinct)
            best["datae import"] = min(best.get("datae import", float("inf")), seconds)
            size["datae import"] = disk_bytes(path)
            shutil.rmtree(path)

            # pyoxigraph: bulk_extend + flush
            path = os.path.join(root, f"oxigraph-{attempt}")
            store = ox.Store(path)
            gc.collect()
            start = time.perf_counter()
            store.bulk_extend(oxquads)
            store.flush()
            seconds = time.perf_counter() - start
            assert len(store) == distinct, (len(store), distinct)
            del store
            gc.collect()
            best["pyoxigraph"] = min(best.get("pyoxigraph", float("inf")), seconds)
            size["pyoxigraph"] = disk_bytes(path)
            shutil.rmtree(path)
    finally:
        shutil.rmtree(root, ignore_errors=True)

    tries = f"best of {args.repeat}" if args.repeat > 1 else "one run"
    notes = {
        "datae add": "fstore.add of each quad, one repo.transaction",
        "datae add_many": "one fstore.add_many, one repo.transaction",
        "datae import": f"child process; start-up alone (datae --help) {startup:.2f} s",
        "pyoxigraph": "bulk_extend + flush",
        "py-lmdb floor": "putmulti(append=True) of the datae store's pairs (its blocks), in key order",
        "floor, pair a key": "the same, of its logical pairs (blocks decoded): each key an LMDB pair",
        "datae add, each": f"fstore.add of the first {min(n, args.each):,} quads, one transaction",
        "pyoxigraph add": f"Store.add of the same {min(n, args.each):,} quads, then flush",
    }
    print(f"\n{'load (' + tries + ')':<18} {'seconds':>9} {'quads/s':>10} {'MB on disk':>11} {'bytes/quad':>11}  notes")
    for engine, seconds in best.items():
        count = min(n, args.each) if engine in ("datae add, each", "pyoxigraph add") else n
        print(f"{engine:<18} {seconds:>9.2f} {count / seconds:>10,.0f} {size[engine] / 1e6:>11.1f} "
              f"{size[engine] / min(count, distinct):>11.1f}  {notes[engine]}")
    print(f"\nthe datae store holds {keys[0]:,} LMDB pairs of {keys[1] / keys[0]:.1f} bytes on average (key + value), "
          f"{keys[2]:,} logical pairs ({keys[2] / distinct:.1f} a quad)")
    print(f"\n{'ratio':<44} {'value':>6}  target")
    value = best["pyoxigraph"] / best["floor, pair a key"]
    print(f"{'pyoxigraph s / floor, pair a key s':<44} {value:>6.2f}  (the most code writing each key as a pair can reach)")
    value = best["datae add_many"] / best["floor, pair a key"]
    print(f"{'datae add_many s / floor, pair a key s':<44} {value:>6.2f}  <= 3: {'met' if value <= 3 else 'MISSED'}")
    for engine in ("datae add", "datae add_many", "datae import"):
        value = best["pyoxigraph"] / best[engine]
        print(f"{'pyoxigraph s / ' + engine + ' s':<44} {value:>6.2f}  >= 1.5: {'met' if value >= 1.5 else 'MISSED'}")
    value = best["pyoxigraph add"] / best["datae add, each"]
    print(f"{'pyoxigraph add s / datae add, each s':<44} {value:>6.2f}  >= 1.0: {'met' if value >= 1.0 else 'MISSED'}")
    for engine in ("datae add_many", "datae import"):
        value = size[engine] / size["pyoxigraph"]
        print(f"{engine + ' bytes / pyoxigraph bytes':<44} {value:>6.2f}  <= 0.8: {'met' if value <= 0.8 else 'MISSED'}"
              f"{' (stretch <= 0.5: met)' if value <= 0.5 else ''}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="quick run: --quads 50000")
    parser.add_argument("--quads", type=int, default=1_000_000, help="quads to generate (default 1,000,000)")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many loads, each into a fresh store (default 1)")
    parser.add_argument("--dir", default=None, help="where to create the stores (default: the temp dir)")
    parser.add_argument("--each", type=int, default=20_000, help="quads added one at a time by each engine (default 20,000)")
    bench(parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
