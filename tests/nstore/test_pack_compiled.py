"""The compiled packing helpers (nstore._pack) against their Python definitions: a column
packed in C is what NStore.packed / pack_value make of each value, items split in C are
nstore.pack.split's, TermRef items are the dictionary's layout, and an index's hash sum does
not depend on the order its items are stored in."""

from __future__ import annotations

import datetime as dt
import doctest
import hashlib
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nstore._pack
from nstore import NStore
from nstore._pack import canonical_sum, framed, pack_column, record_sums, split_items, split_rows, term_parts, term_refs
from nstore.errors import PackError
from nstore.pack import pack_value, split
from nstore.terms import IRI, BNode, Literal
from tests.profiles import examples

VALUES = st.one_of(
    st.none(), st.booleans(),
    st.integers(), st.integers(-(2**64), 2**64), st.sampled_from([0, 1, -1, 255, -255, -256, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1]),
    st.floats(), st.sampled_from([0.0, -0.0, float("inf"), float("-inf"), float("nan")]),
    st.text(max_size=8), st.text(st.sampled_from("a\x00\ud800é"), max_size=4),
    st.text(st.sampled_from("az:/\x00"), max_size=8).map(lambda text: IRI("urn:" + text)),
    st.text(max_size=4).map(lambda text: BNode("b" + text.encode("utf-8", "replace").hex())),
    st.builds(Literal, st.text(max_size=4), st.sampled_from([None, "http://www.w3.org/2001/XMLSchema#integer"])),
    st.builds(lambda text, tag: Literal(text, lang=tag), st.text(max_size=4), st.sampled_from(["en", "fr-ca"])),
    st.binary(max_size=6), st.decimals(allow_nan=False, allow_infinity=False, places=3),
    st.dates(), st.datetimes(),
)


def packed_or_error(pack, value):
    try:
        return pack(value)
    except (PackError, UnicodeEncodeError) as exc:
        return type(exc)


@settings(max_examples=examples(1500))
@given(st.lists(VALUES, max_size=12), st.integers(8, 64))
def test_a_column_packs_as_each_value_does(values: list, limit: int) -> None:
    """With a store's caches and a small inline limit, so that long values skip them."""
    store = NStore(None, b"\x91", ("a", "b"))
    expected = [packed_or_error(pack_value, value) for value in values]
    if PackError in expected or UnicodeEncodeError in expected:
        with pytest.raises(PackError):
            pack_column(values, store.packed, {}, {}, limit, 4)
        return
    iris: dict = {}
    strings: dict = {}
    assert pack_column(values, store.packed, iris, strings, limit, 4) == expected
    assert pack_column(values, store.packed, iris, strings, limit, 4) == expected  # from the caches
    assert all(len(packed) <= limit for packed in [*iris.values(), *strings.values()])


@settings(max_examples=examples(800))
@given(st.lists(VALUES.filter(lambda value: packed_or_error(pack_value, value) not in (PackError, UnicodeEncodeError)),
                min_size=1, max_size=6))
def test_items_split_as_nstore_pack_splits_them(values: list) -> None:
    key = b"\x92\x03" + b"".join(pack_value(value) for value in values)
    assert split_items(key, 2, len(values)) == split(key, 2, len(values))
    assert split_rows([(key, b"")], 2, len(values)) == [split(key, 2, len(values))]


def test_a_key_that_is_not_its_items_is_refused() -> None:
    with pytest.raises(ValueError, match="not a packed item"):
        split_items(b"P\x02abc", 1, 1)  # a string without its end
    with pytest.raises(ValueError, match="1 bytes after"):
        split_items(b"P\x14\x14", 1, 1)


def test_term_refs_and_term_parts_follow_the_dictionary_layout() -> None:
    parts = [pack_value(IRI("urn:a")), pack_value(BNode("b")), pack_value("s"), pack_value(Literal("x", lang="en")),
             pack_value(b"\x00"), pack_value(7), pack_value(IRI("urn:a"))]
    assert term_parts(parts) == parts[:5]
    refs = term_refs(parts[:5], 2**32)
    assert refs == [bytes([0x50 + kind]) + (2**32 + kind).to_bytes(5, "big") for kind in range(5)]
    with pytest.raises(ValueError, match="not a packed term"):
        term_refs([pack_value(7)], 0)
    with pytest.raises(OverflowError):
        term_refs(parts[:1], 2**40)


