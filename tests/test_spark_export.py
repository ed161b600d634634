"""The Spark export without Spark: quads and Kart tables as Arrow batches, the Kartothek
dataset (layout, metadata, indices, atomic commit), read back with pyarrow alone."""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fstore
from fstore import IRI, BNode, Literal, to_rdf
from fstore.export import ExportError
from fstore.export.arrow import (
    CHANGES_SCHEMA,
    QUADS_SCHEMA,
    kart_arrow_type,
    quad_batch,
    quad_batches,
    row_batches,
    table_arrow_schema,
)
from fstore.export.kartothek import (
    METADATA_SUFFIX,
    DatasetWriter,
    list_datasets,
    load_metadata,
    location,
    read_index,
    read_table,
    table_identifier,
    verify_dataset,
)
from fstore.export.snapshot import export_changes, export_snapshot
from fstore.export.sparktypes import kart_spark_field, kart_spark_type, spark_schema_json
from fstore.export.terms import OBJECT_COLUMNS, QUAD_COLUMNS, describe_object, quad_columns, quad_from_row
from fstore.tables import Column, KartRepo, Schema

from spark_fixtures import EX, history_repo, store_quads, types_workdir  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
XSD = "http://www.w3.org/2001/XMLSchema#"


def rows_as_quads(table: pa.Table) -> list[tuple]:
    return sorted((quad_from_row(r) for r in table.to_pylist()), key=repr)


# -- quads as columns ---------------------------------------------------------------------

values = st.one_of(
    st.text(max_size=20),
    st.integers(min_value=-(2**100), max_value=2**100),
    st.floats(allow_nan=True, allow_infinity=True),
    st.decimals(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.dates(),
    st.datetimes(timezones=st.one_of(st.none(), st.just(dt.timezone.utc),
                                     st.builds(dt.timezone, st.integers(-14 * 60, 14 * 60).map(lambda m: dt.timedelta(minutes=m))))),
    st.binary(max_size=20),
    st.builds(IRI, st.text(min_size=1, max_size=20)),
    st.builds(BNode, st.text(alphabet="abcdef0123", min_size=1, max_size=8)),
    st.builds(lambda t, lang: Literal(t, lang=lang), st.text(max_size=10), st.sampled_from(["en", "fr-ca", "de"])),
    st.builds(Literal, st.text(max_size=10), st.sampled_from([XSD + "integer", XSD + "decimal", XSD + "double",
                                                             XSD + "date", XSD + "dateTime", XSD + "boolean",
                                                             EX + "custom"])),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(values, values, values, values), min_size=1, max_size=5))
def test_quad_columns_are_the_rdf_terms(quads):
    """Every row describes the RDF term fstore.to_rdf gives, and reads back to it."""
    quads = [tuple(fstore.canonical(v) for v in q) for q in quads]
    columns = quad_columns(quads)
    assert list(columns) == list(QUAD_COLUMNS)
    rows = [dict(zip(columns, r)) for r in zip(*columns.values())]
    for quad, row in zip(quads, rows):
        assert quad_from_row(row) == tuple(to_rdf(v) for v in quad)
        one = describe_object(quad[3])  # the column-wise path agrees with the per-value one
        assert tuple(row[c] for c in OBJECT_COLUMNS) == one or one[5] != one[5]  # (NaN)
        term = to_rdf(quad[3])
        if type(term) is Literal:
            assert row["object"] == term.lexical and row["object_kind"] == "literal"
            expected = term.datatype.value if term.datatype else (
                "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString" if term.lang else XSD + "string")
            assert (row["datatype"], row["language"]) == (expected, term.lang)
    batch = quad_batch(quads)
    assert batch.schema == QUADS_SCHEMA and batch.num_rows == len(quads)


