"""The compiled CSV field reader and type guess (``fstore.tables._columns.parse_fields``,
``guess_fields``) against the Python functions they stand in for (``csv_io.text_parser``,
``TextTypeGuess.add``): the same value of the same type for every field, the same guess
for every column, and the same import error naming the same line and column."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fstore.tables import _columns, csv_io
from fstore.tables.errors import ColumnValueError
from fstore.tables.ingest import TextTypeGuess
from fstore.tables.types import ColumnType
from tests.profiles import examples

COLUMNS = [ColumnType("t", "text", {}), ColumnType("t3", "text", {"length": 3}), ColumnType("i8", "integer", {"size": 8}),
           ColumnType("i", "integer", {"size": 64}), ColumnType("f", "float", {"size": 64}),
           ColumnType("f32", "float", {"size": 32}), ColumnType("b", "boolean", {}), ColumnType("d", "date", {}),
           ColumnType("n", "numeric", {"precision": 5, "scale": 2}), ColumnType("ts", "timestamp", {})]
EDGES = ["", "0", "-0", "007", "-12", "+5", " 5", "1_000", "127", "128", "-129", "9223372036854775807",
         "9223372036854775808", "1000000000000000000", "3.25", "-3.25", "3.", ".5", "1e5", "nan", "inf", "TRUE", "True",
         "false", "1", "yes", "2024-02-29", "2023-02-29", "1900-02-29", "2000-02-29", "2100-02-29", "2021-04-31", "0000-01-01", "2020-1-01", "\uff12", "2020-01-01T10:00:00",
         "abc", "abcd", "x" * 50, "-", "1.2.3"]
fields = st.sampled_from(EDGES) | st.text(st.sampled_from("0123456789.-+eE tTrRuUfFaAlLsS"), max_size=8) | st.text(max_size=5)


def python_value(parse, text):
    try:
        value = parse(text)
    except ColumnValueError as e:
        return "error", e.column, e.reason
    return type(value).__name__, repr(value)


@settings(max_examples=examples(600), deadline=None)
@given(records=st.lists(st.lists(fields, min_size=len(COLUMNS), max_size=len(COLUMNS)), min_size=1, max_size=6))
def test_fields_are_read_as_the_python_parsers_read_them(records) -> None:
    parsers = [csv_io.text_parser(col) for col in COLUMNS]
    found = _columns.parse_fields(records, *csv_io._field_plan(COLUMNS, parsers))
    for record, row in zip(records, found):
        expected = [python_value(parse, text) for parse, text in zip(parsers, record)]
        if row is None:
            assert any(value[0] == "error" for value in expected)  # only a refused field sends it back
            continue
        assert [(type(value).__name__, repr(value)) for value in row.values()] == expected
        assert list(row) == [col.name for col in COLUMNS]


def test_plain_fields_are_read_in_c() -> None:
    """A record of plain fields comes back read (no Python parser called)."""
    calls = []

    def refuse(text):
        calls.append(text)
        raise AssertionError("not called")

    columns = COLUMNS[:8]
    names, kinds, lows, highs, lengths, _ = csv_io._field_plan(columns, [refuse] * len(columns))
    row = _columns.parse_fields([["a", "ab", "-12", "7", "2.5", "", "True", "2020-02-29"]], names, kinds, lows, highs,
                                lengths, [refuse] * 5 + [float, refuse, refuse])[0]
    assert row == {"t": "a", "t3": "ab", "i8": -12, "i": 7, "f": 2.5, "f32": None, "b": True, "d": "2020-02-29"}
    assert calls == []


@settings(max_examples=examples(600), deadline=None)
@given(columns=st.lists(st.lists(fields, max_size=12), min_size=1, max_size=4))
def test_guesses_are_the_python_guesses(columns) -> None:
    height = max(map(len, columns))
    records = [[column[r] if r < len(column) else "" for column in columns] for r in range(height)]
    compiled = [TextTypeGuess() for _ in columns]
    _columns.guess_fields(records, list(range(len(columns))), compiled)
    python = [TextTypeGuess() for _ in columns]
    for record in records:
        for guess, text in zip(python, record):
            guess.add(text)
    assert [g.kinds for g in compiled] == [g.kinds for g in python]
    assert [g.result() for g in compiled] == [g.result() for g in python]


@pytest.mark.parametrize("compiled", [True, False])
def test_a_bad_field_is_named_by_line_and_column(tmp_path, monkeypatch, compiled: bool) -> None:
    import fstore
    from fstore.tables import TableImportError

    monkeypatch.setattr(csv_io, "COMPILED", compiled)
    path = tmp_path / "t.csv"
    path.write_text("k,n\n" + "".join(f"{i},{i}\n" for i in range(5000)) + '5000,"x\ny"\n5001,3\n')
    repo = fstore.open(tmp_path / "store")
    try:
        with pytest.raises(TableImportError) as caught:
            with repo.transaction("main", message="m") as tx:
                csv_io.import_csv(tx, "t", path, pk="k", types={"k": "integer", "n": "integer"})
        assert (caught.value.line, caught.value.column) == (5003, "n")  # the line the record ends on
        assert repo.head("main") is None
    finally:
        repo.close()


@pytest.mark.parametrize("col", COLUMNS, ids=lambda col: col.name)
def test_each_edge_field_alone(col) -> None:
    """Every edge field in a column of each kind, one field a record (so no other field's
    error hides a difference)."""
    parse = csv_io.text_parser(col)
    found = _columns.parse_fields([[text] for text in EDGES], *csv_io._field_plan([col], [parse]))
    for text, row in zip(EDGES, found):
        expected = python_value(parse, text)
        if row is None:
            assert expected[0] == "error", text
        else:
            assert (type(row[col.name]).__name__, repr(row[col.name])) == expected, text
