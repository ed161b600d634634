"""The row store (format 6, fstore.core.rows) against its oracle: the same operations on a
store whose tables keep every tuple generic (no path rule registers a graph: format 5's
layout) give the same commit ids, the same rows at every commit, the same diffs and a clean
verify; gc keeps what rows refer to; verify finds damage to the rows' keys."""

from __future__ import annotations

import datetime as dt
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import fstore
import fstore.core.rows as rows_module
import fstore.tables as tables
from fstore.core.layout import ROW_RECORDS, ROW_SNAPSHOTS
from fstore.tables.paths import GENERAL

WHEN = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)
SCHEMA = [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
          {"id": "v", "name": "v", "dataType": "text"}]
WIDER = SCHEMA + [{"id": "w", "name": "w", "dataType": "float"}]
TEXT_KEY = [{"id": "k", "name": "k", "dataType": "text", "primaryKeyIndex": 0},
            {"id": "v", "name": "v", "dataType": "integer"}]


@contextmanager
def generic_only() -> Iterator[None]:
    """Writes through here register no table: every feature tuple stays generic."""
    kept = rows_module.RULES
    rows_module.RULES = ()
    try:
        yield
    finally:
        rows_module.RULES = kept


class Pair:
    """Two stores fed the same operations: ``rows`` (format 6's layout) and ``generic``."""

    def __init__(self, root: Path) -> None:
        self.rows = fstore.open(root / "rows")
        self.generic = fstore.open(root / "generic")

    def both(self, action) -> None:
        action(self.rows)
        with generic_only():
            action(self.generic)

    def commit(self, branch: str, message: str, body) -> None:
        def run(repo):
            with repo.transaction(branch, message=message, author="a", time=WHEN) as tx:
                body(tx)
        self.both(run)

    def check(self) -> None:
        for name in ("main", "side"):
            assert self.rows.head(name) == self.generic.head(name), name
        with self.rows.storage.read() as a, self.generic.storage.read() as b:
            commits = [record["id"] for _, record in a.all_commits()]
            assert sorted(commits) == sorted(record["id"] for _, record in b.all_commits())
        for commit in commits:
            mine, theirs = self.rows.at(commit), self.generic.at(commit)
            names = tables.list_tables(mine)
            assert names == tables.list_tables(theirs)
            for name in names:
                assert list(mine.table(name).rows()) == list(theirs.table(name).rows())
                assert len(mine.table(name)) == len(theirs.table(name))
                # the bulk read (rows by key from the snapshot, the overlay's, the generic ones)
                assert mine.table(name).to_arrow().equals(theirs.table(name).to_arrow())
        assert self.rows.verify() == [] and self.generic.verify() == []

    def close(self) -> None:
        self.rows.close()
        self.generic.close()


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    found = Pair(tmp_path)
    yield found
    found.close()


def test_a_history_of_two_tables_with_a_merge_is_the_same_in_both_layouts(pair: Pair) -> None:
    pair.commit("main", "create", lambda tx: (tables.create(tx, "t", SCHEMA), tables.create(tx, "s", TEXT_KEY),
                                              tx.table("t").insert_many([{"k": i, "v": f"v{i}"} for i in range(50)]),
                                              tx.table("s").insert_many([{"k": f"key {i}", "v": i} for i in range(20)])))
    pair.both(lambda repo: repo.branch("side"))
    pair.commit("side", "side", lambda tx: (tx.table("t").update({"k": 3, "v": "side"}), tx.table("t").delete(4),
                                            tx.table("s").upsert({"k": "new", "v": -1})))
    pair.commit("main", "main", lambda tx: (tx.table("t").update({"k": 5, "v": "main"}), tx.table("t").alter(WIDER),
                                            tx.table("t").upsert({"k": 60, "v": "wide", "w": 1.5})))
    pair.both(lambda repo: repo.merge("main", "side", message="merge", author="a", time=WHEN))
    pair.commit("main", "after", lambda tx: (tx.table("t").delete(3), tx.table("t").insert({"k": 4, "v": "back"})))
    pair.check()
    with pair.rows.storage.read() as snapshot:  # the rows hold the features, not the generic store
        assert next(snapshot.tx.range(ROW_RECORDS, ROW_RECORDS + b"\xfd"), None) is not None
        assert next(snapshot.tx.range(ROW_SNAPSHOTS, ROW_SNAPSHOTS + b"\xfd"), None) is not None
    for a, b in (("main~2", "main"), ("side", "main"), ("main~3", "side")):
        assert tables.table_diff(pair.rows, a, b, "t") == tables.table_diff(pair.generic, a, b, "t")
    assert tables.table_log(pair.rows, "main", "t", 3) == tables.table_log(pair.generic, "main", "t", 3)
    assert tables.table_blame(pair.rows, "main", "t", 5, "v") == tables.table_blame(pair.generic, "main", "t", 5, "v")


