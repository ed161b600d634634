"""Tables as pandas and Arrow data (issue 15, point 2): ``to_pandas`` / ``to_arrow`` typed
from the schema at any ref, ``write_pandas`` / ``write_arrow`` in insert, upsert and
replace modes, ``datae table import --upsert | --replace``, and the primary key of a CSV
inferred when one column is unique and present, or a clear message."""

from __future__ import annotations

import datetime as dt
import tempfile

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fstore
import fstore.tables as tables
from datae.cli import main
from fstore.tables.commands import table_show
from fstore.tables.errors import ColumnNotFoundError, RowExistsError, RowValueError, SchemaError
from tests.profiles import examples

INT64 = st.integers(-(2**63), 2**63 - 1)
FLOAT = st.floats(allow_nan=False, allow_infinity=False, width=64)
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20)
WHEN = st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1)).map(
    lambda d: pd.Timestamp(d, tz="UTC"))
DAY = st.dates(min_value=dt.date(1, 1, 1))


def nullable(values):
    return st.one_of(st.none(), values)


ROWS = st.lists(st.tuples(nullable(INT64), nullable(FLOAT), nullable(st.booleans()), nullable(TEXT), nullable(WHEN),
                          nullable(DAY), nullable(st.binary(max_size=16))), max_size=12)


def frame(rows) -> pd.DataFrame:
    columns = {"id": pd.array(range(len(rows)), dtype="Int64"),
               "n": pd.array([r[0] for r in rows], dtype="Int64"),
               "x": pd.array([r[1] for r in rows], dtype="float64"),
               "ok": pd.array([r[2] for r in rows], dtype="boolean"),
               "name": pd.array([r[3] for r in rows], dtype="string"),
               "when": pd.array([r[4] if r[4] is not None else pd.NaT for r in rows], dtype="datetime64[us, UTC]"),
               "day": pd.Series([r[5] for r in rows], dtype="object"),
               "raw": pd.Series([r[6] for r in rows], dtype="object")}
    return pd.DataFrame(columns)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS)
def test_pandas_to_table_to_pandas_keeps_every_value_and_dtype(tmp_path, rows):
    df = frame(rows)
    if not len(df):
        return
    repo = fstore.open(tempfile.mkdtemp(dir=tmp_path))
    with repo.transaction("main", message="frame") as tx:
        tables.import_dataframe(tx, "t", df, pk="id")
    out = repo.at("main").table("t").to_pandas().sort_values("id").reset_index(drop=True)
    assert list(out.columns) == list(df.columns)
    for name in ("id", "n", "x", "ok", "name", "when"):
        assert out[name].dtype == df[name].dtype, name
        pd.testing.assert_series_equal(out[name], df[name], check_names=False)
    for name in ("day", "raw"):  # Python objects; a column of nulls only has no type to keep, so NA and None agree
        assert [None if pd.isna(v) else v for v in out[name]] == df[name].tolist(), name
    arrow = repo.at("main").table("t").to_arrow()
    assert arrow.schema.field("n").type == pa.int64() and arrow.schema.field("when").type == pa.timestamp("us", "UTC")
    assert arrow.num_rows == len(df)
    repo.close()


def test_write_modes_insert_upsert_replace(tmp_path):
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="first") as tx:
        tables.import_dataframe(tx, "t", pd.DataFrame({"id": [1, 2, 3], "v": ["a", "b", "c"]}), pk="id")
    head = repo.head("main")
    with pytest.raises(RowExistsError, match="holds primary key 2 already.*upsert"):
        with repo.transaction("main", message="again") as tx:
            tx.table("t").write_pandas(pd.DataFrame({"id": [4, 2], "v": ["d", "B"]}))
    assert repo.head("main") == head  # refused: nothing written
    with repo.transaction("main", message="upsert") as tx:
        counts = tx.table("t").write_pandas(pd.DataFrame({"id": [2, 3, 4], "v": ["B", "c", "d"]}), mode="upsert")
    assert counts == {"inserted": 1, "updated": 1, "deleted": 0, "unchanged": 1}
    assert repo.at("main").table("t").to_pandas().sort_values("id")["v"].tolist() == ["a", "B", "c", "d"]
    with repo.transaction("main", message="replace") as tx:
        counts = tx.table("t").write_arrow(pa.table({"id": [3, 5], "v": ["c", "e"]}), mode="replace")
    assert counts == {"inserted": 1, "updated": 0, "deleted": 3, "unchanged": 1}
    assert repo.at("main").table("t").to_pandas().sort_values("id")["id"].tolist() == [3, 5]
    assert repo.at(head).table("t").to_pandas().sort_values("id")["v"].tolist() == ["a", "b", "c"]  # any ref
    with pytest.raises(ValueError, match="load mode"):
        with repo.transaction("main", message="bad") as tx:
            tx.table("t").write_pandas(pd.DataFrame({"id": [9]}), mode="merge")
    repo.close()


