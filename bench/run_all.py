"""Run every benchmark and print one summary line per figure: bench, measure, datae,
peer, ratio. Run it on two checkouts (before and after a change) and compare the lines.

Each benchmark runs in a child process (``python -m bench.NAME ARGS``) exactly as
docs/performance.md cites it; its whole output goes to ``--log DIR`` (kept) and the
figures are read back from it. ``--quick`` runs every benchmark at a small size (a few
minutes in all on 2 cores: a check that everything runs and a rough before/after on
the same machine); without it, the sizes docs/performance.md reports (an hour or more).

The ratio is always **datae / peer** of the unit shown: for ``s`` and ``B`` above 1
means datae takes longer or stores more; for ``q/s`` and ``QMpH`` (query mixes an
hour) below 1 means datae serves fewer. A figure the parser cannot find in a bench's
output prints as ``MISSING`` (the bench's output format changed: fix its parser here),
and a bench that fails prints ``FAILED`` with its exit code; the run goes on and exits
1 at the end.

    python -m bench.run_all --quick                 # everything, small sizes
    python -m bench.run_all --quick --only load,query
    python -m bench.run_all --list                  # the commands it would run

Each benchmark's parser reads the lines it prints:

>>> [(f.measure, f.datae, f.peer, round(f.ratio, 2)) for f in parse_read_terms(
...     "   20,000 quads  into a list              datae   0.024 s  pyoxigraph   0.010 s    2.4x")]
[('into a list, 20,000 quads', 0.024, 0.01, 2.4)]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

__all__ = ["Bench", "Figure", "BENCHES", "main"]

ROOT = Path(__file__).resolve().parents[1]  # the checkout: `-m bench.X` runs its benchmarks
NUMBER = r"([\d,]+(?:\.\d+)?)"


@dataclass(frozen=True)
class Figure:
    """One measured figure: datae's, its peer's, and datae / peer."""

    bench: str
    measure: str
    datae: float | None
    peer: float | None
    unit: str = "s"
    peer_name: str = ""

    @property
    def ratio(self) -> float | None:
        return self.datae / self.peer if self.datae is not None and self.peer else None

    def line(self) -> str:
        def shown(value: float | None, expected: bool = True) -> str:
            if value is None:
                return f"{'MISSING' if expected else '-':>9}    "
            return f"{value:>9.3f} {self.unit:<3}" if value < 1e5 else f"{value:>9,.0f} {self.unit:<3}"

        ratio = f"{self.ratio:8.2f}" if self.ratio is not None else f"{'-':>8}"
        return f"{self.bench:<25} {self.measure:<50} {shown(self.datae)} {shown(self.peer, bool(self.peer_name))} {self.peer_name:<28} {ratio}"


@dataclass(frozen=True)
class Bench:
    """A benchmark module, its arguments at the quick and the documented sizes, and the
    function that reads its figures from its output."""

    name: str
    quick: list[str]
    full: list[str]
    parse: Callable[[str], list[Figure]]

    def command(self, quick: bool, workdir: str) -> list[str]:
        args = [arg.replace("{workdir}", workdir) for arg in (self.quick if quick else self.full)]
        return [sys.executable, "-m", f"bench.{self.name}_bench", *args]


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def _find(pattern: str, text: str) -> float | None:
    """The number the last match of ``pattern`` (one group) found in ``text``."""
    found = re.findall(pattern, text, re.MULTILINE)
    return _num(found[-1]) if found else None


# -- one parser per benchmark: each reads the lines its bench prints -------------------


def parse_nstore(out: str) -> list[Figure]:
    def seconds(operation: str, engine: str) -> float | None:
        return _find(rf"^{re.escape(operation)}\s+{re.escape(engine)}\S*\s+{NUMBER} s ", out)

    cases = [("load bulk", "datae bulk_add", "pyoxigraph bulk_extend"), ("load add", "datae add", "pyoxigraph extend"),
             ("ask (present quads)", "datae ask", "pyoxigraph __contains__"),
             ("pattern (?g s ?p ?o)", "datae from_", "pyoxigraph quads_for_pattern"),
             ("pattern (?g ?s p ?o)", "datae from_", "pyoxigraph quads_for_pattern")]
    figures = [Figure("nstore", f"{operation}: {mine}", seconds(operation, mine), seconds(operation, theirs),
                      peer_name=theirs) for operation, mine, theirs in cases]
    disk = [_find(rf"^disk {engine}\s+{NUMBER} MB", out) for engine in ("datae", "pyoxigraph")]
    return figures + [Figure("nstore", "disk", *disk, unit="MB", peer_name="pyoxigraph")]


def parse_versioning(out: str) -> list[Figure]:
    def ms(label: str, engine: str) -> float | None:
        return _find(rf"^{label}\s+{engine}\s+{NUMBER} ms", out)

    return [
        Figure("versioning", "base load, one commit", ms(r"base load \([\d,]+ quads, one commit\)", "datae"),
               ms(r"base load \([\d,]+ quads, bulk_extend\)", "pyoxigraph"), "ms", "pyoxigraph bulk_extend"),
        Figure("versioning", "median commit (last 100) / apply", ms("median commit, last 100", "datae"),
               ms("median apply of the same changes, last 100", "pyoxigraph"), "ms", "pyoxigraph add/remove"),
        Figure("versioning", "200 subject patterns: first commit / head", ms("200 subject patterns at first", "datae"),
               ms("200 subject patterns at head", "datae"), "ms", "datae at the head"),
        Figure("versioning", "200 subject patterns at the head", ms("200 subject patterns at head", "datae"),
               ms(r"200 subject patterns \(head only\)", "pyoxigraph"), "ms", "pyoxigraph"),
        Figure("versioning", "predicate pattern at the head", ms("predicate pattern at head", "datae"),
               ms(r"predicate pattern \(head only\)", "pyoxigraph"), "ms", "pyoxigraph"),
    ]


def _query_rows(bench: str, out: str, prefix: str = "") -> list[Figure]:
    """The ``query  rows  datae ms  pyoxigraph ms  ratio`` lines of query_bench (the last size)."""
    found = {label: (_num(mine), _num(theirs)) for label, mine, theirs in re.findall(
        rf"^(star join|chain join|filter|optional|aggregate|path)\s+\d+\s+{NUMBER}ms\s+{NUMBER}ms", out, re.MULTILINE)}
    return [Figure(bench, prefix + label, *found.get(label, (None, None)), "ms", "pyoxigraph")
            for label in ("star join", "chain join", "filter", "optional", "aggregate", "path")]


def parse_query(out: str) -> list[Figure]:
    load = re.findall(rf"^load: datae {NUMBER} s \(one commit\), pyoxigraph {NUMBER} s", out, re.MULTILINE)
    figures = _query_rows("query", out)
    if load:
        figures.append(Figure("query", "load of the social graph", _num(load[-1][0]), _num(load[-1][1]),
                              peer_name="pyoxigraph bulk_extend"))
    else:
        figures.append(Figure("query", "load of the social graph", None, None))
    return figures


def parse_query_shapes(out: str) -> list[Figure]:
    """The ``query  rows  datae ms  pyoxigraph ms  ratio`` lines of query_shapes_bench."""
    from .query_shapes_bench import QUERIES

    found = {label: (_num(mine), _num(theirs)) for label, mine, theirs in re.findall(
        rf"^({'|'.join(QUERIES)})\s+\d+\s+{NUMBER} ms\s+{NUMBER} ms", out, re.MULTILINE)}
    return [Figure("query_shapes", label, *found.get(label, (None, None)), "ms", "pyoxigraph") for label in QUERIES]


def parse_counts(out: str) -> list[Figure]:
    """Each size's ``query  datae ms  pyoxigraph ms  ratio`` lines of counts_bench."""
    from .counts_bench import QUERIES

    figures = []
    for size, section in re.findall(r"^([\d,]+) quads\n(.*?)(?=^[\d,]+ quads\n|\Z)", out, re.MULTILINE | re.DOTALL):
        found = {label: (_num(mine), _num(theirs)) for label, mine, theirs in re.findall(
            rf"^({'|'.join(QUERIES)})\s+{NUMBER}ms\s+{NUMBER}ms", section, re.MULTILINE)}
        figures += [Figure("counts", f"{label}, {size} quads", *found.get(label, (None, None)), "ms", "pyoxigraph")
                    for label in QUERIES]
    return figures or [Figure("counts", label, None, None, "ms", "pyoxigraph") for label in QUERIES]


