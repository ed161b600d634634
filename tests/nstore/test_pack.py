"""Packing: FoundationDB's bytes, exact round-trips, order preservation, prefixes, errors."""

from __future__ import annotations

import datetime as dt
import math
import struct
import uuid
from decimal import Decimal
from typing import Any, Callable

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nstore.errors import PackError
from nstore.pack import BlobRef, decode_item, pack, pack_value, split, unpack
from nstore.terms import IRI, BNode, Literal
from tests.profiles import examples

Key = Callable[[Any], Any]

# ------------------------------------------------------------------------ helpers


def float_bits(value: float) -> int:
    return int.from_bytes(struct.pack(">d", value), "big")


def bits_float(bits: int) -> float:
    return struct.unpack(">d", bits.to_bytes(8, "big"))[0]


def float_total_key(value: float) -> int:
    """IEEE 754 totalOrder as an int: -nan < -inf < ... < -0.0 < 0.0 < ... < inf < nan.

    Reads the bits as a signed integer and, for negatives, flips the magnitude bits so a
    larger magnitude sorts lower (an independent formula from the packer's)."""
    signed = int.from_bytes(struct.pack(">d", value), "big", signed=True)
    return signed if signed >= 0 else signed ^ 0x7FFF_FFFF_FFFF_FFFF


