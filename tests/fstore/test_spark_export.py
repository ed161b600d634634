"""The Spark export without Spark: quads and Kart tables as Arrow batches, the Kartothek
dataset (layout, metadata, indices, atomic commit), read back with pyarrow alone."""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path
from urllib.parse import unquote

import pandas as pd
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
from fstore.export.dataset_writer import DatasetWriter
from fstore.export.kartothek import (
    FORMAT_VERSION,
    METADATA_SUFFIX,
    list_datasets,
    load_metadata,
    location,
    read_index,
    read_table,
    store_url,
    table_identifier,
    verify_dataset,
)
from fstore.export.snapshot import export_changes, export_snapshot
from fstore.errors import UnknownRefError
from fstore.export.sparktypes import kart_spark_field, kart_spark_type, spark_schema_json
from fstore.export.terms import OBJECT_COLUMNS, QUAD_COLUMNS, describe_object, quad_columns, quad_from_row
from fstore.tables import Column, KartRepo, Schema

from tests.spark_fixtures import EX, history_repo, store_quads, types_workdir  # noqa: F401
from tests.locations import PROJECT
from tests.profiles import examples

ROOT = PROJECT
XSD = "http://www.w3.org/2001/XMLSchema#"


def rows_as_quads(table: pa.Table) -> list[tuple]:
    return sorted((quad_from_row(r) for r in table.to_pylist()), key=repr)


def plateau_reads(dest, table: str, expected: pa.Table) -> None:
    """plateau (the maintained Kartothek) reads the dataset with its own readers, typed:
    the same rows and columns as pyarrow reads (partition columns rebuilt from the paths;
    plateau has no null partition value, so a null one reads as Hive's name)."""
    from plateau.io.eager import read_dataset_as_dataframes
    from plateau.io.eager import read_table as plateau_read_table

    frame = plateau_read_table(table_identifier(table), store_url(dest))
    assert len(frame) == expected.num_rows and sorted(frame.columns) == sorted(expected.schema.names)
    parts = read_dataset_as_dataframes(table_identifier(table), store_url(dest))
    assert sum(len(p) for p in parts) == expected.num_rows
    partition_on = load_metadata(location(dest), table)["partition_keys"]
    for name in expected.schema.names:
        field = expected.schema.field(name)
        if pa.types.is_integer(field.type):  # typed (never float, text or base64) and exact
            assert str(frame[name].dtype).lower().startswith(("int", "uint")), (name, frame[name].dtype)
            got = [None if v is pd.NA else v for v in frame[name].tolist()]
            assert sorted(got, key=repr) == sorted(expected.column(name).to_pylist(), key=repr), name
        if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            want = expected.column(name).to_pylist()
            if name in partition_on:
                want = ["__HIVE_DEFAULT_PARTITION__" if v is None else v for v in want]
            got = [None if v is None or v != v else v for v in frame[name].tolist()]
            assert sorted(got, key=repr) == sorted(want, key=repr), name


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


@settings(max_examples=examples(300), deadline=None)
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
    table = read_table(where, "quads")
    assert table.num_rows == len(expected) == result.tables["quads"].rows == fstore.count(
        repo.at(ids[label]), fstore.Var("g"), fstore.Var("s"), fstore.Var("p"), fstore.Var("o"))
    assert rows_as_quads(table) == expected
    assert load_metadata(where, "quads")["metadata"]["datae.source_commit"] == ids[label]
    assert verify_dataset(where, "quads") == []
    plateau_reads(tmp_path, "quads", table)


