"""Property-based (hypothesis) and unit tests of the table codec: type encodings round-trip,
feature blobs round-trip through legends and schema changes, paths decode to their keys,
geometry survives every byte order and envelope, schemas re-serialise, and bad input gives
typed errors that name what was wrong."""

from __future__ import annotations

import datetime as dt
import math
import struct
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fstore.tables import (
    DATA_TYPES,
    Column,
    ColumnType,
    ColumnValueError,
    DatasetNameError,
    FeatureError,
    Geometry,
    GeometryError,
    Interval,
    LegendError,
    PathStructure,
    PathStructureError,
    PrimaryKeyError,
    Schema,
    SchemaError,
    decode_value,
    deterministic_column_id,
    encode_row,
    encode_value,
    from_python_row,
    new_column_id,
    pack,
    raw_feature,
    to_python_row,
    unpack,
    validate_dataset_name,
    validate_stored,
)
from fstore.tables import wkb as W
from fstore.tables.geometry import ENVELOPE_NONE, ENVELOPE_XY, ENVELOPE_XYZ, normalise_gpkg
from fstore.tables.paths import decode_filename, encode_filename
from fstore.tables.wkt import format_wkt, parse_wkt
from tests.profiles import examples

SETTINGS = settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])

# -- strategies ----------------------------------------------------------------------

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
coord_value = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False)
times = st.times(timezones=st.none())
naive_datetimes = st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31))
decimals = st.decimals(allow_nan=False, allow_infinity=False, places=None).filter(lambda d: abs(d.adjusted()) < 60)
intervals = st.builds(
    Interval,
    years=st.integers(0, 99),
    months=st.integers(0, 11),
    weeks=st.integers(0, 10),
    days=st.integers(0, 400),
    hours=st.integers(0, 23),
    minutes=st.integers(0, 59),
    seconds=st.decimals(min_value=0, max_value=59, places=3),
)


@st.composite
def wkb_geometries(draw, depth=0):
    has_z, has_m = draw(st.booleans()), draw(st.booleans())
    return draw(_geom(has_z, has_m, depth))


def _coords(has_z, has_m):
    return st.tuples(*[coord_value] * (2 + has_z + has_m))


def _geom(has_z, has_m, depth):
    pt = _coords(has_z, has_m)
    line = st.lists(pt, min_size=2, max_size=6).map(tuple)
    ring = st.lists(pt, min_size=3, max_size=6).map(lambda ps: tuple(ps) + (ps[0],))
    simple = st.one_of(
        pt.map(lambda c: W.WkbGeometry(W.POINT, has_z, has_m, c)),
        line.map(lambda c: W.WkbGeometry(W.LINESTRING, has_z, has_m, c)),
        st.lists(ring, min_size=0, max_size=3).map(lambda r: W.WkbGeometry(W.POLYGON, has_z, has_m, tuple(r))),
    )
    if depth >= 2:
        return simple
    multi = st.one_of(
        st.lists(pt.map(lambda c: W.WkbGeometry(W.POINT, has_z, has_m, c)), max_size=4).map(
            lambda ps: W.WkbGeometry(W.MULTIPOINT, has_z, has_m, tuple(ps))
        ),
        st.lists(line.map(lambda c: W.WkbGeometry(W.LINESTRING, has_z, has_m, c)), max_size=3).map(
            lambda ps: W.WkbGeometry(W.MULTILINESTRING, has_z, has_m, tuple(ps))
        ),
        st.lists(st.deferred(lambda: _geom(has_z, has_m, depth + 1)), max_size=3).map(
            lambda ps: W.WkbGeometry(W.GEOMETRYCOLLECTION, has_z, has_m, tuple(ps))
        ),
    )
    return st.one_of(simple, multi)