def test_typed_object_columns():
    def typed(value):
        row = dict(zip(OBJECT_COLUMNS, describe_object(fstore.canonical(value))))
        return {k: v for k, v in row.items() if k.startswith("object_") and k != "object_kind" and v is not None}

    assert typed(5) == {"object_int": 5}
    assert typed(2**63) == {}  # beyond 64 bits: only the lexical form
    assert typed(Literal("042", XSD + "integer")) == {"object_int": 42}
    assert typed(Literal("12", XSD + "unsignedShort")) == {"object_int": 12}
    assert typed(Literal("1.5E0", XSD + "double")) == {"object_double": 1.5}
    assert typed(Literal("abc", XSD + "double")) == {}
    assert typed(Decimal("1.25")) == {"object_decimal": Decimal("1.25")}
    assert typed(Decimal("1E+30")) == {}  # beyond DECIMAL(38, 18)
    assert typed(Decimal("249992571.00045473383852450703460")) == {}  # 23 fraction digits (and > 28 in all)
    assert typed(Decimal("1.000000000000000000000")) == {"object_decimal": Decimal("1")}
    assert typed(Decimal("0E+50")) == {"object_decimal": Decimal(0)}
    edge = [Decimal("99999999999999999999.999999999999999999"), Decimal("0E-40"), Decimal("1E+20")]
    assert quad_batch([(None, None, None, d) for d in edge]).column("object_decimal").to_pylist() == [edge[0], 0, None]
    assert typed(Literal("1", XSD + "boolean")) == {"object_bool": True}
    assert typed(dt.date(2000, 1, 2)) == {"object_date": dt.date(2000, 1, 2)}
    aware = dt.datetime(2000, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert typed(aware) == {"object_datetime": dt.datetime(2000, 1, 1, 10, tzinfo=dt.timezone.utc)}
    assert typed(dt.datetime(2000, 1, 1, 12)) == {"object_datetime_local": dt.datetime(2000, 1, 1, 12)}
    assert typed(IRI("urn:x")) == {} and typed("5") == {}
    assert describe_object(b"ab")[:3] == (base64.b64encode(b"ab").decode(), "literal", XSD + "base64Binary")


def test_quad_batches_stream():
    """Batches come out while the input is still being produced (nothing is collected)."""
    produced = []

    def endless():
        i = 0
        while True:
            produced.append(i)
            yield (None, IRI(f"urn:s{i}"), IRI("urn:p"), i)
            i += 1

    batches = quad_batches(endless(), batch_size=10)
    first = [next(batches) for _ in range(3)]
    assert [b.num_rows for b in first] == [10, 10, 10] and len(produced) == 30
    assert first[2].column("object_int").to_pylist() == list(range(20, 30))


# -- quads of a repository ----------------------------------------------------------------

@pytest.mark.parametrize("label", ["c1", "c2", "side", "c3", "c4"])
def test_quads_at_each_commit_equal_the_store(history_repo, tmp_path, label):
    repo, ids = history_repo
    result = export_snapshot(repo, ids[label], tmp_path, tables=[], partition_on=["graph"], batch_size=7)
    expected = store_quads(repo, ids[label])
    where = location(tmp_path)
    table = read_table(where, "quads", result.dataset_uuid)
    assert table.num_rows == len(expected) == result.tables["quads"].rows == fstore.count(
        repo.at(ids[label]), fstore.Var("g"), fstore.Var("s"), fstore.Var("p"), fstore.Var("o"))
    assert rows_as_quads(table) == expected
    assert load_metadata(where)["metadata"]["datae.source_commit"] == ids[label]
    assert verify_dataset(where) == []


def test_metadata_and_layout_follow_kartothek(history_repo, tmp_path):
    repo, ids = history_repo
    result = export_snapshot(repo, "main", tmp_path, tables=[], partition_on=["graph"],
                             indices=["predicate", "graph"], batch_size=16)
    uuid = result.dataset_uuid
    files = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert f"{uuid}{METADATA_SUFFIX}" in files and f"{uuid}/quads/_common_metadata" in files
    doc = json.loads((tmp_path / f"{uuid}{METADATA_SUFFIX}").read_text())
    # attributes and their types
    assert doc["dataset_metadata_version"] == 4 and doc["dataset_uuid"] == uuid
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in doc["metadata"].items())
    assert doc["metadata"]["datae.source_commit"] == ids["c4"] == repo.head("main")
    assert doc["metadata"]["datae.repository"] == "store"
    assert doc["partition_keys"] == ["graph"]
    # every referenced file exists, carries the uuid prefix and its label; no stray data file
    referenced = set()
    for label, partition in doc["partitions"].items():
        assert set(partition["files"]) == {"quads"}
        key = partition["files"]["quads"]
        assert key == f"{uuid}/quads/{label}.parquet" and (tmp_path / key).is_file()
        assert label.startswith("graph=")
        referenced.add(key)
    data_files = {f for f in files if f.endswith(".parquet") and "/indices/" not in f}
    assert data_files == referenced
    for column, key in doc["indices"].items():
        assert key.startswith(f"{uuid}/indices/{column}/") and key.endswith(".by-dataset-index.parquet")
        assert (tmp_path / key).is_file()
    # components use only letters, digits, + - _ (and URL-encoded partition values)
    for key in referenced:
        for part in key[: -len(".parquet")].split("/"):
            name, _, value = part.partition("=")
            assert name.replace("-", "").replace("_", "").replace("+", "").isalnum()
    # _common_metadata: an empty Parquet file with the full schema (partition column too)
    common = pq.read_table(tmp_path / uuid / "quads" / "_common_metadata")
    assert common.num_rows == 0 and common.schema.names == QUADS_SCHEMA.names
    # data files do not hold the partition column; the path does
    for key in referenced:
        assert "graph" not in pq.read_schema(tmp_path / key).names
    assert verify_dataset(location(tmp_path)) == []


