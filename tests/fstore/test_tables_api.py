"""The table API over the versioned store: create, row writes, reads, schema evolution that
never touches rows, diff / log / blame, and bad input that leaves everything unchanged."""

from __future__ import annotations

import datetime as dt
import doctest
import importlib
import inspect
from decimal import Decimal

import pytest

import fstore
import fstore.tables as tables
from fstore import Var
from fstore.tables import (
    FEATURE,
    META,
    DatasetNameError,
    PrimaryKeyError,
    RowExistsError,
    RowNotFoundError,
    RowValueError,
    SchemaError,
    TableExistsError,
    TableNotFoundError,
)
from tests.locations import PROJECT

SCHEMA = [
    {"id": "c-fid", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0, "size": 64},
    {"id": "c-name", "name": "name", "dataType": "text", "length": 20},
    {"id": "c-when", "name": "founded", "dataType": "date"},
    {"id": "c-area", "name": "area", "dataType": "numeric", "precision": 8, "scale": 2},
    {"id": "c-pop", "name": "pop", "dataType": "integer", "size": 32},
]

MODULES = ["mapping", "dataset", "store", "access", "changes", "row_merge", "kart_export", "ingest", "csv_io",
           "sqlite_io", "frames", "commands"]


@pytest.mark.parametrize("module", MODULES)
def test_doctests(module):
    m = importlib.import_module(f"fstore.tables.{module}")
    result = doctest.testmod(m, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


@pytest.fixture
def repo(tmp_path):
    repo = fstore.open(tmp_path / "repo")
    with repo.transaction("main", message="create", author="ann") as tx:
        t = tables.create(tx, "places/towns", SCHEMA, title="Towns", description="NZ towns")
        t.insert({"fid": 1, "name": "Ōtaki", "founded": dt.date(1840, 1, 1), "area": Decimal("12.50"), "pop": 6000})
        t.insert({"fid": 2, "name": "Levin", "pop": 19000})
        t.insert({"fid": 3, "name": "Foxton"})
    yield repo
    repo.close()


def snapshot(repo):
    return (repo.branches(), [c.id for c in repo.log("main")],
            sorted(map(repr, fstore.from_(repo.at("main"), Var("g"), Var("s"), Var("p"), Var("o")))))


def test_create_and_read(repo):
    t = repo.at("main").table("places/towns")
    assert t.graph == fstore.IRI("urn:datae:dataset:places/towns")
    assert t.title == "Towns" and t.description == "NZ towns"
    assert t.schema.column_names == ["fid", "name", "founded", "area", "pop"]
    assert len(t) == 3 and 2 in t and 9 not in t
    assert t.get(1) == {"fid": 1, "name": "Ōtaki", "founded": dt.date(1840, 1, 1), "area": Decimal("12.50"), "pop": 6000}
    assert t.get(1, python=False)["founded"] == "1840-01-01"
    assert t.get(9) is None
    rows = t.rows()
    assert inspect.isgenerator(rows)
    assert sorted(r["fid"] for r in rows) == [1, 2, 3]
    # the mapping: meta tuples, one legend tuple, one tuple per row whose object is the
    # blob, all in the tables space: no quad read sees them
    view = repo.at("main")
    assert list(fstore.quads(view, Var("g"), Var("s"), Var("p"), Var("o"))) == []
    assert fstore.graphs(view) == [] and fstore.count(view, Var("g"), Var("s"), Var("p"), Var("o")) == 0
    meta = {q[1]: q[3] for q in view.table_tuples((t.graph, Var("s"), META, Var("o")))}
    assert set(meta) == {"schema.json", "path-structure.json", "title", "description", f"legend/{t.schema.legend.name}"}
    assert meta["schema.json"] == t.schema.dumps().decode()
    assert isinstance(meta[f"legend/{t.schema.legend.name}"], bytes)
    features = list(view.table_tuples((t.graph, Var("s"), FEATURE, Var("o"))))
    assert len(features) == 3
    assert {q[1] for q in features} == {t.path_of(pk) for pk in (1, 2, 3)}
    assert tables.list_tables(view) == ["places/towns"]


def test_row_writes(repo):
    with repo.transaction("main", message="edit") as tx:
        t = tx.table("places/towns")
        assert tx.table("places/towns") is t
        t.update({"fid": 2, "pop": 19500})
        assert t.get(2)["pop"] == 19500 and t.get(2)["name"] == "Levin"  # reads see the transaction
        t.upsert({"fid": 3, "name": "Foxton Beach"})
        t.upsert({"fid": 4, "name": "Shannon"})
        t.delete(1)
        assert len(t) == 3 and 1 not in t
        assert t.as_table().get(1) is not None  # the committed state is unchanged
    t = repo.at("main").table("places/towns")
    assert {r["fid"]: (r["name"], r["pop"]) for r in t.rows()} == {
        2: ("Levin", 19500), 3: ("Foxton Beach", None), 4: ("Shannon", None)}
    # an update that changes nothing writes nothing
    with repo.transaction("main", message="noop") as tx:
        tx.table("places/towns").update({"fid": 2, "pop": 19500})
    assert tx.commit_id is None


def test_schema_evolution_never_touches_rows(repo):
    steps = [
        lambda s: s.add_column("mayor", "text", id="c-mayor"),
        lambda s: s.drop_column("area"),
        lambda s: s.rename_column("pop", "population"),
        lambda s: s.move_column("population", 1),
        lambda s: s.change_type("population", "integer", size=64),
        lambda s: s.change_type("population", "float", size=64),
        lambda s: s.change_type("founded", "text"),
    ]
    for i, step in enumerate(steps):
        before = repo.head("main")
        with repo.transaction("main", message=f"schema {i}") as tx:
            t = tx.table("places/towns")
            assert t.alter(step(t.schema))
        changes = list(tables.raw_diff(repo, before, "main"))
        assert changes and {q[2] for _, q in changes} == {META}, "a schema change writes no row"
        assert list(repo.diff(before, "main")) == []  # tables are not quads
        assert {q[1] for _, q in changes} <= {"schema.json"} | {q[1] for _, q in changes if q[1].startswith("legend/")}
    t = repo.at("main").table("places/towns")
    assert t.schema.column_names == ["fid", "population", "name", "founded", "mayor"]
    assert t.get(1) == {"fid": 1, "population": 6000, "name": "Ōtaki", "founded": "1840-01-01", "mayor": None}
    assert t.get(1, python=False)["population"] == 6000  # stored as written, read through the new type
    with repo.transaction("main", message="new row") as tx:
        tx.table("places/towns").insert({"fid": 5, "population": 2.5, "name": "Tokomaru", "mayor": "X"})
    t = repo.at("main").table("places/towns")
    assert t.get(5)["mayor"] == "X" and t.get(2)["mayor"] is None
    legends = [k for k in t.meta if k.startswith("legend/")]
    assert len(legends) == 4  # the first, and one per change of the column ids or their order
    # old commits still read through their own schema
    first = list(repo.log("main"))[-1].id
    assert repo.at(first).table("places/towns").get(1)["area"] == Decimal("12.50")


def test_schema_change_cost_does_not_depend_on_rows(tmp_path):
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="big") as tx:
        t = tables.create(tx, "t", SCHEMA[:2])
        t.insert_many({"fid": i, "name": f"n{i}"} for i in range(2000))
    before = repo.head("main")
    with repo.transaction("main", message="alter") as tx:
        t = tx.table("t")
        t.alter(t.schema.add_column("x", "integer", id="c-x"))
    assert len(list(tables.raw_diff(repo, before, "main"))) == 3  # schema.json out and in, one legend
    repo.close()


