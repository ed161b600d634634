"""Sync benchmark (issue 14): clone, fetch and push over HTTP (``datae serve`` on
localhost) against copying the store's file, at two store sizes; every datae command in
a child process so its peak memory (RSS) is its own.

    python -m bench.sync_bench                                     # 200k and 1M quads, 100 commits
    python -m bench.sync_bench --sizes 20000 50000 --commits 20    # quick

For each size N: a store of N generated quads (``bench/nstore_bench.py``'s ``generate``)
over ``--commits`` commits, served by ``datae serve`` in its own process. Measured:

* **copy**: ``shutil.copyfile`` of its ``data.mdb`` (the peer: what sharing a store by
  hand costs), and the same followed by an ``fsync`` (a clone makes its copy durable);
* **clone**: ``datae clone http://...`` (the server streams a consistent copy of its file)
  and ``datae clone --no-local http://...``, which fetches every commit into an empty store,
  each one checked against its id and state digest: the rate of a fetch of many commits,
  compared with clone's as quads a second;
* **fetch** of one new commit of ``--changes`` changes made on the server, and **push** of
  one such commit from the clone: their cost should not grow with N;
* peak RSS (``VmHWM`` of ``/proc/PID/status``) of each command and of the server.

Cost growth: a clone is O(file) bytes streamed; a fetch or push is O(records of the new
commits + commit ids held) (the haves are every id), so one new commit costs the same at
any N; a fetch of every commit is O(commits + records), each record re-checked and
re-written.
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

from .nstore_bench import generate, machine

# The command's own time (the interpreter's start and the loading of its modules left out:
# a peer's command would not pay them) and its peak anonymous memory (RssAnon, sampled
# every 20 ms): heap and LMDB's dirty pages, not the pages of the store file it maps, which
# the kernel may drop (VmHWM counts those too; it is printed beside). Not ru_maxrss: Linux
# carries it over fork and exec from the parent.
_MEASURED = """
import sys, threading, time
from datae.cli import main
# The modules a sync command loads (the CLI loads them lazily, in the command): loaded
# before the clock starts, as the interpreter is.
import datae.commands.remotes, datae.progress, fstore.sync.remotes, fstore.sync.http_client, fstore.tables.plugin

def status(field):
    with open("/proc/self/status") as lines:
        return int(next(line for line in lines if line.startswith(field)).split()[1])

peak = [0]
def sample():
    while True:
        peak[0] = max(peak[0], status("RssAnon:"))
        time.sleep(0.02)
threading.Thread(target=sample, daemon=True).start()
start = time.perf_counter()
code = main(sys.argv[1:])
seconds = time.perf_counter() - start
peak[0] = max(peak[0], status("RssAnon:"))
print(seconds, peak[0], status("VmHWM:"), file=sys.stderr)
sys.exit(code)
"""


def datae(*argv: str, cwd: str) -> tuple[float, int]:
    """Run ``datae ARGV`` in a child process: (seconds the command took, its peak anonymous
    memory in MB); the peak RSS with mapped file pages is kept in ``LAST_HWM``."""
    done = subprocess.run([sys.executable, "-c", _MEASURED, *argv], cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"datae {' '.join(argv)} failed: {done.stderr.strip()[-500:]}")
    seconds, anon, hwm = done.stderr.strip().splitlines()[-1].split()
    LAST_HWM[0] = int(hwm) // 1024
    return float(seconds), int(anon) // 1024


LAST_HWM = [0]


def peak_rss_mb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith("VmHWM:")).split()[1]) // 1024


def copy_seconds(source: str, target: str, *, durable: bool) -> float:
    """The peer: copy the store's file (``durable``: and fsync it, as a clone does)."""
    start = time.perf_counter()
    shutil.copyfile(source, target)
    if durable:
        descriptor = os.open(target, os.O_RDONLY)
        os.fsync(descriptor)
        os.close(descriptor)
    return time.perf_counter() - start


