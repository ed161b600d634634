"""Server benchmark (issue 14): ``/sparql`` of ``datae serve`` under concurrent clients,
against pyoxigraph's in-process query and Oxigraph's own HTTP server on the same data.

    python -m bench.server_bench                                   # 100k quads, 8 clients, 5 s
    python -m bench.server_bench --quads 100000 300000 --seconds 5 # two sizes: growth
    python -m bench.server_bench --workers 1 2                     # datae serve with 1 and with 2 workers
    python -m bench.server_bench --workers 1 2 --rounds 3          # each figure the median of 3 turns

For each size N: the social graph of ``bench/query_bench.py`` (``social_graph``) goes into
a datae store (``fstore.add_many``, one commit) and a pyoxigraph on-disk ``Store``; the
same quads, dumped as N-Quads, are loaded with ``oxigraph load`` for the ``oxigraph``
server CLI (PyPI package ``oxigraph``; the column is skipped, saying why, if it cannot
run). Loading is not timed. Then, for each query of ``query_bench.QUERIES`` and for the
mix of all of them (each client cycles through the set), ``--clients`` threads run
queries back to back for ``--seconds`` and the throughput (queries a second, all clients
together) is printed (with ``--rounds N``, the median of N such runs, the engines taking
turns, so that a machine shared with other work loads each engine alike) for:

* **datae**: ``datae serve --workers N`` (one column per N of ``--workers``, default 1;
  the servers run side by side on the same store and take turns); one keep-alive
  ``http.client`` connection per thread, ``GET /sparql?query=...`` with ``Accept:
  application/sparql-results+json``, the whole answer read, every status checked (200);
* **pyoxigraph**: ``store.query(q)`` in-process from the same number of threads, every
  solution consumed (no HTTP, no serialisation: the floor);
* **oxigraph server**: ``oxigraph serve-read-only``, the same client code as datae's
  against its ``/query``.

Before timing, each query's row count through datae's server is checked against
pyoxigraph's (a mismatch is printed loudly). After the runs, the peak RSS (``VmHWM``) of
each server process is printed; for ``datae serve --workers N`` each worker's (the
parent, a supervisor, apart), with its peak anonymous memory (``RssAnon``, sampled every
0.2 s): the rest of a worker's RSS is the store file's pages, mapped by every worker and
held once in the page cache. The ratios are datae q/s / peer q/s: **>= 1 means datae
is as fast or faster**. The clients are Python threads in this process: on a small
machine they compete with the servers for CPU (and with pyoxigraph for the GIL between
solutions), so the figures are a lower bound for every column alike; on 2 cores, two
workers share them with the clients.

Cost growth: a query's cost is the cost of the query itself (see ``query_bench``: the
star join, filter and OPTIONAL grow with the rows they match, the chain join and the
aggregate with N) plus, over HTTP, a per-request cost (parsing, planning, the request
and serialisation of the result: O(rows)); so q/s falls with N as the queries' results
and scans grow, and concurrency helps only as far as the server's CPUs (datae's query
engine runs in Python threads: the GIL serialises those of one worker process, so more
cores need more workers).
"""

from __future__ import annotations

import argparse
import gc
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from statistics import median
from typing import IO, Callable
from urllib.parse import quote

import pyoxigraph as ox

import fstore

from .nstore_bench import machine
from .query_bench import QUERIES, ox_quad, social_graph

JSON_RESULTS = "application/sparql-results+json"
MIX = "mix"


# -- the engines ------------------------------------------------------------------------


def build_stores(size: int, workdir: str) -> tuple[str, ox.Store, int]:
    """The datae store (its directory) and the pyoxigraph store holding the same
    ``size`` generated quads (one commit for datae), and the number of quads."""
    quads = list(social_graph(size))
    path = os.path.join(workdir, "datae")
    repo = fstore.open(path)
    with repo.transaction("main", message="social graph", author="bench") as tx:
        fstore.add_many(tx, quads)
    repo.close()
    store = ox.Store(os.path.join(workdir, "pyoxigraph"))
    store.bulk_extend(ox_quad(q) for q in quads)
    store.flush()
    count = len(quads)
    del quads
    gc.collect()
    return path, store, count