def parse_history(out: str) -> list[Figure]:
    def lookups(label: str) -> tuple[float | None, ...]:
        row = re.findall(rf"^[\d,]+ {label}\s+[\d,]+\s+{NUMBER} ms\s+{NUMBER} ms\s+{NUMBER} ms\s+{NUMBER} ms", out,
                         re.MULTILINE)
        return tuple(_num(value) for value in row[-1]) if row else (None, None, None, None)

    figures = []
    for label in ("subject lookups", "predicate lookups"):
        deep, final, ox, past = lookups(label)
        figures += [Figure("history", f"{label}: deep head / final state", deep, final, "ms", "final-state store"),
                    Figure("history", f"{label}: halfway / deep head", past, deep, "ms", "deep head"),
                    Figure("history", f"{label}: final state", final, ox, "ms", "pyoxigraph")]
    for label, deep, final, ox in re.findall(
            rf"^(star join|chain join|filter|optional|aggregate|path)\s+[\d,]+\s+{NUMBER} ms\s+{NUMBER} ms\s+{NUMBER} ms",
            out, re.MULTILINE):
        figures.append(Figure("history", f"query {label}: deep head / final state", _num(deep), _num(final), "ms",
                              "final-state store"))
    commits = re.findall(rf"^\s+(\d+)\s+{NUMBER} ms\s+{NUMBER} ms\s+[\d.]+x", out, re.MULTILINE)
    if commits:
        (early, early_ms, _), (late, late_ms, late_ox) = commits[0], commits[-1]
        figures += [Figure("history", f"commit cost: commit {late} / commit {early}", _num(late_ms), _num(early_ms),
                           "ms", f"commit {early}"),
                    Figure("history", f"commit cost at commit {late}", _num(late_ms), _num(late_ox), "ms", "pyoxigraph")]
    else:
        figures.append(Figure("history", "commit cost", None, None))
    return figures


