"""Tables benchmark: import and full read of a 10-column table in datae, side by side with
peers measured in the same run on the same rows, and the cost of a schema change.

* datae import: ``fstore.tables.create`` + ``insert_many`` in one transaction (one commit):
  every row is encoded as a Kart feature blob and written as one quad through the fstore
  transaction (7 history indices). Expected O(N log N) (sorted bulk writes), ~O(N).
* datae read: ``view.table(name).rows()`` (Python values) and ``rows(python=False)``
  (stored values): one streaming scan, O(N).
* sqlite3: ``executemany`` into a table with an INTEGER PRIMARY KEY and one secondary index,
  one transaction; read: ``SELECT *`` over all rows.
* pyarrow: ``Table.from_pylist`` + ``parquet.write_table``; read: ``read_table().to_pylist()``.
* schema change: ``alter`` (add a column) on tables of each size: O(1) in rows (it writes
  schema.json and one legend, never a row), so the time must not grow with N.
* CSV import (``import_csv``, types guessed) against sqlite3's csv module + ``executemany``,
  with DuckDB's ``read_csv_auto`` printed beside for reference; ``to_pandas`` and
  ``to_arrow`` against pyarrow reading the same rows from Parquet.
* upsert: ``write_pandas(mode="upsert")`` of 10% of the rows, changed, against sqlite3's
  ``INSERT ... ON CONFLICT (fid) DO UPDATE``; ``table diff`` between two commits 1,000
  changed rows apart (issue 28's target: <= 50 ms whatever the table's size).

Usage: ``python -m bench.tables_bench [--sizes 10000,1000000] [--dir DIR]``; prints one
line per measurement and the ratios datae / peer (> 1: datae is slower).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import os
import shutil
import sqlite3
import statistics
import tempfile
import time
from typing import Any, Iterator

import fstore
import fstore.tables as tables
from bench.timing import print_growth, timed

SCHEMA = [
    {"id": "c0", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0, "size": 64},
    {"id": "c1", "name": "name", "dataType": "text"},
    {"id": "c2", "name": "category", "dataType": "text"},
    {"id": "c3", "name": "value", "dataType": "float", "size": 64},
    {"id": "c4", "name": "count", "dataType": "integer", "size": 32},
    {"id": "c5", "name": "flag", "dataType": "boolean"},
    {"id": "c6", "name": "day", "dataType": "date"},
    {"id": "c7", "name": "code", "dataType": "text", "length": 8},
    {"id": "c8", "name": "ratio", "dataType": "float", "size": 64},
    {"id": "c9", "name": "note", "dataType": "text"},
]
COLUMNS = [c["name"] for c in SCHEMA]
_DAY0 = dt.date(2000, 1, 1)


def rows(n: int) -> Iterator[dict[str, Any]]:
    """n generated rows (deterministic); dates as ISO text, as Kart stores them."""
    for i in range(n):
        yield {
            "fid": i,
            "name": f"feature {i}",
            "category": ("road", "river", "rail", "track", "peak")[i % 5],
            "value": i * 0.25,
            "count": (i * 7919) % 100_000,
            "flag": i % 3 == 0,
            "day": (_DAY0 + dt.timedelta(days=i % 9000)).isoformat(),
            "code": f"C{i % 99991:05d}",
            "ratio": (i % 1000) / 1000,
            "note": None if i % 4 else f"note for {i}",
        }


def write_csv(data: list[dict[str, Any]], path: str) -> None:
    """The rows as a CSV file with a header (empty fields are nulls)."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS)
        for r in data:
            out.writerow(["" if r[c] is None else r[c] for c in COLUMNS])


