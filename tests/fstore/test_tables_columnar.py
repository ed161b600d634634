"""The compiled columnar read (fstore.tables.columnar, fstore.tables._columns) against the
reference read it stands in for (RowReader.stored_columns + column_batch): equal Arrow
tables, types and metadata included, on random tables, tables of several legends and
tables with columns the compiled path does not take."""

from __future__ import annotations

import datetime as dt
import doctest
import shutil
import tempfile
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")

import fstore  # noqa: E402
import fstore.tables as tables  # noqa: E402
import fstore.tables._columns as _columns  # noqa: E402
import fstore.tables.arrow_batches as arrow_batches  # noqa: E402
import fstore.tables.columnar as columnar  # noqa: E402
from tests.profiles import examples  # noqa: E402

_INT_RANGES = {8: 2**7, 16: 2**15, 32: 2**31, 64: 2**63}


def _column(i: int, kind: str, size: int | None) -> dict[str, Any]:
    column: dict[str, Any] = {"id": f"c{i}", "name": f"col{i}", "dataType": kind}
    if size is not None:
        column["size"] = size
    return column


def _values(kind: str, size: int | None) -> st.SearchStrategy:
    if kind == "integer":
        bound = _INT_RANGES[size or 64]
        return st.integers(-bound, bound - 1)
    if kind == "float":
        return st.floats(allow_nan=False, width=size or 64)
    if kind == "boolean":
        return st.booleans()
    if kind == "date":
        return st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31))
    return st.text(max_size=12)


_KINDS = st.sampled_from([("integer", 8), ("integer", 16), ("integer", 32), ("integer", 64), ("float", 32),
                          ("float", 64), ("boolean", None), ("text", None), ("date", None)])


@st.composite
def _tables(draw: Any) -> tuple[list[dict], list[dict]]:
    pk_kind = draw(st.sampled_from([("integer", 64), ("integer", 16), ("text", None)]))
    kinds = draw(st.lists(_KINDS, max_size=6))
    schema = [dict(_column(0, *pk_kind), primaryKeyIndex=0)] + [_column(i + 1, *k) for i, k in enumerate(kinds)]
    keys = draw(st.lists(_values(*pk_kind), min_size=1, max_size=40, unique=True))
    rows = []
    for key in keys:
        row = {"col0": key}
        for i, kind in enumerate(kinds):
            row[f"col{i + 1}"] = draw(st.none() | _values(*kind))
        rows.append(row)
    return schema, rows


def _both(table: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """``to_arrow`` through the compiled path and through the reference read."""
    compiled = table.to_arrow()
    with monkeypatch.context() as patch:
        patch.setattr(arrow_batches, "COLUMNAR", False)
        reference = table.to_arrow()
    return compiled, reference


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(made=_tables())
def test_compiled_batches_equal_the_reference_read(made: tuple, monkeypatch: pytest.MonkeyPatch) -> None:
    schema, rows = made
    folder = tempfile.mkdtemp(prefix="datae-columnar-")
    repo = fstore.open(folder)
    try:
        with repo.transaction("main", message="m") as tx:
            tables.create(tx, "t", schema).insert_many(rows)
        compiled, reference = _both(repo.at("main").table("t"), monkeypatch)
        assert compiled.equals(reference, check_metadata=True)
        assert compiled.schema.equals(reference.schema, check_metadata=True)
    finally:
        repo.close()
        shutil.rmtree(folder, ignore_errors=True)


def test_the_compiled_path_is_taken_and_several_legends_fall_back(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = fstore.open(tmp_path / "r")
    schema = [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0, "size": 64},
              {"id": "a", "name": "a", "dataType": "integer", "size": 32},
              {"id": "b", "name": "b", "dataType": "text"}]
    with repo.transaction("main", message="m") as tx:
        tables.create(tx, "t", schema).insert_many([{"k": i, "a": i * 3, "b": f"v{i}"} for i in range(100)])
    taken = []
    original = columnar.columnar_batch

    def spy(*args: Any) -> Any:
        batch = original(*args)
        taken.append(batch is not None)
        return batch

    monkeypatch.setattr(arrow_batches, "columnar_batch", spy)
    compiled, reference = _both(repo.at("main").table("t"), monkeypatch)
    assert taken == [True] and compiled.equals(reference)
    # A new column: rows written since carry the new legend, the old ones the old: a
    # chunk of two legends is read the reference way, and reads the same.
    with repo.transaction("main", message="alter") as tx:
        t = tx.table("t")
        t.alter(t.schema.add_column("c", "float", id="c"))
        t.upsert_rows([{"k": i, "a": -i, "b": None, "c": i / 4} for i in range(0, 100, 7)])
    taken.clear()
    compiled, reference = _both(repo.at("main").table("t"), monkeypatch)
    assert taken == [False] and compiled.equals(reference, check_metadata=True)
    repo.close()


def test_values_the_decoder_does_not_take_fall_back() -> None:
    import msgpack

    ok = [msgpack.packb(["L", [1, "a", 0.5, True]]), msgpack.packb(["L", [None, None, None, None]])]
    kinds = [_columns.INT, _columns.TEXT, _columns.FLOAT, _columns.BOOL]
    assert _columns.decode_values(ok, kinds) is not None
    for bad in ([msgpack.packb(["M", [1, "a", 0.5, True]])],  # another legend
                [msgpack.packb(["L", [1.5, "a", 0.5, True]])],  # a float in an int column
                [msgpack.packb(["L", [1, b"a", 0.5, True]])],  # bytes in a text column
                [msgpack.packb(["L", [1, "a", 1, True]])],  # an int in a float column
                [msgpack.packb(["L", [1, "a", 0.5, 1]])],  # an int in a boolean column
                [msgpack.packb(["L", [2**64 - 1, "a", 0.5, True]])],  # past int64
                [msgpack.packb(["L", [1, "a", 0.5]])],  # a value short
                [msgpack.packb(["L", [1, "a", 0.5, True]]) + b"\x00"],  # bytes after the feature
                [msgpack.packb(["L", [1, "a", 0.5, True]])[:-1]]):  # cut short
        assert _columns.decode_values(ok + bad, kinds) is None, bad


def test_the_compiled_module_s_examples() -> None:
    assert doctest.testmod(_columns).failed == 0