def test_indices_map_values_to_their_partitions(history_repo, tmp_path):
    repo, _ = history_repo
    result = export_snapshot(repo, "main", tmp_path, tables=[], partition_on=["graph"],
                             indices=["predicate", "graph", "object_kind"], batch_size=5)
    where = location(tmp_path)
    doc = load_metadata(where, result.dataset_uuid)
    truth: dict[str, dict] = {"predicate": {}, "graph": {}, "object_kind": {}}
    for label, partition in doc["partitions"].items():
        data = pq.read_table(tmp_path / partition["files"]["quads"])
        graph_segment = unquote(label.split("/")[0].split("=", 1)[1])
        graph = None if graph_segment == "__HIVE_DEFAULT_PARTITION__" else graph_segment
        truth["graph"].setdefault(graph, set()).add(label)
        for column in ("predicate", "object_kind"):
            for value in set(data.column(column).to_pylist()):
                truth[column].setdefault(value, set()).add(label)
    for column, expected in truth.items():
        index = read_index(where, doc, column)
        assert {k: set(v) for k, v in index.items()} == expected, column
        assert pq.read_schema(tmp_path / doc["indices"][column]).field("partition").type == pa.list_(pa.string())


def test_pyarrow_alone_reads_the_export(history_repo, tmp_path):
    """No fstore code on the read side: the metadata JSON, pyarrow.dataset and the paths."""
    repo, _ = history_repo
    result = export_snapshot(repo, "main", tmp_path, tables=[], partition_on=["graph"], batch_size=9)
    doc = json.loads((tmp_path / f"{result.dataset_uuid}{METADATA_SUFFIX}").read_text())
    schema = pq.read_schema(tmp_path / doc["dataset_uuid"] / "quads" / "_common_metadata")
    files = [str(tmp_path / p["files"]["quads"]) for p in doc["partitions"].values()]
    dataset = pads.dataset(files, schema=schema, format="parquet",
                           partitioning=pads.partitioning(pa.schema([schema.field("graph")]), flavor="hive"),
                           partition_base_dir=str(tmp_path / doc["dataset_uuid"] / "quads"))
    table = dataset.to_table()
    assert rows_as_quads(table) == store_quads(repo, "main")
    graphs = set(table.column("graph").to_pylist())
    assert None in graphs and EX + "graph/1" in graphs


def test_any_filesystem(history_repo, tmp_path):
    repo, _ = history_repo
    mock = pafs._MockFileSystem()
    result = export_snapshot(repo, "main", "bucket/exports", filesystem=mock, tables=[], partition_on=["graph"])
    where = location("bucket/exports", mock)
    assert list_datasets(where) == [result.dataset_uuid] and verify_dataset(where) == []
    assert rows_as_quads(read_table(where, "quads")) == store_quads(repo, "main")
    uri = export_snapshot(repo, "main", tmp_path.as_uri() + "/viauri", tables=[])
    assert (tmp_path / "viauri" / uri.metadata_key).is_file()
    assert uri.metadata_url == f"{tmp_path.as_uri()}/viauri/{uri.metadata_key}"


