"""Scale benchmark (issue 26, point 3): how datae's costs grow from 1M to 10M quads, each
size measured side by side with pyoxigraph in the same run.

    python -m bench.scale_bench [--sizes 1000000,10000000] [--lookups 200] [--repeat 3]
                                [--dir DIR] [--skip-queries] [--quick]

For each size N two N-Quads files are written (in chunks: neither is ever held whole in
memory) and loaded by each engine in a child process of its own, so that the peak RSS
read back (``os.wait4``'s rusage of that one child) is that load's alone:

* ``uniform``: bench/nstore_bench.py's :func:`~bench.nstore_bench.generate` (10 graphs,
  100,000 subjects, 50 predicates); past a million quads, chunk k is ``generate(1M, seed
  + k)``: the same subjects and graphs with fresh predicates and objects, so each subject
  holds N / 100,000 quads;
* ``social``: bench/query_bench.py's :func:`~bench.query_bench.social_graph` at N quads.
  **The head lookups and the six queries run on this data**: the queries are written for
  it (their selectivity holds at every size: a person has ~11 quads, a city ~1,000
  people), so their growth from 1M to 10M is the engines', not the data's shape.

Measured for each file, datae vs pyoxigraph: the load (``datae import FILE``, one commit,
as a user runs it, vs ``Store.bulk_load(path=FILE)``): wall seconds, peak RSS of the
child, bytes on disk (allocated blocks); then, on the social stores, opened in this
process: ``--lookups`` subject lookups at the head (``fstore.from_(view, ?g, s, ?p, ?o)``
vs ``quads_for_pattern(s, None, None, None)``, every quad consumed) and query_bench's
:data:`~bench.query_bench.QUERIES` (imported, not copied), each the best of ``--repeat``
runs taking turns (:func:`bench.query_bench.race`). Every line gives datae / pyoxigraph;
the last block gives the growth from the first size to the last for both engines.
Targets (issue 26): 10M load <= 10x the 1M time; peak RSS of the import <= 1 GB.

``--quick``: sizes 20,000 and 60,000 (a check that it all runs; the figures mean little).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import pyoxigraph as ox

import fstore
from fstore import IRI, Var
from fstore.rdf import serialize

from .nstore_bench import disk_bytes, generate
from .query_bench import EX as SOCIAL, QUERIES, race, social_graph

__all__ = ["uniform_quads", "write_nquads", "run_child", "Load", "main"]

ROOT = Path(__file__).resolve().parents[1]
CHUNK = 1_000_000  # generate() makes distinct quads up to a million: the unit of streaming
WRITE_BATCH = 100_000
QUICK_SIZES = [20_000, 60_000]


# -- data: written in chunks ----------------------------------------------------------


def uniform_quads(count: int, seed: int = 20240101) -> Iterator[tuple]:
    """``count`` quads of :func:`bench.nstore_bench.generate`, a million at a time (chunk k
    uses seed ``seed + k``), so memory holds one chunk however large ``count`` is."""
    for k, start in enumerate(range(0, count, CHUNK)):
        yield from generate(min(CHUNK, count - start), seed + k)


def write_nquads(path: str, quads: Iterable[tuple]) -> int:
    """Write ``quads`` to ``path`` as N-Quads, ``WRITE_BATCH`` at a time; returns how many."""
    written = 0
    iterator = iter(quads)
    with open(path, "wb") as out:
        while batch := list(islice(iterator, WRITE_BATCH)):
            serialize(batch, "nq", out)
            written += len(batch)
    return written


# -- loads, each in a child process ---------------------------------------------------


class Load:
    """One load measured in a child process: wall seconds, its peak RSS, bytes on disk."""

    def __init__(self, seconds: float, peak_rss: int, disk: int) -> None:
        self.seconds = seconds
        self.peak_rss = peak_rss
        self.disk = disk


def run_child(command: list[str]) -> tuple[float, int]:
    """Run ``command``; its wall seconds and peak RSS in bytes (the rusage ``wait4`` gives
    for that child alone: RUSAGE_CHILDREN would be the largest of every child so far)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert child.stdout is not None
    output = child.stdout.read()  # drained while it runs: a full pipe would stall it
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise RuntimeError(f"{' '.join(command)} failed ({child.returncode}):\n{output.decode(errors='replace')}")
    return seconds, usage.ru_maxrss * 1024  # Linux reports kilobytes