def parse_schemaorg(out: str) -> list[Figure]:
    def engine(name: str) -> tuple[float | None, float | None]:
        row = re.findall(rf"^{name}: \d+ [a-z ,]+?\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}", out, re.MULTILINE)
        return (_num(row[-1][0]), _num(row[-1][1])) if row else (None, None)

    (mine_s, mine_mb), (ox_s, ox_mb) = engine("datae"), engine("pyoxigraph")
    return [Figure("schemaorg", "releases as commits / as named graphs", mine_s, ox_s, peer_name="pyoxigraph"),
            Figure("schemaorg", "disk", mine_mb, ox_mb, "MB", "pyoxigraph")]


def parse_load(out: str) -> list[Figure]:
    def row(engine: str) -> tuple[float | None, float | None]:
        found = re.findall(rf"^{re.escape(engine)}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}", out, re.MULTILINE)
        return (_num(found[-1][0]), _num(found[-1][3])) if found else (None, None)

    ox_s, ox_bytes = row("pyoxigraph")
    figures = []
    for engine in ("datae add", "datae add_many", "datae import"):
        seconds, per_quad = row(engine)
        figures.append(Figure("load", engine, seconds, ox_s, peer_name="pyoxigraph bulk_extend"))
    figures.append(Figure("load", "datae add_many", row("datae add_many")[0], row("floor, pair a key")[0],
                          peer_name="py-lmdb, a pair a key"))
    figures.append(Figure("load", "add, one quad at a time", row("datae add, each")[0], row("pyoxigraph add")[0],
                          peer_name="pyoxigraph add"))
    figures.append(Figure("load", "bytes a quad (add_many)", row("datae add_many")[1], ox_bytes, "B", "pyoxigraph"))
    return figures