def test_fsspec_paths(history_repo):
    """A URI only fsspec knows (its in-memory filesystem) works the same way."""
    import fsspec

    repo, _ = history_repo
    result = export_snapshot(repo, "main", "memory://datae-test/exports", tables=[], partition_on=["graph"])
    where = location("memory://datae-test/exports")
    assert verify_dataset(where) == []
    assert rows_as_quads(read_table(where, "quads")) == store_quads(repo, "main")
    assert fsspec.filesystem("memory").exists(f"/datae-test/exports/{result.metadata_key}")


def test_changes_equal_repo_diff(history_repo, tmp_path):
    repo, ids = history_repo
    for a, b in [("c1", "c2"), ("c2", "c1"), ("c1", "c4"), ("side", "c3"), ("c4", "c4")]:
        result = export_changes(repo, ids[a], ids[b], tmp_path / f"{a}-{b}", batch_size=4)
        table = read_table(location(tmp_path / f"{a}-{b}"), "changes")
        assert table.schema.names == CHANGES_SCHEMA.names
        got = sorted(((r["op"], quad_from_row(r)) for r in table.to_pylist()), key=repr)
        expected = sorted(((op, tuple(map(to_rdf, q))) for op, q in repo.diff(ids[a], ids[b])), key=repr)
        assert got == expected and result.tables["changes"].rows == len(expected)
        assert set(table.column("from_commit").to_pylist()) <= {ids[a]}
        assert set(table.column("to_commit").to_pylist()) <= {ids[b]}


# -- crashes ------------------------------------------------------------------------------

_CHILD = """
import sys, time, fstore
from fstore.export.snapshot import export_snapshot
repo = fstore.open(sys.argv[1])
calls = []
def progress(table, rows):
    calls.append(rows)
    if len(calls) == 3:
        open(sys.argv[3], "w").write(str(rows))
        time.sleep(120)
export_snapshot(repo, "main", sys.argv[2], tables=[], partition_on=["graph"], batch_size=4, progress=progress)
"""


def test_killed_export_leaves_no_metadata(history_repo, tmp_path):
    repo, _ = history_repo
    out, marker = tmp_path / "out", tmp_path / "marker"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", _CHILD, repo.path, str(out), str(marker)], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert child.poll() is None, "the export ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(30) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
    assert any(p.suffix == ".parquet" for p in out.rglob("*"))  # it was midway
    assert not list(out.rglob(f"*{METADATA_SUFFIX}")) and not list(out.rglob("*by-dataset-metadata*"))
    assert list_datasets(location(out)) == []


def test_failed_export_leaves_nothing(history_repo, tmp_path):
    repo, _ = history_repo
    calls = []

    def progress(table, rows):
        calls.append(rows)
        if len(calls) == 2:
            raise RuntimeError("injected failure")

    with pytest.raises(RuntimeError, match="injected"):
        export_snapshot(repo, "main", tmp_path, tables=[], partition_on=["graph"], batch_size=3, progress=progress)
    assert not any(p.is_file() for p in tmp_path.rglob("*"))  # aborted: the partial files are gone


def test_writer_memory_is_bounded(tmp_path):
    """The writer consumes its input as it writes: never more than one batch ahead."""
    consumed = [0]

    def batches():
        for i in range(40):
            consumed[0] += 50
            yield quad_batch([(IRI(f"urn:g{j % 3}"), IRI(f"urn:s{i}"), IRI("urn:p"), j) for j in range(50)])

    def progress(table, rows):
        assert consumed[0] - rows <= 50

    writer = DatasetWriter(location(tmp_path), row_group_size=64, max_open_files=2)
    result = writer.write_table("quads", QUADS_SCHEMA, batches(), partition_on=["graph"], progress=progress)
    writer.commit()
    assert result.rows == 2000
    assert read_table(location(tmp_path), "quads").num_rows == 2000
    assert len(result.files) > 3  # files closed (max_open_files) and reopened as new partitions
    assert verify_dataset(location(tmp_path)) == []


