"""Tables in and out: CSV (given schema, given or inferred types, named key), SQLite and
GeoPackage, pandas DataFrames, the command functions; bad input names the file, line and
column and commits nothing."""

from __future__ import annotations

import datetime as dt
import sqlite3
from decimal import Decimal

import pandas as pd
import pytest

import fstore
import fstore.tables as tables
from fstore import Var
from fstore.tables import Geometry, RowExistsError, SchemaError, TableImportError
from fstore.tables.commands import (
    table_blame_text,
    table_diff_text,
    table_export,
    table_import,
    table_list,
    table_log_text,
    table_schema,
    table_show,
)
from fstore.tables.csv_io import export_csv, import_csv
from fstore.tables.frames import to_dataframe
from fstore.tables.store import import_dataframe
from fstore.tables.kart_import import import_kart
from fstore.tables.sqlite_io import export_sqlite, import_sqlite

from tests.kart_fixtures import KART_DIR, unpack_archive

CSV = "code,name,area,established,active,note\nA-1,Alpha,1.5,2001-02-03,true,\nB-2,Beta,2,1999-12-31,false,hi\n"


@pytest.fixture
def repo(tmp_path):
    repo = fstore.open(tmp_path / "repo")
    yield repo
    repo.close()


def snapshot(repo):
    return (repo.branches(), sorted(map(repr, fstore.from_(repo.at("main"), Var("g"), Var("s"), Var("p"), Var("o")))))


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_inferred_types(repo, tmp_path):
    src = write(tmp_path / "sites.csv", CSV)
    with repo.transaction("main", message="import") as tx:
        assert import_csv(tx, "sites", src, pk="code")["inserted"] == 2
    t = repo.at("main").table("sites")
    assert [(c.name, c.data_type) for c in t.schema] == [
        ("code", "text"), ("name", "text"), ("area", "float"), ("established", "date"), ("active", "boolean"),
        ("note", "text")]
    assert t.get("A-1") == {"code": "A-1", "name": "Alpha", "area": 1.5, "established": dt.date(2001, 2, 3),
                            "active": True, "note": None}
    # the same file again with `replace`: nothing changes, no commit
    with repo.transaction("main", message="again") as tx:
        assert import_csv(tx, "sites", src, replace=True) == {"inserted": 0, "updated": 0, "deleted": 0, "unchanged": 2}
    assert tx.commit_id is None
    # a new version: one row changed, one gone, one new, and a new column (schema change, no row rewritten)
    src2 = write(tmp_path / "sites2.csv", "code,name,area,established,active,note,rank\n"
                                          "A-1,Alpha,1.75,2001-02-03,true,,1\nC-3,Gamma,,,,,\n")
    first = repo.head("main")
    with repo.transaction("main", message="v2") as tx:
        assert import_csv(tx, "sites", src2, replace=True) == {"inserted": 1, "updated": 1, "deleted": 1, "unchanged": 0}
    d = repo.table_diff(first, "main", "sites")
    assert [r["code"] for r in d.inserted] == ["C-3"] and [r["code"] for r in d.deleted] == ["B-2"]
    assert [(u.pk, u.cells) for u in d.updated] == [(("A-1",), {"area": (1.5, 1.75), "rank": (None, 1)})]
    assert d.schema.added and repo.at("main").table("sites").schema["rank"].data_type == "integer"
    out = tmp_path / "out.csv"
    assert export_csv(repo.at("main").table("sites"), out) == 2
    assert sorted(out.read_text().splitlines()) == sorted([
        "code,name,area,established,active,note,rank", "A-1,Alpha,1.75,2001-02-03,true,,1", "C-3,Gamma,,,,,"])