def parse_tables(out: str) -> list[Figure]:
    def value(name: str) -> float | None:
        return _find(rf"^{re.escape(name)}\s+{NUMBER} (?:s|MiB)", out)

    pairs = [("CSV import", "datae CSV import", "sqlite3 CSV import", "s", "sqlite3"),
             ("store after the CSV import", "datae CSV store MiB", "sqlite3 CSV file MiB", "MiB", "sqlite3"),
             ("to_pandas", "datae to_pandas", "pyarrow parquet to_pandas", "s", "pyarrow Parquet"),
             ("to_arrow", "datae to_arrow", "pyarrow parquet read_table", "s", "pyarrow Parquet"),
             ("upsert 10% of the rows", "datae upsert 10% (write_pandas)", "sqlite3 upsert 10% (ON CONFLICT DO UPDATE)", "s",
              "sqlite3 ON CONFLICT"),
             ("insert_many", "datae import", "sqlite3 import (executemany, indexed)", "s", "sqlite3 executemany"),
             ("read every row", "datae read (python values)", "sqlite3 read (SELECT *)", "s", "sqlite3 SELECT *"),
             ("schema change (add column, commit)", "datae schema change (add column, commit)",
              "sqlite3 schema change (ADD COLUMN)", "s", "sqlite3 ALTER TABLE")]
    return [Figure("tables", label, value(mine), value(theirs), unit, peer) for label, mine, theirs, unit, peer in pairs]


def parse_tables_versions(out: str) -> list[Figure]:
    """Each measure of tables_versions_bench at its two sizes: the larger's time against
    the smaller's (a cost that follows the rows changed stays near 1)."""
    sections = re.findall(r"^--- ([\d,]+) rows\n(.*?)(?=^--- |\Z)", out, re.MULTILINE | re.DOTALL)
    found = [{name.strip(): _num(ms) for name, ms in re.findall(rf"^(\S.*?)\s+{NUMBER} ms$", body, re.MULTILINE)}
             for _, body in sections]
    if len(found) < 2:
        return [Figure("tables_versions", "measures", None, None)]
    (small, smaller), (large, larger) = (sections[0][0], found[0]), (sections[-1][0], found[-1])
    return [Figure("tables_versions", f"{name}: {large} rows / {small} rows", larger.get(name), smaller.get(name),
                   "ms", f"{small} rows") for name in smaller]


def parse_tables_shapes(out: str) -> list[Figure]:
    """The largest size's ratios (printed last)."""
    def value(name: str) -> float | None:
        return _find(rf"^{re.escape(name)}\s+{NUMBER} ", out)

    pairs = [("insert_many (text key)", "datae insert_many", "sqlite3 insert (executemany)", "sqlite3 executemany"),
             ("to_arrow (text key)", "datae to_arrow", "pyarrow read_table", "pyarrow read_table"),
             ("to_pandas (text key)", "datae to_pandas", "pyarrow read_table().to_pandas()", "pyarrow to_pandas")]
    return [Figure("tables_shapes", label, value(mine), value(theirs), "s", peer) for label, mine, theirs, peer in pairs]


def parse_tables_sparql(out: str) -> list[Figure]:
    rows = re.findall(rf"^(\S.*?)\s+datae\s+{NUMBER} ms\s+pyoxigraph\s+{NUMBER} ms", out, re.MULTILINE)
    last = {case: (_num(mine), _num(theirs)) for case, mine, theirs in rows}  # the largest size: printed last
    return [Figure("tables_sparql", case, *values, "ms", "pyoxigraph") for case, values in last.items()] \
        or [Figure("tables_sparql", "queries", None, None)]


def parse_kart(out: str) -> list[Figure]:
    def value(name: str) -> float | None:
        return _find(rf"^\s+{re.escape(name)}\s+{NUMBER} s", out)

    mine = value("datae export_kart_repo")
    figures = [Figure("kart", "export to a Kart repository", mine, value("dulwich floor"), peer_name="dulwich floor")]
    if "git fast-import" in out:  # the bench skips it when git is not installed
        figures.append(Figure("kart", "export to a Kart repository", mine, value("git fast-import"),
                              peer_name="git fast-import"))
    return figures