def test_bad_requests_are_typed_errors(history_repo, tmp_path):
    repo, _ = history_repo
    with pytest.raises(ExportError, match="partition on"):
        export_snapshot(repo, "main", tmp_path / "a", tables=[], partition_on=["nope"])
    with pytest.raises(ExportError, match="index"):
        export_snapshot(repo, "main", tmp_path / "b", tables=[], indices=["nope"])
    with pytest.raises(ExportError, match="cannot partition"):
        export_snapshot(repo, "main", tmp_path / "c", tables=[], partition_on=["object_double"])
    first = export_snapshot(repo, "main", tmp_path / "d", tables=[])
    with pytest.raises(ExportError, match="already exists"):
        export_snapshot(repo, "main", tmp_path / "d", tables=[], dataset_uuid=first.dataset_uuid)
    assert table_identifier("roads") == "roads"
    odd = table_identifier("hydro/soundings 2")
    assert odd.startswith("hydro_soundings_2-") and odd != table_identifier("hydro_soundings 2")


# -- Kart tables --------------------------------------------------------------------------

EXPECTED_TYPES = {
    # column: (Arrow type, Spark type)
    "PK": (pa.int64(), "long"),
    "geom": (pa.large_binary(), "binary"),
    "int8": (pa.int32(), "integer"),  # the column is called int8 but has size 32
    "int16": (pa.int16(), "short"),
    "int32": (pa.int32(), "integer"),
    "int64": (pa.int64(), "long"),
    "float32": (pa.float32(), "float"),
    "float64": (pa.float64(), "double"),
    "text": (pa.large_string(), "string"),
    "text100": (pa.large_string(), "string"),
    "blob": (pa.large_binary(), "binary"),
    "blob100": (pa.large_binary(), "binary"),
    "boolean": (pa.bool_(), "boolean"),
    "numeric": (pa.decimal128(38, 18), "decimal(38,18)"),
    "numeric10_5": (pa.decimal128(10, 5), "decimal(10,5)"),
    "date": (pa.date32(), "date"),
    "time": (pa.time64("us"), "time(6)"),
    "timestamp": (pa.timestamp("us"), "timestamp_ntz"),
    "timestampUTC": (pa.timestamp("us", tz="UTC"), "timestamp"),
    "interval": (pa.string(), "string"),
}


def expected_value(column: Column, value):
    """What a Kart Python value becomes in Arrow / Spark."""
    if value is None:
        return None
    if column.data_type == "geometry":
        return value.to_wkb()
    if column.data_type == "interval":
        return value.isoformat()
    return value


def test_every_kart_type_of_the_types_repository(types_workdir):
    with KartRepo(types_workdir) as kart:
        ds = kart.dataset("main", "manytypes")
        schema, crs, rows = ds.schema, ds.crs_definitions(), list(ds.rows())
    assert {c.data_type for c in schema.columns} == {
        "boolean", "blob", "date", "float", "geometry", "integer", "interval", "numeric", "text", "time", "timestamp"}
    arrow_schema = table_arrow_schema(schema, crs, name="manytypes")
    assert {f.name: f.type for f in arrow_schema} == {k: v[0] for k, v in EXPECTED_TYPES.items()}
    assert {c.name: kart_spark_type(c) for c in schema.columns} == {k: v[1] for k, v in EXPECTED_TYPES.items()}
    geom = arrow_schema.field("geom").metadata
    assert geom[b"crs"] == b"EPSG:2193" and geom[b"encoding"] == b"WKB" and b"NZGD2000" in geom[b"crs_wkt"]
    assert geom[b"geometry_type"] == b"LINESTRING ZM" and geom[b"kart.dataType"] == b"geometry"
    assert arrow_schema.field("PK").metadata[b"kart.primaryKeyIndex"] == b"0"
    assert Schema.from_json(arrow_schema.metadata[b"kart.schema.json"]) == schema
    spark_geom = kart_spark_field(schema["geom"], crs)
    assert spark_geom["type"] == "binary" and spark_geom["metadata"]["crs"] == "EPSG:2193"

    table = pa.Table.from_batches(list(row_batches(schema, iter(rows), batch_size=3, crs_definitions=crs)))
    assert table.num_rows == 4 and len(table.to_batches()) == 2
    by_pk = {r["PK"]: r for r in table.to_pylist()}
    for row in rows:
        got = by_pk[row["PK"]]
        for column in schema.columns:
            want = expected_value(column, row[column.name])
            assert got[column.name] == want, (row["PK"], column.name)
    one = by_pk[1]
    assert one["geom"] == rows[1]["geom"].to_wkb() and one["geom"][:1] == b"\x01"  # little-endian WKB
    assert one["timestampUTC"] == dt.datetime(2001, 1, 1, 18, 19, 20, tzinfo=dt.timezone.utc)
    assert one["numeric10_5"] == Decimal("123.45600") and by_pk[3]["interval"] == "P4DT3H2M1S"
    # stored values (python=False rows) give the same batches
    with KartRepo(types_workdir) as kart:
        stored = list(kart.dataset("main", "manytypes").rows(python=False))
    again = pa.Table.from_batches(list(row_batches(schema, iter(stored), crs_definitions=crs)))
    assert again.sort_by("PK").equals(table.sort_by("PK"))