# Python values per (data type, extra type info).
PY_VALUES = {
    "boolean": ({}, st.booleans()),
    "blob": ({}, st.binary(max_size=40)),
    "date": ({}, st.dates()),
    "float": ({"size": 64}, finite),
    "geometry": ({"geometryType": "GEOMETRY"}, wkb_geometries().map(lambda g: Geometry.from_wkb(W.write_wkb(g)))),
    "integer": ({"size": 64}, st.integers(-(2**63), 2**63 - 1)),
    "interval": ({}, intervals),
    "json": ({}, st.recursive(
        st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | finite | st.text(max_size=10),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=8)),
    "numeric": ({}, decimals),
    "text": ({}, st.text(max_size=40)),
    "time": ({}, times),
    "timestamp": ({}, naive_datetimes),
}


# -- type encodings ------------------------------------------------------------------


@pytest.mark.parametrize("data_type", DATA_TYPES)
@SETTINGS
@given(data=st.data())
def test_type_roundtrip(data_type, data):
    extra, strategy = PY_VALUES[data_type]
    col = ColumnType("c", data_type, extra)
    value = data.draw(strategy)
    stored = encode_value(col, value)
    validate_stored(col, stored)
    assert unpack(pack([stored])) == [stored]  # survives msgpack unchanged
    back = decode_value(col, stored)
    assert back == value
    assert type(back) is type(value)
    assert encode_value(col, back) == stored  # stored form is canonical


@SETTINGS
@given(
    st.datetimes(
        timezones=st.builds(dt.timezone, st.timedeltas(min_value=dt.timedelta(hours=-23), max_value=dt.timedelta(hours=23))),
        min_value=dt.datetime(2, 1, 1),
        max_value=dt.datetime(9998, 1, 1),
    )
)
def test_utc_timestamps(value):
    col = ColumnType("ts", "timestamp", {"timezone": "UTC"})
    stored = encode_value(col, value)
    assert not stored.endswith("Z")
    back = decode_value(col, stored)
    assert back == value and back.tzinfo == dt.timezone.utc
    with pytest.raises(ColumnValueError):
        encode_value(ColumnType("ts", "timestamp", {}), value)


@SETTINGS
@given(st.integers(), st.sampled_from([8, 16, 32, 64]))
def test_integer_sizes(n, size):
    col = ColumnType("n", "integer", {"size": size})
    fits = -(2 ** (size - 1)) <= n < 2 ** (size - 1)
    if fits:
        assert encode_value(col, n) == n
    else:
        with pytest.raises(ColumnValueError) as e:
            encode_value(col, n)
        assert e.value.column == "n" and e.value.value == n and str(size) in e.value.reason


@SETTINGS
@given(intervals)
def test_interval_text(iv):
    assert Interval.parse(iv.isoformat()) == iv


@SETTINGS
@given(st.timedeltas(min_value=dt.timedelta(0)))
def test_interval_timedelta(td):
    assert Interval.from_timedelta(td).to_timedelta() == td


def test_value_errors_name_column_value_and_reason():
    cases = [
        (ColumnType("b", "boolean"), 1, "not a bool"),
        (ColumnType("t", "text", {"length": 3}), "abcd", "over the limit"),
        (ColumnType("x", "blob", {"length": 2}), b"abc", "over the limit"),
        (ColumnType("d", "date"), dt.datetime(2000, 1, 1), "only the date"),
        (ColumnType("d", "date"), "2000-13-01", "not a valid date"),
        (ColumnType("f", "float", {"size": 32}), 1e300, "32-bit"),
        (ColumnType("n", "numeric", {"precision": 4, "scale": 2}), Decimal("123.4"), "too many digits"),
        (ColumnType("n", "numeric", {"precision": 4, "scale": 2}), Decimal("1.234"), "scale 2"),
        (ColumnType("n", "numeric"), Decimal("NaN"), "not finite"),
        (ColumnType("n", "numeric"), "1e5", "not a decimal number"),
        (ColumnType("i", "interval"), "P1X", "ISO 8601 duration"),
        (ColumnType("i", "interval"), dt.timedelta(-1), "negative"),
        (ColumnType("tm", "time"), "25:00:00", "not a valid time"),
        (ColumnType("tm", "time"), dt.time(1, tzinfo=dt.timezone(dt.timedelta(hours=2))), "timezone"),
        (ColumnType("ts", "timestamp"), "2000-01-01 00:00:00", "ISO 8601 timestamp"),
        (ColumnType("g", "geometry", {"geometryType": "POINT"}), "LINESTRING (0 0, 1 1)", "LINESTRING"),
        (ColumnType("g", "geometry"), b"GPjunk", "not a valid geometry"),
        (ColumnType("g", "geometry"), 5, "not a geometry"),
    ]
    for col, value, reason in cases:
        with pytest.raises(ColumnValueError) as e:
            encode_value(col, value)
        assert e.value.column == col.name and reason in str(e.value), (col, value, str(e.value))
        assert isinstance(e.value, ValueError)