def test_diff_log_blame(repo):
    first = repo.head("main")
    with repo.transaction("main", message="rename and grow", author="bob") as tx:
        t = tx.table("places/towns")
        t.update({"fid": 1, "name": "Otaki", "pop": 6100})
        t.delete(3)
        t.insert({"fid": 7, "name": "Paraparaumu"})
        t.alter(t.schema.rename_column("pop", "population"))
    with repo.transaction("main", message="grow again", author="cy") as tx:
        tx.table("places/towns").update({"fid": 1, "population": 6200})
    d = repo.table_diff(first, "main", "places/towns")
    assert [r["fid"] for r in d.inserted] == [7] and [r["fid"] for r in d.deleted] == [3]
    (u,) = d.updated
    assert u.pk == (1,) and u.kind == "update"
    assert u.cells == {"name": ("Ōtaki", "Otaki"), "population": (6000, 6200)}
    assert d.schema.renamed == {"c-pop": ("pop", "population")}
    empty = repo.table_diff("main", "main", "places/towns")
    assert not empty and len(empty) == 0
    log = repo.table_log("main", "places/towns", 1)
    assert [(e.commit.message, e.kind) for e in log] == [("grow again", "update"), ("rename and grow", "update"),
                                                         ("create", "insert")]
    assert log[0].change.cells == {"population": (6100, 6200)}
    assert repo.table_blame("main", "places/towns", 1, "population").message == "grow again"
    assert repo.table_blame("main", "places/towns", 1, "name").message == "rename and grow"
    assert repo.table_blame("main", "places/towns", 1, "founded").message == "create"
    assert repo.table_blame("main", "places/towns", 99, "name") is None
    # blame follows a merge to the side that made the change
    repo.branch("side")
    with repo.transaction("side", message="side edit") as tx:
        tx.table("places/towns").update({"fid": 2, "name": "Taitoko"})
    with repo.transaction("main", message="main edit") as tx:
        tx.table("places/towns").update({"fid": 7, "name": "Paraparaumu Beach"})
    repo.merge("main", "side")
    assert repo.table_blame("main", "places/towns", 2, "name").message == "side edit"
    assert repo.table_blame("main", "places/towns", 7, "name").message == "main edit"