class Process:
    """A server in a process of its own, listening on ``127.0.0.1:port``; with workers,
    its worker processes' memory is sampled (:meth:`sample`)."""

    def __init__(self, argv: list[str], port: int, path: str) -> None:
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.port, self.path = port, path
        self.anon_peaks: dict[int, int] = {}  # worker pid -> peak RssAnon seen, kB
        self.hwm: dict[int, int] = {}  # worker pid -> VmHWM last seen, kB

    def peak_rss_mb(self) -> int:
        """The process's peak resident set (``VmHWM``), in MB."""
        return _status(self.process.pid, "VmHWM:") // 1024

    def workers(self) -> list[int]:
        """The worker processes of ``datae serve --workers N`` (N > 1): the children it
        spawned (not multiprocessing's resource tracker)."""
        found = []
        for task in os.listdir(f"/proc/{self.process.pid}/task"):
            try:
                with open(f"/proc/{self.process.pid}/task/{task}/children") as children:
                    found += [int(pid) for pid in children.read().split()]
            except OSError:
                pass
        return [pid for pid in found if b"spawn_main" in _cmdline(pid)]

    def sample(self) -> None:
        """Note each worker's resident anonymous memory and peak RSS now."""
        for pid in self.workers():
            anon, hwm = _status(pid, "RssAnon:"), _status(pid, "VmHWM:")
            if hwm:
                self.anon_peaks[pid] = max(self.anon_peaks.get(pid, 0), anon)
                self.hwm[pid] = hwm

    def memory(self) -> str:
        """The peak RSS of the server, or of each worker and of the parent."""
        if not self.hwm:
            return f"{self.peak_rss_mb()} MB"
        workers = ", ".join(f"{self.hwm[pid] // 1024} MB (anonymous {self.anon_peaks[pid] // 1024} MB)"
                            for pid in sorted(self.hwm))
        return f"workers {workers}; supervisor {self.peak_rss_mb()} MB"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()


def _status(pid: int, field: str) -> int:
    """A ``kB`` field of ``/proc/PID/status`` (0 if the process is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            return int(next(line for line in status if line.startswith(field)).split()[1])
    except (OSError, StopIteration):
        return 0


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read()
    except OSError:
        return b""


def sampling(servers: list[Process], stop: threading.Event) -> None:
    """Sample the servers' workers every 0.2 s until ``stop``."""
    while not stop.wait(0.2):
        for server in servers:
            server.sample()


def start_datae(store: str, workers: int = 1) -> Process:
    """``datae --repo STORE serve --port 0 --workers N``; the port is read from its first
    line (printed once every worker serves)."""
    argv = [sys.executable, "-m", "datae", "--repo", store, "serve", "--port", "0", "--read-only", "--workers",
            str(workers)]
    server = Process(argv, 0, "/sparql")
    line = server.process.stdout.readline().decode()  # type: ignore[union-attr]
    if "http://" not in line:
        server.stop()
        raise RuntimeError(f"datae serve did not start: {line!r}")
    server.port = int(line.split()[2].rsplit(":", 1)[1])
    # uvicorn writes an access-log line per request to stdout: drain the pipe, or the
    # server blocks once its buffer (64 KiB, ~700 requests) is full.
    threading.Thread(target=drain, args=(server.process.stdout,), daemon=True).start()
    wait_ready(server)
    return server


def drain(stream: IO[bytes]) -> None:
    """Read ``stream`` to its end, dropping what it says."""
    while stream.read(1 << 16):
        pass


