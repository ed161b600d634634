"""Spark export benchmark (issue 6), with its floor measured in the same run.

For N quads and for an M-row Kart table stored in fstore, child processes (so that peak
memory is each step's own) measure:

* ``read``     — the store read alone, as the export reads it: every quad as packed keys
               turned into Arrow batches (``view_quad_batches``) / the table's stored values
               a column at a time (``stored_column_chunks``, what ``table_batches`` reads)
* ``export``   — ``export_snapshot`` to a Kartothek dataset: read + Arrow batches + Parquet
               (with ``--spark``: then Spark ``local[2]`` counts the quads and groups them)
* ``convert``  — the same export from Python objects already in memory: the export's own
               work (Arrow conversion and Parquet writing), without the store read
* ``floor``    — pyarrow writing the same rows straight from Python lists (``pa.table`` of
               the column lists + ``pq.write_table``); the lists are built before the clock

``convert`` and ``floor`` alternate in one process (``--repeat`` times each, best shown), so
the machine's load affects both alike. Memory is the peak anonymous RSS (heap, not LMDB's
mapped file pages) sampled every 10 ms above the step's baseline; the export's is measured
at N/4 and N rows to show it does not grow with rows.

    python -m bench.spark_bench [--quads 1000000] [--rows 1000000] [--repeat 3] [--spark]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = "things"
TABLE_SCHEMA = [
    {"id": "a", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0, "size": 64},
    {"id": "b", "name": "name", "dataType": "text"},
    {"id": "c", "name": "value", "dataType": "float", "size": 64},
    {"id": "d", "name": "day", "dataType": "date"},
    {"id": "e", "name": "price", "dataType": "numeric", "precision": 10, "scale": 2},
    {"id": "f", "name": "flag", "dataType": "boolean"},
    {"id": "g", "name": "geom", "dataType": "geometry", "geometryType": "POINT", "geometryCRS": "EPSG:4326"},
]


# -- memory -------------------------------------------------------------------------------

def _anon_kb() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    return 0


class PeakMemory:
    """Samples the anonymous RSS every 10 ms in a thread; ``peak`` is the highest seen."""

    def __init__(self) -> None:
        self.peak = self.baseline = _anon_kb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, _anon_kb())

    def __enter__(self) -> PeakMemory:
        self.baseline = self.peak = _anon_kb()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _anon_kb())

    @property
    def growth_mb(self) -> float:
        return (self.peak - self.baseline) / 1024


# -- stores -------------------------------------------------------------------------------

def build_quad_store(path: Path, count: int) -> None:
    import fstore

    from .data import generate_quads

    if (path / "complete").exists():
        return
    shutil.rmtree(path, ignore_errors=True)
    repo = fstore.open(path)
    with repo.transaction("main", message=f"{count} quads", author="bench") as tx:
        for quad in generate_quads(count):
            fstore.add(tx, *quad)
    repo.close()
    (path / "complete").write_text(str(count))


def table_rows(start: int, stop: int):
    from fstore.tables import Geometry

    points = [Geometry.from_wkt(f"POINT ({i % 360 - 180} {i % 180 - 90})") for i in range(997)]
    day = dt.date(2000, 1, 1)
    for i in range(start, stop):
        yield {"fid": i, "name": f"name {i}", "value": i * 0.5, "day": day + dt.timedelta(days=i % 3650),
               "price": Decimal(i % 100_000) / 100, "flag": i % 2 == 0, "geom": points[i % 997]}


def build_table_store(path: Path, count: int, chunk: int = 100_000) -> None:
    import fstore
    import fstore.tables as tables

    if (path / "complete").exists():
        return
    shutil.rmtree(path, ignore_errors=True)
    repo = fstore.open(path)
    with repo.transaction("main", message="create", author="bench") as tx:
        tables.create(tx, TABLE, TABLE_SCHEMA, crs={"EPSG:4326": 'GEOGCS["WGS 84",DATUM["WGS_1984"]]'})
    for start in range(0, count, chunk):
        with repo.transaction("main", message=f"rows {start}", author="bench") as tx:
            tx.table(TABLE).insert_many(table_rows(start, min(start + chunk, count)))
    repo.close()
    (path / "complete").write_text(str(count))


# -- child steps ---------------------------------------------------------------------------

def _warm_up(out: str, batch: int) -> None:
    """A tiny untimed export, so that every step starts with pyarrow's lazily initialised
    parts (kernels, Parquet writer, memory pool) ready, as the floor does."""
    import fstore.tables as tables
    from fstore import IRI
    from fstore.export.arrow import QUADS_SCHEMA, quad_batches, row_batches, table_arrow_schema
    from fstore.export.dataset_writer import DatasetWriter
    from fstore.export.kartothek import location

    schema = tables.Schema.from_dicts(TABLE_SCHEMA)
    where = location(Path(out) / "warm-up")
    writer = DatasetWriter(where, "quads", QUADS_SCHEMA, row_group_size=batch)
    writer.write(quad_batches([(None, IRI("urn:s"), IRI("urn:p"), i) for i in range(10)]))
    writer.commit({})
    writer = DatasetWriter(where, TABLE, table_arrow_schema(schema), row_group_size=batch)
    writer.write(row_batches(schema, table_rows(0, 10)))
    writer.commit({})
    shutil.rmtree(Path(out) / "warm-up")


def child(kind: str, store: str, out: str, batch: int, repeat: int) -> dict:
    import fstore
    import pyarrow as pa
    import pyarrow.parquet as pq

    from fstore.export.arrow import (QUADS_SCHEMA, paused_gc, quad_batches, row_batches, table_arrow_schema,
                                     view_quad_batches, view_quads)
    from fstore.export.dataset_writer import DatasetWriter
    from fstore.export.kartothek import location, read_table
    from fstore.export.snapshot import export_snapshot

    _warm_up(out, batch)
    repo = fstore.open(store)
    view = repo.at("main")
    what, step = kind.split("-")
    name = "quads" if what == "quads" else TABLE
    result: dict = {"kind": kind}
    if step == "pair":
        # the export's own work and the floor, alternated in one process (best of `repeat`)
        if what == "quads":
            with paused_gc():
                items = list(view_quads(view))
            schema = QUADS_SCHEMA
        else:
            t = view.table(TABLE)
            with paused_gc():
                items = list(t.rows())
            schema = table_arrow_schema(t.schema, t.state.crs(), name=TABLE)

        def convert(target: Path) -> tuple[float, int]:
            start = time.perf_counter()
            batches = (quad_batches(items, batch) if what == "quads"
                       else row_batches(t.schema, items, batch, arrow_schema=schema, table=TABLE))
            writer = DatasetWriter(location(target), name, schema, row_group_size=batch)
            rows = writer.write(batches).rows
            writer.commit({})
            return time.perf_counter() - start, rows

        with PeakMemory() as memory:
            first, rows = convert(Path(out) / "convert-0")
        result["convert_growth_mb"] = memory.growth_mb
        before = _anon_kb()
        with paused_gc():  # the floor's input: the same rows as Python lists (untimed)
            lists = read_table(location(Path(out) / "convert-0"), name).to_pydict()
        result["floor_input_mb"] = (_anon_kb() - before) / 1024

        def floor(target: Path) -> float:
            start = time.perf_counter()
            table = pa.table({n: pa.array(v, type=schema.field(n).type) for n, v in lists.items()}, schema=schema)
            pq.write_table(table, target, row_group_size=batch)
            return time.perf_counter() - start

        converts, floors = [first], []
        for i in range(repeat):
            floors.append(floor(Path(out) / f"floor-{i}.parquet"))
            if i + 1 < repeat:
                shutil.rmtree(Path(out) / f"convert-{i}", ignore_errors=True)
                converts.append(convert(Path(out) / f"convert-{i + 1}")[0])
        result.update(rows=rows, convert_seconds=min(converts), floor_seconds=min(floors),
                      convert_all=converts, floor_all=floors)
    else:
        rows = 0
        with PeakMemory() as memory:
            start = time.perf_counter()
            if step == "read":
                if what == "quads":
                    rows = sum(b.num_rows for b in view_quad_batches(view, batch))
                else:
                    from fstore.tables.frames import stored_column_chunks

                    rows = sum(len(c[0]) for c in stored_column_chunks(view.table(TABLE), batch, geometry_bytes=True))
            elif step == "export":
                rows = export_snapshot(repo, "main", out, tables=[] if what == "quads" else [TABLE],
                                       include_quads=what == "quads", batch_size=batch).rows
            else:
                raise SystemExit(f"unknown step {kind}")
            seconds = time.perf_counter() - start
        if step == "export" and what == "quads" and os.environ.get("DATAE_BENCH_SPARK"):
            from pyspark.sql import SparkSession

            from fstore.spark import dataset_dataframe

            spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
                     .config("spark.sql.shuffle.partitions", "2").config("spark.driver.memory", "1g")
                     .config("spark.ui.showConsoleProgress", "false").getOrCreate())
            spark.sparkContext.setLogLevel("ERROR")
            frame = dataset_dataframe(spark, out, name)
            frame.limit(1).collect()  # the first job of a session pays for its set-up
            start = time.perf_counter()
            assert frame.count() == rows
            groups = frame.groupBy("predicate").count().collect()
            result["spark_seconds"] = time.perf_counter() - start
            result["spark_groups"] = len(groups)
            spark.stop()
        result.update(rows=rows, seconds=seconds, growth_mb=memory.growth_mb, peak_mb=memory.peak / 1024)
    repo.close()
    result["arrow_max_mb"] = pa.default_memory_pool().max_memory() / 2**20
    return result


def run_child(kind: str, store: Path, workdir: Path, batch: int, repeat: int = 1, spark: bool = False) -> dict:
    out = Path(tempfile.mkdtemp(prefix=kind + "-", dir=workdir))
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    if spark:
        env["DATAE_BENCH_SPARK"] = "1"
    try:
        done = subprocess.run([sys.executable, "-m", "bench.spark_bench", "--child", kind, "--store", str(store),
                               "--out", str(out), "--batch", str(batch), "--repeat", str(repeat)],
                              cwd=ROOT, env=env, check=True,
                              stdout=subprocess.PIPE, text=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- report -------------------------------------------------------------------------------

def rate(rows: int, seconds: float) -> str:
    return f"{rows / seconds:>11,.0f} rows/s" if seconds else "          - rows/s"


def section(what: str, large: Path, small: Path, count: int, args, workdir: Path) -> None:
    print(f"\n{what}: {count:,} rows, batch {args.batch:,}")
    read = run_child(f"{what}-read", large, workdir, args.batch)
    export = run_child(f"{what}-export", large, workdir, args.batch, spark=args.spark and what == "quads")
    pair = run_child(f"{what}-pair", large, workdir, args.batch, repeat=args.repeat)
    small_export = run_child(f"{what}-export", small, workdir, args.batch)
    rows = export["rows"]
    label = "store read into Arrow batches" if what == "quads" else "store read alone (stored columns)"
    print(f"  {label:<44} {read['seconds']:>8.2f} s {rate(read['rows'], read['seconds'])}"
          f"   peak heap +{read['growth_mb']:.0f} MB")
    print(f"  {'export_snapshot (read + convert + write)':<44} {export['seconds']:>8.2f} s "
          f"{rate(rows, export['seconds'])}   peak heap +{export['growth_mb']:.0f} MB")
    print(f"  {'convert + write, from Python objects':<44} {pair['convert_seconds']:>8.2f} s "
          f"{rate(rows, pair['convert_seconds'])}   peak heap +{pair['convert_growth_mb']:.0f} MB "
          f"(runs: {', '.join(f'{s:.2f}' for s in pair['convert_all'])})")
    print(f"  {'floor: pyarrow from Python lists':<44} {pair['floor_seconds']:>8.2f} s "
          f"{rate(rows, pair['floor_seconds'])}   its input lists alone: {pair['floor_input_mb']:.0f} MB "
          f"(runs: {', '.join(f'{s:.2f}' for s in pair['floor_all'])})")
    if "spark_seconds" in export:
        print(f"  {'Spark local[2] on the export: count + group by':<44} {export['spark_seconds']:>8.2f} s "
              f"{rate(rows, export['spark_seconds'])}   ({export['spark_groups']} predicates)")
    floor = pair["floor_seconds"]
    print(f"  ratios to the floor: convert + write {pair['convert_seconds'] / floor:.2f}x (same process, "
          f"alternated); whole export {export['seconds'] / floor:.2f}x; the read step alone "
          f"{read['seconds'] / floor:.2f}x (separate processes: within noise of each other when reading dominates)")
    print(f"  export peak heap: {small_export['rows']:,} rows +{small_export['growth_mb']:.0f} MB, "
          f"{rows:,} rows +{export['growth_mb']:.0f} MB (x{export['growth_mb'] / max(small_export['growth_mb'], 0.1):.2f}"
          f" for x{rows / max(small_export['rows'], 1):.0f} rows); the floor needs all rows as lists: "
          f"{pair['floor_input_mb']:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quads", type=int, default=1_000_000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=65_536)
    parser.add_argument("--repeat", type=int, default=3, help="alternated runs of convert and floor (best shown)")
    parser.add_argument("--spark", action="store_true", help="also time Spark reading the export")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "datae-spark-bench"),
                        help="where the generated stores are kept between runs")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.store, args.out, args.batch, args.repeat)))
        return
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"Spark export benchmark (issue 6); stores in {workdir}; python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    if args.quads:
        large, small = workdir / f"quads-{args.quads}", workdir / f"quads-{args.quads // 4}"
        start = time.perf_counter()
        build_quad_store(large, args.quads)
        build_quad_store(small, args.quads // 4)
        print(f"(quad stores ready in {time.perf_counter() - start:.0f} s)")
        section("quads", large, small, args.quads, args, workdir)
    if args.rows:
        large, small = workdir / f"table-{args.rows}", workdir / f"table-{args.rows // 4}"
        start = time.perf_counter()
        build_table_store(large, args.rows)
        build_table_store(small, args.rows // 4)
        print(f"(table stores ready in {time.perf_counter() - start:.0f} s)")
        section("table", large, small, args.rows, args, workdir)


if __name__ == "__main__":
    main()