def test_bad_input_leaves_everything_unchanged(repo):
    before = snapshot(repo)
    bad_rows = [
        ({"fid": 1, "name": "dup"}, RowExistsError, "duplicate primary key 1"),
        ({"fid": 9, "name": "x" * 21}, RowValueError, "'name'.*over the limit of 20"),
        ({"fid": 9, "pop": 2**40}, RowValueError, "'pop'.*signed 32-bit"),
        ({"fid": 9, "founded": "1840-13-01"}, RowValueError, "'founded'.*not a valid date"),
        ({"fid": 9, "area": Decimal("123456.789")}, RowValueError, "'area'"),
        ({"fid": 9, "nope": 1}, RowValueError, "'nope'.*no column"),
        ({"name": "no key"}, RowValueError, "'fid'.*primary key"),
        ({"fid": "one"}, RowValueError, "'fid'.*not an int"),
    ]
    for row, error, pattern in bad_rows:
        with repo.transaction("main", message="bad") as tx:
            t = tx.table("places/towns")
            with pytest.raises(error, match=pattern) as info:
                t.insert(row)
            assert "places/towns" in str(info.value)
            assert not any(staged.pending for staged in tx._staged.values())
        assert snapshot(repo) == before
    with repo.transaction("main", message="bad") as tx:
        t = tx.table("places/towns")
        with pytest.raises(RowNotFoundError, match="no row with primary key 9"):
            t.update({"fid": 9, "name": "x"})
        with pytest.raises(RowNotFoundError):
            t.delete(9)
        with pytest.raises(PrimaryKeyError):
            t.delete((1, 2))
        with pytest.raises(RowExistsError, match="duplicate primary key 5"):
            t.insert_many([{"fid": 5}, {"fid": 6}, {"fid": 5}])
        with pytest.raises(SchemaError, match="primary key cannot change"):
            t.alter(t.schema.drop_column("name").rename_column("fid", "id").change_type("id", "text"))
        with pytest.raises(SchemaError, match="would need every row rewritten"):
            t.alter(t.schema.change_type("pop", "text"))
        with pytest.raises(SchemaError, match="duplicate column name"):
            t.alter(t.schema.to_dicts() + [{"id": "z", "name": "name", "dataType": "text"}])
        assert not any(staged.pending for staged in tx._staged.values())
    with repo.transaction("main", message="bad") as tx:
        with pytest.raises(TableExistsError, match="differs only by case"):
            tables.create(tx, "Places/Towns", SCHEMA)
        with pytest.raises(DatasetNameError):
            tables.create(tx, "bad:name", SCHEMA)
        with pytest.raises(SchemaError, match="needs a primary key"):
            tables.create(tx, "nokey", [{"id": "a", "name": "a", "dataType": "text"}])
        with pytest.raises(SchemaError, match="unknown dataType"):
            tables.create(tx, "t2", [{"id": "a", "name": "a", "dataType": "varchar", "primaryKeyIndex": 0}])
        with pytest.raises(TableNotFoundError, match="no table named 'nope'"):
            tx.table("nope")
        assert not any(staged.pending for staged in tx._staged.values())
    assert snapshot(repo) == before
    with pytest.raises(TableNotFoundError):
        repo.at("main").table("nope")


def test_compound_and_text_keys(tmp_path):
    repo = fstore.open(tmp_path / "r")
    schema = [{"id": "a", "name": "country", "dataType": "text", "primaryKeyIndex": 0},
              {"id": "b", "name": "year", "dataType": "integer", "primaryKeyIndex": 1},
              {"id": "c", "name": "value", "dataType": "float"}]
    with repo.transaction("main", message="m") as tx:
        t = tables.create(tx, "stats", schema)
        t.insert({"country": "NZ", "year": 2020, "value": 1.5})
        t.insert({"country": "NZ", "year": 2021, "value": 2.5})
    t = repo.at("main").table("stats")
    assert t.path_structure.scheme == "msgpack/hash"
    assert t.get(("NZ", 2021))["value"] == 2.5
    with pytest.raises(PrimaryKeyError):
        t.get("NZ")
    with repo.transaction("main", message="m") as tx:
        tables.drop(tx, "stats")
        assert tables.list_tables(tx) == []
    assert tables.list_tables(repo.at("main")) == []
    assert list(fstore.from_(repo.at("main"), Var("g"), Var("s"), Var("p"), Var("o"))) == []
    repo.close()


def test_docs_worked_example():
    """docs/tables.md's worked example runs as written."""

    doc = PROJECT / "docs" / "tables.md"
    result = doctest.testfile(str(doc), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 15
