"""Integers read back exactly from the Parquet export through plateau, pyarrow, pandas and
Spark, also in columns that have nulls (issue 24): the pandas metadata of every file says
that such a column is a pandas nullable integer (``Int64`` …), so no reader turns it into
float64 (where 0 reads as 0.0 and an integer above 2**53 loses its value)."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import fstore
import fstore.tables as tables
from fstore import IRI
from fstore.export.kartothek import load_metadata, location, read_table, store_url, table_files, table_schema
from fstore.export.snapshot import export_changes, export_snapshot

from tests.spark_fixtures import spark  # noqa: F401

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# bounds, both sides of 2**53 (the last integer float64 holds exactly), and 0 (read as 0.0)
EXACT = [0, 1, -1, 2**53, 2**53 + 1, -(2**53) - 1, 2**62 + 3, INT64_MAX, INT64_MAX - 1, INT64_MIN, INT64_MIN + 1]
XSD = "http://www.w3.org/2001/XMLSchema#"


# subject -> object written: integers (two beyond 64 bits, whose ``object_int`` is null) and
# values of other kinds (``object_int`` null too)
WRITTEN = {f"urn:s{i}": v for i, v in enumerate(EXACT + [2**64, -(2**64) - 5, "text", 1.5, True, IRI("urn:o")])}


def _quads_repo(path):
    """:data:`WRITTEN` in two graphs."""
    repo = fstore.open(path)
    with repo.transaction("main", message="integers") as tx:
        for i, (subject, value) in enumerate(WRITTEN.items()):
            fstore.add(tx, IRI(f"urn:g{i % 2}"), IRI(subject), IRI("urn:p"), value)
    return repo


def _expected_quad_ints() -> dict[str, int | None]:
    """subject -> the integer its ``object_int`` must hold (None: null)."""
    return {s: v if type(v) is int and INT64_MIN <= v <= INT64_MAX else None for s, v in WRITTEN.items()}


def _assert_nullable_ints(frame: pd.DataFrame, column: str, want: dict, key: str) -> None:
    """``frame[column]`` is a pandas nullable integer column holding exactly ``want``."""
    assert isinstance(frame[column].dtype, pd.api.extensions.ExtensionDtype), frame[column].dtype
    assert str(frame[column].dtype) == "Int64", frame[column].dtype
    got = {k: (None if v is pd.NA else v) for k, v in zip(frame[key], frame[column].tolist())}
    assert got == want
    assert all(type(v) is int for v in got.values() if v is not None)


def _data_frames(dest, table: str) -> list[pd.DataFrame]:
    """Each data file of a dataset's current version read by pandas alone."""
    where = location(dest)
    document = load_metadata(where, table)
    return [pd.read_parquet(where.path(key)) for _, key in table_files(document)]


def test_quad_integers_with_nulls_read_back_exactly(tmp_path, spark):
    repo = _quads_repo(tmp_path / "store")
    try:
        want = _expected_quad_ints()
        assert sum(v is None for v in want.values()) == 6 and INT64_MAX in want.values()
        dest = tmp_path / "out"
        export_snapshot(repo, "main", dest)  # the quads partitioned by graph
        # pyarrow
        table = read_table(location(dest), "quads")
        assert table.schema.field("object_int").type == pa.int64()
        assert dict(zip(table.column("subject").to_pylist(), table.column("object_int").to_pylist())) == want
        one = read_table(location(dest), "quads", filter=pc.field("object_int") == 2**53 + 1)
        assert one.column("subject").to_pylist() == [s for s, v in want.items() if v == 2**53 + 1]
        # plateau (the maintained Kartothek); as float64, 2**53 + 1 would equal 2**53
        from plateau.io.eager import read_table as plateau_read_table

        frame = plateau_read_table("quads", store_url(dest))
        _assert_nullable_ints(frame, "object_int", want, "subject")
        assert frame[frame["object_int"] == 2**53 + 1]["subject"].tolist() == [s for s, v in want.items()
                                                                               if v == 2**53 + 1]
        # pandas, file by file (each file's own pandas metadata)
        parts = _data_frames(dest, "quads")
        assert len(parts) == 2
        _assert_nullable_ints(pd.concat(parts), "object_int", want, "subject")
        # the schema plateau and pandas take from _common_metadata says so too
        schema = table_schema(location(dest), load_metadata(location(dest), "quads"))
        columns = {c["name"]: c for c in schema.pandas_metadata["columns"]}
        assert columns["object_int"]["numpy_type"] == "Int64"
        assert schema.empty_table().to_pandas()["object_int"].dtype == pd.Int64Dtype()
        # Spark
        from fstore.spark import dataset_dataframe

        rows = dataset_dataframe(spark, dest, "quads").select("subject", "object_int").collect()
        assert dict((r["subject"], r["object_int"]) for r in rows) == want
    finally:
        repo.close()