def test_cli_import_infers_the_key_and_upserts(tmp_path, capsys):
    path = tmp_path / "repo"
    fstore.open(path).close()
    towns = tmp_path / "towns.csv"
    towns.write_text("name,code,region\nAuckland,AKL,north\nWellington,WLG,north\nChristchurch,CHC,south\n")

    def datae(*argv: str) -> tuple[int, str, str]:
        code = main(["--repo", str(path), *argv])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    code, _, err = datae("table", "import", str(towns))
    assert code != 0 and err.count("\n") == 1 and "columns ['code', 'name'] all could be" in err and "--pk" in err
    towns.write_text("name,code,region\nAuckland,AKL,north\nWellington,WLG,north\nAuckland,CHC,south\n")
    assert datae("table", "import", str(towns))[0] == 0  # only code is unique and present now
    with fstore.open(path) as repo:
        assert [c.name for c in repo.at("main").table("towns").schema.pk_columns] == ["code"]
        head = repo.head("main")
    towns.write_text("name,code,region\nAuckland,AKL,north\nWellington,WLG,centre\nHamilton,HLZ,north\n")
    code, _, err = datae("table", "import", str(towns))
    assert code != 0 and "holds primary key 'AKL' already" in err and "--upsert" in err
    with fstore.open(path) as repo:
        assert repo.head("main") == head
    code, out, _ = datae("table", "import", str(towns), "--upsert")
    assert code == 0 and "towns: 1 inserted, 1 updated, 0 deleted, 1 unchanged" in out
    code, out, _ = datae("table", "import", str(towns), "--replace")
    assert code == 0 and "towns: 0 inserted, 0 updated, 1 deleted, 3 unchanged" in out
    with fstore.open(path) as repo:
        assert sorted(repo.at("main").table("towns").to_pandas()["code"]) == ["AKL", "HLZ", "WLG"]
    empty = tmp_path / "none.csv"
    empty.write_text("a,b\n1,\n1,2\n")
    code, _, err = datae("table", "import", str(empty))
    assert code != 0 and "no column has values all present and distinct" in err