def parse_spark(out: str) -> list[Figure]:
    figures = []
    parts = re.split(r"^(quads|table): (?=[\d,]+ rows)", out, flags=re.MULTILINE)
    sections = dict(zip(parts[1::2], parts[2::2]))  # each section's lines, up to the next one
    for what in ("quads", "table"):
        section = sections.get(what, "")
        export = _find(rf"^\s+export_snapshot \(read \+ convert \+ write\)\s+{NUMBER} s", section)
        convert = _find(rf"^\s+convert \+ write, from Python objects\s+{NUMBER} s", section)
        floor = _find(rf"^\s+floor: pyarrow from Python lists\s+{NUMBER} s", section)
        figures += [Figure("spark", f"{what}: export_snapshot", export, floor, peer_name="pyarrow floor"),
                    Figure("spark", f"{what}: convert + write alone", convert, floor, peer_name="pyarrow floor")]
    return figures


def parse_integrity(out: str) -> list[Figure]:
    def last_ms(engine: str) -> float | None:  # median ms of the last tenth of the commits
        return _find(rf"^{re.escape(engine)}\s+[\d.]+\s+{NUMBER}\s+[\d.]+$", out)

    digest, plain, sqlite = (last_ms(engine) for engine in ("datae, state digest", "datae, digest off", "sqlite3 (WAL, FULL)"))
    figures = [Figure("integrity", "commit with / without the state digest", digest, plain, "ms", "digest off"),
               Figure("integrity", "commit (the last tenth of the run)", digest, sqlite, "ms", "sqlite3 (WAL, FULL)")]
    verify = re.findall(rf"^\s*([\d,]+)\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+\(", out, re.MULTILINE)
    for size, seconds, _, _, scan, _, peer in verify or [("?", None, None, None, None, None, None)]:
        seconds = None if seconds is None else _num(seconds)
        figures += [Figure("integrity", f"verify, {size} quads", seconds, None if scan is None else _num(scan),
                           peer_name="scan of every pair"),
                    Figure("integrity", f"verify, {size} quads", seconds, None if peer is None else _num(peer),
                           peer_name="sqlite3 integrity_check")]
    gc = _find(rf"^datae gc {NUMBER} s", out)
    vacuum = _find(rf"^sqlite3 DELETE of as many rows \+ VACUUM: {NUMBER} s", out)
    after = _find(rf"-> {NUMBER} bytes; a store that never", out)
    never = _find(rf"never had the branch: {NUMBER} bytes", out)
    return figures + [Figure("integrity", "gc after deleting a branch", gc, vacuum, peer_name="sqlite3 DELETE+VACUUM"),
                      Figure("integrity", "file after gc", after, never, "B", "a store without the branch")]


def parse_sync(out: str) -> list[Figure]:
    rows = re.findall(r"^\s*([\d,]+)\s+" + r"\s+".join([NUMBER] * 15) + r"\s*$", out, re.MULTILINE)
    if not rows:
        return [Figure("sync", "clone over HTTP", None, None)]
    size, _, copy, durable, clone, _, _, _, every, _, _, fetch, _, push, _, _ = rows[-1]
    return [Figure("sync", f"clone over HTTP, {size} quads", _num(clone), _num(durable), peer_name="cp + fsync"),
            Figure("sync", f"fetch of every commit, {size} quads", _num(every), _num(clone), peer_name="datae clone"),
            Figure("sync", f"fetch of one commit, {size} quads", _num(fetch), None, peer_name=""),
            Figure("sync", f"push of one commit, {size} quads", _num(push), None, peer_name="")]


def parse_server(out: str) -> list[Figure]:
    rows = re.findall(rf"^(star join|chain join|filter|optional|aggregate|path|mix)\s+{NUMBER}\s+{NUMBER}\s+(\S+)",
                      out, re.MULTILINE)
    last = {label: (_num(mine), _num(local), None if server == "-" else _num(server)) for label, mine, local, server in rows}
    figures = []
    for label, (mine, _, server) in last.items():
        figures.append(Figure("server", f"/sparql {label}", mine, server, "q/s", "oxigraph serve-read-only"))
    return figures or [Figure("server", "/sparql", None, None, "q/s")]