def bench_csv(n: int, root: str, data: list[dict[str, Any]], out: dict[str, float]) -> None:
    """A CSV import, as a user runs it: datae infers the types and loads the file in one
    commit (``import_csv``); sqlite3 reads it with the csv module and lets its column
    affinity convert the texts (``executemany``), with the same key and index as above."""
    path = os.path.join(root, f"bench-{n}.csv")
    write_csv(data, path)
    out["CSV file MiB"] = os.path.getsize(path) / 2**20
    repo = fstore.open(os.path.join(root, f"datae-csv-{n}"), map_size=32 << 30)

    def datae_import() -> None:
        with repo.transaction("main", message="import") as tx:
            tables.import_csv(tx, "bench", path, pk="fid")

    out["datae CSV import"], _ = timed(datae_import)
    out["datae CSV store MiB"] = repo.stats()["bytes"] / 2**20
    table = repo.at("main").table("bench")
    import pandas  # noqa: F401  (importing pandas is not part of the measurement)

    out["datae to_pandas"], frame = timed(table.to_pandas)
    assert len(frame) == n
    del frame
    out["datae to_arrow"], arrow = timed(table.to_arrow)
    assert arrow.num_rows == n
    del arrow
    repo.close()

    db = os.path.join(root, f"sqlite-csv-{n}.db")
    con = sqlite3.connect(db)
    types = {"fid": "INTEGER PRIMARY KEY", "value": "REAL", "ratio": "REAL", "count": "INTEGER", "flag": "INTEGER"}
    con.execute(f"CREATE TABLE bench ({', '.join(c + ' ' + types.get(c, 'TEXT') for c in COLUMNS)})")
    con.execute("CREATE INDEX bench_category ON bench (category)")
    marks = ", ".join("?" for _ in COLUMNS)

    def sqlite_import() -> None:
        with open(path, newline="", encoding="utf-8") as f, con:
            records = csv.reader(f)
            next(records)
            con.executemany(f"INSERT INTO bench VALUES ({marks})", ([v or None for v in r] for r in records))

    out["sqlite3 CSV import"], _ = timed(sqlite_import)
    con.close()
    out["sqlite3 CSV file MiB"] = os.path.getsize(db) / 2**20
    try:
        import duckdb
    except ImportError:  # pragma: no cover - duckdb is a bench dependency, for reference only
        duckdb = None
    if duckdb is not None:
        ddb = os.path.join(root, f"duckdb-csv-{n}.db")
        dcon = duckdb.connect(ddb)

        def duckdb_import() -> None:
            dcon.execute("CREATE TABLE bench AS SELECT * FROM read_csv_auto(?, header = true)", [path])
            dcon.execute("ALTER TABLE bench ADD PRIMARY KEY (fid)")
            dcon.execute("CHECKPOINT")

        out["duckdb CSV import (reference)"], _ = timed(duckdb_import)
        dcon.close()
        out["duckdb CSV file MiB (reference)"] = os.path.getsize(ddb) / 2**20
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is an optional dependency
        return
    ppath = os.path.join(root, f"bench-{n}.parquet")
    pq.write_table(pa.Table.from_pylist(data), ppath)
    out["pyarrow parquet to_pandas"], frame = timed(lambda: pq.read_table(ppath).to_pandas())
    assert len(frame) == n
    out["pyarrow parquet read_table"], arrow = timed(lambda: pq.read_table(ppath))
    assert arrow.num_rows == n