def test_metadata_and_layout_follow_kartothek(history_repo, tmp_path):
    repo, ids = history_repo
    export_snapshot(repo, "main", tmp_path, tables=[], partition_on=["graph"], indices=["predicate", "graph"],
                    batch_size=16)
    files = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert f"quads{METADATA_SUFFIX}" in files and "quads/table/_common_metadata" in files
    doc = json.loads((tmp_path / f"quads{METADATA_SUFFIX}").read_text())
    # attributes and their types
    assert doc["dataset_metadata_version"] == 4 and doc["dataset_uuid"] == "quads"
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in doc["metadata"].items())
    assert doc["metadata"]["datae.source_commit"] == ids["c4"] == repo.head("main")
    assert doc["metadata"]["datae.repository"] == "store" and doc["metadata"]["datae.version"] == "1"
    assert doc["metadata"]["datae.export_format"] == str(FORMAT_VERSION) == "3"  # the format's version, pinned
    assert doc["partition_keys"] == ["graph"]
    # every referenced file exists, carries the dataset prefix and its label; no stray data file
    referenced = set()
    for label, partition in doc["partitions"].items():
        assert set(partition["files"]) == {"table"}  # one table per dataset, as plateau reads
        key = partition["files"]["table"]
        assert key == f"quads/table/{label}.parquet" and (tmp_path / key).is_file()
        assert label.startswith("graph=")
        referenced.add(key)
    data_files = {f for f in files if f.endswith(".parquet") and "/indices/" not in f}
    assert data_files == referenced
    for column, key in doc["indices"].items():
        assert key.startswith(f"quads/indices/{column}/") and key.endswith(".by-dataset-index.parquet")
        assert (tmp_path / key).is_file()
    # components use only letters, digits, + - _ (and URL-encoded partition values)
    for key in referenced:
        for part in key[: -len(".parquet")].split("/"):
            name, _, value = part.partition("=")
            assert name.replace("-", "").replace("_", "").replace("+", "").isalnum()
    # _common_metadata: an empty Parquet file with the full schema (partition column too) and pandas metadata
    common = pq.read_table(tmp_path / "quads" / "table" / "_common_metadata")
    assert common.num_rows == 0 and common.schema.names == QUADS_SCHEMA.names
    pandas = json.loads(common.schema.metadata[b"pandas"])
    assert [c["name"] for c in pandas["columns"]] == QUADS_SCHEMA.names and pandas["index_columns"] == []
    # data files do not hold the partition column; the path does
    for key in referenced:
        assert "graph" not in pq.read_schema(tmp_path / key).names
    assert verify_dataset(location(tmp_path), "quads") == []
    # plateau's own metadata reader agrees: partitions, indices, schema
    from plateau.core.dataset import DatasetMetadata

    meta = DatasetMetadata.load_from_store("quads", store_url(tmp_path), load_all_indices=True)
    assert set(meta.partitions) == set(doc["partitions"]) and meta.table_name == "table"
    assert meta.schema.names == QUADS_SCHEMA.names
    assert set(meta.query(predicate=EX + "p/3")) == set(read_index(location(tmp_path), doc, "predicate")[EX + "p/3"])


def test_indices_map_values_to_their_partitions(history_repo, tmp_path):
    repo, _ = history_repo
    export_snapshot(repo, "main", tmp_path, tables=[], partition_on=["graph"],
                    indices=["predicate", "graph", "object_kind"], batch_size=5)
    where = location(tmp_path)
    doc = load_metadata(where, "quads")
    truth: dict[str, dict] = {"predicate": {}, "graph": {}, "object_kind": {}}
    for label, partition in doc["partitions"].items():
        data = pq.read_table(tmp_path / partition["files"]["table"])
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
    export_snapshot(repo, "main", tmp_path, tables=[], partition_on=["graph"], batch_size=9)
    doc = json.loads((tmp_path / f"quads{METADATA_SUFFIX}").read_text())
    schema = pq.read_schema(tmp_path / doc["dataset_uuid"] / "table" / "_common_metadata")
    files = [str(tmp_path / p["files"]["table"]) for p in doc["partitions"].values()]
    dataset = pads.dataset(files, schema=schema, format="parquet",
                           partitioning=pads.partitioning(pa.schema([schema.field("graph")]), flavor="hive"),
                           partition_base_dir=str(tmp_path / doc["dataset_uuid"] / "table"))
    table = dataset.to_table()
    assert rows_as_quads(table) == store_quads(repo, "main")
    graphs = set(table.column("graph").to_pylist())
    assert None in graphs and EX + "graph/1" in graphs