def test_kart_sizes_and_limits():
    def col(data_type, **extra):
        return Column.create("c", data_type, **extra)

    assert [kart_spark_type(col("integer", size=s)) for s in (8, 16, 32, 64)] == ["byte", "short", "integer", "long"]
    assert kart_spark_type(col("integer")) == "long"
    assert [kart_spark_type(col("float", size=s)) for s in (32, 64)] == ["float", "double"]
    assert kart_spark_type(col("numeric", precision=5)) == "decimal(5,0)"
    assert kart_arrow_type(col("numeric", precision=50, scale=2)) == pa.string()
    assert kart_spark_type(col("numeric", precision=50, scale=2)) == "string"
    assert kart_spark_type(col("geometry", geometryType="POINT", geometryCRS="EPSG:4326")) == "binary"
    schema = Schema([Column.create("id", "integer", pk_index=0, size=8),
                     Column.create("price", "numeric", precision=4, scale=2),
                     Column.create("when", "time")])
    assert [f["type"] for f in spark_schema_json(table_arrow_schema(schema))["fields"]] == ["byte", "decimal(4,2)", "time(6)"]
    batch = next(row_batches(schema, [{"id": 1, "price": Decimal("12.5"), "when": dt.time(1, 2, tzinfo=dt.timezone.utc)}]))
    assert batch.to_pylist() == [{"id": 1, "price": Decimal("12.50"), "when": dt.time(1, 2)}]
    with pytest.raises(ExportError, match="'price'.*123.456"):
        next(row_batches(schema, [{"id": 1, "price": Decimal("123.456"), "when": None}], table="t"))
    with pytest.raises(ExportError, match="'id'"):
        next(row_batches(schema, [{"id": 300, "price": None, "when": None}]))
    with pytest.raises(ExportError, match="no column 'when'"):
        next(row_batches(schema, [{"id": 1, "price": None}]))


def test_tables_of_the_store_export_with_their_types(types_workdir, tmp_path):
    """End to end: the types repository imported into fstore, exported with the quads."""
    from fstore.tables.kart_import import import_kart

    repo = fstore.open(tmp_path / "store")
    try:
        import_kart(repo, types_workdir)
        with KartRepo(types_workdir) as kart:
            ds = kart.dataset("main", "manytypes")
            schema, rows = ds.schema, {r["PK"]: r for r in ds.rows()}
        result = export_snapshot(repo, "main", tmp_path / "out", partition_on={"manytypes": ["boolean"]},
                                 indices=["PK"])
        where = location(tmp_path / "out")
        assert set(result.tables) == {"quads", "manytypes"} and verify_dataset(where) == []
        table = read_table(where, "manytypes")
        assert table.schema.field("boolean").type == pa.bool_()
        assert {f.name: f.type for f in table.schema} == {k: v[0] for k, v in EXPECTED_TYPES.items()}
        for got in table.to_pylist():
            for column in schema.columns:
                assert got[column.name] == expected_value(column, rows[got["PK"]][column.name]), column.name
        index = read_index(where, load_metadata(where), "PK")
        assert set(index) == {0, 1, 2, 3}
        doc = load_metadata(where)
        for pk, labels in index.items():
            want = {None: "__HIVE_DEFAULT_PARTITION__", True: "true", False: "false"}[rows[pk]["boolean"]]
            assert [label.split("/")[0] for label in labels] == [f"boolean={want}"]
            assert all(doc["partitions"][label]["files"] == {"manytypes": f"{doc['dataset_uuid']}/manytypes/{label}.parquet"}
                       for label in labels)
        quads = read_table(where, "quads")
        assert quads.num_rows == result.tables["quads"].rows == 0  # tables are never quads
    finally:
        repo.close()
