"""The per-column fast paths of a bulk import give exactly what the general functions give.

``column_encoder(col)`` must equal ``encode_value(col, ·)`` (same stored value of the same
type, or the same error) and ``text_parser(col)`` the CSV parsing of one field, for every
data type and any value, valid or not; ``TextTypeGuess`` must agree with a guess made from
all the values at once.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from fstore.tables.csv_io import text_parser
from fstore.tables.errors import ColumnValueError
from fstore.tables.ingest import TextTypeGuess, infer_text_type
from fstore.tables.types import ColumnType, column_encoder, encode_value
from tests.profiles import examples

COLUMNS = [
    ColumnType("i", "integer", {}),
    ColumnType("i8", "integer", {"size": 8}),
    ColumnType("i64", "integer", {"size": 64}),
    ColumnType("f", "float", {"size": 64}),
    ColumnType("f32", "float", {"size": 32}),
    ColumnType("t", "text", {}),
    ColumnType("t3", "text", {"length": 3}),
    ColumnType("b", "boolean", {}),
    ColumnType("d", "date", {}),
    ColumnType("n", "numeric", {"precision": 5, "scale": 2}),
    ColumnType("ts", "timestamp", {}),
    ColumnType("j", "json", {}),
    ColumnType("blob", "blob", {"length": 4}),
]

values = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(),
    st.text(max_size=12), st.sampled_from(["2024-02-29", "2023-02-29", "20240101", "2024-1-01", "12", "-7", "1.5",
                                           "true", "1e400", "nan", " 3", "1_000"]),
    st.dates(), st.datetimes(), st.decimals(allow_nan=False, places=3), st.binary(max_size=6),
    st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)


def outcome(fn, value):
    try:
        result = fn(value)
    except ColumnValueError as e:
        return ("error", e.column, repr(e.value), e.reason)
    return ("value", type(result).__name__, repr(result))


@settings(max_examples=examples(400), deadline=None)
@given(st.sampled_from(COLUMNS), values)
def test_column_encoder_is_encode_value(col, value):
    assert outcome(column_encoder(col), value) == outcome(lambda v: encode_value(col, v), value)


def slow_parse(col, text):
    """The CSV rule written out: empty is null, then the type's conversion, then encode."""
    if text == "":
        return None
    t = col.data_type
    try:
        if t == "integer":
            value = int(text)
        elif t == "float":
            value = float(text)
        elif t == "boolean":
            low = text.strip().lower()
            if low not in ("true", "1", "false", "0"):
                raise ValueError(text)
            value = low in ("true", "1")
        else:
            value = text
    except ValueError:
        raise ColumnValueError(col.name, text, f"is not a valid {t}") from None
    return encode_value(col, value)


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from([c for c in COLUMNS if c.data_type not in ("json", "blob")]),
       st.one_of(st.text(max_size=10), st.sampled_from(["", "0", "TRUE", "2024-02-29", "-128", "300", "1.25"])))
def test_text_parser_is_the_csv_rule(col, text):
    assert outcome(text_parser(col), text) == outcome(lambda t: slow_parse(col, t), text)


def guess_all_at_once(texts):
    """Which kinds every non-empty text fits, checked by converting each one."""
    present = [t for t in texts if t]

    def all_fit(convert):
        try:
            return all(convert(t) is not None for t in present)
        except (ValueError, OverflowError):
            return False

    def integer(t):
        if t.strip() != t or "_" in t or not t.lstrip("+-").isascii() or not t.lstrip("+-").isdigit():
            raise ValueError(t)
        if not -(2**63) <= int(t) < 2**63:
            raise ValueError(t)
        return int(t)

    if all_fit(integer):
        return "integer"
    return None


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.one_of(st.integers(min_value=-(2**64), max_value=2**64).map(str), st.sampled_from(["", "1.5", "x", "+3", "٣"])),
                max_size=8))
def test_text_type_guess_streams_what_the_batch_guess_finds(texts):
    guess = TextTypeGuess()
    for text in texts:
        guess.add(text)
    assert guess.result() == infer_text_type(texts)
    if guess_all_at_once(texts) == "integer" and any(texts):
        assert guess.result()[0] == "integer"
    if any(t in ("x", "٣") for t in texts):
        assert guess.result()[0] == "text"


def test_dates_and_decimals_through_the_fast_path():
    col = ColumnType("d", "date", {})
    assert column_encoder(col)(dt.date(2024, 2, 29)) == "2024-02-29"
    assert column_encoder(ColumnType("n", "numeric", {"precision": 5, "scale": 2}))(Decimal("1.5")) == encode_value(
        ColumnType("n", "numeric", {"precision": 5, "scale": 2}), Decimal("1.5"))