def datae_load(nquads: str, store: str, message: str = "scale bench") -> Load:
    """``datae init`` (not timed), then ``datae import FILE`` (one commit), timed."""
    run_child([sys.executable, "-m", "datae", "--repo", store, "init"])
    seconds, rss = run_child([sys.executable, "-m", "datae", "--repo", store, "import", nquads, "-m", message,
                              "--author", "bench"])
    return Load(seconds, rss, disk_bytes(store))


_OX_LOAD = ("import sys, pyoxigraph as ox\n"
            "store = ox.Store(sys.argv[2])\n"
            "store.bulk_load(path=sys.argv[1], format=ox.RdfFormat.N_QUADS)\n"
            "store.flush()\n")


def oxigraph_load(nquads: str, store: str) -> Load:
    """pyoxigraph's ``Store.bulk_load`` of the same file into an on-disk store, flushed."""
    seconds, rss = run_child([sys.executable, "-c", _OX_LOAD, nquads, store])
    return Load(seconds, rss, disk_bytes(store))


# -- reads at the head, in this process -----------------------------------------------


def lookups(repo_path: str, ox_path: str, people: int, count: int, repeat: int) -> tuple[tuple[float, int], tuple[float, int]]:
    """``count`` subject lookups of random people at the head on both stores, every quad
    consumed: the best of ``repeat`` (taking turns) and the quads found, per engine."""
    rng = random.Random(5)
    subjects = [IRI(f"{SOCIAL}p{rng.randrange(people)}") for _ in range(count)]
    nodes = [ox.NamedNode(s.value) for s in subjects]
    repo = fstore.open(repo_path)
    store = ox.Store.read_only(ox_path)
    try:
        view = repo.at("main")
        g, p, o = Var("g"), Var("p"), Var("o")
        mine, theirs = race(repeat, lambda: sum(1 for s in subjects for _ in fstore.from_(view, g, s, p, o)),
                            lambda: sum(1 for s in nodes for _ in store.quads_for_pattern(s, None, None, None)))
        return mine, theirs
    finally:
        repo.close()


def queries(repo_path: str, ox_path: str, repeat: int) -> dict[str, tuple[float, float, int, int]]:
    """query_bench's queries on both social stores: ``(datae s, pyoxigraph s, rows, rows)``."""
    from query import execute

    repo = fstore.open(repo_path)
    store = ox.Store.read_only(ox_path)
    try:
        view = repo.at("main")
        found = {}
        for label, text in QUERIES.items():
            (mine, rows), (theirs, their_rows) = race(repeat, lambda: sum(1 for _ in execute(view, text)),
                                                      lambda: sum(1 for _ in store.query(text)))
            found[label] = (mine, theirs, rows, their_rows)
        return found
    finally:
        repo.close()


# -- the run --------------------------------------------------------------------------


def _mb(size: int) -> str:
    return f"{size / 1e6:,.0f} MB"