def test_infer_key_directly(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("id,v\n1,a\n2,a\n")
    assert tables.csv_io.infer_key("x", str(path), ["id", "v"]) == "id"
    with pytest.raises(SchemaError, match="needs a primary key"):
        path.write_text("id,v\n1,a\n1,a\n")
        tables.csv_io.infer_key("x", str(path), ["id", "v"])


EVERY_TYPE = [
    {"id": "k", "name": "id", "dataType": "integer", "primaryKeyIndex": 0, "size": 64},
    {"id": "i8", "name": "i8", "dataType": "integer", "size": 8},
    {"id": "i16", "name": "i16", "dataType": "integer", "size": 16},
    {"id": "i32", "name": "i32", "dataType": "integer", "size": 32},
    {"id": "f32", "name": "f32", "dataType": "float", "size": 32},
    {"id": "f64", "name": "f64", "dataType": "float", "size": 64},
    {"id": "b", "name": "b", "dataType": "boolean"},
    {"id": "t", "name": "t", "dataType": "text"},
    {"id": "bl", "name": "bl", "dataType": "blob"},
    {"id": "d", "name": "d", "dataType": "date"},
    {"id": "tm", "name": "tm", "dataType": "time"},
    {"id": "ts", "name": "ts", "dataType": "timestamp"},
    {"id": "tz", "name": "tz", "dataType": "timestamp", "timezone": "UTC"},
    {"id": "n", "name": "n", "dataType": "numeric", "precision": 10, "scale": 3},
    {"id": "iv", "name": "iv", "dataType": "interval"},
    {"id": "g", "name": "g", "dataType": "geometry", "geometryType": "POINT", "geometryCRS": "EPSG:4326"},
    {"id": "j", "name": "j", "dataType": "json"},
]
_JSON = st.recursive(st.none() | st.booleans() | st.integers(-(2**53), 2**53) | FLOAT | TEXT,
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=6)
_CELLS = {
    "i8": st.integers(-128, 127), "i16": st.integers(-(2**15), 2**15 - 1), "i32": st.integers(-(2**31), 2**31 - 1),
    "f32": st.floats(width=32, allow_nan=False, allow_infinity=False), "f64": FLOAT, "b": st.booleans(), "t": TEXT,
    "bl": st.binary(max_size=8), "d": DAY,
    "tm": st.times().map(lambda t: t.replace(tzinfo=None)),
    "ts": st.datetimes(min_value=dt.datetime(1, 1, 1)),
    "tz": st.datetimes(min_value=dt.datetime(1970, 1, 2), max_value=dt.datetime(2200, 1, 1)).map(
        lambda d: d.replace(tzinfo=dt.timezone.utc)),
    "n": st.decimals(min_value=-(10**6), max_value=10**6, places=3, allow_nan=False, allow_infinity=False),
    "iv": st.builds(lambda d, s: dt.timedelta(days=d, seconds=s), st.integers(0, 1000), st.integers(0, 86399)),
    "g": st.tuples(st.floats(-180, 180), st.floats(-90, 90)).map(
        lambda xy: tables.Geometry.from_wkt(f"POINT({xy[0]!r} {xy[1]!r})", srs_id=4326)),
    "j": _JSON,
}


@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.fixed_dictionaries({k: nullable(v) for k, v in _CELLS.items()}), min_size=1, max_size=6))
def test_every_kart_type_goes_pandas_table_pandas(tmp_path, rows):
    """A frame of Python values of every Kart type, written with write_pandas and read
    back with to_pandas, gives the same values (as the table API gives them: the oracle
    is the stored value's own decoding) and the dtypes of the schema."""
    repo = fstore.open(tempfile.mkdtemp(dir=tmp_path))
    df = pd.DataFrame({"id": pd.array(range(len(rows)), dtype="Int64"),
                       **{name: pd.Series([r[name] for r in rows], dtype="object") for name in _CELLS}})
    with repo.transaction("main", message="all types") as tx:
        tables.create(tx, "t", EVERY_TYPE).write_pandas(df)
    table = repo.at("main").table("t")
    out = table.to_pandas().sort_values("id").reset_index(drop=True)
    assert [str(out[c].dtype) for c in ("id", "i8", "i16", "i32", "f32", "f64", "b", "t", "ts", "tz")] == [
        "Int64", "Int8", "Int16", "Int32", "float32", "float64", "boolean", "string", "datetime64[us]",
        "datetime64[us, UTC]"]
    for i, row in enumerate(rows):
        got = {k: (None if pd.isna(v) is True else v) for k, v in out.iloc[i].items()}
        expected = table.get(i)
        for name in _CELLS:
            value = got[name]
            if isinstance(value, pd.Timestamp):
                value = value.to_pydatetime()
            elif hasattr(value, "item") and not isinstance(value, (bytes, str)):
                value = value.item()
            want = expected[name]
            if name == "f32" and want is not None:
                assert value == pytest.approx(want, rel=1e-6), name
            else:
                assert value == want, (name, value, want)
        # and what was written is what the table holds (types' own round trip)
        assert expected["i8"] == row["i8"] and expected["t"] == row["t"] and expected["j"] == row["j"]
        assert expected["n"] == row["n"] and expected["d"] == row["d"]
    repo.close()