def test_geometry_input_forms():
    col = ColumnType("g", "geometry", {"geometryType": "POINT"})
    expected = Geometry.from_wkt("POINT (1 2)")
    assert encode_value(col, "POINT(1 2)") == expected
    assert encode_value(col, expected.to_wkb()) == expected
    assert encode_value(col, expected.to_hex_wkb()) == expected
    srid_gpkg = Geometry.from_wkb(expected.to_wkb(), srs_id=4326)
    assert encode_value(col, bytes(srid_gpkg)) == expected  # normalised: srs_id 0


# -- schemas, legends, features ------------------------------------------------------

name_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12)


@st.composite
def schemas(draw):
    n = draw(st.integers(1, 8))
    names = draw(st.lists(name_text, min_size=n, max_size=n, unique=True))
    types = draw(st.lists(st.sampled_from([t for t in DATA_TYPES if t != "geometry"]), min_size=n, max_size=n))
    keyable = [i for i, t in enumerate(types) if t != "json"]  # json cannot be a key
    n_pk = draw(st.integers(0, min(2, len(keyable))))
    pk_positions = draw(st.permutations(keyable))[:n_pk]
    cols = []
    for i, (name, t) in enumerate(zip(names, types)):
        extra = PY_VALUES[t][0]
        pk = pk_positions.index(i) if i in pk_positions else None
        cols.append(Column.create(name, t, pk_index=pk, **extra))
    return Schema(cols)


@SETTINGS
@given(schemas())
def test_schema_json_roundtrip(schema):
    data = schema.dumps()
    again = Schema.from_json(data)
    assert again == schema and again.dumps() == data
    assert again.legend == schema.legend
    assert [c.id for c in schema.pk_columns] == list(schema.legend.pk_columns)


@SETTINGS
@given(schemas(), st.data())
def test_feature_roundtrip(schema, data):
    row = {c.name: data.draw(st.one_of(st.none(), PY_VALUES[c.data_type][1])) for c in schema.columns}
    for c in schema.pk_columns:
        if row[c.name] is None:
            row[c.name] = data.draw(PY_VALUES[c.data_type][1])
    stored = from_python_row(schema, row)
    pk, blob = encode_row(schema, stored)
    legends = {schema.legend.name: schema.legend}
    assert schema.adapt(raw_feature(blob, pk, legends)) == stored
    assert to_python_row(schema, stored) == row
    assert decode_filename(encode_filename(pk)) == list(pk)


@SETTINGS
@given(schemas(), st.data())
def test_rows_read_through_later_schemas(schema, data):
    """Rows written with one schema read through a changed one by column id."""
    row = {c.name: data.draw(PY_VALUES[c.data_type][1]) for c in schema.columns}
    pk, blob = encode_row(schema, from_python_row(schema, row))
    new = schema
    non_pk = [c for c in schema.columns if not c.is_pk]
    dropped = renamed = None
    if non_pk:
        dropped = data.draw(st.sampled_from(non_pk))
        new = new.drop_column(dropped.name)
    rest = [c for c in new.columns if not c.is_pk]
    if rest:
        renamed = data.draw(st.sampled_from(rest))
        new = new.rename_column(renamed.name, renamed.name + "_renamed")
    new = new.add_column("added column", "text")
    new = new.move_column("added column", 0)
    diff = schema.diff(new)
    assert len(diff.added) == 1 and diff.dropped == ((dropped.id,) if dropped else ())
    assert bool(renamed) == bool(diff.renamed)
    got = new.adapt(raw_feature(blob, pk, {schema.legend.name: schema.legend}))
    assert got["added column"] is None
    for c in schema.columns:
        if dropped and c.id == dropped.id:
            continue
        name = new.by_id(c.id).name
        assert got[name] == encode_value(c, row[c.name])
    assert list(got) == new.column_names