def bench_size(n: int, root: str) -> dict[str, float]:
    out: dict[str, float] = {}
    data = list(rows(n))
    bench_csv(n, root, data, out)

    # -- datae
    # A map big enough for the whole import in one transaction (the default map grows
    # between transactions; one over 512 MiB is aborted with TransactionTooLargeError).
    repo = fstore.open(os.path.join(root, f"datae-{n}"), map_size=32 << 30)

    def datae_import() -> None:
        with repo.transaction("main", message="import") as tx:
            t = tables.create(tx, "bench", SCHEMA)
            t.insert_many(data)

    out["datae import"], _ = timed(datae_import)
    view = repo.at("main")
    out["datae read (python values)"], count = timed(lambda: sum(1 for _ in view.table("bench").rows()))
    assert count == n
    out["datae read (stored values)"], count = timed(lambda: sum(1 for _ in view.table("bench").rows(python=False)))
    assert count == n
    table = view.table("bench")
    out["datae get (1000 rows by key)"], _ = timed(lambda: [table.get(i * (n // 1000)) for i in range(1000)])
    changes, staged = [], []
    for i in range(5):
        before = repo.head("main")

        def alter(i: int = i) -> None:
            with repo.transaction("main", message=f"alter {i}") as tx:
                t = tx.table("bench")
                # Not timed(): its gc.collect() of the benchmark's rows would be charged
                # to the commit measured around this.
                start = time.perf_counter()
                t.alter(t.schema.add_column(f"extra{i}", "integer", id=f"x{i}"))
                staged.append(time.perf_counter() - start)

        seconds, _ = timed(alter)
        changes.append(seconds)
        change = repo.table_diff(before, "main", "bench")
        assert change.schema is not None and len(change) == 0  # a new schema, no row rewritten
    out["datae schema change (add column, commit)"] = statistics.median(changes)
    out["datae schema change (alter() alone)"] = statistics.median(staged)
    out["datae store MiB"] = repo.stats()["bytes"] / 2**20
    changed = [dict(r, value=r["value"] + 1.0, count=-r["count"]) for r in data[::10]]  # 10% of the rows
    import pandas as pd

    frame = pd.DataFrame(changed, columns=COLUMNS)

    def upsert() -> None:
        with repo.transaction("main", message="upsert 10%") as tx:
            tx.table("bench").write_pandas(frame, mode="upsert")

    out["datae upsert 10% (write_pandas)"], _ = timed(upsert)
    before = repo.head("main")
    step = max(n // 1000, 1)
    with repo.transaction("main", message="1,000 changed rows") as tx:
        tx.table("bench").upsert_rows([dict(data[i], code="CHANGED") for i in range(0, n, step)][:1000])
    out["datae table diff (1,000 changed rows)"], found = timed(lambda: len(repo.table_diff(before, "main", "bench")))
    assert found == min(1000, n), found
    repo.close()

    # -- sqlite3
    path = os.path.join(root, f"sqlite-{n}.db")
    con = sqlite3.connect(path)
    con.execute(f"CREATE TABLE bench (fid INTEGER PRIMARY KEY, {', '.join(c + ' ' for c in COLUMNS[1:])})")
    con.execute("CREATE INDEX bench_category ON bench (category)")
    marks = ", ".join("?" for _ in COLUMNS)

    def sqlite_import() -> None:
        with con:
            con.executemany(f"INSERT INTO bench VALUES ({marks})", ([r[c] for c in COLUMNS] for r in data))

    out["sqlite3 import (executemany, indexed)"], _ = timed(sqlite_import)
    out["sqlite3 read (SELECT *)"], count = timed(lambda: sum(1 for _ in con.execute("SELECT * FROM bench")))
    assert count == n
    updates = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS[1:])

    def sqlite_upsert() -> None:
        with con:
            con.executemany(f"INSERT INTO bench VALUES ({marks}) ON CONFLICT (fid) DO UPDATE SET {updates}",
                            ([r[c] for c in COLUMNS] for r in changed))

    out["sqlite3 upsert 10% (ON CONFLICT DO UPDATE)"], _ = timed(sqlite_upsert)
    out["sqlite3 schema change (ADD COLUMN)"], _ = timed(lambda: con.execute("ALTER TABLE bench ADD COLUMN extra INTEGER"))
    con.close()
    out["sqlite3 file MiB"] = os.path.getsize(path) / 2**20

    # -- pyarrow / parquet
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        ppath = os.path.join(root, f"bench-{n}.parquet")
        out["pyarrow import (from_pylist + parquet)"], _ = timed(lambda: pq.write_table(pa.Table.from_pylist(data), ppath))
        out["pyarrow read (parquet to_pylist)"], got = timed(lambda: pq.read_table(ppath).to_pylist())
        assert len(got) == n
        del got
    except ImportError:  # pragma: no cover - pyarrow is an optional dependency
        pass
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,1000000", help="comma-separated row counts")
    parser.add_argument("--dir", default=None, help="where the stores go (default: a temporary directory)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    root = args.dir or tempfile.mkdtemp(prefix="datae-tables-bench-")
    os.makedirs(root, exist_ok=True)
    results = {}
    try:
        for n in sizes:
            print(f"--- {n:,} rows x {len(COLUMNS)} columns", flush=True)
            results[n] = bench_size(n, root)
            for name, value in results[n].items():
                unit = "MiB" if "MiB" in name else "s"
                per = "" if unit == "MiB" or "change" in name or "get" in name or "diff" in name or "upsert" in name else f"  ({value / n * 1e6:.2f} µs/row)"
                print(f"{name:42s} {value:10.3f} {unit}{per}", flush=True)
            r = results[n]
            print(f"ratio CSV import datae / sqlite3: {r['datae CSV import'] / r['sqlite3 CSV import']:.1f}x time, "
                  f"{r['datae CSV store MiB'] / r['sqlite3 CSV file MiB']:.1f}x bytes")
            if "duckdb CSV import (reference)" in r:
                print(f"reference CSV import duckdb / sqlite3: {r['duckdb CSV import (reference)'] / r['sqlite3 CSV import']:.1f}x time, "
                      f"{r['duckdb CSV file MiB (reference)'] / r['sqlite3 CSV file MiB']:.1f}x bytes")
            if "pyarrow parquet to_pandas" in r:
                print(f"ratio to_pandas datae / pyarrow (Parquet): {r['datae to_pandas'] / r['pyarrow parquet to_pandas']:.1f}x")
                print(f"ratio to_arrow  datae / pyarrow (Parquet read_table): {r['datae to_arrow'] / r['pyarrow parquet read_table']:.1f}x")
            print(f"ratio upsert 10% datae / sqlite3: {r['datae upsert 10% (write_pandas)'] / r['sqlite3 upsert 10% (ON CONFLICT DO UPDATE)']:.1f}x")
            print(f"table diff of 1,000 changed rows: {r['datae table diff (1,000 changed rows)'] * 1000:.1f} ms (target <= 50 ms)")
            print(f"ratio import  datae / sqlite3: {r['datae import'] / r['sqlite3 import (executemany, indexed)']:.1f}x")
            print(f"ratio read    datae / sqlite3: {r['datae read (python values)'] / r['sqlite3 read (SELECT *)']:.1f}x "
                  f"(stored values {r['datae read (stored values)'] / r['sqlite3 read (SELECT *)']:.1f}x)")
            if "pyarrow import (from_pylist + parquet)" in r:
                print(f"ratio import  datae / pyarrow: {r['datae import'] / r['pyarrow import (from_pylist + parquet)']:.1f}x")
                print(f"ratio read    datae / pyarrow: {r['datae read (python values)'] / r['pyarrow read (parquet to_pylist)']:.1f}x")
        print_growth(results, ("datae CSV import", "datae to_pandas", "datae import", "datae read (python values)",
                               "datae schema change (add column, commit)", "datae schema change (alter() alone)"),
                     word="scaling")
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