def test_csv_given_schema_and_types(repo, tmp_path):
    src = write(tmp_path / "s.csv", CSV)
    schema = [{"id": "c", "name": "code", "dataType": "text", "primaryKeyIndex": 0},
              {"id": "n", "name": "name", "dataType": "text", "length": 10},
              {"id": "a", "name": "area", "dataType": "numeric", "precision": 5, "scale": 2},
              {"id": "e", "name": "established", "dataType": "text"},
              {"id": "v", "name": "active", "dataType": "boolean"},
              {"id": "o", "name": "note", "dataType": "text"}]
    with repo.transaction("main", message="import") as tx:
        import_csv(tx, "s", src, schema=schema)
        import_csv(tx, "typed", src, pk="code", types={"area": "text", "active": "text"})
    t = repo.at("main").table("s")
    assert t.schema.column_ids == ["c", "n", "a", "e", "v", "o"]
    assert t.get("B-2")["area"] == Decimal("2") and t.get("B-2")["established"] == "1999-12-31"
    assert repo.at("main").table("typed").get("A-1")["active"] == "true"


@pytest.mark.parametrize("text, line, column, pattern", [
    ("code,name\nA,1\nB,2,3\n", 3, None, "has 3 field"),
    ("code,n\nA,1\nB,x\n", 3, "n", "value 'x' is not a valid integer"),
    ("code,n\nA,1\nB,99999999999999999999\n", 3, "n", "signed 64-bit"),
])
def test_csv_bad_records(repo, tmp_path, text, line, column, pattern):
    src = write(tmp_path / "bad.csv", text)
    types = {"n": "integer"} if "n" in text.split("\n")[0] else None
    before = snapshot(repo)
    with pytest.raises(TableImportError, match=pattern) as info:
        with repo.transaction("main", message="bad") as tx:
            import_csv(tx, "bad", src, pk="code", types=types)
    e = info.value
    assert (e.source, e.line, e.column) == (str(src), line, column)
    assert str(src) in str(e) and f"line {line}" in str(e)
    assert snapshot(repo) == before


def test_csv_bad_into_existing_table_stages_nothing(repo, tmp_path):
    with repo.transaction("main", message="import") as tx:
        import_csv(tx, "sites", write(tmp_path / "ok.csv", CSV), pk="code")
    before = snapshot(repo)
    with repo.transaction("main", message="bad") as tx:
        with pytest.raises(TableImportError, match=r"line 3, column 'established'"):
            import_csv(tx, "sites", write(tmp_path / "bad.csv", CSV.replace("1999-12-31", "1999-13-31")
                                          .replace("code,name", "code,name,extra").replace("Alpha,", "Alpha,1,")
                                          .replace("Beta,", "Beta,2,")))
        with pytest.raises(RowExistsError, match=r"duplicate primary key 'A-1' \(.*dup.csv, line 3\)"):
            import_csv(tx, "sites", write(tmp_path / "dup.csv", "code,name\nA-1,x\nA-1,y\n"))
        with pytest.raises(RowExistsError, match="holds primary key 'B-2' already.*upsert"):
            import_csv(tx, "sites", write(tmp_path / "again.csv", "code,name\nZ-9,z\nB-2,y\n"))
        with pytest.raises(SchemaError, match="primary key"):
            import_csv(tx, "nokey", write(tmp_path / "nokey.csv", "a,b\n1,2\n"))
        with pytest.raises(TableImportError, match="appears twice"):
            import_csv(tx, "x", write(tmp_path / "twice.csv", "a,a\n1,2\n"), pk="a")
        with pytest.raises(fstore.tables.DatasetNameError):
            import_csv(tx, "bad:name", write(tmp_path / "n.csv", "a\n1\n"), pk="a")
        assert not any(staged.pending for staged in tx._staged.values())
    assert snapshot(repo) == before


