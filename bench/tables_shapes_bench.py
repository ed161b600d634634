"""Table benchmark of a second shape (issue 28): the same measures as ``tables_bench`` on a
table it does not contain, so that its ratios are seen to hold off its one shape.

The table: a text primary key of two parts (``north-0000123``: Kart's ``msgpack/hash``
path rule, a sha256 a row), a 32-bit and a 64-bit integer, a float with nulls, a long
text (27 to 81 characters) and a boolean. Measured against sqlite3 (a ``TEXT PRIMARY KEY``
table, ``executemany``) and pyarrow (the same rows as Parquet), in the same run, best of
``--repeat`` for the reads:

* ``insert_many`` of every row in one commit, and the store's bytes;
* ``to_arrow`` against ``pq.read_table``, ``to_pandas`` against ``pq.read_table().to_pandas()``.

    python -m bench.tables_shapes_bench [--sizes 100000,1000000] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import tempfile
from typing import Any

import fstore
import fstore.tables as tables

from .timing import print_growth, timed

__all__ = ["main"]

SCHEMA = [{"id": "k", "name": "k", "dataType": "text", "primaryKeyIndex": 0},
          {"id": "a", "name": "a", "dataType": "integer", "size": 32},
          {"id": "b", "name": "b", "dataType": "float", "size": 64},
          {"id": "c", "name": "c", "dataType": "text"},
          {"id": "d", "name": "d", "dataType": "boolean"},
          {"id": "e", "name": "e", "dataType": "integer", "size": 64}]
COLUMNS = "kabcde"


def rows(n: int) -> list[dict[str, Any]]:
    return [{"k": f"{('north', 'south', 'east', 'west')[i % 4]}-{i:07d}", "a": i % 1000, "b": None if i % 7 == 0 else i / 3,
             "c": "lorem ipsum dolor sit amet " * (1 + i % 3), "d": i % 2 == 0, "e": i * 1_000_003} for i in range(n)]


def bench_size(n: int, root: str, repeat: int) -> dict[str, float]:
    import pyarrow.parquet as pq

    data = rows(n)
    out: dict[str, float] = {}
    repo = fstore.open(os.path.join(root, f"datae-{n}"), map_size=32 << 30)

    def load() -> None:
        with repo.transaction("main", message="load") as tx:
            tables.create(tx, "t", SCHEMA).insert_many(data)

    out["datae insert_many"], _ = timed(load)
    out["datae store MiB"] = repo.stats()["bytes"] / 2**20
    table = repo.at("main").table("t")
    out["datae to_arrow"], arrow = timed(table.to_arrow, repeat)
    out["datae to_pandas"], _ = timed(table.to_pandas, repeat)
    repo.close()

    path = os.path.join(root, f"sqlite-{n}.db")
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (k TEXT PRIMARY KEY, a INTEGER, b REAL, c TEXT, d INTEGER, e INTEGER)")

    def sqlite_load() -> None:
        with con:
            con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", ([r[c] for c in COLUMNS] for r in data))

    out["sqlite3 insert (executemany)"], _ = timed(sqlite_load)
    con.close()
    out["sqlite3 file MiB"] = os.path.getsize(path) / 2**20
    parquet = os.path.join(root, f"t-{n}.parquet")
    pq.write_table(arrow, parquet)
    out["pyarrow read_table"], _ = timed(lambda: pq.read_table(parquet), repeat)
    out["pyarrow read_table().to_pandas()"], _ = timed(lambda: pq.read_table(parquet).to_pandas(), repeat)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated row counts")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each read (best shown)")
    args = parser.parse_args(argv)
    import pandas  # noqa: F401  (importing pandas is not part of the measurement)

    results: dict[int, dict[str, float]] = {}
    root = tempfile.mkdtemp(prefix="datae-tables-shapes-")
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            r = results[n] = bench_size(n, root, args.repeat)
            print(f"--- {n:,} rows, a text key")
            for name, value in r.items():
                print(f"{name:<40} {value:9.3f} {'MiB' if name.endswith('MiB') else 's'}")
            print(f"ratio insert_many datae / sqlite3: {r['datae insert_many'] / r['sqlite3 insert (executemany)']:.1f}x time, "
                  f"{r['datae store MiB'] / r['sqlite3 file MiB']:.1f}x bytes")
            print(f"ratio to_arrow  datae / pyarrow: {r['datae to_arrow'] / r['pyarrow read_table']:.1f}x")
            print(f"ratio to_pandas datae / pyarrow: {r['datae to_pandas'] / r['pyarrow read_table().to_pandas()']:.1f}x")
        print_growth(results, ["datae insert_many", "datae to_arrow", "datae to_pandas"], word="scaling")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
