"""How tests/fstore/data/formatN-data.mdb.gz were made: run with the datae of format N on the
path (format 3: commit b6eea6d, the last of it; format 4: commit dbea488; format 5: commit
7b1a2ae; format 6: commit 1e3b63b), which ends with
``gc`` (to compact the file), then ``gzip -9`` of its data.mdb.

    git worktree add /tmp/f3 b6eea6d && PYTHONPATH=/tmp/f3 python tests/fstore/data/make_old_format.py 3 OUT

tests/fstore/test_upgrade.py checks that ``datae upgrade`` turns each into the current format
with every key, commit id and read unchanged."""
import datetime as dt
import shutil
import sys

import fstore
import fstore.tables as tables
from fstore import IRI, BNode, Literal
from fstore.core.layout import FORMAT_KEY

WHEN = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


def main(version: str, out: str) -> None:
    shutil.rmtree(out, ignore_errors=True)
    repo = fstore.open(out)
    ex = "http://example.org/"
    with repo.transaction("main", message="first", author="ann", time=WHEN) as tx:
        fstore.add_many(tx, [(IRI(f"{ex}g{i % 3}") if i % 4 else None, IRI(f"{ex}s{i}"), IRI(f"{ex}p{i % 7}"),
                              [i, f"text {i}", Literal(f"t{i}", lang="en"), IRI(f"{ex}o{i % 50}"), BNode(f"b{i % 9}"),
                               i / 7, b"\x00bytes"][i % 7]) for i in range(3000)])
        fstore.add(tx, None, IRI(ex + "s"), IRI(ex + "long"), "L" * 3000)       # a long term (hash key, long value)
        fstore.add(tx, None, IRI(ex + "s"), IRI(ex + "big"), 10 ** 600)          # a value too long for a key: a blob
        tables.create(tx, "towns", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
                                    {"id": "v", "name": "name", "dataType": "text"}])
        tx.table("towns").insert_many([{"k": i, "name": f"town {i}"} for i in range(200)])
    repo.branch("side")
    with repo.transaction("side", message="side", author="bob", time=WHEN) as tx:
        fstore.rm_many(tx, [(IRI(f"{ex}g{i % 3}") if i % 4 else None, IRI(f"{ex}s{i}"), IRI(f"{ex}p{i % 7}"), i) for i in range(0, 3000, 7)])
        fstore.add(tx, IRI(ex + "g9"), IRI(ex + "x"), IRI(ex + "y"), Literal("side", lang="fr"))
        tx.table("towns").update({"k": 3, "name": "renamed"})
    with repo.transaction("main", message="second", author="ann", time=WHEN) as tx:
        fstore.add(tx, None, IRI(ex + "m"), IRI(ex + "p0"), 42)
    repo.merge("main", "side", message="merge side", author="ann", time=WHEN)
    repo.tag("v1", "main")
    with repo.storage.read() as snapshot:
        assert snapshot.tx.get(FORMAT_KEY) == version.encode()
    print(repo.verify(), {name: repo.head(name) for name in ("main", "side")})
    repo.gc(expire=dt.timedelta(0))
    repo.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