def _gpkg(path):
    """A small GeoPackage with a point table, as GDAL would write it."""
    con = sqlite3.connect(path)
    con.executescript("""
        CREATE TABLE gpkg_spatial_ref_sys (srs_name TEXT, srs_id INTEGER PRIMARY KEY, organization TEXT,
            organization_coordsys_id INTEGER, definition TEXT, description TEXT);
        INSERT INTO gpkg_spatial_ref_sys VALUES ('WGS 84', 4326, 'EPSG', 4326, 'GEOGCS["WGS 84"]', NULL);
        CREATE TABLE gpkg_contents (table_name TEXT PRIMARY KEY, data_type TEXT, identifier TEXT, description TEXT,
            last_change DATETIME, min_x DOUBLE, min_y DOUBLE, max_x DOUBLE, max_y DOUBLE, srs_id INTEGER);
        INSERT INTO gpkg_contents VALUES ('pts', 'features', 'Some points', 'd', NULL, NULL, NULL, NULL, NULL, 4326);
        CREATE TABLE gpkg_geometry_columns (table_name TEXT, column_name TEXT, geometry_type_name TEXT, srs_id INTEGER,
            z TINYINT, m TINYINT);
        INSERT INTO gpkg_geometry_columns VALUES ('pts', 'geom', 'POINT', 4326, 0, 0);
        CREATE TABLE pts (fid INTEGER PRIMARY KEY, geom POINT, name TEXT(20), seen DATETIME, ok BOOLEAN, v FLOAT, n);
    """)
    # big-endian header with srs_id 4326: normalised to Kart's form on import
    be_point = bytes.fromhex("47500000000010e6" "00000000013ff00000000000004000000000000000")
    con.execute("INSERT INTO pts VALUES (1, ?, 'one', '2020-01-02T03:04:05.000Z', 1, 0.5, 7)", (be_point,))
    con.execute("INSERT INTO pts VALUES (2, NULL, NULL, NULL, 0, NULL, NULL)")
    con.commit()
    con.close()


def test_geopackage_and_sqlite(repo, tmp_path):
    src = tmp_path / "pts.gpkg"
    _gpkg(src)
    with repo.transaction("main", message="gpkg") as tx:
        import_sqlite(tx, "pts", src)
    t = repo.at("main").table("pts")
    assert t.title == "Some points" and t.state.crs() == {"EPSG:4326": 'GEOGCS["WGS 84"]'}
    assert [(c.name, c.data_type, c.extra_type_info) for c in t.schema] == [
        ("fid", "integer", {"size": 64}), ("geom", "geometry", {"geometryType": "POINT", "geometryCRS": "EPSG:4326"}),
        ("name", "text", {"length": 20}), ("seen", "timestamp", {"timezone": "UTC"}), ("ok", "boolean", {}),
        ("v", "float", {"size": 32}), ("n", "integer", {"size": 64})]
    row = t.get(1)
    assert row["geom"] == Geometry.from_wkt("POINT (1 2)") and row["geom"].hex().startswith("47500001" "00000000")
    assert row["seen"] == dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc) and row["ok"] is True
    assert t.get(2) == {"fid": 2, "geom": None, "name": None, "seen": None, "ok": False, "v": None, "n": None}
    # round trips: GeoPackage and plain SQLite, back into new tables
    for out in (tmp_path / "out.gpkg", tmp_path / "out.sqlite"):
        assert export_sqlite(t, out) == 2
        with repo.transaction("main", message="back") as tx:
            import_sqlite(tx, "back-" + out.suffix[1:], out)
        back = repo.at("main").table("back-" + out.suffix[1:])
        assert sorted(back.rows(python=False), key=lambda r: r["fid"]) == sorted(t.rows(python=False), key=lambda r: r["fid"])
    with pytest.raises(TableImportError, match="no such file"):
        with repo.transaction("main") as tx:
            import_sqlite(tx, "x", tmp_path / "missing.gpkg")


def test_kart_dataset_through_geopackage(repo, tmp_path):
    """A real Kart dataset (multipolygons) exported to GeoPackage and imported back reads the
    same, geometries byte for byte."""
    workdir = unpack_archive(KART_DIR / "polygons.tgz", tmp_path)
    import_kart(repo, workdir)
    t = repo.at("main").table("nz_waca_adjustments")
    export_sqlite(t, tmp_path / "poly.gpkg")
    with repo.transaction("main", message="back") as tx:
        import_sqlite(tx, "copy", tmp_path / "poly.gpkg")
    copy = repo.at("main").table("copy")
    assert [c.name for c in copy.schema] == [c.name for c in t.schema]
    key = t.schema.pk_columns[0].name
    assert {r[key]: r for r in copy.rows(python=False)} == {r[key]: r for r in t.rows(python=False)}