def run_size(size: int, workdir: str, args: argparse.Namespace) -> dict[str, Any]:
    """Every figure of one size (printed as it is measured)."""
    print(f"\n== {size:,} quads", flush=True)
    figures: dict[str, Any] = {}
    datasets: list[tuple[str, Callable[[], Iterable[tuple]]]] = [
        ("uniform", lambda: uniform_quads(size)), ("social", lambda: social_graph(size))]
    print(f"{'load':<22} {'engine':<11} {'seconds':>9} {'peak RSS':>10} {'disk':>10} {'B/quad':>7}")
    for name, quads in datasets:
        nquads = os.path.join(workdir, f"{name}-{size}.nq")
        start = time.perf_counter()
        count = write_nquads(nquads, quads())
        print(f"({name}: {count:,} quads written in {time.perf_counter() - start:.1f} s, "
              f"{_mb(os.path.getsize(nquads))} of N-Quads)", flush=True)
        for engine, load in (("datae", datae_load), ("pyoxigraph", oxigraph_load)):
            store = os.path.join(workdir, f"{name}-{size}-{engine}")
            done = load(nquads, store)
            figures[name, engine] = done
            print(f"{name + ' load':<22} {engine:<11} {done.seconds:>7.2f} s {_mb(done.peak_rss):>10} "
                  f"{_mb(done.disk):>10} {done.disk / count:>7.0f}", flush=True)
        mine, theirs = figures[name, "datae"], figures[name, "pyoxigraph"]
        print(f"{name + ' ratios':<22} datae / pyoxigraph: time {mine.seconds / theirs.seconds:.2f}x, "
              f"peak RSS {mine.peak_rss / theirs.peak_rss:.2f}x, bytes {mine.disk / theirs.disk:.2f}x")
        os.remove(nquads)
        if name == "uniform":  # only the social stores are read
            for engine in ("datae", "pyoxigraph"):
                shutil.rmtree(os.path.join(workdir, f"{name}-{size}-{engine}"), ignore_errors=True)
    repo_path, ox_path = (os.path.join(workdir, f"social-{size}-{engine}") for engine in ("datae", "pyoxigraph"))
    (mine, rows), (theirs, their_rows) = lookups(repo_path, ox_path, max(size // 11, 10), args.lookups, args.repeat)
    figures["lookups"] = (mine, theirs)
    agree = "" if rows == their_rows else f"  QUAD COUNTS DIFFER: pyoxigraph {their_rows}"
    print(f"\n{args.lookups} subject lookups at the head   datae {mine * 1000:8.1f} ms  pyoxigraph "
          f"{theirs * 1000:8.1f} ms  {mine / theirs:5.2f}x  ({rows} quads){agree}")
    if not args.skip_queries:
        print(f"{'query':<12} {'rows':>8} {'datae':>11} {'pyoxigraph':>11} {'ratio':>7}")
        for label, (mine, theirs, rows, their_rows) in queries(repo_path, ox_path, args.repeat).items():
            figures["query", label] = (mine, theirs)
            agree = "" if rows == their_rows else f"  ROW COUNTS DIFFER: pyoxigraph {their_rows}"
            print(f"{label:<12} {rows:>8} {mine * 1000:>9.1f}ms {theirs * 1000:>9.1f}ms {mine / theirs:>6.1f}x{agree}",
                  flush=True)
    for path in (repo_path, ox_path):
        shutil.rmtree(path, ignore_errors=True)
    return figures


def growth(small: int, large: int, first: dict[str, Any], last: dict[str, Any]) -> None:
    """How each figure grew from ``small`` to ``large`` quads, for both engines."""
    print(f"\ngrowth {small:,} -> {large:,} quads (x{large / small:.0f} data): datae / pyoxigraph")
    for name in ("uniform", "social"):
        for what, attr in (("load time", "seconds"), ("peak RSS", "peak_rss"), ("bytes", "disk")):
            mine = getattr(last[name, "datae"], attr) / getattr(first[name, "datae"], attr)
            theirs = getattr(last[name, "pyoxigraph"], attr) / getattr(first[name, "pyoxigraph"], attr)
            print(f"{name + ' ' + what:<22} {mine:7.2f}x / {theirs:7.2f}x")
    keys = ["lookups"] + [key for key in first if isinstance(key, tuple) and key[0] == "query" and key in last]
    for key in keys:
        (m1, t1), (m2, t2) = first[key], last[key]
        label = "subject lookups" if key == "lookups" else f"query {key[1]}"
        print(f"{label:<22} {m2 / m1:7.2f}x / {t2 / t1:7.2f}x")
    load = last["uniform", "datae"].seconds / first["uniform", "datae"].seconds
    print(f"targets: datae's load time grows <= as the data (10x for 10x): {load:.2f}x for x{large / small:.0f}; "
          f"peak RSS of an import <= 1 GB: {_mb(max(last[name, 'datae'].peak_rss for name in ('uniform', 'social')))}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="datae at 1M and 10M quads vs pyoxigraph: load, bytes, RSS, reads")
    parser.add_argument("--sizes", default="1000000,10000000", help="comma-separated quad counts (default 1M,10M)")
    parser.add_argument("--lookups", type=int, default=200, help="subject lookups at the head (default 200)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each read; the best counts (default 3)")
    parser.add_argument("--skip-queries", action="store_true", help="no SPARQL queries (loads and lookups only)")
    parser.add_argument("--dir", help="where the files and stores go (default: a temporary directory, removed)")
    parser.add_argument("--quick", action="store_true", help=f"sizes {QUICK_SIZES} (a check that it runs)")
    args = parser.parse_args(argv)
    sizes = QUICK_SIZES if args.quick else [int(size) for size in args.sizes.split(",")]
    workdir = args.dir or tempfile.mkdtemp(prefix="datae-scale-bench-")
    os.makedirs(workdir, exist_ok=True)
    try:
        runs = [run_size(size, workdir, args) for size in sizes]
    finally:
        if not args.dir:
            shutil.rmtree(workdir, ignore_errors=True)
    if len(runs) > 1:
        growth(sizes[0], sizes[-1], runs[0], runs[-1])


if __name__ == "__main__":
    main()