def _table_repo(path):
    """A Kart table with integer columns of every size, nulls in each, values at the
    bounds of each size; a non-null integer to partition on."""
    repo = fstore.open(path)
    schema = [{"id": "k", "name": "id", "dataType": "integer", "primaryKeyIndex": 0},
              {"id": "b", "name": "bucket", "dataType": "integer", "size": 16},
              {"id": "i8", "name": "i8", "dataType": "integer", "size": 8},
              {"id": "i16", "name": "i16", "dataType": "integer", "size": 16},
              {"id": "i32", "name": "i32", "dataType": "integer", "size": 32},
              {"id": "i64", "name": "i64", "dataType": "integer", "size": 64}]
    bounds = {"i8": 7, "i16": 15, "i32": 31, "i64": 63}
    rows = []
    for i, big in enumerate(EXACT + [None, None]):
        row = {"id": INT64_MAX - i if i % 2 else INT64_MIN + i, "bucket": i % 3}
        for name, bits in bounds.items():
            if big is None:
                row[name] = None
            else:
                row[name] = max(-(2**bits), min(2**bits - 1, big))
        rows.append(row)
    with repo.transaction("main", message="v1") as tx:
        tables.create(tx, "ints", schema).insert_many(rows)
    v1 = tx.commit_id
    with repo.transaction("main", message="v2") as tx:
        t = tx.table("ints")
        t.update({"id": rows[0]["id"], "i64": None, "i8": -128})
        t.insert({"id": 12345, "bucket": 2, "i8": None, "i16": None, "i32": None, "i64": 2**53 + 1})
    return repo, v1, tx.commit_id


INT_TYPES = {"i8": "Int8", "i16": "Int16", "i32": "Int32", "i64": "Int64"}


def _check_table_frame(frame: pd.DataFrame, want: list[dict], *, partitioned: bool) -> None:
    for name, dtype in INT_TYPES.items():
        assert str(frame[name].dtype) == dtype, (name, frame[name].dtype)
    assert str(frame["id"].dtype) == "int64"  # the primary key is never null: numpy's own integers
    if partitioned:  # never null; plateau rebuilds a partition value from its path, in numpy's type
        assert str(frame["bucket"].dtype) == "int16"
    else:
        assert str(frame["bucket"].dtype) == "Int16"
    got = sorted(({k: (None if v is pd.NA else v) for k, v in row.items()} for row in frame.to_dict("records")),
                 key=lambda r: r["id"])
    assert got == sorted(want, key=lambda r: r["id"])
    assert all(type(v) is int for row in got for v in row.values() if v is not None)


@pytest.mark.parametrize("partition_on", [[], ["bucket"]])
def test_table_integers_with_nulls_read_back_exactly(tmp_path, spark, partition_on):
    repo, v1, v2 = _table_repo(tmp_path / "store")
    try:
        dest = tmp_path / "out"
        for commit in (v1, v2):  # the second export is a new version of the changed partitions
            export_snapshot(repo, commit, dest, tables=["ints"], partition_on={"ints": partition_on})
            want = [dict(r) for r in repo.at(commit).table("ints").rows()]
            assert any(r["i64"] is None for r in want) and any(r["i64"] == INT64_MAX for r in want)
            # pyarrow
            table = read_table(location(dest), "ints")
            assert sorted(table.to_pylist(), key=lambda r: r["id"]) == sorted(want, key=lambda r: r["id"])
            # plateau
            from plateau.io.eager import read_table as plateau_read_table

            _check_table_frame(plateau_read_table("ints", store_url(dest)), want, partitioned=bool(partition_on))
            # pandas, file by file
            parts = _data_frames(dest, "ints")
            for part in parts:
                for name, dtype in INT_TYPES.items():
                    assert str(part[name].dtype) == dtype
            # Spark
            from fstore.spark import dataset_dataframe

            rows = [r.asDict() for r in dataset_dataframe(spark, dest, "ints").collect()]
            assert sorted(rows, key=lambda r: r["id"]) == sorted(want, key=lambda r: r["id"])
    finally:
        repo.close()