def free_port() -> int:
    """A TCP port free on 127.0.0.1 (for Oxigraph's server, which cannot pick one)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_oxigraph(store: ox.Store, workdir: str) -> tuple[Process | None, str]:
    """Oxigraph's server on a copy of ``store`` (dumped as N-Quads, ``oxigraph load``ed),
    or None and why not."""
    binary = oxigraph_command()
    if binary is None:
        return None, NO_OXIGRAPH
    dump, location = os.path.join(workdir, "data.nq"), os.path.join(workdir, "oxigraph-server")
    store.dump(dump, ox.RdfFormat.N_QUADS)
    loaded = subprocess.run([binary, "load", "--location", location, "--file", dump], capture_output=True, text=True)
    if loaded.returncode:
        return None, f"oxigraph load failed: {loaded.stderr.strip()[-300:]}"
    return serve_oxigraph(location)


NO_OXIGRAPH = "no oxigraph command (pip install oxigraph)"


def oxigraph_command() -> str | None:
    """The ``oxigraph`` server CLI (on PATH or beside this Python), or None."""
    binary = shutil.which("oxigraph") or os.path.join(os.path.dirname(sys.executable), "oxigraph")
    return binary if os.path.exists(binary) else None


def serve_oxigraph(location: str) -> tuple[Process | None, str]:
    """``oxigraph serve-read-only`` on the store at ``location`` (an Oxigraph or pyoxigraph
    store directory), once it answers; or None and why not."""
    binary = oxigraph_command()
    if binary is None:
        return None, NO_OXIGRAPH
    port = free_port()
    server = Process([binary, "serve-read-only", "--location", location, "--bind", f"127.0.0.1:{port}"], port, "/query")
    try:
        wait_ready(server)
    except RuntimeError as exc:
        server.stop()
        return None, str(exc)
    return server, ""


def wait_ready(server: Process) -> None:
    """Until the server answers an ASK (or fails to start)."""
    for _ in range(400):
        if server.process.poll() is not None:
            raise RuntimeError(f"server exited with status {server.process.returncode}")
        try:
            if http_query(http.client.HTTPConnection("127.0.0.1", server.port, timeout=5), server.path, "ASK {}")[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"nothing answers on port {server.port}")


def http_query(connection: http.client.HTTPConnection, path: str, query: str,
               accept: str = JSON_RESULTS) -> tuple[int, bytes]:
    """One ``GET path?query=...`` on a kept-alive connection, asking for ``accept``:
    (status, the whole body)."""
    connection.request("GET", f"{path}?query={quote(query)}", headers={"Accept": accept})
    response = connection.getresponse()
    return response.status, response.read()


def http_rows(server: Process, query: str) -> int:
    """The number of rows of ``query``'s JSON answer from ``server`` (-1 if not 200)."""
    status, body = http_query(http.client.HTTPConnection("127.0.0.1", server.port, timeout=120), server.path, query)
    return len(json.loads(body)["results"]["bindings"]) if status == 200 else -1


# -- load generation --------------------------------------------------------------------

Client = Callable[[str], int]  # runs one query, returns its HTTP status (200 in-process)


def http_client(server: Process) -> Callable[[], Client]:
    """A factory of clients, each with its own keep-alive connection to ``server``."""

    def make() -> Client:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        return lambda query: http_query(connection, server.path, query)[0]

    return make


def in_process_client(store: ox.Store) -> Callable[[], Client]:
    """A factory of clients querying ``store`` in-process, consuming every solution."""

    def run(query: str) -> int:
        for _ in store.query(query):  # type: ignore[union-attr]
            pass
        return 200

    return lambda: run


def throughput(make_client: Callable[[], Client], queries: list[str], clients: int, seconds: float) -> tuple[float, Counter]:
    """Queries a second of ``clients`` threads, each running ``queries`` in turn (from its
    own offset) back to back for ``seconds``; and the statuses seen (an exception's name
    for a failed request: that client stops)."""
    barrier = threading.Barrier(clients + 1)
    statuses: Counter = Counter()
    lock = threading.Lock()
    deadline = [0.0]

    def work(offset: int) -> None:
        client, seen = make_client(), Counter()
        barrier.wait()
        i = offset
        while time.perf_counter() < deadline[0]:
            try:
                seen[client(queries[i % len(queries)])] += 1
            except Exception as exc:  # noqa: BLE001 - counted and shown, not fatal
                seen[type(exc).__name__] += 1
                break
            i += 1
        with lock:
            statuses.update(seen)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    deadline[0] = time.perf_counter() + seconds
    start = time.perf_counter()
    barrier.wait()
    for thread in threads:
        thread.join()
    return sum(statuses.values()) / (time.perf_counter() - start), statuses


# -- the run ----------------------------------------------------------------------------


def check_rows(datae: Process, store: ox.Store) -> None:
    """Each query's row count through datae's server against pyoxigraph's."""
    for label, text in QUERIES.items():
        mine, theirs = http_rows(datae, text), sum(1 for _ in store.query(text))  # type: ignore[union-attr]
        if mine != theirs:
            print(f"!!! ROW COUNTS DIFFER for {label}: datae {mine}, pyoxigraph {theirs}")