def test_any_filesystem(history_repo, tmp_path):
    repo, _ = history_repo
    mock = pafs._MockFileSystem()
    export_snapshot(repo, "main", "bucket/exports", filesystem=mock, tables=[], partition_on=["graph"])
    where = location("bucket/exports", mock)
    assert list_datasets(where) == ["quads"] and verify_dataset(where, "quads") == []
    assert rows_as_quads(read_table(where, "quads")) == store_quads(repo, "main")
    uri = export_snapshot(repo, "main", tmp_path.as_uri() + "/viauri", tables=[])
    assert (tmp_path / "viauri" / uri.tables["quads"].metadata_key).is_file()
    assert uri.metadata_url() == f"{tmp_path.as_uri()}/viauri/quads{METADATA_SUFFIX}"


def test_fsspec_paths(history_repo):
    """A URI only fsspec knows (its in-memory filesystem) works the same way."""
    import fsspec

    repo, _ = history_repo
    export_snapshot(repo, "main", "memory://datae-test/exports", tables=[], partition_on=["graph"])
    where = location("memory://datae-test/exports")
    assert verify_dataset(where, "quads") == []
    assert rows_as_quads(read_table(where, "quads")) == store_quads(repo, "main")
    assert fsspec.filesystem("memory").exists(f"/datae-test/exports/quads{METADATA_SUFFIX}")


def test_changes_equal_repo_diff(history_repo, tmp_path):
    repo, ids = history_repo
    for a, b in [("c1", "c2"), ("c2", "c1"), ("c1", "c4"), ("side", "c3"), ("c4", "c4")]:
        result = export_changes(repo, ids[a], ids[b], tmp_path / f"{a}-{b}", batch_size=4)
        table = read_table(location(tmp_path / f"{a}-{b}"), "quads")
        assert table.schema.names == CHANGES_SCHEMA.names
        kinds = {"insert": "+", "delete": "-"}
        got = sorted(((kinds[r["_change_type"]], quad_from_row(r)) for r in table.to_pylist()), key=repr)
        expected = sorted(((op, tuple(map(to_rdf, q))) for op, q in repo.diff(ids[a], ids[b])), key=repr)
        assert got == expected and result.tables["quads"].rows == len(expected)
        assert set(table.column("_from_commit").to_pylist()) <= {ids[a]}
        assert set(table.column("_to_commit").to_pylist()) <= {ids[b]}
        plateau_reads(tmp_path / f"{a}-{b}", "quads", table)


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


def _failing_on_call(n: int):
    """A progress callback that raises on its ``n``-th call: a failure in mid-export."""
    calls = []

    def progress(table, rows):
        calls.append(rows)
        if len(calls) == n:
            raise RuntimeError("injected failure")

    return progress


def test_failed_export_leaves_nothing(history_repo, tmp_path):
    repo, _ = history_repo
    with pytest.raises(RuntimeError, match="injected"):
        export_snapshot(repo, "main", tmp_path, tables=[], partition_on=["graph"], batch_size=3,
                        progress=_failing_on_call(2))
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

    writer = DatasetWriter(location(tmp_path), "quads", QUADS_SCHEMA, partition_on=["graph"], row_group_size=64,
                           max_open_files=2)
    result = writer.write(batches(), progress=progress)
    writer.commit({"datae.table": "quads"})
    assert result.rows == 2000
    assert read_table(location(tmp_path), "quads").num_rows == 2000
    assert len(result.files) > 3  # files closed (max_open_files) and reopened as new partitions
    assert verify_dataset(location(tmp_path), "quads") == []


