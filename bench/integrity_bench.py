"""Integrity and lifecycle benchmark (issue 13): what the state digest adds to a commit,
what a full verify costs against reading every index once, and what gc gives back,
side by side with sqlite3 in the same run.

    python -m bench.integrity_bench [--commits 1000] [--changes 100] [--sizes 100000 500000]
                                    [--branch 200000] [--parts commits verify gc]
    python -m bench.integrity_bench --commits 100 --sizes 20000 50000 --branch 20000   # quick
    python -m bench.integrity_bench --parts verify --sizes 100000 300000               # verify only

* **Commit latency**: ``--commits`` commits of ``--changes`` changes each (half adds, half
  removes of earlier adds) on one store, with the state digest and with it switched off
  (``Storage._digest_after`` returning the parent's digest), the two stores built in
  turns; the median latency of the first and the last 10% of commits. Peer: sqlite3 (a
  table of quads with a unique index, WAL, ``synchronous=FULL``), the same changes, one
  transaction each.
* **verify**: a store of N generated quads (``bench/nstore_bench.py``'s ``generate``, one
  commit) for each of ``--sizes``: ``Repository.verify()`` against a scan of every pair the
  store holds (since format 4 the file's keys are mostly blocks of pairs: the scan reads
  every LMDB pair, ``raw scan``, and decodes every block into its pairs, ``scan``, which is
  what a raw scan of a store of plain keys did), and apart the part of verify
  that walks the LMDB B-trees page by page (``Storage.tree_problems``, the compiled
  ``nstore._btree``; beside it the Python walk of ``nstore.btree``, its test oracle).
  Target (issue 26): verify <= 3x the scan of every pair. Peer: ``PRAGMA integrity_check`` of a
  sqlite3 database of the same quads.
* **gc**: a store with a 1,000-quad main and a deleted branch of ``--branch`` changes:
  ``Repository.gc(expire=0)`` time, and the file against a store that never had the
  branch (target <= 1.1x). Peer: sqlite3 deleting as many rows then ``VACUUM`` (datae's
  branch deletion is O(1); its gc does the dropping).

Cost growth: a commit's digest is O(its changes) (one sha256 per change); verify is
O(pages + keys + live tuples + records) (the B-trees walked once, every index scanned
once, each head's and snapshot's tuples hashed, each commit's records re-hashed); gc is O(keys) (one pass to find live ids, one rewrite).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import shutil
import sqlite3
import statistics
import tempfile
import time
from contextlib import contextmanager, nullcontext
from typing import Iterator

import fstore
from fstore import IRI
from fstore.core.storage import Storage
from fstore.core.history import ALIVE
from nstore.btree import tree_problems
from nstore.lmdbfile import DATA_FILE

from .nstore_bench import generate, machine


def sqlite_store(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE quads (g TEXT, s TEXT, p TEXT, o TEXT)")
    db.execute("CREATE UNIQUE INDEX spog ON quads (s, p, o, g)")
    return db


def changes_of(commits: int, size: int, seed: int = 13) -> list[tuple[list[tuple], list[tuple]]]:
    """Per commit, quads to add and earlier ones to remove (half each)."""
    rng = random.Random(seed)
    alive: list[tuple] = []
    batches = []
    for number in range(commits):
        added = [(None, IRI(f"urn:s{rng.randrange(10**6)}"), IRI(f"urn:p{rng.randrange(50)}"), f"v{number}.{i}")
                 for i in range(size - size // 2)]
        removed = [alive.pop(rng.randrange(len(alive))) for _ in range(min(size // 2, len(alive)))]
        alive += added
        batches.append((added, removed))
    return batches


@contextmanager
def digest_off() -> Iterator[None]:
    original = Storage._digest_after

    def parents_digest(self, tx, seq, parents, records):
        digest = self.commits.get(tx, parents[0]).digest if parents else "0" * 64
        born = sum(record[-1:] == ALIVE for record in records)
        return digest, (born, len(records) - born)

    Storage._digest_after = parents_digest
    try:
        yield
    finally:
        Storage._digest_after = original


def commit_latencies(root: str, batches, digest: bool) -> list[float]:
    path = tempfile.mkdtemp(dir=root)
    repo = fstore.open(path)
    seconds = []
    with digest_off() if not digest else nullcontext():
        for number, (added, removed) in enumerate(batches):
            start = time.perf_counter()
            with repo.transaction("main", message=f"c{number}", author="bench") as tx:
                fstore.add_many(tx, added)
                fstore.rm_many(tx, removed)
            seconds.append(time.perf_counter() - start)
    repo.close()
    shutil.rmtree(path)
    return seconds


def sqlite_latencies(root: str, batches) -> list[float]:
    db = sqlite_store(os.path.join(root, "commits.sqlite"))
    seconds = []
    for added, removed in batches:
        start = time.perf_counter()
        db.execute("BEGIN")
        db.executemany("INSERT OR IGNORE INTO quads VALUES (?, ?, ?, ?)", [("", str(s), str(p), o) for _, s, p, o in added])
        db.executemany("DELETE FROM quads WHERE s = ? AND p = ? AND o = ? AND g = ?", [(str(s), str(p), o, "") for _, s, p, o in removed])
        db.execute("COMMIT")
        seconds.append(time.perf_counter() - start)
    db.close()
    return seconds


def edges(seconds: list[float]) -> tuple[float, float]:
    """Median latency of the first and the last tenth of the commits."""
    tenth = max(1, len(seconds) // 10)
    return statistics.median(seconds[:tenth]), statistics.median(seconds[-tenth:])


def bench_commits(root: str, commits: int, size: int) -> None:
    batches = changes_of(commits, size)
    with_digest = commit_latencies(root, batches, True)
    without = commit_latencies(root, batches, False)
    peer = sqlite_latencies(root, batches)
    print(f"\n# commit latency: {commits:,} commits of {size} changes (median ms of the first / last {max(1, commits // 10)})")
    print(f"{'engine':<28} {'first':>8} {'last':>8}  last/first")
    rows = {"datae, state digest": edges(with_digest), "datae, digest off": edges(without), "sqlite3 (WAL, FULL)": edges(peer)}
    for name, (first, last) in rows.items():
        print(f"{name:<28} {first * 1e3:>8.2f} {last * 1e3:>8.2f}  {last / first:>6.2f}")
    on, off = rows["datae, state digest"], rows["datae, digest off"]
    print(f"{'ratio digest / no digest (last)':<44} {on[1] / off[1]:>6.2f}  target <= 1.1")
    print(f"{'ratio datae / sqlite3 (last)':<44} {on[1] / rows['sqlite3 (WAL, FULL)'][1]:>6.2f}")


def bench_verify(root: str, sizes: list[int]) -> None:
    print("\n# verify: a store of N quads in one commit")
    print(f"{'quads':>9} {'verify s':>9} {'of it B-trees s':>16} {'raw scan s':>11} {'scan s':>8} {'verify/scan':>12} "
          f"{'sqlite3 integrity_check s':>26}")
    for size in sizes:
        quads = generate(size)
        path = tempfile.mkdtemp(dir=root)
        repo = fstore.open(path)
        with repo.transaction("main", message="load", author="bench") as tx:
            fstore.add_many(tx, quads)
        start = time.perf_counter()
        problems = repo.verify()
        verify = time.perf_counter() - start
        assert problems == [], problems[:3]
        start = time.perf_counter()
        with repo.storage.read() as snapshot:
            assert snapshot.tree_problems() == []
        trees = time.perf_counter() - start
        start = time.perf_counter()
        with repo.storage.read() as snapshot:
            txn = snapshot.tx._require_open()
            assert tree_problems(os.path.join(path, DATA_FILE), txn.id(), txn.stat(), compiled=False) == []
        python_trees = time.perf_counter() - start
        start = time.perf_counter()
        with repo.storage.read() as snapshot:  # every key of the file: a raw okvs scan
            pairs = sum(1 for _ in snapshot.tx.range(None, None))
        raw = time.perf_counter() - start
        start = time.perf_counter()
        with repo.storage.read() as snapshot:  # every logical pair: the raw scan, each block's pairs decoded
            spaces = repo.storage.blocked_keyspaces()
            logical = sum(1 for key, _ in snapshot.tx.range(None, None)
                          if not any(space.start <= key < space.end for space in spaces))
            logical += sum(len(keys) for space in spaces for keys, _ in space.batches(snapshot.tx, space.start, space.end))
        scan = time.perf_counter() - start
        repo.close()
        shutil.rmtree(path)
        db = sqlite_store(os.path.join(root, f"verify-{size}.sqlite"))
        db.execute("BEGIN")
        db.executemany("INSERT OR IGNORE INTO quads VALUES (?, ?, ?, ?)", [(str(g), str(s), str(p), str(o)) for g, s, p, o in quads])
        db.execute("COMMIT")
        start = time.perf_counter()
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        peer = time.perf_counter() - start
        db.close()
        print(f"{size:>9,} {verify:>9.2f} {trees:>16.3f} {raw:>11.2f} {scan:>8.2f} {verify / scan:>12.2f} {peer:>26.2f}   "
              f"({pairs:,} LMDB pairs, {logical:,} logical pairs)")
        print(f"{'':>9} the B-tree walk in Python (nstore.btree, the compiled walk's oracle): {python_trees:.2f} s, "
              f"{python_trees / trees:.0f}x the compiled walk")
    print("target (issue 26): verify <= 3x the scan of every pair (scan s: each block's pairs decoded)")


def bench_gc(root: str, branch: int) -> None:
    main = [(None, IRI(f"urn:m{i}"), IRI("urn:p"), i) for i in range(1000)]
    scratch = generate(branch)
    path = tempfile.mkdtemp(dir=root)
    repo = fstore.open(path)
    with repo.transaction("main", message="main", author="bench") as tx:
        fstore.add_many(tx, main)
    repo.branch("scratch")
    with repo.transaction("scratch", message="scratch", author="bench") as tx:
        fstore.add_many(tx, scratch)
    repo.delete_branch("scratch")
    before = os.path.getsize(os.path.join(path, "data.mdb"))
    start = time.perf_counter()
    report = repo.gc(expire=dt.timedelta(0))
    seconds = time.perf_counter() - start
    assert report.commits == 1 and repo.verify() == []
    repo.close()
    after = os.path.getsize(os.path.join(path, "data.mdb"))
    never_path = tempfile.mkdtemp(dir=root)
    never = fstore.open(never_path)
    with never.transaction("main", message="main", author="bench") as tx:
        fstore.add_many(tx, main)
    never.close()
    never_bytes = os.path.getsize(os.path.join(never_path, "data.mdb"))
    db_path = os.path.join(root, "gc.sqlite")
    db = sqlite_store(db_path)
    db.execute("BEGIN")
    db.executemany("INSERT OR IGNORE INTO quads VALUES (?, ?, ?, ?)", [("", str(s), str(p), str(o)) for _, s, p, o in main + scratch])
    db.execute("COMMIT")
    start = time.perf_counter()
    db.execute("DELETE FROM quads WHERE s NOT LIKE 'urn:m%'")
    db.execute("VACUUM")
    vacuum = time.perf_counter() - start
    db.close()
    print(f"\n# gc after deleting a branch of {branch:,} changes (main: 1,000 quads)")
    print(f"datae gc {seconds:.2f} s: file {before:,} -> {after:,} bytes; a store that never had the branch: "
          f"{never_bytes:,} bytes; ratio {after / never_bytes:.2f} (target <= 1.1)")
    print(f"sqlite3 DELETE of as many rows + VACUUM: {vacuum:.2f} s; datae gc / sqlite3 {seconds / vacuum:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--changes", type=int, default=100)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 500_000])
    parser.add_argument("--branch", type=int, default=200_000)
    parser.add_argument("--dir", default=None)
    parser.add_argument("--parts", nargs="+", choices=("commits", "verify", "gc"), default=["commits", "verify", "gc"])
    args = parser.parse_args(argv)
    print(f"# integrity benchmark; {machine()}")
    root = tempfile.mkdtemp(prefix="datae-integrity-bench-", dir=args.dir)
    try:
        if "commits" in args.parts:
            bench_commits(root, args.commits, args.changes)
        if "verify" in args.parts:
            bench_verify(root, args.sizes)
        if "gc" in args.parts:
            bench_gc(root, args.branch)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