def parse_rdf_formats(out: str) -> list[Figure]:
    figures = []
    for size, table in re.findall(r"^([\d,]+) quads\n(.*?)(?=\n\n|\Z)", out, re.MULTILINE | re.DOTALL):
        for fmt, parse, ox_parse, export, ox_export in re.findall(
                rf"^(\S+)\s+{NUMBER}s\s+{NUMBER}s\s+[\d.]+x\s+{NUMBER}s\s+{NUMBER}s", table, re.MULTILINE):
            figures += [Figure("rdf_formats", f"parse {fmt}, {size} quads", _num(parse), _num(ox_parse),
                               peer_name="pyoxigraph parser"),
                        Figure("rdf_formats", f"export {fmt}, {size} quads", _num(export), _num(ox_export),
                               peer_name="pyoxigraph Store.dump")]
    return figures or [Figure("rdf_formats", "parse and export", None, None)]


def parse_read_terms(out: str) -> list[Figure]:
    rows = re.findall(rf"^\s*([\d,]+) quads\s+(into a \w+)\s+datae\s+{NUMBER} s\s+pyoxigraph\s+{NUMBER} s", out, re.MULTILINE)
    return [Figure("read_terms", f"{name}, {size} quads", _num(mine), _num(peer), peer_name="pyoxigraph")
            for size, name, mine, peer in rows] or [Figure("read_terms", "read every quad", None, None)]


def parse_term_check(out: str) -> list[Figure]:
    on = _find(rf"^checks on : best wall [\d.]+ s, best CPU {NUMBER} s", out)
    off = _find(rf"^checks off: best wall [\d.]+ s, best CPU {NUMBER} s", out)
    return [Figure("term_check", "add_many CPU with term checks / without", on, off, peer_name="checks off")]


def parse_clone_check(out: str) -> list[Figure]:
    copy = _find(rf"^file copy alone\s+{NUMBER} s", out)
    clone = _find(rf"^clone \(copy\+verify\)\s+{NUMBER} s", out)
    replay = _find(rf"^clone --no-local\s+{NUMBER} s", out)
    return [Figure("clone_check", "checked local clone", clone, replay, peer_name="clone --no-local"),
            Figure("clone_check", "checked local clone", clone, copy, peer_name="file copy")]


def parse_merge_history(out: str) -> list[Figure]:
    rows = re.findall(rf"^\s*([\d,]+) merges\s+verify\s+{NUMBER} s\s+clone \(copy\+verify\)\s+{NUMBER} s\s+"
                      rf"clone --no-local\s+{NUMBER} s", out, re.MULTILINE)
    return [Figure("merge_history", f"checked local clone, {merges} merges", _num(clone), _num(replay),
                   peer_name="clone --no-local") for merges, _, clone, replay in rows] \
        or [Figure("merge_history", "clone", None, None)]


def parse_scale(out: str) -> list[Figure]:
    """Each size's loads (time, peak RSS, disk) and head lookups, the queries at the
    last size, and how datae's figures grew from the first size to the last against
    pyoxigraph's growth."""
    figures = []
    for size, section in re.findall(r"^== ([\d,]+) quads\n(.*?)(?=^== |^growth |\Z)", out, re.MULTILINE | re.DOTALL):
        for name in ("uniform", "social"):
            rows = {engine: (_num(seconds), _num(rss), _num(disk)) for engine, seconds, rss, disk in re.findall(
                rf"^{name} load\s+(datae|pyoxigraph)\s+{NUMBER} s\s+{NUMBER} MB\s+{NUMBER} MB", section, re.MULTILINE)}
            mine, theirs = rows.get("datae", (None,) * 3), rows.get("pyoxigraph", (None,) * 3)
            for i, (what, unit) in enumerate((("load", "s"), ("peak RSS", "MB"), ("disk", "MB"))):
                figures.append(Figure("scale", f"{name} {what}, {size} quads", mine[i], theirs[i], unit,
                                      "pyoxigraph bulk_load"))
        lookups = re.findall(rf"subject lookups at the head\s+datae\s+{NUMBER} ms\s+pyoxigraph\s+{NUMBER} ms", section)
        figures.append(Figure("scale", f"subject lookups at the head, {size} quads",
                              *((_num(lookups[0][0]), _num(lookups[0][1])) if lookups else (None, None)), "ms",
                              "pyoxigraph"))
    figures += _query_rows("scale", out, "query ")
    for label, mine, theirs in re.findall(rf"^(uniform load time|social load time)\s+{NUMBER}x /\s+{NUMBER}x", out,
                                          re.MULTILINE):
        figures.append(Figure("scale", f"{label} growth, first size to last", _num(mine), _num(theirs), "x",
                              "pyoxigraph's growth"))
    return figures or [Figure("scale", "loads", None, None)]