def test_bad_requests_are_typed_errors(history_repo, tmp_path):
    repo, _ = history_repo
    with pytest.raises(ExportError, match="partition on"):
        export_snapshot(repo, "main", tmp_path / "a", tables=[], partition_on=["nope"])
    with pytest.raises(ExportError, match="index"):
        export_snapshot(repo, "main", tmp_path / "b", tables=[], indices=["nope"])
    with pytest.raises(ExportError, match="cannot partition"):
        export_snapshot(repo, "main", tmp_path / "c", tables=[], partition_on=["object_double"])
    with pytest.raises(ExportError, match="cannot partition on 'object_bool'"):  # plateau reads "false" as True
        export_snapshot(repo, "main", tmp_path / "c", tables=[], partition_on=["object_bool"])
    target = tmp_path / "a-file"
    target.write_text("not a directory")
    with pytest.raises(ExportError, match=f"{target}.*is a file"):
        export_snapshot(repo, "main", target, tables=[])
    with pytest.raises(ExportError, match="is a file"):
        export_changes(repo, "main", "main", target)
    with pytest.raises(UnknownRefError, match=r"'no-such-ref'.*exporting store at"):
        export_snapshot(repo, "no-such-ref", tmp_path / "d", tables=[])
    with pytest.raises(UnknownRefError, match="'nope'"):
        export_changes(repo, "nope", "main", tmp_path / "d")
    export_snapshot(repo, "main", tmp_path / "e", tables=[])
    with pytest.raises(ExportError, match="holds snapshot exports, not changes exports"):
        export_changes(repo, "main", "main", tmp_path / "e", tables=[])
    shutil.rmtree(tmp_path / "e")
    assert target.read_text() == "not a directory"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # nothing written anywhere
    assert table_identifier("roads") == "roads"
    odd = table_identifier("hydro/soundings 2")
    assert odd.startswith("hydro_soundings_2-") and odd != table_identifier("hydro_soundings 2")


# -- versions -----------------------------------------------------------------------------

def _labels(dest) -> dict[str, str]:
    return {label: p["files"]["table"] for label, p in load_metadata(location(dest), "quads")["partitions"].items()}


def test_a_later_commit_adds_a_version_of_new_partitions(history_repo, tmp_path):
    """Kartothek's update: only the graphs that changed get new files; the rest of the
    previous version is kept by reference; each version reads as its commit."""
    repo, ids = history_repo
    order = ["c1", "c2", "c3", "c4"]
    seen: dict[str, dict[str, str]] = {}
    for n, label in enumerate(order, 1):
        before = _labels(tmp_path) if n > 1 else {}
        result = export_snapshot(repo, ids[label], tmp_path, tables=[], partition_on=["graph"],
                                 indices=["predicate"], batch_size=8)
        quads = result.tables["quads"]
        assert quads.version == n
        table = read_table(location(tmp_path), "quads")
        assert rows_as_quads(table) == store_quads(repo, ids[label]) and quads.rows == table.num_rows
        assert verify_dataset(location(tmp_path), "quads") == []
        plateau_reads(tmp_path, "quads", table)
        after = _labels(tmp_path)
        changed_graphs = {q[0] for _, q in repo.diff(ids[order[n - 2]], ids[label])} if n > 1 else set()
        graph_of = {lab: unquote(lab.split("/")[0].split("=", 1)[1]) for lab in after}
        for lab, key in after.items():
            graph = graph_of[lab]
            graph_term = None if graph == "__HIVE_DEFAULT_PARTITION__" else IRI(graph)
            if n > 1 and graph_term not in changed_graphs:
                assert lab in before, (label, graph)  # unchanged graph: the same file as before
            if lab not in before:
                assert key in [f for f in quads.files]
        assert len(quads.files) + quads.reused == len(after)
        seen[label] = after
    assert seen["c3"] != seen["c2"]
    # c3 only adds a quad to the default graph: graph/1 and graph/2 keep their files
    assert {k for k in seen["c3"] if "graph%2F" in k} == {k for k in seen["c2"] if "graph%2F" in k}
    # the same commit again: a new version with every partition kept
    again = export_snapshot(repo, ids["c4"], tmp_path, tables=[], partition_on=["graph"], indices=["predicate"])
    assert again.tables["quads"].files == [] and again.tables["quads"].reused == len(seen["c4"])
    assert again.tables["quads"].version == 5
    # other partitioning (or none): every partition written anew
    flat = export_snapshot(repo, ids["c4"], tmp_path, tables=[], partition_on={"quads": []})
    assert flat.tables["quads"].reused == 0 and len(flat.tables["quads"].files) == 1
    assert rows_as_quads(read_table(location(tmp_path), "quads")) == store_quads(repo, ids["c4"])
    full = export_snapshot(repo, ids["c4"], tmp_path, tables=[], incremental=False)
    assert full.tables["quads"].reused == 0 and full.tables["quads"].partition_on == ("graph",)  # the default
    # plateau's garbage collection removes the files only older versions name, nothing more
    from plateau.io.eager import garbage_collect_dataset

    garbage_collect_dataset("quads", store_url(tmp_path))
    live = {p["files"]["table"] for p in load_metadata(location(tmp_path), "quads")["partitions"].values()}
    assert {str(p.relative_to(tmp_path)) for p in (tmp_path / "quads" / "table").rglob("*.parquet")} == live
    assert verify_dataset(location(tmp_path), "quads") == []
    assert rows_as_quads(read_table(location(tmp_path), "quads")) == store_quads(repo, ids["c4"])