def same(a: Any, b: Any) -> bool:
    """Equality that also checks types (True is not 1), float bits (-0.0, NaN sign and
    payload), and the UTC offset of aware datetimes (== only compares instants)."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return float_bits(a) == float_bits(b)
    if type(a) is tuple:
        return len(a) == len(b) and all(map(same, a, b))
    if type(a) is dt.datetime and a.tzinfo is not None:
        return a == b and a.utcoffset() == b.utcoffset() and a.replace(tzinfo=None) == b.replace(tzinfo=None)
    return a == b


def assert_order_preserved(values: list[Any], key: Key) -> None:
    """For every pair: key order and equality match packed-bytes order and equality, and
    sorting by value equals sorting by bytes."""
    packed = [pack(v) for v in values]
    for a, pa in zip(values, packed):
        for b, pb in zip(values, packed):
            assert (key(a) < key(b)) == (pa < pb), (a, b, pa.hex(), pb.hex())
            assert (key(a) == key(b)) == (pa == pb), (a, b, pa.hex(), pb.hex())
    by_value = [pack(v) for v in sorted(values, key=key)]
    assert by_value == sorted(packed)


# ------------------------------------------------------------------ strategies

# Integers of every size class: 1..8 bytes, 9..254 bytes (FoundationDB's 0x1d/0x0b codes)
# and >= 255 bytes (datae's 8-byte length extension).
big_ints = st.integers(0, 2200).flatmap(lambda bits: st.integers(-(1 << bits), 1 << bits))
ints = st.one_of(st.integers(), big_ints)
# Every double, NaN payloads and signs included: build them from raw bit patterns too.
floats = st.one_of(st.floats(), st.integers(0, (1 << 64) - 1).map(bits_float))
texts = st.text(max_size=12)  # hypothesis never draws lone surrogates here
iris = st.builds(IRI, texts)
bnodes = st.builds(BNode, texts)
lang_tags = st.from_regex(r"[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8}){0,2}", fullmatch=True)
literals = st.one_of(
    st.builds(Literal, texts),
    st.builds(Literal, texts, datatype=iris),
    st.builds(Literal, texts, lang=lang_tags),
)
decimals = st.one_of(
    st.decimals(allow_nan=False, allow_infinity=False),
    # Long coefficients (> 28 digits, the default context precision) and huge exponents.
    st.builds(
        lambda sign, digits, exponent: Decimal((sign, tuple(digits), exponent)),
        st.integers(0, 1),
        st.lists(st.integers(0, 9), min_size=1, max_size=60),
        st.integers(-2_000_000, 2_000_000),
    ),
)
fixed_zones = st.integers(-86399, 86399).map(lambda s: dt.timezone(dt.timedelta(seconds=s)))
naive_datetimes = st.datetimes()
aware_datetimes = st.datetimes(timezones=fixed_zones)
blob_refs = st.binary(min_size=32, max_size=32).map(BlobRef)

scalars = st.one_of(
    st.none(),
    st.binary(max_size=12),
    texts,
    ints,
    floats,
    st.booleans(),
    st.uuids(),
    iris,
    bnodes,
    literals,
    decimals,
    st.dates(),
    naive_datetimes,
    aware_datetimes,
    blob_refs,
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4).map(tuple), max_leaves=12)


def optional_key(value: int | None) -> tuple:
    # Inside a nested tuple None packs as 00 ff, below every other type code.
    return (0,) if value is None else (1, value)


def decimal_total_key(value: Decimal) -> Decimal:
    return value


def aware_key(value: dt.datetime) -> tuple:
    # Same instant, different offsets: equal as values, so order them by offset too.
    return (value - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc), value.utcoffset())


def literal_key(value: Literal) -> tuple[str, str, str]:
    return (value.lexical, value.datatype.value if value.datatype else "", value.lang or "")


# (name, strategy, key) for each type whose values are ordered.
ORDERED_TYPES: list[tuple[str, st.SearchStrategy, Key]] = [
    ("bytes", st.binary(max_size=8), lambda v: v),
    ("str", st.text(max_size=8), lambda v: v),
    ("int", ints, lambda v: v),
    ("float", floats, float_total_key),
    ("bool", st.booleans(), lambda v: v),
    ("uuid", st.uuids(), lambda v: v),
    ("iri", iris, lambda v: v.value),
    ("bnode", bnodes, lambda v: v.id),
    ("literal", literals, literal_key),
    ("decimal", decimals, decimal_total_key),
    ("date", st.dates(), lambda v: v),
    ("naive datetime", naive_datetimes, lambda v: v),
    ("aware datetime", aware_datetimes, aware_key),
    ("blobref", blob_refs, lambda v: v.digest),
    ("tuple of ints", st.lists(st.integers(), max_size=4).map(tuple), lambda v: v),
    (
        "tuple of optional ints",
        st.lists(st.none() | st.integers(-300, 300), max_size=4).map(tuple),
        lambda v: tuple(map(optional_key, v)),
    ),
]

# --------------------------------------------------------------- FoundationDB bytes

FDB_VECTORS = [
    (b"foo\x00bar", "01 66 6f 6f 00 ff 62 61 72 00"),
    ("F\u00d4O\u0000bar", "02 46 c3 94 4f 00 ff 62 61 72 00"),
    (-5551212, "11 ab 4b 93"),
    (-1, "13 fe"),
    (0, "14"),
    (255, "15 ff"),
    (256, "16 01 00"),
    (1.5, "21 bf f8 00 00 00 00 00 00"),
    (False, "26"),
    (True, "27"),
    (None, "00"),
    # The nested-tuple example of the FoundationDB tuple-layer specification.
    ((b"foo\x00bar", None, ()), "05 01 66 6f 6f 00 ff 62 61 72 00 00 ff 05 00 00"),
]


@pytest.mark.parametrize(("value", "expected"), FDB_VECTORS, ids=[repr(v) for v, _ in FDB_VECTORS])
def test_foundationdb_vectors(value: Any, expected: str) -> None:
    assert pack(value).hex(" ") == expected
    assert same(unpack(bytes.fromhex(expected)), (value,))


def test_bool_is_not_int() -> None:
    assert pack(True) != pack(1) and pack(False) != pack(0)
    assert type(unpack(pack(True))[0]) is bool


def test_uuid_is_code_0x30_and_its_16_bytes() -> None:
    value = uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert pack(value) == b"\x30" + value.bytes


# ------------------------------------------------------------------- round trips

EDGE_VALUES = [
    0.0,
    -0.0,
    math.inf,
    -math.inf,
    math.nan,
    -math.nan,
    bits_float(0x7FF0_0000_0000_0001),  # signalling NaN with a payload
    bits_float(0xFFF8_0000_DEAD_BEEF),  # negative quiet NaN with a payload
    5e-324,
    -5e-324,
    2**64,
    -(2**64),
    2**64 - 1,
    -(2**64 - 1),
    2 ** (8 * 254) - 1,  # the longest FoundationDB integer
    -(2 ** (8 * 254) - 1),
    2 ** (8 * 254),  # 255 bytes: datae's length extension
    -(2 ** (8 * 254)),
    2 ** (8 * 300) + 12345,
    -(2 ** (8 * 300) + 12345),
    "",
    "\x00",
    "\x00\xff",
    b"",
    b"\x00\xff\x00",
    (),
    (None,),
    (None, (None, ()), b"\x00"),
    IRI(""),
    BNode(""),
    Literal(""),
    Literal("1", datatype="http://www.w3.org/2001/XMLSchema#integer"),
    Literal("chat", lang="fr-BE"),
    Decimal("1e1000000"),
    Decimal("-1e-1000000"),
    Decimal("3.141592653589793238462643383279502884197169399375"),
    dt.date.min,
    dt.date.max,
    dt.datetime.min,
    dt.datetime.max,
    dt.datetime(1970, 1, 1),
    dt.datetime(1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=23, minutes=59))),
    dt.datetime.max.replace(tzinfo=dt.timezone(-dt.timedelta(hours=23, minutes=59))),
    dt.datetime(2024, 3, 31, 2, 30, 15, 123456, tzinfo=dt.timezone(dt.timedelta(hours=-3, seconds=7))),
    BlobRef(bytes(32)),
    BlobRef(b"\xff" * 32),
    uuid.UUID(int=0),
]


@pytest.mark.parametrize("value", EDGE_VALUES, ids=[repr(v)[:60] for v in EDGE_VALUES])
def test_edge_values_round_trip(value: Any) -> None:
    assert same(unpack(pack(value)), (value,))


@given(st.lists(values, max_size=5))
def test_round_trip(items: list[Any]) -> None:
    assert same(unpack(pack(*items)), tuple(items))


@given(decimals)
def test_decimal_round_trips_by_value_normalised(value: Decimal) -> None:
    (back,) = unpack(pack(value))
    assert back == value  # exact, whatever the context precision
    if not value.is_zero():
        # Normalised: the same significant digits, trailing zeros dropped.
        significant = "".join(map(str, value.as_tuple().digits)).strip("0")
        assert "".join(map(str, back.as_tuple().digits)) == significant


def test_decimal_is_normalised() -> None:
    # Decimals pack by value, so trailing zeros are not kept: 1.50 reads back as 1.5
    # (equal by value), and -0 reads back as 0.
    (back,) = unpack(pack(Decimal("1.50")))
    assert back == Decimal("1.5") and str(back) == "1.5"
    assert pack(Decimal("1.50")) == pack(Decimal("1.5")) == pack(Decimal("15e-1"))
    assert unpack(pack(Decimal("-0"))) == (Decimal(0),)


def test_list_packs_as_nested_tuple() -> None:
    assert pack([1, [b"x"]]) == pack((1, (b"x",)))
    assert unpack(pack([1, [b"x"]])) == ((1, (b"x",)),)


def test_aware_datetime_keeps_its_offset() -> None:
    zone = dt.timezone(dt.timedelta(hours=5, minutes=30))
    (back,) = unpack(pack(dt.datetime(2020, 1, 2, 3, 4, 5, 6, tzinfo=zone)))
    assert back.utcoffset() == dt.timedelta(hours=5, minutes=30)
    assert back.replace(tzinfo=None) == dt.datetime(2020, 1, 2, 3, 4, 5, 6)


@given(st.lists(values, max_size=6))
def test_split_gives_packed_items(items: list[Any]) -> None:
    parts = split(pack(*items))
    assert parts == [pack_value(v) for v in items]
    assert split(pack(*items), count=len(items)) == parts  # the regular-expression path
    assert same(tuple(decode_item(p) for p in parts), tuple(items))


# ------------------------------------------------------------------------ order


@pytest.mark.parametrize(("strategy", "key"), [(s, k) for _, s, k in ORDERED_TYPES], ids=[n for n, _, _ in ORDERED_TYPES])
@given(data=st.data())
def test_order_within_one_type(strategy: st.SearchStrategy, key: Key, data: st.DataObject) -> None:
    assert_order_preserved(data.draw(st.lists(strategy, min_size=2, max_size=8)), key)


def test_float_total_order_explicitly() -> None:
    ordered = [-math.nan, -math.inf, -1.5, -5e-324, -0.0, 0.0, 5e-324, 1.5, math.inf, math.nan]
    packed = [pack(v) for v in ordered]
    assert packed == sorted(packed) and len(set(packed)) == len(packed)


def test_integer_size_classes_in_order() -> None:
    edges = [-(2 ** (8 * 300)), -(2 ** (8 * 254)), -(2 ** (8 * 254)) + 1, -(2**64), -(2**64) + 1, -256, -255, -1, 0, 1]
    edges += [255, 256, 2**64 - 1, 2**64, 2 ** (8 * 254) - 1, 2 ** (8 * 254), 2 ** (8 * 300)]
    assert_order_preserved(edges, lambda v: v)


@settings(max_examples=examples(150))
@given(data=st.data())
def test_order_of_mixed_tuples_sharing_prefixes(data: st.DataObject) -> None:
    """Tuples that follow one schema of types (each a prefix of it), drawing each position
    from a small pool so that they share prefixes: tuple order equals byte order."""
    schema = data.draw(st.lists(st.sampled_from(ORDERED_TYPES), min_size=1, max_size=4))
    pools = [data.draw(st.lists(strategy, min_size=1, max_size=3)) for _, strategy, _ in schema]
    keys = [key for _, _, key in schema]

    @st.composite
    def rows(draw: Callable) -> tuple:
        length = draw(st.integers(0, len(pools)))
        return tuple(draw(st.sampled_from(pool)) for pool in pools[:length])

    tuples = data.draw(st.lists(rows(), min_size=2, max_size=10))
    tuple_key = lambda row: tuple(key(value) for key, value in zip(keys, row))  # noqa: E731
    packed = [pack(*row) for row in tuples]
    for a, pa in zip(tuples, packed):
        for b, pb in zip(tuples, packed):
            assert (tuple_key(a) < tuple_key(b)) == (pa < pb), (a, b)
    assert [pack(*row) for row in sorted(tuples, key=tuple_key)] == sorted(packed)


@given(st.lists(values, max_size=4), st.lists(values, min_size=1, max_size=4))
def test_prefix_property(head: list[Any], tail: list[Any]) -> None:
    short, full = pack(*head), pack(*head, *tail)
    assert full.startswith(short) and full[len(short) :] == pack(*tail)
    assert short < full
    assert same(unpack(full), (*head, *tail))


# ----------------------------------------------------------------------- errors

UNPACKABLE = [
    (object(), "object"),
    ({1, 2}, "set"),
    (frozenset(), "frozenset"),
    ({"a": 1}, "dict"),
    (1 + 2j, "complex"),
    (memoryview(b"x"), "memoryview"),
    ("a\ud800b", "ud800"),
    (IRI("\udfff"), "udfff"),
    (Decimal("NaN"), "NaN"),
    (Decimal("-sNaN"), "sNaN"),
    (Decimal("Infinity"), "Infinity"),
    (Decimal("-Infinity"), "Infinity"),
    ((1, (2, object())), "object"),
    # A UTC offset with microseconds cannot be kept (the format stores whole seconds).
    (dt.datetime(2000, 1, 1, tzinfo=dt.timezone(dt.timedelta(seconds=1, microseconds=5))), "offset"),
]


@pytest.mark.parametrize(("value", "named"), UNPACKABLE, ids=[n for _, n in UNPACKABLE])
def test_unpackable_values_raise_pack_error(value: Any, named: str) -> None:
    with pytest.raises(PackError, match=named) as caught:
        pack("ok", value)
    assert isinstance(caught.value, TypeError)


MALFORMED = [
    b"\x02abc",  # unterminated string
    b"\x01\x00\xff",  # escaped NUL, then no terminator
    b"\x16\x01",  # 2-byte integer cut short
    b"\x1d\x09\x01",  # big integer cut short
    b"\x0b\x00" + b"\x00" * 8,  # negative integer claiming 2**64 bytes
    b"\x1d\xff" + b"\xff" * 8,  # positive integer claiming 2**64 bytes
    b"\x21\x00",  # float cut short
    b"\x30\x01\x02",  # uuid cut short
    b"\x4f" + b"\x01" * 31,  # blob reference cut short
    b"\x05\x15\x01",  # unterminated nested tuple
    b"\x05" * 5000,  # nesting deeper than the recursion limit
    b"\x02\xc3\x28\x00",  # invalid UTF-8
    b"\x45\x15\x01ab\x00",  # decimal with non-digits
    b"\x45\x15\x01\x00",  # decimal without digits
    b"\x46\x14",  # date ordinal 0
    b"\x47\x1d\x09" + b"\xff" * 9,  # naive datetime far past year 9999
    b"\x48\x14\x1c" + b"\x7f" * 8,  # offset of many days
    b"\xff",  # unknown type code
    b"\x03",  # unknown type code
]


@pytest.mark.parametrize("data", MALFORMED, ids=[d[:12].hex() for d in MALFORMED])
def test_malformed_bytes_raise_pack_error(data: bytes) -> None:
    with pytest.raises(PackError):
        unpack(data)


def test_decode_item_malformed_raises_pack_error() -> None:
    with pytest.raises(PackError):
        decode_item(b"\x45\x15\x01ab\x00")


@given(st.binary(max_size=40))
@example(b"\x0b\x00\xf0" + b"\x00" * 7)
def test_random_bytes_unpack_or_raise_pack_error(data: bytes) -> None:
    try:
        result = unpack(data)
    except PackError:
        return
    assert isinstance(result, tuple)


@given(st.lists(values, min_size=1, max_size=4), st.data())
def test_damaged_packing_unpacks_or_raises_pack_error(items: list[Any], data: st.DataObject) -> None:
    packed = bytearray(pack(*items))
    cut = data.draw(st.integers(0, len(packed) - 1))
    if data.draw(st.booleans()):
        packed[cut] = data.draw(st.integers(0, 255))
    else:
        del packed[cut:]
    try:
        unpack(bytes(packed))
    except PackError:
        pass


@settings(max_examples=examples(200), deadline=None)
@given(st.one_of(st.lists(st.binary(max_size=12), max_size=6), st.lists(st.text(max_size=8), max_size=6),
                 st.lists(st.one_of(st.binary(max_size=4), st.text(max_size=4), st.integers()), max_size=6)))
def test_decode_items_equals_decode_item_one_by_one(values):
    from nstore.pack import decode_item, decode_items, pack_value

    items = [pack_value(v) for v in values]
    assert decode_items(items) == [decode_item(i) for i in items] == values


def test_decode_items_treats_an_odd_item_as_decode_item_does():
    from nstore.pack import decode_item, decode_items

    odd = [b"\x01ok\x00", b"\x01a\x00b\x00"]  # a NUL inside that is not escaped: item by item
    assert decode_items(odd) == [decode_item(i) for i in odd]
    with pytest.raises(PackError):
        decode_items([b"\x02ok\x00", b"\x02\xff\x00"])  # text that is not UTF-8, reported as decode_item does