def test_bad_frames_name_table_row_and_column_and_change_nothing(tmp_path):
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="m") as tx:
        tables.create(tx, "towns", [{"id": "k", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0},
                                    {"id": "p", "name": "pop", "dataType": "integer", "size": 32}]).insert({"fid": 1, "pop": 5})
    head = repo.head("main")
    cases = [
        (pd.DataFrame({"fid": [2, 3], "pop": [1, "many"]}), RowValueError, ["'towns'", "row 3", "'pop'", "'many'", "DataFrame row 1"]),
        (pd.DataFrame({"fid": [2, None], "pop": [1, 2]}), RowValueError, ["'towns'", "'fid'", "null", "primary key", "DataFrame row 1"]),
        (pd.DataFrame({"fid": [2], "pop": [2**40]}), RowValueError, ["'pop'", "32-bit", "DataFrame row 0"]),
        (pd.DataFrame({"fid": [2], "pop": [1], "popp": [3]}), ColumnNotFoundError, ["'towns'", "'popp'", "add_columns"]),
        (pd.DataFrame({"fid": [1.5], "pop": [1]}), RowValueError, ["'fid'", "1.5", "not an int"]),
    ]
    for df, error, words in cases:
        with pytest.raises(error) as caught:
            with repo.transaction("main", message="bad") as tx:
                tx.table("towns").write_pandas(df)
        for word in words:
            assert word in str(caught.value), (word, str(caught.value))
        assert repo.head("main") == head
    assert repo.at("main").table("towns").to_pandas().to_dict("list") == {"fid": [1], "pop": [5]}
    with repo.transaction("main", message="evolve") as tx:
        tx.table("towns").write_pandas(pd.DataFrame({"fid": [2], "pop": [1], "area": [3.5]}), add_columns=True)
    assert repo.at("main").table("towns").get(2) == {"fid": 2, "pop": 1, "area": 3.5}
    repo.close()


def test_a_writer_reads_its_own_rows_as_a_frame(tmp_path):
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="m") as tx:
        t = tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
                                    {"id": "v", "name": "v", "dataType": "text"}])
        t.insert_many([{"k": 2, "v": "b"}, {"k": 1, "v": None}])
        frame = t.to_pandas().sort_values("k")
        assert frame["k"].tolist() == [1, 2] and frame["v"].tolist()[1] == "b" and frame["v"].isna().tolist() == [True, False]
    repo.close()


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keys=st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=30, unique=True),
       seed=st.randoms(use_true_random=False))
def test_rows_come_out_in_key_order_however_they_went_in(tmp_path_factory, keys, seed):
    """Storage order is the order values entered a store; frames and `table show` are in
    key order, so two stores holding the same rows give equal frames and equal output."""
    shuffled = list(keys)
    seed.shuffle(shuffled)
    frames, shown = [], []
    for order in (keys, shuffled):
        path = tmp_path_factory.mktemp("store")
        repo = fstore.open(str(path))
        with repo.transaction("main", message="rows") as tx:
            t = tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
                                        {"id": "v", "name": "v", "dataType": "text"}])
            t.insert_many({"k": k, "v": str(k)} for k in order)
        frames.append(repo.at("main").table("t").to_pandas())
        assert repo.at("main").table("t").to_arrow().column("k").to_pylist() == sorted(keys)
        shown.append(table_show(repo, "main", "t", limit=5))
        repo.close()
    assert list(frames[0]["k"]) == sorted(keys)
    pd.testing.assert_frame_equal(frames[0], frames[1])
    assert shown[0] == shown[1]
    assert [int(line.split()[0]) for line in shown[0].splitlines()[2:-1]] == sorted(keys)[:5]


def test_the_bulk_columnar_read_equals_the_row_by_row_read(tmp_path):
    """RowReader.stored_columns decodes a chunk's keys and blobs in one msgpack call each
    when they share a legend; rows of two legends (a schema change) and a bad feature go
    row by row, with the same values, or the error naming the feature."""
    from fstore.tables import Geometry, Schema
    from fstore.tables.errors import FeatureError

    repo = fstore.open(tmp_path / "r")
    schema = [{"id": "k", "name": "id", "dataType": "integer", "primaryKeyIndex": 0},
              {"id": "t", "name": "name", "dataType": "text"},
              {"id": "g", "name": "geom", "dataType": "geometry", "geometryType": "POINT"}]
    point = Geometry.from_wkt("POINT (1 2)")
    with repo.transaction("main", message="one legend") as tx:
        tables.create(tx, "t", schema).insert_many({"id": i, "name": f"n{i}", "geom": point if i % 2 else None}
                                                   for i in range(-3, 40))
    table = repo.at("main").table("t")
    features = list(table.features())
    paths, blobs = [p for p, _ in features], [b for _, b in features]
    assert [[list(p), b] for p, b in table.feature_chunks(10)][0] == [paths[:10], blobs[:10]]  # read in bulk
    assert [p for chunk, _ in table.feature_chunks(10) for p in chunk] == paths
    by_row = [list(c) for c in zip(*(table.reader.stored_values(p, b) for p, b in features))]
    assert table.reader._bulk_columns(paths, blobs, False) is not None  # the bulk path ran
    assert table.reader.stored_columns(paths, blobs) == by_row
    raw = table.reader.stored_columns(paths, blobs, geometry_bytes=True)
    assert raw[2][4] == bytes(point) and type(raw[2][4]) is bytes and raw[:2] == by_row[:2]
    with repo.transaction("main", message="two legends") as tx:
        t = tx.table("t")
        t.alter(Schema.from_dicts(schema).add_column("extra", "float"))
        t.insert({"id": 100, "name": "new", "geom": None, "extra": 1.5})
    table = repo.at("main").table("t")
    paths, blobs = map(list, zip(*table.features()))
    assert table.reader._bulk_columns(paths, blobs, False) is None  # two legends: row by row
    columns = table.reader.stored_columns(paths, blobs)
    assert columns[3] == [None] * (len(paths) - 1) + [1.5] and columns[0][-1] == 100
    with pytest.raises(FeatureError, match="not valid MessagePack"):
        table.reader.stored_columns(paths[:3], blobs[:2] + [b"\xc1"])
    repo.close()


