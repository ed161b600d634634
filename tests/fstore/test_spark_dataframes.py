"""fstore.spark: quads, tables and changes as Spark DataFrames, on one shared local[2]
session (skipped only when Java is missing)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import fstore
import fstore.spark as fspark
from fstore import to_rdf
from fstore.export.terms import QUAD_COLUMNS, quad_from_row
from fstore.tables import Geometry, Interval, KartRepo

from tests.spark_fixtures import history_repo, spark, store_quads, types_workdir  # noqa: F401

SPARK_TYPES = {
    "PK": "bigint", "geom": "binary", "int8": "int", "int16": "smallint", "int32": "int", "int64": "bigint",
    "float32": "float", "float64": "double", "text": "string", "text100": "string", "blob": "binary",
    "blob100": "binary", "boolean": "boolean", "numeric": "decimal(38,18)", "numeric10_5": "decimal(10,5)",
    "date": "date", "time": "time(6)", "timestamp": "timestamp_ntz", "timestampUTC": "timestamp",
    "interval": "string",
}


def frame_quads(frame) -> list[tuple]:
    return sorted((quad_from_row(r.asDict()) for r in frame.collect()), key=repr)


def test_quads_dataframe_at_several_commits(spark, history_repo, tmp_path):
    repo, ids = history_repo
    for label in ("c1", "c2", "side", "c4"):
        frame = fspark.quads_dataframe(repo, ids[label], spark, staging=tmp_path / label,
                                       partition_on=["graph"] if label != "c1" else None)
        assert frame.columns == list(QUAD_COLUMNS)
        expected = store_quads(repo, ids[label])
        assert frame.count() == len(expected)
        assert frame_quads(frame) == expected
    types = dict(frame.dtypes)
    assert types["object_int"] == "bigint" and types["object_decimal"] == "decimal(38,18)"
    assert types["object_datetime"] == "timestamp" and types["object_datetime_local"] == "timestamp_ntz"
    assert types["object_date"] == "date" and types["object_bool"] == "boolean"


def test_spark_sql_on_an_export(spark, history_repo, tmp_path):
    repo, _ = history_repo
    result = fspark.export_snapshot(repo, "main", tmp_path, tables=[], partition_on=["graph"], indices=["predicate"])
    frame = fspark.result_dataframe(spark, result)
    frame.createOrReplaceTempView("quads_main")
    counts = {r["graph"]: r["n"] for r in spark.sql(
        "SELECT graph, count(*) AS n FROM quads_main GROUP BY graph").collect()}
    expected: dict = {}
    for g, *_ in store_quads(repo, "main"):
        key = None if g is None else g.value
        expected[key] = expected.get(key, 0) + 1
    assert counts == expected
    total = spark.sql("SELECT sum(object_int) AS s FROM quads_main WHERE object_int IS NOT NULL").collect()[0]["s"]
    ints = [q[3] for q in store_quads(repo, "main")
            if q[3].__class__.__name__ == "Literal" and q[3].datatype
            and q[3].datatype.value.endswith("#integer") and abs(int(q[3].lexical)) < 2**63]
    assert total == sum(int(lit.lexical) for lit in ints)
    again = fspark.dataset_dataframe(spark, result.location.root, "quads")
    assert again.count() == frame.count()
    # a later export into the same place: Spark reads the new version
    repo2_ids = [c.id for c in repo.log("main")]
    older = fspark.export_snapshot(repo, repo2_ids[-1], tmp_path, tables=[], partition_on=["graph"],
                                   indices=["predicate"])
    assert older.tables["quads"].version == 2
    assert fspark.result_dataframe(spark, older).count() == len(store_quads(repo, repo2_ids[-1]))


def test_changes_dataframe_equals_diff(spark, history_repo, tmp_path):
    repo, ids = history_repo
    for a, b in [("c1", "c2"), ("c4", "c1"), ("c3", "c3")]:
        frame = fspark.changes_dataframe(repo, ids[a], ids[b], spark, staging=tmp_path / f"{a}{b}")
        assert frame.columns[:3] == ["_change_type", "_from_commit", "_to_commit"]
        rows = [r.asDict() for r in frame.collect()]
        kinds = {"insert": "+", "delete": "-"}
        got = sorted(((kinds[r["_change_type"]], quad_from_row(r)) for r in rows), key=repr)
        expected = sorted(((op, tuple(map(to_rdf, q))) for op, q in repo.diff(ids[a], ids[b])), key=repr)
        assert got == expected
        assert all(r["_from_commit"] == ids[a] and r["_to_commit"] == ids[b] for r in rows)


def _expected_cell(column, value):
    if value is None:
        return None
    if column.data_type == "geometry":
        return bytes(value.to_wkb())
    if column.data_type == "interval":
        return value.isoformat()
    if column.data_type == "timestamp" and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)  # collected in the UTC session zone
    return value


def test_table_dataframe_of_every_kart_type(spark, types_workdir, tmp_path):
    """The types repository imported into fstore; table_dataframe reads it through
    repo.at(ref).table(name) with a Spark type per Kart type."""
    from fstore.tables.kart_import import import_kart

    repo = fstore.open(tmp_path / "store")
    try:
        import_kart(repo, types_workdir)
        frame = fspark.table_dataframe(repo, "main", "manytypes", spark, staging=tmp_path / "staging")
        assert dict(frame.dtypes) == SPARK_TYPES and frame.columns == list(SPARK_TYPES)
        geom = frame.schema["geom"].metadata
        assert geom["crs"] == "EPSG:2193" and geom["encoding"] == "WKB" and "NZGD2000" in geom["crs_wkt"]
        assert frame.schema["PK"].metadata["kart.primaryKeyIndex"] == "0"
        assert frame.schema["numeric10_5"].metadata["kart.precision"] == "10"
        with KartRepo(types_workdir) as kart:
            ds = kart.dataset("main", "manytypes")
            schema, rows = ds.schema, {r["PK"]: r for r in ds.rows()}
        got = {r["PK"]: r.asDict() for r in frame.collect()}
        assert set(got) == set(rows) == {0, 1, 2, 3}
        for pk, row in rows.items():
            for column in schema.columns:
                assert got[pk][column.name] == _expected_cell(column, row[column.name]), (pk, column.name)
        assert got[1]["time"] == dt.time(18, 19, 20) and got[3]["interval"] == "P4DT3H2M1S"
        assert got[1]["numeric10_5"] == Decimal("123.45600") and got[2]["int16"] == -1248
        # a table at an older commit, partitioned
        first = list(repo.log("main"))[-1]
        older = fspark.table_dataframe(repo, first.id, "manytypes", spark, staging=tmp_path / "old",
                                       partition_on=["PK"])
        assert older.count() == len(repo.at(first.id).table("manytypes"))
        # typed changes of a table, read by Spark
        result = fspark.export_changes(repo, first.id, "main", tmp_path / "changes", tables=["manytypes"],
                                       include_quads=False)
        changes = fspark.result_dataframe(spark, result, "manytypes")
        assert changes.columns[:3] == ["_change_type", "_from_commit", "_to_commit"]
        assert dict(changes.dtypes)["numeric10_5"] == "decimal(10,5)"
        assert changes.count() == result.tables["manytypes"].rows
    finally:
        repo.close()


def test_table_dataframe_sizes_and_time_zones(spark, tmp_path):
    """ByteType..LongType, FloatType / DoubleType, DecimalType, time, both timestamps."""
    import fstore.tables as tables

    repo = fstore.open(tmp_path / "store")
    try:
        schema = [
            {"id": "a", "name": "id", "dataType": "integer", "primaryKeyIndex": 0, "size": 8},
            {"id": "b", "name": "i16", "dataType": "integer", "size": 16},
            {"id": "c", "name": "i32", "dataType": "integer", "size": 32},
            {"id": "d", "name": "i64", "dataType": "integer", "size": 64},
            {"id": "e", "name": "f32", "dataType": "float", "size": 32},
            {"id": "f", "name": "f64", "dataType": "float", "size": 64},
            {"id": "g", "name": "price", "dataType": "numeric", "precision": 7, "scale": 3},
            {"id": "h", "name": "at", "dataType": "time"},
            {"id": "i", "name": "local", "dataType": "timestamp"},
            {"id": "j", "name": "utc", "dataType": "timestamp", "timezone": "UTC"},
            {"id": "k", "name": "where", "dataType": "geometry", "geometryType": "POINT", "geometryCRS": "EPSG:4326"},
            {"id": "l", "name": "span", "dataType": "interval"},
        ]
        point = Geometry.from_wkt("POINT (174.78 -41.29)")
        row = {"id": -128, "i16": 32767, "i32": -2**31, "i64": 2**63 - 1, "f32": 1.5, "f64": -2.25,
               "price": Decimal("1234.567"), "at": dt.time(23, 59, 59, 999999), "local": dt.datetime(1999, 12, 31, 23),
               "utc": dt.datetime(2000, 1, 1, 12, tzinfo=dt.timezone.utc), "where": point,
               "span": Interval(years=1, months=2, seconds=Decimal("3.5"))}
        with repo.transaction("main", message="sizes") as tx:
            t = tables.create(tx, "sizes", schema, crs={"EPSG:4326": 'GEOGCS["WGS 84"]'})
            t.insert(row)
            t.insert({"id": 1})
        frame = fspark.table_dataframe(repo, "main", "sizes", spark, staging=tmp_path / "staging")
        assert [t for _, t in frame.dtypes] == ["tinyint", "smallint", "int", "bigint", "float", "double",
                                                 "decimal(7,3)", "time(6)", "timestamp_ntz", "timestamp", "binary",
                                                 "string"]
        assert frame.schema["where"].metadata["crs_wkt"] == 'GEOGCS["WGS 84"]'
        got = {r["id"]: r.asDict() for r in frame.collect()}
        assert got[-128] == {**row, "utc": dt.datetime(2000, 1, 1, 12), "where": point.to_wkb(),
                             "span": "P1Y2MT3.5S"}
        assert all(v is None for k, v in got[1].items() if k != "id")
    finally:
        repo.close()