operations = st.lists(st.tuples(st.sampled_from(["main", "side"]),
                                st.lists(st.tuples(st.sampled_from(["insert", "update", "delete"]),
                                                   st.integers(0, 12), st.text("ab", max_size=2)),
                                         min_size=1, max_size=6),
                                st.booleans()),
                      min_size=1, max_size=6)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations)
def test_random_histories_are_the_same_in_both_layouts(tmp_path_factory, history) -> None:
    pair = Pair(tmp_path_factory.mktemp("pair"))
    try:
        pair.commit("main", "create", lambda tx: tables.create(tx, "t", SCHEMA))
        pair.both(lambda repo: repo.branch("side"))
        for number, (branch, changes, merge) in enumerate(history):
            def body(tx, changes=changes):
                table = tx.table("t")
                for op, key, value in changes:
                    held = table.get(key) is not None
                    if op == "insert" and not held:
                        table.insert({"k": key, "v": value})
                    elif op == "update" and held:
                        table.update({"k": key, "v": value + "!"})
                    elif op == "delete" and held:
                        table.delete(key)
            pair.commit(branch, f"c{number}", body)
            if merge:
                other = "side" if branch == "main" else "main"

                def merged(repo, branch=branch, other=other):
                    try:
                        repo.merge(branch, other, message="m", author="a", time=WHEN, policy="theirs")
                    except fstore.errors.MergeError:
                        pass
                pair.both(merged)
        pair.check()
    finally:
        pair.close()


def test_gc_keeps_the_records_rows_refer_to(tmp_path: Path) -> None:
    """A row updated on a branch that is then deleted: its dead record there referred to an
    alive record gc drops with the branch's commits; the records kept stay whole."""
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="one", author="a") as tx:
        tables.create(tx, "t", SCHEMA)
        tx.table("t").insert_many([{"k": i, "v": "x"} for i in range(10)])
    repo.branch("side")
    with repo.transaction("side", message="side", author="a") as tx:
        tx.table("t").update({"k": 1, "v": "side"})
    with repo.transaction("side", message="side 2", author="a") as tx:
        tx.table("t").update({"k": 1, "v": "side 2"})
    with repo.transaction("main", message="main", author="a") as tx:
        tx.table("t").delete(2)
    repo.delete_branch("side")
    repo.gc(expire=dt.timedelta(0))
    assert repo.verify() == []
    assert [row["k"] for row in repo.at("main").table("t").rows()] == [0, 1, 3, 4, 5, 6, 7, 8, 9]
    assert repo.at("main~1").table("t").get(2) == {"k": 2, "v": "x"}
    repo.close()


def test_irregular_features_stay_generic_and_read_with_the_rows(tmp_path: Path) -> None:
    """A feature at a path the table's rule does not give (written as Kart's bytes by an
    importer) is a generic tuple beside the rows, read, counted and diffed with them."""
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="one", author="a") as tx:
        tables.create(tx, "t", SCHEMA)
        tx.table("t").insert_many([{"k": i, "v": "x"} for i in range(3)])
    regular = dict(repo.at("main").table("t").features())
    path, blob = next(iter(regular.items()))
    odd = GENERAL.encode_path([7])  # where a msgpack/hash table would keep key 7
    with repo.transaction("main", message="odd", author="a") as tx:
        tx.table("t").write_feature(odd, blob[:43] + tables.pack(["odd"]))
    table = repo.at("main").table("t")
    assert len(table) == 4 and dict(table.features())[odd] == blob[:43] + tables.pack(["odd"])
    assert table.to_pandas()["v"].tolist() == ["x", "x", "x", "odd"]  # the bulk read takes it too
    with repo.storage.read() as snapshot:
        row = repo.storage.tables.row(snapshot.tx, (tables.dataset_graph("t"), odd, tables.FEATURE, blob))
        assert row is None and repo.storage.tables.row(snapshot.tx, (tables.dataset_graph("t"), path, tables.FEATURE, blob))
    assert repo.verify() == []
    repo.close()