def test_quads_of_some_graphs_are_read_alone(history_repo):
    """A re-export reads only the changed graphs: their batches equal the whole read's
    rows of those graphs (the default graph too), and a graph without quads gives none."""
    from fstore.export.arrow import view_quad_batches

    repo, _ = history_repo
    view = repo.at("main")
    whole = pa.Table.from_batches(list(view_quad_batches(view, 7)))
    for graphs in ([IRI(EX + "graph/1")], [None, IRI(EX + "graph/2")], [IRI(EX + "no-such-graph")], []):
        some = pa.Table.from_batches(list(view_quad_batches(view, 5, graphs)), schema=QUADS_SCHEMA)
        names = {None if g is None else g.value for g in graphs}
        want = [r for r in whole.to_pylist() if r["graph"] in names]
        assert sorted(some.to_pylist(), key=repr) == sorted(want, key=repr), graphs
        assert some.num_rows == len(want) and (some.num_rows > 0) == bool(names - {EX + "no-such-graph"})


def test_graphs_stored_as_plain_values_keep_their_quads_when_they_change(tmp_path):
    """fstore allows any value as a graph: a graph stored as the string "g1" or the
    integer 7 (not an IRI) that changes is rewritten with all its quads, not emptied;
    the unchanged graphs keep their files."""
    repo = fstore.open(tmp_path / "store")
    try:
        s, p = IRI("urn:s"), IRI("urn:p")
        with repo.transaction("main", message="first") as tx:
            for graph in ("g1", 7, IRI("urn:g"), None):
                fstore.add(tx, graph, s, p, 1)
        first = repo.head("main")
        with repo.transaction("main", message="second") as tx:
            fstore.add(tx, "g1", s, p, 2)
            fstore.add(tx, 7, s, p, 2)
        out = tmp_path / "out"
        export_snapshot(repo, first, out, tables=[])
        again = export_snapshot(repo, "main", out, tables=[]).tables["quads"]
        table = read_table(location(out), "quads")
        assert rows_as_quads(table) == store_quads(repo, "main") and again.rows == table.num_rows == 6
        assert again.reused == 2 and len(again.files) == 2  # urn:g and the default graph kept
        assert verify_dataset(location(out), "quads") == []
        plateau_reads(out, "quads", table)
    finally:
        repo.close()


