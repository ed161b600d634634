"""The row codec (fstore.core.rowcodec): a regular feature tuple splits into a row and joins
back byte for byte; anything else is refused (stays a generic tuple), never changed."""

from __future__ import annotations

import base64
import math
import struct

import pytest
from hypothesis import given, strategies as st

from fstore.core.rowcodec import KEY_LIMIT, join_feature, legend_header, split_feature
from fstore.tables.packing import pack
from fstore.tables.paths import GENERAL, INT_PK, LEGACY

LEGEND = b"\xd9\x28" + b"0123456789abcdef0123456789abcdef01234567"
RULES = [INT_PK, GENERAL, LEGACY]

scalars = st.one_of(
    st.integers(-(2**63), 2**64 - 1), st.floats(allow_nan=True), st.text(max_size=40),
    st.binary(max_size=20), st.booleans(), st.none())


def blob(values: list) -> bytes:
    return b"\x92" + LEGEND + pack(values)


@given(st.integers(-(2**63), 2**64 - 1), st.lists(scalars, max_size=5))
def test_an_integer_key_under_every_rule_splits_and_joins_back(pk, values):
    for rule in RULES:
        path, feature = rule.encode_path([pk]), blob(values)
        split = split_feature(rule, path, feature)
        assert split is not None and split.header == LEGEND
        assert join_feature(rule, *split[:3]) == (path, feature)


@given(st.lists(scalars, min_size=1, max_size=3))
def test_any_key_under_the_hash_rules_splits_and_joins_back(pk):
    for rule in (GENERAL, LEGACY):
        path = rule.encode_path(pk)
        split = split_feature(rule, path, blob([1]))
        assert split is not None
        assert join_feature(rule, *split[:3]) == (path, blob([1]))


@pytest.mark.parametrize("pk", [0.0, -0.0, math.inf, -math.inf, 5e-324,
                                struct.unpack(">d", bytes.fromhex("7ff8000000000001"))[0],
                                struct.unpack(">d", bytes.fromhex("fff8000000000000"))[0]])
def test_float_keys_keep_their_bits(pk):
    path = GENERAL.encode_path([pk])
    split = split_feature(GENERAL, path, blob([]))
    assert join_feature(GENERAL, *split[:3])[0] == path


def test_distinct_keys_give_distinct_row_keys():
    keys = [[1], [1.0], [True], [0.0], [-0.0], ["1"], [b"1"], [None], [1, "a"], ["a", 1]]
    rows = {split_feature(GENERAL, GENERAL.encode_path(k), blob([])).key for k in keys}
    assert len(rows) == len(keys)


def _name(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode()


@pytest.mark.parametrize("path, why", [
    ("A/A/A/B/" + _name(b"\x91\xcc\x4d"), "77 as uint8: not Kart's smallest encoding"),
    ("A/A/A/B/" + _name(b"\x91\xd0\x4d"), "77 as int8"),
    ("A/A/A/B/" + _name(b"\x91\xca\x3f\x00\x00\x00"), "0.5 as float32"),
    ("A/A/A/B/" + _name(b"\xdc\x00\x01\x4d"), "an array16 header"),
    ("A/A/A/C/kU0=", "a directory the key does not give"),
    ("X/A/A/A/B/kU0=", "an extra leading directory"),
    ("3c/57/kU0=", "a LEGACY path in an int table"),
    ("A/A/A/B/kU0", "unpadded base64"),
    ("A/A/A/B/" + _name(b"\x4d"), "a file name that is not a list"),
    ("A/A/A/B/" + _name(b"\x91\x4d\x4d"), "two values after the list"),
    ("A/A/A/B/" + _name(b"\x91\xa1a"), "a string key under the int scheme"),
    ("A/A/A/B/" + _name(b"\x91\xc7\x01\x47\x00"), "a geometry key"),
    ("A/A/A/B/" + _name(b"\x91\x81\x01\x02"), "a map key"),
    ("A/A/A/B/ü", "not base64"),
])
def test_irregular_paths_are_refused(path, why):
    assert split_feature(INT_PK, path, blob([1])) is None, why


def test_a_key_longer_than_the_limit_is_refused():
    pk = ["x" * KEY_LIMIT]
    assert split_feature(GENERAL, GENERAL.encode_path(pk), blob([])) is None
    short = ["x" * (KEY_LIMIT - 10)]
    assert split_feature(GENERAL, GENERAL.encode_path(short), blob([])) is not None


@pytest.mark.parametrize("feature", [b"", b"\x92", b"\x93\xa1a\x90", b"\x92\x01\x90", b"\x92\xc4\x01a\x90",
                                     b"\x92\xd9\x05abc", b"\x91\xa1a"])
def test_blobs_not_framed_as_kart_frames_them_are_refused(feature):
    assert legend_header(feature) == 0
    assert split_feature(INT_PK, INT_PK.encode_path([77]), feature) is None


@pytest.mark.parametrize("header", [b"\xa1A", b"\xd9\x01A", b"\xda\x00\x01A", b"\xdb\x00\x00\x00\x01A"])
def test_a_legend_keeps_its_header_bytes(header):
    feature = b"\x92" + header + b"trailing garbage is kept verbatim"
    split = split_feature(INT_PK, "A/A/A/B/kU0=", feature)
    assert split.header == header
    assert join_feature(INT_PK, *split[:3]) == ("A/A/A/B/kU0=", feature)