@pytest.mark.parametrize("damage", ["body", "by-commit key", "snapshot pointer"])
def test_verify_reports_damaged_rows(tmp_path: Path, damage: str) -> None:
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="one", author="a") as tx:
        tables.create(tx, "t", SCHEMA)
        tx.table("t").insert_many([{"k": i, "v": "x"} for i in range(5)])
    rows = repo.storage.tables.rows
    with repo.storage.write() as writer:
        tx = writer.tx
        if damage == "body":
            key, body = next(iter(rows.records.range(tx, b"\x95\x00", b"\x95\x01")))
            rows.records.set(tx, key, body[:-1] + bytes([body[-1] ^ 1]))
        elif damage == "by-commit key":
            key, _ = next(iter(rows.records.range(tx, b"\x95\x01", b"\x95\x02")))
            rows.records.delete(tx, key)
        else:
            key, _ = next(iter(rows.snapshots.range(tx, ROW_SNAPSHOTS, ROW_SNAPSHOTS + b"\xfd")))
            rows.snapshots.set(tx, key, fstore.core.rows.pointers_value([(99, 0)]))
    assert repo.verify() != []
    repo.close()


def test_the_compiled_scan_reads_what_the_row_by_row_scan_reads(tmp_path: Path, monkeypatch) -> None:
    """RowStore.scan's compiled loop (fstore.core._rows) and its row-by-row reference give
    the same chunks: at the head, at an older commit (dead rows skipped), with two
    legends (a schema change) and a row read through another snapshot's records."""
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="one", author="a") as tx:
        tables.create(tx, "t", SCHEMA)
        tx.table("t").insert_many([{"k": i, "v": f"v{i}"} for i in range(300)])
    with repo.transaction("main", message="two", author="a") as tx:
        tx.table("t").alter(WIDER)
        tx.table("t").upsert_rows([{"k": i, "v": "new", "w": 0.5} for i in range(0, 300, 7)])
        tx.table("t").delete(5)
    repo.branch("side", "main~1")
    for ref in ("main", "main~1", "side"):
        table = repo.at(ref).table("t")
        compiled = [(list(paths), blobs) for paths, blobs in table.feature_chunks(64)]
        monkeypatch.setattr(rows_module, "COMPILED", False)
        reference = [(list(paths), blobs) for paths, blobs in table.feature_chunks(64)]
        monkeypatch.setattr(rows_module, "COMPILED", True)
        assert compiled == reference and sum(len(blobs) for _, blobs in compiled) == (300 if ref != "main" else 299)
    repo.close()


def load_then_update(repo: fstore.Repository, second_tuple: tuple[str, bytes] | None) -> tuple[str, bytes]:
    """Two commits: a table of 40 rows; then 14 rows updated, one deleted, and a second
    tuple at one row's path (``second_tuple``: the path and blob to put, else made from the
    first row). Returns that path and blob."""
    with repo.transaction("main", message="load", author="a", time=WHEN) as tx:
        tables.create(tx, "t", SCHEMA)
        tx.table("t").insert_many([{"k": i, "v": f"v{i}"} for i in range(40)])
    if second_tuple is None:
        path, blob = next(iter(repo.at("main").table("t").features()))
        second_tuple = (path, blob[:-1] + b"\xc0")
    with repo.transaction("main", message="update", author="a", time=WHEN) as tx:
        tx.table("t").upsert_rows([{"k": i, "v": "new"} for i in range(0, 40, 3)])
        tx.table("t").delete(1)
        tx.stage_table_tuple((tables.dataset_graph("t"), second_tuple[0], tables.FEATURE, second_tuple[1]), True)
    return second_tuple