def test_schema_errors():
    ok = {"id": "a", "name": "a", "dataType": "integer"}
    bad = [
        ([{"name": "a", "dataType": "integer"}], "missing required key 'id'"),
        ([{**ok, "dataType": "int"}], "unknown dataType"),
        ([ok, {**ok, "name": "b"}], "duplicate column id"),
        ([ok, {**ok, "id": "b"}], "duplicate column name"),
        ([{**ok, "size": 12}], "size"),
        ([{**ok, "length": 5}], "unexpected key 'length'"),
        ([{**ok, "primaryKeyIndex": True}], "primaryKeyIndex"),
        ([{**ok, "dataType": "timestamp", "timezone": "NZST"}], "timezone"),
        ([{**ok, "dataType": "geometry", "geometryType": "BLOB"}], "geometryType"),
        ([{**ok, "dataType": "numeric", "precision": 2, "scale": 3}], "larger than precision"),
    ]
    for dicts, message in bad:
        with pytest.raises(SchemaError) as e:
            Schema.from_dicts(dicts)
        assert message in str(e.value), (dicts, str(e.value))
    with pytest.raises(SchemaError):
        Schema.from_json(b"{not json")
    with pytest.raises(SchemaError):
        Schema.from_json(b'{"a": 1}')
    # Lenient reading keeps unknown keys, and writes them back.
    lenient = Schema.from_dicts([{**ok, "comment": "x"}], strict=False)
    assert lenient.to_dicts() == [{**ok, "comment": "x"}]


def test_v2_null_primary_key_index():
    data = (
        b'[{"id": "a", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0, "size": 64}, '
        b'{"id": "b", "name": "geom", "dataType": "geometry", "primaryKeyIndex": null, "geometryType": "POINT", '
        b'"geometryCRS": null}]'
    )
    schema = Schema.from_json(data)
    assert schema.dumps() == data
    assert schema["geom"].pk_index is None and schema["geom"].extra_type_info == {"geometryType": "POINT"}
    assert schema.normalised().dumps() == (
        b'[{"id": "a", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0, "size": 64}, '
        b'{"id": "b", "name": "geom", "dataType": "geometry", "geometryType": "POINT"}]'
    )
    assert schema.normalised() == schema


def test_column_ids():
    a, b = new_column_id(), new_column_id()
    assert a != b and len(a) == 36 and a[14] == "4"
    assert deterministic_column_id("fid", "integer", "salt") == deterministic_column_id("fid", "integer", "salt")
    assert deterministic_column_id("fid", "integer", "salt") != deterministic_column_id("fid", "integer", "pepper")


def test_legend_errors():
    from fstore.tables import Legend

    with pytest.raises(LegendError):
        Legend.loads(pack(["a", "b"]))
    legend = Legend(("a",), ("b",))
    with pytest.raises(LegendError):
        Legend.loads(legend.dumps(), name="0" * 40)
    with pytest.raises(FeatureError):
        raw_feature(pack([legend.name, ["x", "y"]]), [1], {legend.name: legend})
    with pytest.raises(FeatureError):
        raw_feature(pack(["unknown", ["x"]]), [1], {legend.name: legend})
    with pytest.raises(FeatureError):
        raw_feature(b"\xc1", [1], {})


# -- paths ----------------------------------------------------------------------------

path_structures = st.one_of(
    st.builds(PathStructure, st.just("int"), st.sampled_from([16, 256, 4096]), st.integers(1, 5), st.just("hex")),
    st.builds(PathStructure, st.just("int"), st.sampled_from([64, 4096]), st.integers(1, 5), st.just("base64")),
    st.builds(PathStructure, st.just("msgpack/hash"), st.sampled_from([16, 256]), st.integers(1, 10), st.just("hex")),
    st.builds(PathStructure, st.just("msgpack/hash"), st.just(64), st.integers(1, 20), st.just("base64")),
)
pk_value = st.one_of(st.integers(-(2**63), 2**64 - 1), st.text(max_size=20), finite)


