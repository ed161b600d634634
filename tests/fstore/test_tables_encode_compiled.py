"""The compiled row encoder (``fstore.tables._columns.encode_rows``, taken by
``RowEncoder.prepare``) gives what the Python encoder gives: the same paths, keys, blobs
and cells for every row, and for a bad row the same error naming the same row."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fstore.tables import store
from fstore.tables.errors import FeatureError, RowExistsError, RowValueError
from fstore.tables.paths import GENERAL, INT_PK
from fstore.tables.store import RowEncoder, as_schema
from tests.profiles import examples

COLUMNS = [("i8", "integer", {"size": 8}), ("i", "integer", {}), ("f", "float", {"size": 64}),
           ("f32", "float", {"size": 32}), ("t", "text", {}), ("t3", "text", {"length": 3}), ("b", "boolean", {}),
           ("d", "date", {}), ("n", "numeric", {"precision": 5, "scale": 2}), ("blob", "blob", {}), ("j", "json", {})]


def schema(key: str, names: list[str]):
    columns = [{"id": "k", "name": "k", "dataType": key, "primaryKeyIndex": 0}]
    for name, kind, info in COLUMNS:
        if name in names:
            columns.append({"id": name, "name": name, "dataType": kind, **info})
    return as_schema(columns)


cells = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.integers(-300, 300), st.floats(),
                  st.text(max_size=5), st.sampled_from(["2024-02-29", "2023-02-29", "\ud800", "x" * 40, "1.25"]),
                  st.dates(), st.decimals(allow_nan=False, places=2), st.binary(max_size=4),
                  st.lists(st.integers(), max_size=2))


FITTING = {"i8": st.integers(-300, 300), "i": st.integers(-2**65, 2**65), "f": st.floats() | st.integers(-5, 5),
           "f32": st.floats(width=32), "t": st.text(max_size=5) | st.sampled_from(["x" * 40, "y" * 300, "z" * 70000]),
           "t3": st.text(max_size=4), "b": st.booleans(), "d": st.dates() | st.sampled_from(["2024-02-29", "2023-02-29"]),
           "n": st.decimals(allow_nan=False, places=2, min_value=-999, max_value=999), "blob": st.binary(max_size=300),
           "j": st.lists(st.integers(), max_size=2)}
"""Values a column mostly holds (and some it refuses), so that whole rows are often good."""


@st.composite
def tables(draw):
    key = draw(st.sampled_from(["integer", "text"]))
    names = draw(st.lists(st.sampled_from([name for name, _, _ in COLUMNS]), unique=True, max_size=6))
    keys = st.integers(-2**64, 2**64) if key == "integer" else st.text(max_size=4)
    rows = []
    for _ in range(draw(st.integers(0, 8))):
        row = {"k": draw(keys | st.none()) if draw(st.integers(0, 9)) == 0 else draw(keys)}
        for name in names:
            if draw(st.integers(0, 5)):
                row[name] = draw(cells if draw(st.integers(0, 4)) == 0 else FITTING[name])
        if draw(st.integers(0, 20)) == 0:
            row["unknown"] = 1
        rows.append(row if draw(st.integers(0, 30)) else list(row.items()))
    return key, names, rows


def prepared(encoder: RowEncoder, rows: list, compiled: bool) -> object:
    was, store.COMPILED = store.COMPILED, compiled
    try:
        found = encoder.prepare(rows, where=lambda i: f"line {i + 2}")
    except (RowValueError, RowExistsError, FeatureError, TypeError) as e:
        return type(e).__name__, str(e)
    finally:
        store.COMPILED = was
    return list(found.rows.items()), [found.where_of(path) for path in found.rows]


@settings(max_examples=examples(500), deadline=None)
@given(table=tables())
def test_compiled_rows_are_the_python_rows(table) -> None:
    key, names, rows = table
    encoder = RowEncoder("t", schema(key, names), INT_PK if key == "integer" else GENERAL)
    assert prepared(encoder, rows, True) == prepared(encoder, rows, False)


def test_the_compiled_encoder_takes_common_rows() -> None:
    """It claims plain rows (the fast path exists): each row of ints, floats, text and
    booleans comes back encoded; a date, a bad value or an unknown column is left."""
    encoder = RowEncoder("t", schema("integer", ["i8", "f", "t3", "b", "d"]), INT_PK)
    rows = [{"k": 1, "i8": 5, "f": 0.5, "t3": "abc", "b": True}, {"k": 2, "i8": 300}, {"k": 3, "zz": 1},
            {"k": 4, "d": dt.date(2020, 1, 2)}, {"k": 5, "t3": "abcd"}, {"k": None}]
    found = store._columns.encode_rows(rows, *encoder._compiled)
    assert [f is not None for f in found] == [True, False, False, True, False, False]
    assert found[0] == encoder._encode_values(rows[0]) and found[3] == encoder._encode_values(rows[3])
    assert found[3][2][5] == "2020-01-02" and Decimal  # the date went through its Python encoder


@pytest.mark.parametrize("name, values", [
    ("t", ["", "a" * 31, "a" * 32, "a" * 255, "a" * 256, "a" * 65535, "a" * 65536, "\u00e9" * 20]),
    ("i", [0, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1, -1, -32, -33, -128,
           -129, -2**15, -2**15 - 1, -2**31, -2**31 - 1, -2**63]),
    ("f", [0.0, -0.0, 1.5, float("inf"), float("nan"), 1e300]),
    ("blob", [b"", b"x" * 255, b"x" * 256, b"x" * 65535, b"x" * 65536]),
    ("b", [True, False, None]),
])
def test_every_msgpack_form_is_the_python_one(name: str, values: list) -> None:
    """Each size class of msgpack's integers, strings and binaries at its edges."""
    encoder = RowEncoder("t", schema("integer", [name]), INT_PK)
    rows = [{"k": i, name: value} for i, value in enumerate(values)]
    found = store._columns.encode_rows(rows, *encoder._compiled)
    assert all(f is not None for f in found)
    for row, got in zip(rows, found):
        assert got[:2] == encoder._encode_values(row)[:2]