@settings(max_examples=examples(300))
@given(st.lists(st.tuples(VALUES, VALUES, VALUES).filter(
    lambda row: all(packed_or_error(pack_value, value) not in (PackError, UnicodeEncodeError) for value in row)), max_size=20),
    st.permutations(range(3)))
def test_an_index_sums_the_same_in_any_item_order(rows: list, order: list) -> None:
    """What verify compares: the sum over keys written in ``order`` equals the sum over
    keys in item order, and a changed payload changes it."""
    identity = [b"P" + b"".join(pack_value(value) for value in row) for row in rows]
    permuted = [b"Q" + b"".join(pack_value(row[i]) for i in order) for row in rows]
    payloads = [b"\x01"] * len(rows)
    assert canonical_sum(permuted, payloads, 1, tuple(order), None) == canonical_sum(identity, payloads, 1, (0, 1, 2), None)
    if rows:
        assert canonical_sum(identity, [b"\x00"] + payloads[1:], 1, (0, 1, 2), None) != canonical_sum(identity, payloads, 1, (0, 1, 2), None)


def test_canonical_sum_names_a_damaged_key_and_counts_blob_references() -> None:
    blob = b"\x4f" + bytes(32)
    refs: list = []
    assert type(canonical_sum([b"P" + blob + b"\x14"], [b""], 1, (0, 1), refs)) is int and refs == [blob]
    assert canonical_sum([b"P\x14\x14\x14"], [b""], 1, (0, 1), None) == (b"P\x14\x14\x14", "1 bytes after its 2 items")


def test_the_docstring_examples_of_the_compiled_module() -> None:
    assert doctest.testmod(nstore._pack).failed == 0


def test_dates_and_decimals_split_too() -> None:
    values = [dt.date(2020, 1, 2), dt.datetime(2020, 1, 2, 3, 4, 5), dt.datetime(2020, 1, 2, tzinfo=dt.timezone.utc),
              Decimal("-12.5"), Decimal(0), Decimal("1.5"), 10**300, -(10**300)]
    key = b"".join(pack_value(value) for value in values)
    assert split_items(key, 0, len(values)) == split(key, 0, len(values))


@settings(max_examples=examples(300))
@given(st.lists(st.tuples(st.binary(max_size=40), st.booleans()), max_size=50), st.sampled_from([b"", b"\xff"]))
def test_record_sums_are_pythons_sums_of_sha256(rows: list, mark: bytes) -> None:
    records = [data + (b"\x01" if alive else b"\x00") for data, alive in rows]

    def hashed(data: bytes) -> int:
        return int.from_bytes(hashlib.sha256(mark + data).digest(), "big")
    born = sum(hashed(data) for data, alive in rows if alive) % (1 << 256)
    dead = sum(hashed(data) for data, alive in rows if not alive) % (1 << 256)
    alive = sum(1 for _, state in rows if state)
    assert record_sums(records, mark, hashlib.sha256) == (born, dead, alive, len(rows) - alive)


@settings(max_examples=examples(300))
@given(st.lists(st.binary(max_size=30), max_size=20), st.sampled_from([b"", b"\xff"]))
def test_framed_is_length_then_mark_then_part(parts: list, mark: bytes) -> None:
    assert framed(parts, mark) == b"".join(len(mark + part).to_bytes(4, "big") + mark + part for part in parts)


SCALARS = (type(None), bool, int, float, str, bytes)


@given(st.lists(VALUES, max_size=5))
@settings(max_examples=examples(300))
def test_unpacked_scalars_are_what_unpack_gives(values):
    """unpack_scalars decodes keys of scalars as nstore.pack.unpack does (bit for bit for
    floats: NaN payloads and -0.0), and declines any key holding anything else."""
    from nstore.pack import pack, unpack
    try:
        key = b"P" + pack(*values)
    except (PackError, ValueError, TypeError):
        return
    found = nstore._pack.unpack_scalars([key], 1)
    expected = list(unpack(key[1:]))
    plain = all(type(v) in SCALARS and (type(v) is not int or -(2**64) < v < 2**64) for v in expected)
    if not plain:
        assert found is None  # a longer integer or another kind: Python unpacks it
        return
    assert found is not None
    assert [pack_value(v) for v in found[0]] == [pack_value(v) for v in expected]
    assert list(map(type, found[0])) == list(map(type, expected))