def rate(make_client: Callable[[], Client], queries: list[str], args: argparse.Namespace, name: str) -> float:
    """``throughput``, complaining loudly about any answer that is not a 200."""
    qps, statuses = throughput(make_client, queries, args.clients, args.seconds)
    if set(statuses) - {200}:
        print(f"!!! {name}: statuses {dict(statuses)}")
    return qps


def ratio(mine: float, theirs: float | None) -> str:
    """``mine / theirs`` as a column, or a dash without a peer figure."""
    return f"{mine / theirs:>7.2f}x" if theirs else f"{'-':>8}"


def run_size(size: int, args: argparse.Namespace) -> None:
    """Build both stores at ``size``, start the servers, print the table, clean up."""
    workdir = tempfile.mkdtemp(prefix="datae-server-bench-")
    servers: list[Process] = []
    oxigraph = None
    stop_sampling = threading.Event()
    try:
        start = time.perf_counter()
        path, store, count = build_stores(size, workdir)
        oxigraph, why = start_oxigraph(store, workdir)
        datae = {workers: start_datae(path, workers) for workers in args.workers}
        servers = list(datae.values())
        threading.Thread(target=sampling, args=(servers, stop_sampling), daemon=True).start()
        print(f"\n{count:,} quads, {args.clients} clients, {args.seconds:g} s a query "
              f"(stores built in {time.perf_counter() - start:.1f} s, not timed)")
        if oxigraph is None:
            print(f"oxigraph server skipped: {why}")
        for server in servers:
            check_rows(server, store)
        one = len(datae) == 1  # the columns of one datae server are named as before
        heads = "".join(f" {'datae q/s' if one else f'datae {workers}w':>10}" for workers in datae)
        ratios = "".join(f" {'d/pyox' if one else f'{workers}w/pyox':>8} {'d/oxsrv' if one else f'{workers}w/oxsrv':>8}"
                         for workers in datae)
        print(f"{'query':<12}{heads} {'pyoxigraph':>11} {'ox server':>10}{ratios}")
        workloads = {label: [text] for label, text in QUERIES.items()} | {MIX: list(QUERIES.values())}
        for label, queries in workloads.items():
            runs: dict[object, list[float]] = {}
            for _ in range(args.rounds):  # the engines take turns, each round: they share the machine's moods
                for workers, server in datae.items():
                    runs.setdefault(workers, []).append(rate(http_client(server), queries, args,
                                                             f"datae {workers}w {label}"))
                runs.setdefault("pyoxigraph", []).append(rate(in_process_client(store), queries, args,
                                                              f"pyoxigraph {label}"))
                if oxigraph:
                    runs.setdefault("oxigraph", []).append(rate(http_client(oxigraph), queries, args,
                                                                f"oxigraph {label}"))
            mine = {workers: median(runs[workers]) for workers in datae}
            local = median(runs["pyoxigraph"])
            server = median(runs["oxigraph"]) if oxigraph else None
            shown = f"{server:>10.1f}" if server else f"{'-':>10}"
            rates = "".join(f" {mine[workers]:>10.1f}" for workers in datae)
            compared = "".join(f" {ratio(mine[workers], local)} {ratio(mine[workers], server)}" for workers in datae)
            print(f"{label:<12}{rates} {local:>11.1f} {shown}{compared}", flush=True)
        stop_sampling.set()
        print("peak RSS (VmHWM) of the servers:")
        for workers, server in datae.items():
            print(f"  datae serve --workers {workers}: {server.memory()}")
        if oxigraph:
            print(f"  oxigraph serve: {oxigraph.peak_rss_mb()} MB")
        del store
    finally:
        stop_sampling.set()
        for server in (*servers, oxigraph):
            if server:
                server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="/sparql of datae serve under concurrent clients vs pyoxigraph and Oxigraph's server")
    parser.add_argument("--quads", type=int, nargs="+", default=[100_000], help="graph size(s) (default 100,000)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent client threads (default 8)")
    parser.add_argument("--seconds", type=float, default=5.0, help="run time per query and engine (default 5)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1], metavar="N",
                        help="datae serve's worker processes, one column each (default 1; e.g. --workers 1 2)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="runs of each query per engine, the engines taking turns; the median is shown (default 1)")
    args = parser.parse_args(argv)
    print(f"# server benchmark: /sparql under {args.clients} clients; {machine()}")
    for size in args.quads:
        run_size(size, args)


if __name__ == "__main__":
    main()