def test_dataframes(repo):
    df = pd.DataFrame({
        "id": pd.array([1, 2, 3], dtype="int32"),
        "name": ["a", None, "c"],
        "score": [1.5, float("nan"), 3.0],
        "flag": [True, False, True],
        "when": pd.to_datetime(["2020-01-01 00:00", "2021-06-01 12:00", None]),
        "amount": [Decimal("1.10"), None, Decimal("3")],
    })
    with repo.transaction("main", message="df") as tx:
        import_dataframe(tx, "frame", df, pk="id")
    t = repo.at("main").table("frame")
    assert [(c.data_type, c.extra_type_info) for c in t.schema] == [
        ("integer", {"size": 32}), ("text", {}), ("float", {"size": 64}), ("boolean", {}), ("timestamp", {}),
        ("numeric", {})]
    assert t.get(2) == {"id": 2, "name": None, "score": None, "flag": False, "when": dt.datetime(2021, 6, 1, 12),
                        "amount": None}
    out = to_dataframe(t).sort_values("id").reset_index(drop=True)
    assert out["id"].tolist() == [1, 2, 3] and out["score"].isna().tolist() == [False, True, False]
    assert out["amount"].tolist()[0] == Decimal("1.10")
    with repo.transaction("main", message="bad") as tx:
        with pytest.raises(fstore.tables.RowValueError, match="DataFrame row 1"):
            import_dataframe(tx, "frame2", pd.DataFrame({"id": [1, "two"], "x": ["a", "b"]}),
                             pk="id", schema=[{"id": "i", "name": "id", "dataType": "integer", "primaryKeyIndex": 0},
                                              {"id": "x", "name": "x", "dataType": "text"}])
        assert not any(staged.pending for staged in tx._staged.values())


def test_command_functions(repo, tmp_path):
    src = write(tmp_path / "sites.csv", CSV)
    assert table_import(repo, str(src), pk="code") == {"sites": {"inserted": 2, "updated": 0, "deleted": 0, "unchanged": 0}}
    write(src, CSV.replace("Alpha", "Alfa"))
    table_import(repo, str(src), replace=True, message="rename A-1", author="ann")
    assert table_list(repo, "main") == ["sites"]
    shown = table_show(repo, "main", "sites")
    assert shown.splitlines()[0].split() == ["code", "name", "area", "established", "active", "note"]
    assert shown.endswith("(2 rows)")
    assert '"name": "code"' in table_schema(repo, "main", "sites")
    first = list(repo.log("main"))[-1].id
    assert '~ {"code": "A-1", "name": ["Alpha", "Alfa"]}' in table_diff_text(repo, first, "main", "sites")
    log = table_log_text(repo, "main", "sites", "A-1")
    assert "rename A-1" in log and "[update: name Alpha -> Alfa]" in log
    assert "rename A-1" in table_blame_text(repo, "main", "sites", "A-1", "name")
    assert table_export(repo, "main", str(tmp_path / "out.csv"), name="sites") == {"sites": 2}
    assert table_export(repo, "main", str(tmp_path / "tree")) == {"sites": 2}
    assert (tmp_path / "tree" / "sites" / ".table-dataset" / "meta" / "schema.json").exists()
    workdir = unpack_archive(KART_DIR / "table.tgz", tmp_path / "kart")
    result = table_import(repo, str(workdir), branch_prefix="kart/")
    assert result["commits"] == 1 and list(result["branches"]) == ["kart/main"]
    assert tables.list_tables(repo.at("kart/main")) == ["countiestbl"]
