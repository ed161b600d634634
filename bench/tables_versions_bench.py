"""Versioned table reads benchmark (issue 28.3): a table at an old commit, ``table diff``
between two commits, and a cell-wise merge, at two sizes, so that their cost is seen to
follow the rows changed, not the rows held.

The table is ``bench/tables_bench.py``'s 10-column table of N rows, loaded in one commit;
then ten commits each change 1,000 rows (a text column), so the head and ``main~10`` differ
by 10,000 rows. Measured, best of ``--repeat``:

* ``to_arrow`` at the head and at ``main~10`` (a commit that is no branch head is read as
  the head's snapshot plus an overlay of the rows that differ): the ratio old / head is
  the price of time travel;
* ``table diff`` of the last commit (1,000 changed rows) and of ``main~10..main`` (10,000);
  issue 28's target is <= 50 ms for 1,000 rows whatever N;
* a cell-wise merge: branches ``a`` and ``b`` from the head change the same 1,000 rows,
  ``a`` one column and ``b`` another, and ``b`` is merged into ``a`` (no conflict: each row
  merged cell by cell).

The peer is the same operation at the other size: a cost O(changed rows) stays flat from
N to 10 N.

    python -m bench.tables_versions_bench [--sizes 100000,1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile

import fstore
import fstore.tables as tables

from .tables_bench import SCHEMA, rows
from .timing import print_growth, timed

__all__ = ["main"]

CHANGED = 1_000  # rows a commit changes
COMMITS = 10  # commits between the old commit read and the head


def build(n: int, root: str) -> fstore.Repository:
    """The table of ``n`` rows, then :data:`COMMITS` commits of :data:`CHANGED` changed rows."""
    repo = fstore.open(os.path.join(root, f"versions-{n}"), map_size=32 << 30)
    data = list(rows(n))
    with repo.transaction("main", message="load") as tx:
        tables.create(tx, "bench", SCHEMA).insert_many(data)
    step = max(n // CHANGED, 1)
    for commit in range(COMMITS):
        with repo.transaction("main", message=f"change {commit}") as tx:
            tx.table("bench").upsert_rows([dict(data[i], name=f"renamed {commit} {i}")
                                           for i in range(commit % step, n, step)][:CHANGED])
    return repo


def merge_cellwise(repo: fstore.Repository, n: int, round_: int) -> str | None:
    """Branches changing different columns of the same rows, merged: the merge's id."""
    a, b = f"a{round_}", f"b{round_}"
    repo.branch(a, "main")
    repo.branch(b, "main")
    step = max(n // CHANGED, 1)
    picked = list(range(0, n, step))[:CHANGED]
    table = repo.at("main").table("bench")
    current = [table.get(i) for i in picked]
    with repo.transaction(a, message="a") as tx:
        tx.table("bench").upsert_rows([dict(row, note=f"from a {round_}") for row in current])
    with repo.transaction(b, message="b") as tx:
        tx.table("bench").upsert_rows([dict(row, count=-1 - round_) for row in current])
    return repo.merge(a, b, message="merge b")


def bench_size(n: int, root: str, repeat: int) -> dict[str, float]:
    out: dict[str, float] = {}
    repo = build(n, root)
    head, old = repo.at("main").table("bench"), repo.at(f"main~{COMMITS}").table("bench")
    out["to_arrow at the head"], got = timed(head.to_arrow, repeat)
    assert got.num_rows == n
    out[f"to_arrow at main~{COMMITS}"], got = timed(old.to_arrow, repeat)
    assert got.num_rows == n
    out[f"table diff of one commit ({CHANGED:,} rows)"], found = timed(
        lambda: len(repo.table_diff("main~1", "main", "bench")), repeat)
    assert found == min(CHANGED, n), found
    out[f"table diff of {COMMITS} commits"], found = timed(
        lambda: len(repo.table_diff(f"main~{COMMITS}", "main", "bench")), repeat)
    rounds = iter(range(repeat))
    out[f"cell-wise merge of {CHANGED:,} rows"], merged = timed(lambda: merge_cellwise(repo, n, next(rounds)), repeat)
    assert merged is not None
    repo.close()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated row counts (default 100000,1000000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measure; the best counts (default 3)")
    parser.add_argument("--dir", default=None, help="where the stores go (default: a temporary directory)")
    args = parser.parse_args(argv)
    root = args.dir or tempfile.mkdtemp(prefix="datae-tables-versions-")
    os.makedirs(root, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    results = {}
    try:
        for n in sizes:
            print(f"--- {n:,} rows", flush=True)
            results[n] = bench_size(n, root, args.repeat)
            for name, seconds in results[n].items():
                print(f"{name:42s} {seconds * 1000:10.1f} ms", flush=True)
            head = results[n]["to_arrow at the head"]
            print(f"ratio to_arrow at main~{COMMITS} / at the head: {results[n][f'to_arrow at main~{COMMITS}'] / head:.2f}x")
        print_growth(results, results[sizes[0]])
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