@pytest.mark.parametrize("limit", [10 ** 9, 7])
def test_a_table_commit_written_in_chunks_is_the_commit_written_at_once(tmp_path: Path, monkeypatch, limit: int) -> None:
    """A transaction past the spill limit streams its commit a chunk at a time (its rows'
    records deferred into sorted runs, the snapshot moved chunk by chunk): the same ids,
    rows and verify as the commit written at once, an update's dead and alive records and
    two tuples of one row falling on either side of a chunk's end included."""
    from fstore import transaction
    from fstore.core import storage

    monkeypatch.setattr(transaction.Staged, "spill_limit", limit)
    monkeypatch.setattr(storage, "STREAM_CHUNK", min(limit, 5))
    repo = fstore.open(tmp_path / "r")
    second = load_then_update(repo, None)
    ids = (repo.head("main"), repo.resolve("main~1"))
    rows = [sorted(repo.at(ref).table("t").features()) for ref in ("main", "main~1")]
    assert repo.verify() == []
    repo.close()
    assert len(rows[0]) == 40 and len(rows[1]) == 40  # one row fewer, one tuple more
    # the same history written at once, in a store of its own, gives the same ids
    monkeypatch.setattr(transaction.Staged, "spill_limit", 10 ** 9)
    other = fstore.open(tmp_path / "other")
    load_then_update(other, second)
    assert (other.head("main"), other.resolve("main~1")) == ids
    assert [sorted(other.at(ref).table("t").features()) for ref in ("main", "main~1")] == rows
    other.close()


def test_a_table_commit_in_chunks_on_a_branch_made_again_at_its_commit(tmp_path: Path, monkeypatch) -> None:
    """A branch deleted and made again at its commit has no snapshot of its own: its next
    commit, written in chunks, folds every record in once (no chunk's rows twice)."""
    from fstore import transaction
    from fstore.core import storage

    repo = fstore.open(tmp_path / "r")
    repo.branch("dev", "main")
    with repo.transaction("dev", message="create", author="a", time=WHEN) as tx:
        tables.create(tx, "t", SCHEMA)
        tx.table("t").insert({"k": 0, "v": "v0"})
    first = tx.commit_id
    repo.delete_branch("dev")
    repo.branch("dev", first)
    monkeypatch.setattr(transaction.Staged, "spill_limit", 3)
    monkeypatch.setattr(storage, "STREAM_CHUNK", 3)
    with repo.transaction("dev", message="more", author="a", time=WHEN) as tx:
        tx.table("t").insert_many([{"k": i, "v": f"v{i}"} for i in range(1, 10)])
    assert [len(repo.at(ref).table("t").to_pandas()) for ref in (first, "dev")] == [1, 10]
    assert repo.verify() == []
    repo.close()


def three_rows(root: Path, *values: str) -> fstore.Repository:
    """A store whose table ``t`` gets three rows of ``"x"``, then a commit per value that
    sets row 1 to it."""
    repo = fstore.open(root / "r")
    with repo.transaction("main", message="one", author="a") as tx:
        tables.create(tx, "t", SCHEMA)
        tx.table("t").insert_many([{"k": i, "v": "x"} for i in range(3)])
    for value in values:
        with repo.transaction("main", message=f"set {value}", author="a") as tx:
            tx.table("t").update({"k": 1, "v": value})
    return repo


def test_gc_points_a_snapshot_at_a_kept_record_of_the_same_row(tmp_path: Path) -> None:
    """A row set back to an earlier value, then the branch reset before the change: the
    snapshot still reads the record of the later commit (the same body); gc drops that
    commit and points the snapshot at the earlier record, so every read stays whole."""
    repo = three_rows(tmp_path, "y", "x")
    repo.reset("main~2", "main", hard=True)
    report = repo.gc(expire=dt.timedelta(0))
    assert report.records == 4  # two commits of a dead and an alive record each, counted once
    assert repo.verify() == []
    assert [row["v"] for row in repo.at("main").table("t").rows()] == ["x", "x", "x"]
    repo.close()


def test_a_move_of_a_branch_counts_the_rows_of_an_overlay_a_read_left_unread(tmp_path: Path) -> None:
    """A read that needs no row (listing tables) keeps the overlay it made with its rows
    unread; a reset that reuses it reads them."""
    repo = three_rows(tmp_path, "y")
    repo.branch("side", "main~1")
    assert tables.list_tables(repo.at("side")) == ["t"]
    repo.branch("other", "main")
    repo.reset("main~1", "other", hard=True)
    assert [row["v"] for row in repo.at("other").table("t").rows()] == ["x", "x", "x"]
    assert repo.verify() == []
    repo.close()