def test_a_failed_export_keeps_the_previous_version(history_repo, tmp_path):
    """An error midway (injected) removes the new files; the old version stays, whole."""
    repo, ids = history_repo
    export_snapshot(repo, ids["c1"], tmp_path, tables=[], partition_on=["graph"], indices=["predicate"])
    files_before = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    metadata_before = (tmp_path / f"quads{METADATA_SUFFIX}").read_bytes()
    with pytest.raises(RuntimeError, match="injected"):
        export_snapshot(repo, ids["c4"], tmp_path, tables=[], partition_on=["graph"], indices=["predicate"],
                        batch_size=2, progress=_failing_on_call(3), incremental=False)
    assert sorted(p for p in tmp_path.rglob("*") if p.is_file()) == files_before
    assert (tmp_path / f"quads{METADATA_SUFFIX}").read_bytes() == metadata_before
    assert rows_as_quads(read_table(location(tmp_path), "quads")) == store_quads(repo, ids["c1"])


def test_the_metadata_file_is_replaced_atomically(history_repo, tmp_path, monkeypatch):
    """The new version becomes visible in one rename (os.replace) of a complete file,
    after every data file, index and schema is written."""
    repo, ids = history_repo
    export_snapshot(repo, ids["c1"], tmp_path, tables=[], partition_on=["graph"])
    final = str(tmp_path / f"quads{METADATA_SUFFIX}")
    seen = []
    real_replace = os.replace

    def replace(src, dst):
        if str(dst) == final:
            document = json.loads(Path(src).read_text())
            missing = [p["files"]["table"] for p in document["partitions"].values()
                       if not (tmp_path / p["files"]["table"]).is_file()]
            seen.append((document["metadata"]["datae.source_commit"], missing,
                         json.loads(Path(dst).read_text())["metadata"]["datae.source_commit"]))
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    export_snapshot(repo, ids["c2"], tmp_path, tables=[], partition_on=["graph"])
    assert seen == [(ids["c2"], [], ids["c1"])]  # until the rename, readers saw c1
    assert not list(tmp_path.rglob("_pending-*"))


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
        with pytest.raises(ExportError, match="'manytypes': column 'int16' .* is null in some rows"):
            export_snapshot(repo, "main", tmp_path / "out", partition_on={"manytypes": ["int16"]})
        assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.*"))
        result = export_snapshot(repo, "main", tmp_path / "out", partition_on={"manytypes": ["PK"]},
                                 indices=["PK", "int16"])
        where = location(tmp_path / "out")
        assert set(result.tables) == {"quads", "manytypes"} and list_datasets(where) == ["manytypes", "quads"]
        assert verify_dataset(where, "manytypes") == [] and verify_dataset(where, "quads") == []
        table = read_table(where, "manytypes")
        assert {f.name: f.type for f in table.schema} == {k: v[0] for k, v in EXPECTED_TYPES.items()}
        for got in table.to_pylist():
            for column in schema.columns:
                assert got[column.name] == expected_value(column, rows[got["PK"]][column.name]), column.name
        plateau_reads(tmp_path / "out", "manytypes", table)
        doc = load_metadata(where, "manytypes")
        index = read_index(where, doc, "PK")
        assert set(index) == {0, 1, 2, 3}
        for pk, labels in index.items():
            assert [label.split("/")[0] for label in labels] == [f"PK={pk}"]
            assert all(doc["partitions"][label]["files"] == {"table": f"manytypes/table/{label}.parquet"}
                       for label in labels)
        quads = read_table(where, "quads")
        assert quads.num_rows == result.tables["quads"].rows == 0  # tables are never quads
    finally:
        repo.close()


def _table_repo(path):
    import fstore.tables as tables

    repo = fstore.open(path)
    ids = {}
    schema = [{"id": "k", "name": "id", "dataType": "integer", "primaryKeyIndex": 0},
              {"id": "r", "name": "region", "dataType": "text"},
              {"id": "p", "name": "price", "dataType": "numeric", "precision": 8, "scale": 2},
              {"id": "d", "name": "day", "dataType": "date"}]
    with repo.transaction("main", message="v1") as tx:
        t = tables.create(tx, "sales", schema)
        t.insert_many({"id": i, "region": ["north", "south", "east"][i % 3], "price": Decimal(i) / 4,
                       "day": dt.date(2020, 1, 1 + i % 28)} for i in range(30))
    ids["v1"] = tx.commit_id
    with repo.transaction("main", message="v2") as tx:
        t = tx.table("sales")
        t.update({"id": 1, "region": "east", "price": Decimal("9.99"), "day": dt.date(2021, 1, 1)})
        t.delete(4)
        t.insert({"id": 100, "region": "south", "price": None, "day": None})
    ids["v2"] = tx.commit_id
    return repo, ids