@SETTINGS
@given(path_structures, st.data())
def test_path_roundtrip(ps, data):
    if ps.scheme == "int":
        pk = [data.draw(st.integers(-(2**63), 2**63 - 1))]
    else:
        pk = data.draw(st.lists(pk_value, min_size=1, max_size=3))
    path = ps.encode_path(pk)
    dirs = path.split("/")[:-1]
    assert len(dirs) == ps.levels and all(len(d) == ps.group_length for d in dirs)
    assert all(ch in ps.alphabet for d in dirs for ch in d)
    assert ps.decode_path(path, check=True) == pk
    assert PathStructure.from_json(ps.dumps()) == ps
    if ps.scheme == "int":  # neighbours share a directory
        base = (pk[0] // ps.branches) * ps.branches
        assert ps.tree_path([base]) == ps.tree_path([base + ps.branches - 1]) == ps.tree_path(pk)


def test_path_structure_errors():
    for d in [
        {"scheme": "int", "branches": 64, "levels": 4, "encoding": "hex"},
        {"scheme": "int", "branches": 100, "levels": 4, "encoding": "base64"},
        {"scheme": "bogus", "branches": 64, "levels": 4, "encoding": "base64"},
        {"scheme": "int", "branches": 64, "levels": 4, "encoding": "base32"},
        {"scheme": "int", "branches": 64, "levels": 0, "encoding": "base64"},
        {"scheme": "msgpack/hash", "branches": 64, "levels": 28, "encoding": "base64"},
        {"scheme": "int", "branches": 64, "levels": 4},
        {"scheme": "int", "branches": 64, "levels": 4, "encoding": "base64", "extra": 1},
        {"scheme": "int", "branches": "64", "levels": 4, "encoding": "base64"},
    ]:
        with pytest.raises(PathStructureError):
            PathStructure.from_dict(d)
    ps = PathStructure("int", 64, 4, "base64")
    for pk in (["Dave"], [0.1], [True], [1, 2], []):
        with pytest.raises(PrimaryKeyError):
            ps.encode_path(pk)
    with pytest.raises(FeatureError):
        ps.decode_path("A/A/A/A/kQA=".replace("A/A/A/A", "A/A/A/B"), check=True)
    with pytest.raises(FeatureError):
        decode_filename("not base64!")


# -- geometry -------------------------------------------------------------------------


def _flat_coords(g):
    if g.kind == W.POINT:
        return [g.coords]
    if g.kind in (W.LINESTRING, W.CIRCULARSTRING):
        return list(g.coords)
    if g.kind in (W.POLYGON, W.TRIANGLE):
        return [p for r in g.coords for p in r]
    return [p for part in g.coords for p in _flat_coords(part)]


@SETTINGS
@given(wkb_geometries(), st.booleans(), st.booleans(), st.sampled_from([None, ENVELOPE_NONE, ENVELOPE_XY, ENVELOPE_XYZ]))
def test_geometry_roundtrip(geom, le_header, le_wkb, env):
    wkb = W.write_wkb(geom)
    assert W.read_wkb(wkb) == geom
    assert W.read_wkb(W.write_wkb(geom, little_endian=False)) == geom
    normal = Geometry.from_wkb(wkb)
    assert normal.to_wkb() == wkb and normal.srs_id == 0 and normal.is_little_endian
    assert normal.is_empty == W.is_empty(geom)
    kind, has_z, has_m = normal.geometry_type()
    assert (kind, has_z, has_m) == (geom.kind, geom.has_z, geom.has_m)
    pts = [p for p in _flat_coords(geom) if not (math.isnan(p[0]) and math.isnan(p[1]))]
    if normal.envelope_type != ENVELOPE_NONE:
        env_values = normal.header_envelope()
        assert env_values[:4] == (
            min(p[0] for p in pts), max(p[0] for p in pts), min(p[1] for p in pts), max(p[1] for p in pts)
        )
        assert normal.envelope_type == (ENVELOPE_XYZ if has_z else ENVELOPE_XY)
    else:
        assert kind == W.POINT or normal.is_empty
    odd = Geometry.from_wkb(wkb, srs_id=4326, little_endian=le_header, little_endian_wkb=le_wkb, envelope_type=env)
    assert odd.parse() == geom
    assert normalise_gpkg(odd) == normal
    assert normalise_gpkg(normal) is normal
    assert parse_wkt(format_wkt(geom))[0] == geom


def test_ewkb_and_circular_envelope():
    # EWKB with SRID and Z flag, big-endian.
    ewkb = struct.pack(">BIi3d", 0, 0x80000001 | 0x20000000, 2193, 1.0, 2.0, 3.0)
    geom, srid = W.read_wkb_with_srid(ewkb)
    assert srid == 2193 and geom == W.WkbGeometry(W.POINT, True, False, (1.0, 2.0, 3.0))
    assert Geometry.from_wkb(ewkb).to_wkt() == "POINT Z (1 2 3)"
    # A full circle's envelope is its bounding square.
    g = Geometry.from_wkt("CIRCULARSTRING (0 0, 2 0, 0 0)")
    assert g.header_envelope() == (0.0, 2.0, -1.0, 1.0)
    # Collinear "arcs" are straight.
    assert Geometry.from_wkt("CIRCULARSTRING (0 0, 1 1, 2 2)").header_envelope() == (0.0, 2.0, 0.0, 2.0)


def test_geometry_errors():
    for bad in [b"", b"XP\x00\x01\x00\x00\x00\x00", b"GP\x01\x01\x00\x00\x00\x00\x01", b"GP\x00\x21\x00\x00\x00\x00\x01",
                b"GP\x00\x0f\x00\x00\x00\x00\x01"]:
        with pytest.raises(GeometryError):
            Geometry(bad)
    with pytest.raises(GeometryError) as e:
        Geometry(b"GP\x00\x01\x00\x00\x00\x00\x01\x01\x00\x00\x00\x00").validate()
    assert e.value.offset is not None
    for text in ["POINT (1)", "POINT (1 2", "BLOB (1 2)", "POINT (1 2) x", "LINESTRING (1 2, 3 4 5)"]:
        with pytest.raises(GeometryError):
            parse_wkt(text)
    with pytest.raises(GeometryError):
        W.read_wkb(b"\x01\x63\x00\x00\x00")


# -- dataset names --------------------------------------------------------------------


@SETTINGS
@given(st.lists(name_text.filter(lambda s: "/" not in s), min_size=1, max_size=4))
def test_dataset_name_rules(components):
    name = "/".join(components)
    broken = any(
        not c
        or c[0] == "."
        or c[-1] in ". "
        or c.upper() in {"CON", "PRN", "AUX", "NUL"} | {f"{p}{i}" for p in ("COM", "LPT") for i in range(1, 10)}
        or any(ord(ch) < 0x20 or ch in ':<>"|?*' for ch in c)
        for c in components
    )
    if broken:
        with pytest.raises(DatasetNameError):
            validate_dataset_name(name)
    else:
        assert validate_dataset_name(name) == name


# -- the modules' docstring examples ------------------------------------------------------

DOCTEST_MODULES = ["errors", "names", "packing", "wkb", "wkt", "geometry", "types", "schema", "paths", "features",
                   "kart_repo"]


@pytest.mark.parametrize("name", DOCTEST_MODULES)
def test_docstring_examples(name):
    import doctest
    import importlib

    module = importlib.import_module(f"fstore.tables.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert module.__all__ and all(hasattr(module, n) for n in module.__all__)


def test_package_exports():
    import fstore.tables as t

    assert all(hasattr(t, n) for n in t.__all__)
    assert t.__doc__ and doctest_ok(t)


def doctest_ok(module):
    import doctest

    return doctest.testmod(module).failed == 0
