"""Sync benchmark (issue 14): clone against copying the file, and a fetch of one new
commit at two store sizes, each in a child process so its peak memory (RSS) is its own.

    python -m bench.sync_bench [--sizes 100000 300000] [--commits 20] [--changes 1000]
    python -m bench.sync_bench --sizes 20000 50000                           # quick

For each size N: a store of N generated quads (``bench/nstore_bench.py``'s ``generate``)
over ``--commits`` commits. Measured:

* **clone**: ``datae clone --no-local`` of the store into a new directory (a child
  process: every commit sent and checked, as over the wire), and ``datae clone`` (a local
  clone: a consistent copy of the file, then the refs), against the peer,
  ``shutil.copyfile`` of its ``data.mdb`` (what sharing a store cost before);
* **fetch**: one new commit of ``--changes`` changes on the origin, then ``datae fetch``
  in the clone (a child process): its cost should not grow with N;
* the peak RSS of each child (``VmHWM`` of ``/proc/self/status``; ``ru_maxrss`` would
  carry the parent's over fork and exec).

Cost growth: clone is O(commits + records) (every commit re-checked and re-written);
fetch is O(new commits' records + commits held), so it is flat in N for one new commit.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import fstore
from fstore import IRI

from .nstore_bench import generate, machine


# VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork and exec from the parent.
_MEASURED = """
import sys
from datae.cli import main
code = main(sys.argv[1:])
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(int(peak.split()[1]), file=sys.stderr)
sys.exit(code)
"""


def datae(*argv: str, cwd: str) -> tuple[float, int]:
    """Run ``datae ARGV`` in a child process: (seconds, its own peak RSS in MB)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _MEASURED, *argv], check=True, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    return seconds, int(done.stderr.strip().splitlines()[-1]) // 1024


def build(path: str, size: int, commits: int) -> None:
    quads = generate(size)
    repo = fstore.open(os.path.join(path, ".datae"))
    step = max(1, size // commits)
    for number, start in enumerate(range(0, size, step)):
        with repo.transaction("main", message=f"part {number}", author="bench") as tx:
            fstore.add_many(tx, quads[start:start + step])
    repo.close()


def bench(args: argparse.Namespace) -> None:
    print(f"# sync benchmark; {machine()}")
    root = tempfile.mkdtemp(prefix="datae-sync-bench-", dir=args.dir)
    try:
        print(f"{'quads':>9} {'commits':>8} {'MB':>7} {'copy s':>7} {'local clone s':>14} {'clone s':>8} "
              f"{'clone/copy':>11} {'clone RSS':>10} {'fetch s':>8} {'fetch RSS':>10}")
        for size in args.sizes:
            origin = os.path.join(root, f"origin-{size}")
            build(origin, size, args.commits)
            data = os.path.join(origin, ".datae", "data.mdb")
            start = time.perf_counter()
            shutil.copyfile(data, os.path.join(root, f"copy-{size}.mdb"))
            copy = time.perf_counter() - start
            clone, clone_rss = datae("clone", "--no-local", origin, f"clone-{size}", cwd=root)
            local, _ = datae("clone", origin, f"local-{size}", cwd=root)
            repo = fstore.open(os.path.join(origin, ".datae"))
            with repo.transaction("main", message="new", author="bench") as tx:
                fstore.add_many(tx, [(None, IRI(f"urn:new{i}"), IRI("urn:p"), i) for i in range(args.changes)])
            repo.close()
            fetch, fetch_rss = datae("--repo", f"clone-{size}", "fetch", cwd=root)
            print(f"{size:>9,} {args.commits:>8} {os.path.getsize(data) / 1e6:>7.1f} {copy:>7.2f} {local:>14.2f} {clone:>8.2f} "
                  f"{clone / copy:>11.1f} {clone_rss:>8} MB {fetch:>8.2f} {fetch_rss:>7} MB")
        print("targets: clone <= 2x the copy (over HTTP); fetch of one commit flat in the store's size; RSS flat")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000])
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--changes", type=int, default=1000)
    parser.add_argument("--dir", default=None)
    bench(parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