def test_a_feature_given_as_a_subclass_of_bytes_is_kept_where_its_value_goes(tmp_path: Path) -> None:
    """Where a tuple is kept depends on its values, not on their Python classes: a blob
    given as a bytes subclass (numpy.bytes_, say) is the row its bytes make."""
    class Blob(bytes):
        pass

    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="one", author="a") as tx:
        tables.create(tx, "t", SCHEMA)
        tx.table("t").insert_many([{"k": i, "v": "x"} for i in range(3)])
    path, blob = sorted(repo.at("main").table("t").features())[0]
    with repo.transaction("main", message="out", author="a") as tx:
        tx.table("t").write_feature(path, None)
    with repo.transaction("main", message="back as a subclass", author="a") as tx:
        tx.table("t").write_feature(path, Blob(blob))
    with repo.storage.read() as snapshot:
        quad = (tables.dataset_graph("t"), path, tables.FEATURE, blob)
        assert repo.storage.tables.generic.records(snapshot.tx, quad) == []
        assert [alive for _, alive in repo.storage.tables.records(snapshot.tx, quad)] == [True, False, True]
    with repo.transaction("main", message="delete", author="a") as tx:
        tx.table("t").delete(0)
    assert len(repo.at("main").table("t")) == 2 and repo.verify() == []
    repo.close()


def test_rows_read_in_bulk_name_a_bad_feature_by_its_path(tmp_path: Path) -> None:
    """rows() reads a table in key order from its rows (no path made), merging in the
    generic features; a feature its legend cannot read is named by its path."""
    repo = three_rows(tmp_path)
    path, blob = sorted(repo.at("main").table("t").features())[0]
    odd = GENERAL.encode_path([7])
    with repo.transaction("main", message="odd", author="a") as tx:
        tx.table("t").write_feature(odd, blob[:43] + tables.pack(["odd"]))
    assert [(row["k"], row["v"]) for row in repo.at("main").table("t").rows()] == [(0, "x"), (1, "x"), (2, "x"), (7, "odd")]
    with repo.transaction("main", message="bad", author="a") as tx:  # one value too many for its legend
        tx.stage_table_tuple((tables.dataset_graph("t"), path, tables.FEATURE, blob[:43] + tables.pack(["x", "y"])), True)
    with pytest.raises(tables.FeatureError, match=path.replace("+", r"\+")):
        list(repo.at("main").table("t").rows())
    repo.close()


def hinted_history(root: Path, hints: bool, monkeypatch) -> list[str]:
    """Commits that stage rows whose state at the head the writer looked up (inserts into
    a table, upserts, a row deleted then written back the same, a table dropped and made
    again with the same rows): the ids, with the writer's hints taken or ignored."""
    from fstore import transaction

    if not hints:
        original = transaction.Staged.intend_many
        monkeypatch.setattr(transaction.Staged, "intend_many",
                            lambda self, quads, alive, at_head=None: original(self, quads, alive))
    repo = fstore.open(root)
    rows = [{"k": i, "v": f"v{i}"} for i in range(20)]
    with repo.transaction("main", message="one", author="a", time=WHEN) as tx:
        tables.create(tx, "t", SCHEMA).insert_many(rows[:10])
    with repo.transaction("main", message="two", author="a", time=WHEN) as tx:
        t = tx.table("t")
        t.insert_many(rows[10:15])
        t.delete(3)
        t.upsert_rows([{"k": 3, "v": "v3"}, {"k": 4, "v": "new"}, {"k": 15, "v": "v15"}])
        t.upsert_rows([{"k": 4, "v": "v4"}, {"k": 5, "v": "five"}])
    with repo.transaction("main", message="three", author="a", time=WHEN) as tx:
        tables.drop(tx, "t")
        t = tables.create(tx, "t", SCHEMA)
        t.insert_many(rows[:12])
        t.upsert_rows([{"k": 0, "v": "zero"}])
    ids = [repo.resolve(f"main~{i}") for i in (2, 1, 0)]
    assert repo.verify() == []
    repo.close()
    return ids


def test_the_writers_hints_change_no_commit(tmp_path: Path, monkeypatch) -> None:
    """What a table writer tells the staging about the head (rows it looked up) spares
    the commit its lookups and changes nothing it writes."""
    hinted = hinted_history(tmp_path / "hinted", True, monkeypatch)
    plain = hinted_history(tmp_path / "plain", False, monkeypatch)
    assert hinted == plain and len(set(hinted)) == 3