def build(path: str, size: int, commits: int) -> None:
    quads = generate(size)
    repo = fstore.open(os.path.join(path, ".datae"))
    step = max(1, size // commits)
    for number, start in enumerate(range(0, size, step)):
        with repo.transaction("main", message=f"part {number}", author="bench") as tx:
            fstore.add_many(tx, quads[start:start + step])
    repo.close()


def new_commit(url_or_path: str, cwd: str, changes: int, tag: str) -> None:
    """One commit of ``changes`` new quads, made by a SPARQL update through ``datae``."""
    triples = " ".join(f"<urn:{tag}{i}> <urn:p> {i} ." for i in range(changes))
    datae("--repo", url_or_path, "query", f"INSERT DATA {{ {triples} }}", cwd=cwd)


class Served:
    """``datae serve`` on the store at ``path``, in its own process."""

    def __init__(self, path: str, port: int = 0) -> None:
        # one process: its peak RSS is the server's (with --workers N, the parent's is a supervisor's)
        self.process = subprocess.Popen([sys.executable, "-m", "datae", "--repo", path, "serve", "--port", str(port),
                                         "--workers", "1"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.url = self.process.stdout.readline().decode().split()[2]
        self.port = int(self.url.rsplit(":", 1)[1])

    def stop(self) -> int:
        rss = peak_rss_mb(self.process.pid)
        self.process.terminate()
        self.process.wait()
        return rss


def bench(args: argparse.Namespace) -> None:
    print(f"# sync benchmark over HTTP (localhost); {machine()}")
    root = tempfile.mkdtemp(prefix="datae-sync-bench-", dir=args.dir)
    rows = []
    try:
        for size in args.sizes:
            origin = os.path.join(root, f"origin-{size}")
            build(origin, size, args.commits)
            data = os.path.join(origin, ".datae", "data.mdb")
            copy = copy_seconds(data, os.path.join(root, f"copy-{size}.mdb"), durable=False)
            durable = copy_seconds(data, os.path.join(root, f"durable-{size}.mdb"), durable=True)
            served = Served(origin)
            clone, clone_rss = datae("clone", served.url, f"clone-{size}", cwd=root)
            every, every_rss = datae("clone", "--no-local", served.url, f"every-{size}", cwd=root)
            every_hwm = LAST_HWM[0]
            served.stop()
            new_commit(origin, root, args.changes, "fetched")
            served = Served(origin, served.port)
            fetch, fetch_rss = datae("--repo", f"clone-{size}", "fetch", cwd=root)
            datae("--repo", f"clone-{size}", "merge", "origin/main", cwd=root)  # a fast-forward
            new_commit(f"clone-{size}", root, args.changes, "pushed")
            push, push_rss = datae("--repo", f"clone-{size}", "push", cwd=root)
            server_rss = served.stop()
            rows.append((size, os.path.getsize(data) / 1e6, copy, durable, clone, clone_rss, every, every_rss, fetch, fetch_rss,
                         push, push_rss, server_rss, every_hwm))
        print(f"{'quads':>9} {'MB':>6} {'copy s':>7} {'+fsync':>7} {'clone s':>8} {'/copy':>6} {'/+fsync':>7} {'RSS':>5} {'fetch-all s':>11} "
              f"{'rate/clone':>10} {'RSS':>5} {'fetch 1 s':>9} {'RSS':>5} {'push 1 s':>8} {'RSS':>5} {'server RSS':>10}")
        for size, mb, copy, durable, clone, clone_rss, every, every_rss, fetch, fetch_rss, push, push_rss, server_rss, every_hwm in rows:
            print(f"{size:>9,} {mb:>6.0f} {copy:>7.2f} {durable:>7.2f} {clone:>8.2f} {clone / copy:>6.1f} "
                  f"{clone / durable:>7.1f} {clone_rss:>5} {every:>11.2f} "
                  f"{clone / every:>10.3f} {every_rss:>5} {fetch:>9.2f} {fetch_rss:>5} {push:>8.2f} {push_rss:>5} "
                  f"{server_rss:>10}")
        print(f"({args.commits} commits; fetch/push: one commit of {args.changes} changes; RSS: peak anonymous memory in "
              "MB (the server's: VmHWM); rate/clone: the fetch of every commit's quads a second over clone's)")
        print("fetch-all VmHWM (with the store file's mapped pages): "
              + ", ".join(f"{row[0]:,} quads {row[-1]} MB" for row in rows))
        print("targets: clone <= 2x the copy; fetch and push of one commit flat in N; fetch-all >= 0.5x clone's rate; "
              "RSS flat")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200_000, 1_000_000])
    parser.add_argument("--commits", type=int, default=100)
    parser.add_argument("--changes", type=int, default=1000)
    parser.add_argument("--dir", default=None)
    bench(parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