def parse_bsbm(out: str) -> list[Figure]:
    """Each scale's QMpH (in-process and over HTTP) and loads; nothing if the bench was
    skipped for want of a JDK (it says so)."""
    if re.search(r"^bsbm skipped: ", out, re.MULTILINE):
        return []
    figures = []
    for products, section in re.findall(r"^== BSBM explore, ([\d,]+) products: (.*?)(?=^== |\Z)", out,
                                        re.MULTILINE | re.DOTALL):
        qmph = {engine: _num(value) for engine, _, value in re.findall(  # engine, mixes, seconds, QMpH
            rf"^(datae|pyoxigraph|datae serve|oxigraph serve)\s+\d+\s+{NUMBER}\s+{NUMBER}", section, re.MULTILINE)}
        loads = {engine: (_num(seconds), _num(rss)) for engine, seconds, rss in re.findall(
            rf"^(datae import|pyoxigraph bulk_load)\s+{NUMBER} s\s+{NUMBER} MB", section, re.MULTILINE)}
        mine, theirs = loads.get("datae import", (None, None)), loads.get("pyoxigraph bulk_load", (None, None))
        figures += [
            Figure("bsbm", f"QMpH in-process, {products} products", qmph.get("datae"), qmph.get("pyoxigraph"),
                   "QMpH", "pyoxigraph"),
            Figure("bsbm", f"QMpH over HTTP, {products} products", qmph.get("datae serve"),
                   qmph.get("oxigraph serve"), "QMpH", "oxigraph serve-read-only"),
            Figure("bsbm", f"load, {products} products", mine[0], theirs[0], peer_name="pyoxigraph bulk_load"),
            Figure("bsbm", f"peak RSS of the load, {products} products", mine[1], theirs[1], "MB",
                   "pyoxigraph bulk_load")]
    return figures or [Figure("bsbm", "QMpH", None, None, "QMpH")]