def test_a_frame_made_from_the_arrow_read_equals_the_frame_of_stored_values(tmp_path, monkeypatch):
    """Tables whose columns are all integer, float, boolean, text or date are made into a
    DataFrame from the Arrow read (fstore.tables.frames._EXACT_IN_ARROW); the frame equals,
    dtypes, nulls and values, the one made from the stored values."""
    import datetime as dt

    from fstore.tables import frames

    repo = fstore.open(tmp_path / "r")
    schema = [col for col in EVERY_TYPE if col["dataType"] in ("integer", "float", "boolean", "text", "date")]
    rows = [{"id": i, "i8": (i % 200) - 100 if i % 3 else None, "i16": i * 7 if i % 4 else None, "i32": -i,
             "f32": i / 4 if i % 5 else None, "f64": i / 3, "b": bool(i % 2) if i % 6 else None,
             "t": f"é{i}" if i % 7 else None, "d": dt.date(2000, 1, 1) + dt.timedelta(days=i) if i % 8 else None}
            for i in range(-20, 200)]
    with repo.transaction("main", message="one") as tx:
        tables.create(tx, "t", schema).insert_many(rows)
    with repo.transaction("main", message="two") as tx:
        tx.table("t").alter(schema + [{"id": "x", "name": "later", "dataType": "integer"}])
        tx.table("t").upsert({"id": 500, "later": 5, "f64": 1.5})
    for ref in ("main", "main~1"):
        via_arrow = repo.at(ref).table("t").to_pandas()
        monkeypatch.setattr(frames, "_EXACT_IN_ARROW", frozenset())
        stored = repo.at(ref).table("t").to_pandas()
        monkeypatch.undo()
        pd.testing.assert_frame_equal(via_arrow, stored)
    repo.close()


def test_dataframe_rows_are_each_rows_python_values() -> None:
    """``dataframe_rows`` (a column at a time) gives each row's values as ``_python`` makes
    them from ``itertuples``, for every dtype a frame may hold: numpy integers, unsigned,
    floats of both widths with NaN, booleans, nullable integers, datetimes with NaT,
    objects (text, dates, decimals) with None and NaN."""
    import datetime as dt
    import decimal

    import numpy as np
    import pandas as pd

    from fstore.tables.frames import _python, dataframe_rows

    df = pd.DataFrame({"a": [1, 2, 3], "b": [1.5, np.nan, 2.0], "c": ["x", None, "z"], "d": [True, False, True],
                       "e": pd.array([1, None, 3], dtype="Int64"), "f": pd.to_datetime(["2020-01-01", None, "2021-01-01"]),
                       "g": [dt.date(2020, 1, 1), None, dt.date(2020, 1, 2)], "h": np.array([1, 2, 3], dtype=np.uint8),
                       "i": np.array([1.5, 2.5, np.nan], dtype=np.float32), "j": [decimal.Decimal("1.5"), None, np.nan],
                       "k": pd.array([True, None, False], dtype="boolean")})
    names = [str(c) for c in df.columns]
    expected = [{n: _python(v) for n, v in zip(names, values)} for values in df.itertuples(index=False, name=None)]
    found = list(dataframe_rows(df))
    assert found == expected
    assert [[type(v) for v in row.values()] for row in found] == [[type(v) for v in row.values()] for row in expected]