def test_table_changes_keep_their_integers(tmp_path):
    """The change data feed of a table: the same nullable integer columns."""
    repo, v1, v2 = _table_repo(tmp_path / "store")
    try:
        dest = tmp_path / "changes"
        export_changes(repo, v1, v2, dest, tables=["ints"], include_quads=False)
        from plateau.io.eager import read_table as plateau_read_table

        frame = plateau_read_table("ints", store_url(dest))
        for name, dtype in INT_TYPES.items():
            assert str(frame[name].dtype) == dtype
        post = frame[frame["_change_type"] == "insert"]
        assert post["i64"].tolist() == [2**53 + 1] and post["i8"].tolist() == [pd.NA]
        table = read_table(location(dest), "ints")
        for row in table.to_pylist():
            match = frame[(frame["id"] == row["id"]) & (frame["_change_type"] == row["_change_type"])]
            assert [None if v is pd.NA else v for v in match.iloc[0][list(INT_TYPES)].tolist()] == \
                [row[n] for n in INT_TYPES]
    finally:
        repo.close()


def test_every_file_carries_the_pandas_metadata(tmp_path):
    """Not only ``_common_metadata``: plateau and pandas read each data file's own, and
    each index file's (as float64, an index with a null made 2**53 + 1 the key 2**53)."""
    repo = _quads_repo(tmp_path / "store")
    try:
        export_snapshot(repo, "main", tmp_path / "out", indices=["object_int"])
        where = location(tmp_path / "out")
        document = load_metadata(where, "quads")
        for _, key in table_files(document):
            columns = {c["name"]: c for c in pq.read_schema(where.path(key)).pandas_metadata["columns"]}
            assert columns["object_int"]["numpy_type"] == "Int64" and "graph" not in columns
        index = pq.read_table(where.path(document["indices"]["object_int"])).to_pandas()
        keys = [None if v is pd.NA else v for v in index["object_int"].tolist()]
        assert sorted(keys, key=repr) == sorted(set(_expected_quad_ints().values()), key=repr)
    finally:
        repo.close()


def test_plateau_finds_integer_keys_by_index(tmp_path):
    """plateau prunes partitions with the index of an integer column, by exact values."""
    repo, v1, _ = _table_repo(tmp_path / "store")
    try:
        dest = tmp_path / "out"
        export_snapshot(repo, v1, dest, tables=["ints"], partition_on={"ints": ["bucket"]}, indices=["id"])
        from plateau.io.eager import read_table as plateau_read_table

        rows = {r["id"]: r for r in repo.at(v1).table("ints").rows()}
        for key in (INT64_MAX - 1, INT64_MIN, INT64_MIN + 2):
            frame = plateau_read_table("ints", store_url(dest), predicates=[[("id", "==", key)]])
            assert frame["id"].tolist() == [key] and frame["bucket"].tolist() == [rows[key]["bucket"]]
    finally:
        repo.close()


def test_a_version_of_format_2_is_rewritten_whole(tmp_path):
    """Files written by export format 2 have no pandas metadata of their own (plateau reads
    their integer columns with nulls as float64): the next export keeps none of them, so no
    version mixes float64 and Int64 partitions."""
    repo = _quads_repo(tmp_path / "store")
    try:
        dest = tmp_path / "out"
        export_snapshot(repo, "main", dest)
        where = location(dest)
        document = load_metadata(where, "quads")
        for _, key in table_files(document):  # as format 2 wrote them
            table = pq.read_table(where.path(key))
            pq.write_table(table.replace_schema_metadata({b"datae.table": b"quads"}), where.path(key))
        document["metadata"]["datae.export_format"] = "2"
        (dest / "quads.by-dataset-metadata.json").write_text(json.dumps(document))
        with repo.transaction("main", message="one more") as tx:
            fstore.add(tx, IRI("urn:g0"), IRI("urn:s-new"), IRI("urn:p"), 2**53 + 3)
        result = export_snapshot(repo, "main", dest)
        assert result.tables["quads"].reused == 0 and len(result.tables["quads"].files) == 2
        from plateau.io.eager import read_table as plateau_read_table

        want = {**_expected_quad_ints(), "urn:s-new": 2**53 + 3}
        _assert_nullable_ints(plateau_read_table("quads", store_url(dest)), "object_int", want, "subject")
    finally:
        repo.close()