def test_table_changes_are_typed_rows(tmp_path):
    """The changes of a table: one row per insert and delete, a pre- and a post-image per
    update, in the table's own column types (never blobs), plus the kind and the commits."""
    repo, ids = _table_repo(tmp_path / "store")
    try:
        result = export_changes(repo, ids["v1"], ids["v2"], tmp_path / "out", partition_on={"sales": ["_change_type"]})
        where = location(tmp_path / "out")
        table = read_table(where, "sales")
        assert table.schema.names == ["_change_type", "_from_commit", "_to_commit", "id", "region", "price", "day"]
        assert table.schema.field("price").type == pa.decimal128(8, 2) and table.schema.field("day").type == pa.date32()
        rows = sorted(table.to_pylist(), key=lambda r: (r["id"], r["_change_type"]))
        assert [(r["_change_type"], r["id"], r["region"], r["price"]) for r in rows] == [
            ("update_postimage", 1, "east", Decimal("9.99")),
            ("update_preimage", 1, "south", Decimal("0.25")),
            ("delete", 4, "south", Decimal("1.00")),
            ("insert", 100, "south", None),
        ]
        assert rows[0]["day"] == dt.date(2021, 1, 1) and rows[1]["day"] == dt.date(2020, 1, 2)
        assert {r["_from_commit"] for r in rows} == {ids["v1"]} and {r["_to_commit"] for r in rows} == {ids["v2"]}
        assert result.tables["sales"].rows == 4 and result.tables["quads"].rows == 0
        plateau_reads(tmp_path / "out", "sales", table)
        from plateau.io.eager import read_table as plateau_read_table

        frame = plateau_read_table("sales", store_url(tmp_path / "out"),
                                   predicates=[[("_change_type", "==", "update_postimage")]])
        assert frame["id"].tolist() == [1] and frame["price"].tolist() == [Decimal("9.99")]
        # the changes back the other way round
        back = export_changes(repo, ids["v2"], ids["v1"], tmp_path / "back", tables=["sales"], include_quads=False)
        kinds = sorted(read_table(location(tmp_path / "back"), "sales").column("_change_type").to_pylist())
        assert kinds == ["delete", "insert", "update_postimage", "update_preimage"] and set(back.tables) == {"sales"}
    finally:
        repo.close()


def test_a_changed_table_rewrites_only_its_changed_partitions(tmp_path):
    repo, ids = _table_repo(tmp_path / "store")
    try:
        out = tmp_path / "out"
        first = export_snapshot(repo, ids["v1"], out, tables=["sales"], partition_on={"sales": ["region"]})
        assert len(first.tables["sales"].files) == 3 and first.tables["quads"].rows == 0
        second = export_snapshot(repo, ids["v2"], out, tables=["sales"], partition_on={"sales": ["region"]})
        sales = second.tables["sales"]
        # rows 1 (south -> east), 4 (south, deleted) and 100 (south, new) touch east and south
        assert sales.reused == 1 and len(sales.files) == 2 and sales.version == 2
        assert all("region=east" in f or "region=south" in f for f in sales.files)
        table = read_table(location(out), "sales")
        assert table.num_rows == len(repo.at(ids["v2"]).table("sales")) == sales.rows == 30
        want = sorted((r["id"], r["region"]) for r in repo.at(ids["v2"]).table("sales").rows())
        assert sorted(zip(table.column("id").to_pylist(), table.column("region").to_pylist())) == want
        plateau_reads(out, "sales", table)
        assert second.tables["quads"].files == []  # the quads did not change: no new file
    finally:
        repo.close()
