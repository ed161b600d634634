"""Issue 15, point 5 "Values": json cells, typed values in `table diff` and `table blame`,
and blame of dropped, renamed and added columns."""

from __future__ import annotations

import json
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fstore
import fstore.tables as tables
from fstore.tables.changes import table_blame
from fstore.tables.csv_io import export_csv, import_csv
from fstore.tables.errors import ColumnNotFoundError, RowValueError
from fstore.tables.sqlite_io import export_sqlite, import_sqlite
from tests.profiles import examples
from tests.cli_fixtures import run_cli

SCHEMA = [
    {"id": "c-fid", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0, "size": 64},
    {"id": "c-doc", "name": "doc", "dataType": "json"},
    {"id": "c-pop", "name": "pop", "dataType": "integer", "size": 32},
]

JSON_SCALARS = (
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text()
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@pytest.fixture
def repo(tmp_path):
    r = fstore.open(str(tmp_path / "repo"))
    yield r
    r.close()


def make_table(repo, rows=()):
    with repo.transaction("main", message="create", author="ann") as tx:
        t = tables.create(tx, "towns", SCHEMA)
        for row in rows:
            t.insert(row)


def same_json(a, b) -> bool:
    """Equal, and equal in type at every level (1 == 1.0 == True would hide a change)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


@settings(max_examples=examples(150), deadline=None)
@given(doc=JSON_VALUES)
def test_json_values_round_trip(tmp_path_factory, doc):
    repo = fstore.open(str(tmp_path_factory.mktemp("json") / "repo"))
    try:
        make_table(repo, [{"fid": 1, "doc": doc}])
        with repo.transaction("main", message="upsert") as tx:
            tx.table("towns").upsert({"fid": 2, "doc": doc})
        with repo.transaction("main", message="update") as tx:
            tx.table("towns").update({"fid": 1, "doc": [doc]})
        table = repo.at("main").table("towns")
        assert same_json(table.get(2)["doc"], doc)
        assert same_json(table.get(1)["doc"], [doc])
        assert same_json(repo.at("main~2").table("towns").get(1)["doc"], doc)
    finally:
        repo.close()


def test_dict_refused_in_integer_column_store_unchanged(repo):
    make_table(repo, [{"fid": 1, "doc": {"a": 1}, "pop": 5}])
    before = repo.head("main")
    for write in ("insert", "upsert", "update"):
        fid = 2 if write == "insert" else 1
        with pytest.raises(RowValueError) as caught:
            with repo.transaction("main", message="bad") as tx:
                getattr(tx.table("towns"), write)({"fid": fid, "pop": {"n": 6000}})
        e = caught.value
        assert (e.table, e.pk, e.column) == ("towns", (fid,), "pop")
        assert "towns" in str(e) and "pop" in str(e) and f"row {fid}" in str(e)
        assert repo.head("main") == before
    assert repo.at("main").table("towns").get(1) == {"fid": 1, "doc": {"a": 1}, "pop": 5}


@pytest.mark.parametrize("bad", [float("nan"), {1: "x"}, b"bytes", 2**64, {"a": float("inf")}])
def test_values_json_cannot_hold_are_refused(repo, bad):
    make_table(repo)
    before = repo.head("main")
    with pytest.raises(RowValueError) as caught:
        with repo.transaction("main", message="bad") as tx:
            tx.table("towns").insert({"fid": 1, "doc": bad})
    assert (caught.value.table, caught.value.pk, caught.value.column) == ("towns", (1,), "doc")
    assert repo.head("main") == before


def test_json_key_order_is_not_a_change(repo):
    make_table(repo, [{"fid": 1, "doc": {"a": 1, "b": 2}}])
    before = repo.head("main")
    with repo.transaction("main", message="same document") as tx:
        tx.table("towns").update({"fid": 1, "doc": {"b": 2, "a": 1}})
    assert not repo.table_diff(before, "main", "towns")


def test_json_through_csv_and_sqlite(repo, tmp_path):
    docs = {1: {"tags": ["a", "b"], "n": 1.5}, 2: "just text", 3: None, 4: [1, 2, None], 5: 3}
    make_table(repo, [{"fid": k, "doc": v} for k, v in docs.items()])
    table = repo.at("main").table("towns")
    out = tmp_path / "towns.csv"
    export_csv(table, out)
    lines = out.read_text().splitlines()
    assert '1,"{""n"":1.5,""tags"":[""a"",""b""]}",' in lines and '3,,' in lines
    with repo.transaction("main", message="csv") as tx:
        import_csv(tx, "copy", out, schema=SCHEMA)
    db = tmp_path / "towns.sqlite"
    export_sqlite(table, db)
    con = sqlite3.connect(db)
    assert json.loads(con.execute("SELECT doc FROM towns WHERE fid = 4").fetchone()[0]) == [1, 2, None]
    con.close()
    with repo.transaction("main", message="sqlite") as tx:
        import_sqlite(tx, "from_sqlite", db)
    view = repo.at("main")
    for name in ("copy", "from_sqlite"):
        assert {r["fid"]: r["doc"] for r in view.table(name).rows()} == docs
    assert view.table("from_sqlite").schema.by_name("doc").data_type == "json"


def test_csv_bad_json_names_line_and_column(repo, tmp_path):
    src = tmp_path / "bad.csv"
    src.write_text('fid,doc,pop\n1,"{""a"": 1}",2\n2,{not json,3\n')
    make_table(repo)
    before = repo.head("main")
    with pytest.raises(tables.TableImportError) as caught:
        with repo.transaction("main", message="bad") as tx:
            import_csv(tx, "towns", src)
    assert (caught.value.line, caught.value.column) == (3, "doc")
    assert repo.head("main") == before


run = run_cli


def test_table_diff_cli_prints_typed_values(repo, capsys, tmp_path):
    make_table(repo, [{"fid": 1, "doc": {"a": [1]}, "pop": 6000}, {"fid": 2, "doc": None, "pop": 19000}])
    with repo.transaction("main", message="edit") as tx:
        t = tx.table("towns")
        t.update({"fid": 1, "pop": 6100, "doc": {"a": [1, 2.5]}})
        t.delete(2)
        t.insert({"fid": 3, "doc": "x", "pop": 7})
    path = str(tmp_path / "repo")
    repo.close()
    code, out, err = run(capsys, "--repo", path, "table", "diff", "towns", "main~1", "main")
    assert code == 0, err
    lines = out.splitlines()
    rows = {line[0]: json.loads(line[2:]) for line in lines[1:]}
    assert rows["+"] == {"fid": 3, "doc": "x", "pop": 7}
    assert rows["-"] == {"fid": 2, "doc": None, "pop": 19000}
    assert rows["~"] == {"fid": 1, "doc": [{"a": [1]}, {"a": [1, 2.5]}], "pop": [6000, 6100]}
    assert type(rows["~"]["pop"][1]) is int and type(rows["+"]["fid"]) is int
    assert lines[0] == "table towns: 1 inserted, 1 updated, 1 deleted"


def test_table_blame_cli_shows_typed_value(repo, capsys, tmp_path):
    make_table(repo, [{"fid": 1, "doc": {"a": 1}, "pop": 6000}])
    path = str(tmp_path / "repo")
    repo.close()
    code, out, err = run(capsys, "--repo", path, "table", "blame", "towns", "1", "pop")
    assert code == 0, err
    assert "create" in out and out.rstrip().endswith("pop: 6000")
    code, out, _ = run(capsys, "--repo", path, "table", "blame", "towns", "1", "doc")
    assert out.rstrip().endswith('doc: {"a": 1}')


def test_blame_dropped_column_is_one_line_error(repo, capsys, tmp_path):
    make_table(repo, [{"fid": 1, "pop": 6000}])
    with repo.transaction("main", message="drop pop") as tx:
        t = tx.table("towns")
        t.alter(t.schema.drop_column("pop"))
    with pytest.raises(ColumnNotFoundError) as caught:
        table_blame(repo, "main", "towns", 1, "pop")
    assert caught.value.columns == ("fid", "doc")
    assert table_blame(repo, "main~1", "towns", 1, "pop").message == "create"
    path = str(tmp_path / "repo")
    repo.close()
    code, out, err = run(capsys, "--repo", path, "table", "blame", "towns", "1", "pop")
    assert code != 0 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert "pop" in err and "fid, doc" in err and "Traceback" not in err


def test_blame_renamed_and_added_columns(repo):
    make_table(repo, [{"fid": 1, "pop": 6000}, {"fid": 2, "pop": 10}])
    with repo.transaction("main", message="rename pop") as tx:
        t = tx.table("towns")
        t.alter(t.schema.rename_column("pop", "population"))
    with repo.transaction("main", message="add founded") as tx:
        t = tx.table("towns")
        t.alter(t.schema.add_column("founded", "integer", id="c-founded"))
    with repo.transaction("main", message="found 2") as tx:
        tx.table("towns").update({"fid": 2, "founded": 1840})
    with repo.transaction("main", message="unrelated") as tx:
        tx.table("towns").update({"fid": 1, "doc": [1]})
    assert table_blame(repo, "main", "towns", 1, "population").message == "create"
    # a null cell of a column added after the row was written dates from the column
    assert table_blame(repo, "main", "towns", 1, "founded").message == "add founded"
    assert table_blame(repo, "main", "towns", 2, "founded").message == "found 2"
    # row 1 untouched since "create": its blob's legend has no founded
    assert table_blame(repo, "main~1", "towns", 1, "founded").message == "add founded"
    with pytest.raises(ColumnNotFoundError, match="columns: fid, doc, population"):
        table_blame(repo, "main~3", "towns", 1, "founded")


def test_json_type_changes_are_refused(repo):
    make_table(repo, [{"fid": 1, "doc": {"a": 1}}])
    before = repo.head("main")
    for column, new_type in (("doc", "text"), ("pop", "json")):
        with pytest.raises(tables.SchemaError, match=column):
            with repo.transaction("main", message="retype") as tx:
                t = tx.table("towns")
                t.alter(t.schema.change_type(column, new_type))
        assert repo.head("main") == before


def test_dataframe_of_dicts_imports_as_json(repo):
    pd = pytest.importorskip("pandas")
    from fstore.tables.store import import_dataframe

    df = pd.DataFrame({"fid": [1, 2, 3], "doc": [{"a": [1, 2]}, "text", None]})
    with repo.transaction("main", message="frame") as tx:
        import_dataframe(tx, "frame", df, pk="fid")
    table = repo.at("main").table("frame")
    assert table.schema.by_name("doc").data_type == "json"
    assert {r["fid"]: r["doc"] for r in table.rows()} == {1: {"a": [1, 2]}, 2: "text", 3: None}


def test_json_subclasses_are_stored_as_plain_values(repo):
    import collections
    import enum

    class Colour(str, enum.Enum):
        RED = "red"

    make_table(repo)
    with repo.transaction("main", message="subclasses") as tx:
        tx.table("towns").insert({"fid": 1, "doc": collections.OrderedDict(c=Colour.RED, t=(1, 2))})
    doc = repo.at("main").table("towns").get(1)["doc"]
    assert doc == {"c": "red", "t": [1, 2]} and type(doc["c"]) is str


def test_json_primary_key_is_refused(repo):
    with pytest.raises(tables.SchemaError, match="'doc': a json column cannot be part of the primary key"):
        with repo.transaction("main", message="json key") as tx:
            tables.create(tx, "bad", [{"id": "d", "name": "doc", "dataType": "json", "primaryKeyIndex": 0}])
    assert repo.head("main") is None