# The order of `make bench`, then the benchmarks it does not run. `full` is the command
# docs/performance.md cites; `quick` takes seconds to a minute each.
BENCHES = [
    Bench("nstore", ["--quads", "20000", "--add-quads", "5000", "--queries", "1000", "--predicates", "3", "--repeat", "2"],
          ["--load-repeat", "2"], parse_nstore),
    Bench("versioning", ["--quads", "20000", "--commits", "20", "--changes", "100", "--skip-schemaorg"], [],
          parse_versioning),
    Bench("query", ["--quads", "20000", "--repeat", "2"], ["--quads", "1000000", "--small", "100000", "--repeat", "5"],
          parse_query),
    Bench("query_shapes", ["--repeat", "2"], ["--repeat", "5"], parse_query_shapes),
    Bench("counts", ["--sizes", "20000", "--repeat", "2"], ["--sizes", "100000,1000000", "--repeat", "5"], parse_counts),
    Bench("tables", ["--sizes", "5000"], ["--sizes", "100000,1000000"], parse_tables),
    Bench("tables_versions", ["--sizes", "2000,5000", "--repeat", "2"], ["--sizes", "100000,1000000", "--repeat", "3"],
          parse_tables_versions),
    Bench("tables_shapes", ["--sizes", "2000", "--repeat", "1"], ["--sizes", "100000,1000000"], parse_tables_shapes),
    Bench("tables_sparql", ["--sizes", "2000"], ["--sizes", "10000,100000"], parse_tables_sparql),
    Bench("kart", ["--sizes", "2000", "--commits", "3"], ["--sizes", "10000,100000", "--commits", "20"], parse_kart),
    Bench("spark", ["--quads", "20000", "--rows", "20000", "--repeat", "1", "--workdir", "{workdir}/spark"],
          ["--quads", "1000000", "--rows", "1000000", "--repeat", "3", "--workdir", "{workdir}/spark"], parse_spark),
    Bench("history", ["--quads", "5000", "--commits", "30", "--changes", "200", "--queries", "500", "--repeat", "1"],
          ["--commits", "100"], parse_history),
    Bench("schemaorg", ["--releases", "4"], [], parse_schemaorg),
    Bench("load", ["--quads", "50000"], ["--quads", "1000000"], parse_load),
    Bench("integrity", ["--commits", "50", "--changes", "50", "--sizes", "10000", "--branch", "10000"],
          ["--commits", "1000", "--changes", "100", "--sizes", "100000", "300000", "--branch", "200000"], parse_integrity),
    Bench("server", ["--quads", "5000", "--seconds", "1", "--clients", "2"],
          ["--quads", "100000", "300000", "--seconds", "5"], parse_server),
    Bench("sync", ["--sizes", "10000", "--commits", "5", "--changes", "100"], ["--sizes", "200000", "1000000"], parse_sync),
    Bench("rdf_formats", ["--sizes", "2000", "--repeat", "1"], ["--sizes", "20000,200000", "--repeat", "3"],
          parse_rdf_formats),
    Bench("read_terms", ["--sizes", "5000", "--repeat", "1"], ["--sizes", "20000,200000", "--repeat", "3"],
          parse_read_terms),
    Bench("term_check", ["--quads", "20000", "--rounds", "1"], ["--quads", "200000", "--rounds", "4"], parse_term_check),
    Bench("clone_check", ["--quads", "2000", "--commits", "4"], ["--quads", "100000"], parse_clone_check),
    Bench("merge_history", ["--merges", "50"], ["--merges", "300,1000"], parse_merge_history),
    Bench("scale", ["--quick", "--repeat", "1"], ["--sizes", "1000000,10000000"], parse_scale),
    Bench("bsbm", ["--products", "100", "--warmup", "2", "--runs", "10", "--workdir", "{workdir}/bsbm"], [], parse_bsbm),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="every benchmark at a small size (a few minutes)")
    parser.add_argument("--only", default="", help="comma-separated benchmark names (default: all)")
    parser.add_argument("--log", default=None, help="keep each benchmark's output in this directory")
    parser.add_argument("--list", action="store_true", help="print the commands and exit")
    args = parser.parse_args(argv)
    names = [bench.name for bench in BENCHES]
    wanted = [name for name in args.only.split(",") if name] or names
    unknown = sorted(set(wanted) - set(names))
    if unknown:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; known: {', '.join(names)}")
    chosen = [bench for bench in BENCHES if bench.name in wanted]
    workdir = tempfile.mkdtemp(prefix="datae-run-all-")
    log = Path(args.log) if args.log else None
    if log:
        log.mkdir(parents=True, exist_ok=True)
    failed = False
    try:
        if args.list:
            for bench in chosen:
                print(" ".join(bench.command(args.quick, "$WORKDIR")))
            return 0
        print(f"# bench run_all ({'quick' if args.quick else 'documented'} sizes); ratio = datae / peer")
        print(f"{'bench':<25} {'measure':<50} {'datae':>13} {'peer':>13} {'peer is':<28} {'ratio':>8}")
        for bench in chosen:
            start = time.perf_counter()
            done = subprocess.run(bench.command(args.quick, workdir), capture_output=True, text=True, cwd=ROOT,
                                  env={**os.environ, "PYTHONUNBUFFERED": "1"})
            if log:
                (log / f"{bench.name}.txt").write_text(done.stdout + ("\n--- stderr\n" + done.stderr if done.stderr else ""))
            if done.returncode != 0:
                failed = True
                tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
                print(f"{bench.name:<25} FAILED (exit {done.returncode}): {tail[0][:120]}")
                continue
            for figure in bench.parse(done.stdout):
                failed |= figure.datae is None
                print(figure.line(), flush=True)
            print(f"{bench.name:<25} ({time.perf_counter() - start:.0f} s)", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
