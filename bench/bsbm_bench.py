"""The Berlin SPARQL Benchmark's explore mix (BSBM V3, issue 27): datae in-process against
pyoxigraph in-process, and ``datae serve`` against Oxigraph's server, on the benchmark's
own data and query mixes.

    python -m bench.bsbm_bench                                 # 1M triples (-pc 2785)
    python -m bench.bsbm_bench --scales 1m,10m --seconds 120   # and 10M (-pc 28480)
    python -m bench.bsbm_bench --products 100 --runs 20        # any product count

What runs, in order, for each scale:

1. **The generator and the test driver's parameter pool**, built from the Java sources
   under ``bench/bsbm`` (bsbmtools, vendored, plus two classes of ours: see its README)
   with ``javac --release 17`` into ``--workdir`` (cached by the sources' digest; the
   bench says so and stops if there is no ``javac``). The data is the generator's
   ``-s nt -pc N`` (about 352 triples a product: 1M is 2,785 products, 10M 28,480).
2. **The query mixes**: ``warmup + runs`` explore mixes (25 queries each, Q1-Q12 but Q6,
   in ``querymix.txt``'s order) with their parameters drawn by the driver's own
   ``LocalSPARQLParameterPool`` (seed ``--seed``, the driver's 808080 by default), so every
   engine gets the very texts the BSBM test driver would send.
3. **The loads**, each in a child process (its peak RSS is its own): ``datae import``
   (one commit) and pyoxigraph's ``Store.bulk_load``; wall seconds, peak RSS, bytes on
   disk. Data and stores stay in ``--workdir`` (keyed by product count) for the next run,
   with the load figures measured when they were built.
4. **The engines**: datae in-process (``query.execute`` on the head of ``main``, every
   row or triple consumed); pyoxigraph in-process (``Store.read_only``, every solution
   consumed); ``datae serve --read-only`` and ``oxigraph serve-read-only`` (on the
   pyoxigraph store), over keep-alive HTTP: SELECT with ``Accept:
   application/sparql-results+json``, DESCRIBE and CONSTRUCT with
   ``application/n-triples``, the whole body read and the status checked (200).
5. **The check**: every query of the first ``--check`` mixes on every engine; each
   answer's size (rows, or triples for DESCRIBE and CONSTRUCT) must equal pyoxigraph's.
   A difference or an error is printed loudly, with the query, before any timing.
6. **The timing**, warm: every file of both stores is read once first, so all four
   engines find the data in the page cache (``--no-preload``: not; then whichever engine
   first runs a mix reads its pages from disk, and the other one on the same files, the
   server after its in-process twin, finds them in memory). Each engine runs the
   ``--warmup`` mixes (not timed); then the ``--runs`` timed mixes are cut into
   ``--rounds`` rounds and, round after round, every engine runs the same mixes in turn
   (a busy machine slows all of them alike), each round starting with the next engine;
   each round is timed with :func:`bench.timing.timed` (garbage collected before, paused
   during). ``--seconds`` stops after the round in which the slowest engine's time passed
   it. In-process engines run one stream of mixes; each server gets ``--clients``
   threads, each taking the next whole mix from a shared counter (BSBM's ``-mt``);
   datae serve runs ``--workers`` processes (default: one a client, at most the cores).

Figures: **QMpH** (query mixes per hour: mixes x 3600 / wall seconds of the timed
rounds) per engine and, for each query, the average time (BSBM's AQET) and queries a
second of one client. Ratios are datae / peer: datae / pyoxigraph in-process, datae
serve / Oxigraph's server; for QMpH and q/s **below 1 means datae is slower**, for ms
above 1. The machine has 2 CPUs: the servers' clients are threads of this process,
competing with the server for them (with pyoxigraph too, for the GIL between solutions).
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import Callable, Iterator

import pyoxigraph as ox

import fstore
from query import execute

from .nstore_bench import machine
from .scale_bench import Load, datae_load, oxigraph_load
from .server_bench import JSON_RESULTS, Process, http_query, serve_oxigraph, start_datae
from .timing import timed

__all__ = ["SCALES", "BsbmQuery", "Mix", "Dataset", "java_missing", "compile_java", "generate", "dump_mixes",
           "build_stores", "Engine", "datae_engine", "pyoxigraph_engine", "http_engine", "answer_size",
           "check_answers", "Tally", "run_mixes", "measure", "main"]

BSBM = Path(__file__).resolve().parent / "bsbm"
VENDOR = BSBM / "vendor"  # bsbmtools' own files, unchanged (bench/bsbm/README.md)
OWN_JAVA = BSBM / "java"  # ours: the stand-ins for SSJ and the mix dumper
EXPLORE = VENDOR / "queries" / "explore"
SCALES = {"1m": 2785, "10m": 28480}  # product counts of BSBM V3's 1M and 10M datasets
SEED = 808080  # the test driver's default seed
NTRIPLES = "application/n-triples"
ENGINES = ("datae", "pyoxigraph", "datae serve", "oxigraph serve")
PEERS = {"datae": "pyoxigraph", "datae serve": "oxigraph serve"}  # each datae column and its peer


# -- Java: the generator and the parameter pool ----------------------------------------


def java_missing() -> str | None:
    """Why the Java side cannot run (no ``javac`` or ``java`` on PATH), or None."""
    missing = [tool for tool in ("javac", "java") if shutil.which(tool) is None]
    return f"no {' or '.join(missing)} on PATH (the BSBM generator is Java: install a JDK 17 or later)" if missing else None


def java_sources() -> list[Path]:
    """Every Java source the bench compiles: the vendored bsbmtools classes and ours."""
    return sorted([*(VENDOR / "src").rglob("*.java"), *OWN_JAVA.rglob("*.java")])


def compile_java(cache: Path) -> Path:
    """The classes directory of :func:`java_sources`, compiled with ``javac --release 17``
    into ``cache`` once for each digest of the sources (a later call finds it there)."""
    sources = java_sources()
    digest = hashlib.sha256()
    for source in sources:
        digest.update(str(source.relative_to(BSBM)).encode() + b"\0" + source.read_bytes())
    classes = cache / f"classes-{digest.hexdigest()[:12]}"
    if classes.is_dir():
        return classes
    cache.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=".building-", dir=cache))
    done = subprocess.run(["javac", "-nowarn", "-encoding", "UTF-8", "--release", "17", "-d", str(building),
                           *map(str, sources)], capture_output=True, text=True)
    if done.returncode:
        shutil.rmtree(building, ignore_errors=True)
        raise RuntimeError(f"javac failed:\n{done.stderr[-2000:]}")
    try:
        building.rename(classes)  # whole or not at all: a concurrent build may have won
    except OSError:
        shutil.rmtree(building, ignore_errors=True)
    return classes


def java(classes: Path, main_class: str, *args: str, cwd: Path = VENDOR) -> str:
    """Run ``main_class`` of ``classes`` with ``args`` in ``cwd``; its standard output."""
    done = subprocess.run(["java", "-cp", str(classes), main_class, *args], cwd=cwd, capture_output=True, text=True,
                          encoding="utf-8")
    if done.returncode:
        raise RuntimeError(f"{main_class} {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return done.stdout


@dataclass(frozen=True)
class Dataset:
    """A generated BSBM dataset: its N-Triples file, the test driver's data (``-dir``),
    its size and how long the generator took (None: generated by an earlier run)."""

    products: int
    ntriples: Path
    driver_data: Path
    triples: int
    seconds: float | None


def generate(classes: Path, products: int, directory: Path) -> Dataset:
    """The dataset of ``products`` products in ``directory``: generated there (``-s nt
    -pc products``) unless an earlier run left it complete (``generated.json``)."""
    marker = directory / "generated.json"
    ntriples, driver_data = directory / "data.nt", directory / "td"
    if marker.exists():
        return Dataset(products, ntriples, driver_data, json.loads(marker.read_text())["triples"], None)
    directory.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    # The generator reads its dictionaries (titlewords.txt, givennames.txt) from its cwd.
    said = java(classes, "benchmark.generator.Generator", "-s", "nt", "-pc", str(products),
                "-fn", str(ntriples.with_suffix("")), "-dir", str(driver_data))
    seconds = time.perf_counter() - start
    found = re.search(r"^(\d+) triples generated", said, re.MULTILINE)
    if not found:
        raise RuntimeError(f"the generator did not say how many triples it wrote:\n{said[-1000:]}")
    marker.write_text(json.dumps({"triples": int(found.group(1)), "seconds": seconds}))
    return Dataset(products, ntriples, driver_data, int(found.group(1)), seconds)


@dataclass(frozen=True)
class BsbmQuery:
    """One query of a mix: its BSBM number (1-12), form (select, describe, construct) and
    text with the parameters filled in."""

    number: int
    form: str
    text: str


Mix = list[BsbmQuery]


def dump_mixes(classes: Path, dataset: Dataset, mixes: int, seed: int = SEED) -> list[Mix]:
    """The first ``mixes`` explore mixes the test driver would run on ``dataset`` with
    ``seed`` (warm-up mixes first), from ``DumpQueryMixes`` (bench/bsbm/java)."""
    found: list[Mix] = [[] for _ in range(mixes)]
    out = java(classes, "benchmark.testdriver.DumpQueryMixes", str(dataset.driver_data), str(EXPLORE), str(mixes),
               str(seed))
    for line in out.splitlines():
        entry = json.loads(line)
        found[entry["mix"]].append(BsbmQuery(entry["query"], entry["form"], entry["text"]))
    return found


# -- stores ----------------------------------------------------------------------------


def cached_load(marker: Path, store: Path, build: Callable[[], Load], made_by: str) -> tuple[Load, bool]:
    """The load that built ``store``: measured now by ``build`` (a half-built store from an
    interrupted run, or one ``made_by`` another format or version, is removed first), or
    read from ``marker`` if an earlier run of the same ``made_by`` built it; and whether
    it was built now."""
    if marker.exists():
        figures = json.loads(marker.read_text())
        if figures.get("made by") == made_by:
            return Load(figures["seconds"], figures["peak_rss"], figures["disk"]), False
    shutil.rmtree(store, ignore_errors=True)
    done = build()
    marker.write_text(json.dumps({"seconds": done.seconds, "peak_rss": done.peak_rss, "disk": done.disk,
                                  "made by": made_by}))
    return done, True


def build_stores(dataset: Dataset, directory: Path) -> dict[str, tuple[Load, bool]]:
    """datae's store (``datae import``) and pyoxigraph's (``bulk_load``) of ``dataset`` in
    ``directory``, each loaded in a child process: engine -> (load, built now)."""
    nt = str(dataset.ntriples)
    return {
        "datae": cached_load(directory / "datae.json", directory / "datae",
                             lambda: datae_load(nt, str(directory / "datae"), "BSBM dataset"),
                             f"datae format {fstore.FORMAT_VERSION}"),
        "pyoxigraph": cached_load(directory / "pyoxigraph.json", directory / "pyoxigraph",
                                  lambda: oxigraph_load(nt, str(directory / "pyoxigraph")),
                                  f"pyoxigraph {ox.__version__}"),
    }


# -- engines ---------------------------------------------------------------------------

Run = Callable[[BsbmQuery], int]  # runs a query, reads its whole answer: the answer's size


@dataclass
class Engine:
    """An engine under test: ``connect()`` gives one client (a :data:`Run`) for one
    thread; ``clients`` threads run mixes at once."""

    name: str
    connect: Callable[[], Run]
    clients: int = 1


def datae_engine(view: object) -> Engine:
    """datae in-process: ``query.execute`` on ``view``, every row or triple consumed."""
    return Engine("datae", lambda: lambda q: sum(1 for _ in execute(view, q.text)))


def pyoxigraph_engine(store: ox.Store) -> Engine:
    """pyoxigraph in-process: ``Store.query``, every solution or triple consumed."""
    return Engine("pyoxigraph", lambda: lambda q: sum(1 for _ in store.query(q.text)))  # type: ignore[union-attr]


def answer_size(form: str, body: bytes) -> int:
    """Rows of a SPARQL JSON answer (``form`` select), else triples of an N-Triples one.

    >>> answer_size("select", b'{"head": {"vars": ["x"]}, "results": {"bindings": [{}, {}]}}')
    2
    >>> answer_size("describe", b"<a> <b> <c> .\\n# a comment\\n\\n<a> <b> <d> .\\n")
    2
    """
    if form == "select":
        return len(json.loads(body)["results"]["bindings"])
    return sum(1 for line in body.splitlines() if line.strip() and not line.lstrip().startswith(b"#"))


def http_engine(name: str, server: Process, clients: int) -> Engine:
    """A server over HTTP: each client its own keep-alive connection; an answer that is
    not a 200 raises (with the start of its body)."""

    def connect() -> Run:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)

        def run(query: BsbmQuery) -> int:
            status, body = http_query(connection, server.path, query.text,
                                      JSON_RESULTS if query.form == "select" else NTRIPLES)
            if status != 200:
                raise RuntimeError(f"HTTP {status}: {body[:300]!r}")
            return answer_size(query.form, body)

        return run

    return Engine(name, connect, clients)


# -- the check -------------------------------------------------------------------------


def check_answers(engines: list[Engine], mixes: list[Mix], reference: str = "pyoxigraph") -> list[str]:
    """Every query of ``mixes`` on every engine: each answer's size against the
    ``reference`` engine's. The differences and errors, each with its query (empty: all
    agree)."""
    runs = {engine.name: engine.connect() for engine in engines}
    problems = []
    for m, mix in enumerate(mixes):
        for pos, query in enumerate(mix):
            sizes = {name: attempt(run, query) for name, run in runs.items()}
            if len(set(sizes.values())) > 1:
                said = ", ".join(f"{name} {size}" for name, size in sizes.items())
                problems.append(f"Q{query.number} (mix {m}, position {pos}, {query.form}): {said} "
                                f"(reference {reference})\n{query.text.strip()}")
    return problems


def attempt(run: Run, query: BsbmQuery) -> int | str:
    """``run(query)``, or the error it raised, as text."""
    try:
        return run(query)
    except Exception as exc:  # noqa: BLE001 - reported with the query, not fatal
        return f"{type(exc).__name__}: {str(exc)[:200]}"


# -- timing ----------------------------------------------------------------------------


@dataclass
class Tally:
    """What one engine did in the timed rounds: wall seconds, whole mixes, each query's
    times by BSBM number, and failures by number (with one message each)."""

    seconds: float = 0.0
    mixes: int = 0
    times: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    failures: Counter = field(default_factory=Counter)
    errors: dict[int, str] = field(default_factory=dict)

    def qmph(self) -> float:
        return self.mixes * 3600 / self.seconds if self.seconds else 0.0

    def average_ms(self, number: int) -> float | None:
        times = self.times.get(number)
        return sum(times) * 1000 / len(times) if times else None


def run_mixes(engine: Engine, mixes: list[Mix]) -> Tally:
    """``mixes`` on ``engine``: its ``clients`` threads each take the next whole mix from
    a shared counter until none is left. Each query's time, and the failures (a failed
    query is counted and the mix goes on)."""
    tally, lock, next_mix = Tally(), threading.Lock(), count()

    def client() -> None:
        run, times, failures, errors = engine.connect(), defaultdict(list), Counter(), {}
        while (i := next(next_mix)) < len(mixes):  # next() on a count is atomic under the GIL
            for query in mixes[i]:
                start = time.perf_counter()
                try:
                    run(query)
                except Exception as exc:  # noqa: BLE001 - counted and shown, not fatal
                    failures[query.number] += 1
                    errors.setdefault(query.number, f"{type(exc).__name__}: {str(exc)[:200]}")
                times[query.number].append(time.perf_counter() - start)
        with lock:
            for number, seen in times.items():
                tally.times[number] += seen
            tally.failures.update(failures)
            tally.errors.update(errors)

    threads = [threading.Thread(target=client) for _ in range(engine.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    tally.mixes = len(mixes)
    return tally


def rounds_of(mixes: list[Mix], rounds: int) -> Iterator[list[Mix]]:
    """``mixes`` cut into ``rounds`` consecutive slices of (nearly) equal length.

    >>> [len(r) for r in rounds_of([[]] * 10, 3)]
    [4, 3, 3]
    """
    rounds = max(1, min(rounds, len(mixes)))
    size, extra = divmod(len(mixes), rounds)
    start = 0
    for r in range(rounds):
        end = start + size + (r < extra)
        yield mixes[start:end]
        start = end


def measure(engines: list[Engine], warmup: list[Mix], timed_mixes: list[Mix], rounds: int,
            seconds: float | None) -> dict[str, Tally]:
    """Each engine's warm-up (not timed), then the timed rounds, the engines taking turns
    on the same mixes, each round starting one engine later than the one before (the
    first to run a mix reads its data first); after the round in which the slowest engine
    passed ``seconds``, no more. Engine name -> :class:`Tally`."""
    for engine in engines:
        run_mixes(engine, warmup)
    tallies = {engine.name: Tally() for engine in engines}
    for r, mixes in enumerate(rounds_of(timed_mixes, rounds)):
        for engine in engines[r % len(engines):] + engines[:r % len(engines)]:
            wall, done = timed(lambda: run_mixes(engine, mixes))
            merge(tallies[engine.name], done, wall)
        if seconds is not None and max(t.seconds for t in tallies.values()) >= seconds:
            break
    return tallies


def preload(*stores: Path) -> tuple[int, float]:
    """Read every file of ``stores`` once, so that the engines find them in the page
    cache: bytes read and seconds. Without it, whichever engine first runs a mix reads its
    pages from disk and the next engine on the same files (datae serve after datae,
    Oxigraph's server after pyoxigraph) finds them in memory."""
    start, read = time.perf_counter(), 0
    for store in stores:
        for path in sorted(p for p in store.rglob("*") if p.is_file()):
            with open(path, "rb", buffering=0) as stream:
                while chunk := stream.read(1 << 23):
                    read += len(chunk)
    return read, time.perf_counter() - start


def merge(total: Tally, part: Tally, wall: float) -> None:
    """Add one round (``part``, which took ``wall`` seconds) to ``total``."""
    total.seconds += wall
    total.mixes += part.mixes
    for number, times in part.times.items():
        total.times[number] += times
    total.failures.update(part.failures)
    for number, error in part.errors.items():
        total.errors.setdefault(number, error)


# -- report ----------------------------------------------------------------------------


def _mb(size: float) -> str:
    return f"{size / 1e6:,.0f} MB"


def ratio(mine: float | None, theirs: float | None) -> str:
    """``mine / theirs`` as a column, or a dash without both figures."""
    return f"{mine / theirs:>7.2f}" if mine is not None and theirs else f"{'-':>7}"


def print_loads(loads: dict[str, tuple[Load, bool]]) -> None:
    """The two loads and their ratios (noting figures measured by an earlier run)."""
    print(f"{'load':<24} {'seconds':>9} {'peak RSS':>10} {'disk':>10}")
    for engine, label in (("datae", "datae import"), ("pyoxigraph", "pyoxigraph bulk_load")):
        load, now = loads[engine]
        note = "" if now else "  (store built by an earlier run: its figures then)"
        print(f"{label:<24} {load.seconds:>7.2f} s {_mb(load.peak_rss):>10} {_mb(load.disk):>10}{note}")
    (mine, _), (theirs, _) = loads["datae"], loads["pyoxigraph"]
    print(f"{'ratio datae / pyoxigraph':<24} {mine.seconds / theirs.seconds:>8.2f}x "
          f"{mine.peak_rss / theirs.peak_rss:>9.2f}x {mine.disk / theirs.disk:>9.2f}x")


QueryFigure = Callable[[Tally, int], float | None]  # one engine's figure for one query number
PER_QUERY: list[tuple[str, QueryFigure]] = [
    ("average ms a query (BSBM's AQET)", lambda tally, number: tally.average_ms(number)),
    ("queries a second, one client", lambda tally, number: 1000 / ms if (ms := tally.average_ms(number)) else None),
]


def print_tallies(tallies: dict[str, Tally], forms: dict[int, str]) -> None:
    """QMpH per engine with the ratios, each query's average ms and q/s (queries by BSBM
    number, ``forms`` giving each one's form), then any failures, loudly."""
    names = [name for name in ENGINES if name in tallies]
    print(f"{'engine':<16} {'mixes':>6} {'seconds':>9} {'QMpH':>10} {'ratio':>7}")
    for name in names:
        tally, peer = tallies[name], tallies.get(PEERS.get(name, ""))
        shown = f"{ratio(tally.qmph(), peer.qmph() if peer else None)}  ({name} / {PEERS[name]})" if name in PEERS else ""
        print(f"{name:<16} {tally.mixes:>6} {tally.seconds:>9.1f} {tally.qmph():>10,.0f} {shown}")
    for title, figure in PER_QUERY:
        print_per_query(title, figure, tallies, names, forms)
    for name in names:
        for number, failed in sorted(tallies[name].failures.items()):
            print(f"!!! {name}: Q{number} FAILED {failed} times, e.g. {tallies[name].errors[number]}")


def print_per_query(title: str, figure: QueryFigure, tallies: dict[str, Tally], names: list[str],
                    forms: dict[int, str]) -> None:
    """One table: ``figure`` of each query for each engine, and after each peer's column
    the datae engine's figure / the peer's."""
    ours = {peer: mine for mine, peer in PEERS.items()}
    header = "".join(f" {name:>14}" + (f" {'ratio':>7}" if name in ours else "") for name in names)
    print(f"\n{title}; ratio = datae / peer\n{'query':<6} {'form':<10} {'count':>6}{header}")
    for number, form in sorted(forms.items()):
        cells = ""
        for name in names:
            value = figure(tallies[name], number)
            cells += f" {value:>14.2f}" if value is not None else f" {'-':>14}"
            if name in ours:
                mine = tallies.get(ours[name])
                cells += f" {ratio(figure(mine, number) if mine else None, value)}"
        print(f"Q{number:<5} {form:<10} {len(tallies[names[0]].times.get(number, [])):>6}{cells}")


# -- the run ---------------------------------------------------------------------------


def start_servers(store: Path, pyoxigraph_store: Path, workers: int = 1) -> tuple[Process, Process | None, str]:
    """``datae serve --read-only --workers N`` on datae's store and ``oxigraph
    serve-read-only`` on pyoxigraph's (None and why not, if it cannot run)."""
    datae = start_datae(str(store), workers)
    oxigraph, why = serve_oxigraph(str(pyoxigraph_store))
    return datae, oxigraph, why


def run_scale(products: int, classes: Path, args: argparse.Namespace) -> None:
    """Generate, load, check and time one scale; print its figures."""
    directory = Path(args.workdir) / f"pc{products}"
    dataset = generate(classes, products, directory)
    made = f"generated in {dataset.seconds:.1f} s" if dataset.seconds is not None else "generated by an earlier run"
    print(f"\n== BSBM explore, {products:,} products: {dataset.triples:,} triples ({made}; {directory})", flush=True)
    mixes = dump_mixes(classes, dataset, max(args.warmup + args.runs, args.check), args.seed)
    loads = build_stores(dataset, directory)
    print_loads(loads)
    repo = fstore.open(str(directory / "datae"))
    store = ox.Store.read_only(str(directory / "pyoxigraph"))
    workers = args.workers or min(args.clients, os.cpu_count() or 1)
    datae, oxigraph, why = start_servers(directory / "datae", directory / "pyoxigraph", workers)
    try:
        engines = [datae_engine(repo.at("main")), pyoxigraph_engine(store), http_engine("datae serve", datae, args.clients)]
        if oxigraph is None:
            print(f"oxigraph serve skipped: {why}")
        else:
            engines.append(http_engine("oxigraph serve", oxigraph, args.clients))
        report_check(engines, mixes[:args.check])
        if not args.no_preload:
            read, took = preload(directory / "datae", directory / "pyoxigraph")
            print(f"page cache: both stores' files read first ({read / 1e9:.2f} GB in {took:.1f} s)")
        print(f"timing: {args.warmup} warm-up mixes, then up to {args.runs} in {args.rounds} rounds"
              f"{f', stopping after {args.seconds:g} s' if args.seconds else ''}; servers: {args.clients} client(s); "
              f"datae serve workers: {workers}; seed {args.seed}", flush=True)
        tallies = measure(engines, mixes[:args.warmup], mixes[args.warmup:args.warmup + args.runs], args.rounds,
                          args.seconds)
        print_tallies(tallies, {query.number: query.form for query in mixes[0]})
        datae.sample()  # each worker's peak RSS, if there are several
        peaks = f"datae serve {datae.memory()}" + (f", oxigraph serve {oxigraph.peak_rss_mb()} MB" if oxigraph else "")
        print(f"peak RSS (VmHWM) of the servers: {peaks}")
    finally:
        for server in (datae, oxigraph):
            if server:
                server.stop()
        repo.close()
        del store


def report_check(engines: list[Engine], mixes: list[Mix]) -> None:
    """Run the check and print its verdict: one line, or every difference loudly."""
    problems = check_answers(engines, mixes)
    queries = sum(len(mix) for mix in mixes)
    if not problems:
        print(f"check: {queries} queries ({len(mixes)} mixes), every engine's answer sizes equal pyoxigraph's")
    for problem in problems:
        print(f"!!! ANSWERS DIFFER: {problem}")
    if problems:
        print(f"!!! {len(problems)} of {queries} checked queries differ (above); the timings below still run")


def products_of(args: argparse.Namespace) -> list[int]:
    """The product counts to run: ``--products``, else those of ``--scales``."""
    if args.products:
        return [int(p) for p in args.products.split(",")]
    unknown = [scale for scale in args.scales.split(",") if scale not in SCALES]
    if unknown:
        raise SystemExit(f"unknown scale(s) {', '.join(unknown)}; known: {', '.join(SCALES)} (or --products N)")
    return [SCALES[scale] for scale in args.scales.split(",")]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="BSBM explore mix: datae vs pyoxigraph, datae serve vs Oxigraph's server")
    parser.add_argument("--scales", default="1m", help=f"comma-separated, of {', '.join(SCALES)} (default 1m)")
    parser.add_argument("--products", default="", help="comma-separated product counts (instead of --scales)")
    parser.add_argument("--warmup", type=int, default=50, help="warm-up mixes per engine, not timed (default 50, as BSBM)")
    parser.add_argument("--runs", type=int, default=500, help="timed mixes per engine (default 500, as BSBM)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds the engines take turns in (default 5)")
    parser.add_argument("--seconds", type=float, default=None,
                        help="stop after the round in which the slowest engine passed this (default: no cap)")
    parser.add_argument("--clients", type=int, default=1, help="client threads per server (default 1)")
    parser.add_argument("--workers", type=int, default=0,
                        help="datae serve's worker processes (default: the clients, at most the cores)")
    parser.add_argument("--check", type=int, default=2, help="mixes whose answers are checked first (default 2)")
    parser.add_argument("--no-preload", action="store_true",
                        help="do not read the stores' files into the page cache before timing")
    parser.add_argument("--seed", type=int, default=SEED, help=f"the parameter pool's seed (default {SEED})")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "datae-bsbm-bench"),
                        help="classes, data and stores, kept for the next run (default: %(default)s)")
    args = parser.parse_args(argv)
    if min(args.runs, args.rounds, args.clients) < 1 or min(args.warmup, args.check) < 0:
        parser.error("--runs, --rounds and --clients take 1 or more; --warmup and --check 0 or more")
    print(f"# BSBM explore mix: datae vs pyoxigraph in-process, datae serve vs Oxigraph's server; {machine()}")
    why = java_missing()
    if why:
        print(f"bsbm skipped: {why}")
        return
    classes = compile_java(Path(args.workdir))
    for products in products_of(args):
        run_scale(products, classes, args)


if __name__ == "__main__":
    main()
