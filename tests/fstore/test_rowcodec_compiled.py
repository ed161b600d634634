"""The compiled path codec and splitter (fstore.core._rows.PathCodec, Splitter) against
the Python functions they stand in for (rowcodec.feature_path, split_feature): the same
path, row or refusal for every key, path and blob, and the fast path taken for the keys
it claims (integers of 64 bits and strings)."""

from __future__ import annotations

import base64
import struct

import msgpack
from hypothesis import given, settings
from hypothesis import strategies as st

from fstore.core._rows import PathCodec, Splitter
from fstore.core.rowcodec import KEY_LIMIT, directories, feature_path, filename, key_of, split_feature
from fstore.core.rows import RULES, Row, body_of

ints = st.one_of(st.integers(-2**63, 2**64 - 1), st.sampled_from([0, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32,
                                                                 2**63 - 1, 2**63, -32, -33, -128, -129, -2**15 - 1,
                                                                 -2**31, -2**31 - 1, -2**63]))
texts = st.text(max_size=40) | st.sampled_from(["x" * 31, "y" * 32, "z" * 255, "w" * 256, "\u00e9" * 20])
fast_values = ints | texts
other_values = st.one_of(st.integers(2**64, 2**70), st.integers(-2**70, -2**63 - 1), st.floats(allow_nan=False),
                         st.booleans(), st.none(), st.binary(max_size=5))
keys = st.lists(fast_values | other_values, min_size=1, max_size=4)


def codec(rule) -> PathCodec:
    return PathCodec(rule.scheme, rule.branches, rule.levels, rule.alphabet, rule.group_length, KEY_LIMIT)


def reference_path(rule, pk):
    try:
        return feature_path(rule, pk)
    except (TypeError, ValueError, OverflowError):
        return None


@settings(max_examples=300, deadline=None)
@given(pks=st.lists(keys, min_size=1, max_size=10), rule=st.sampled_from(RULES))
def test_paths_are_the_python_paths(pks, rule) -> None:
    found = codec(rule).paths([tuple(pk) if i % 2 else pk for i, pk in enumerate(pks)])
    for pk, path in zip(pks, found):
        if path is not None:
            assert path == feature_path(rule, pk)
        taken = all(type(v) is int and -2**63 <= v < 2**64 or type(v) is str for v in pk) and \
            len(packed(pk) or b"x" * 999) <= 380 and (rule.scheme != "int" or len(pk) == 1 and type(pk[0]) is int)
        if taken:
            assert path is not None, pk  # the fast path takes what it claims to
        if path is None and rule.scheme == "int" and reference_path(rule, pk) is not None:
            assert not taken


def non_minimal(pk) -> bytes | None:
    """A msgpack of the key that unpacks to it but is not what packb writes (a wider
    integer or string header), or None."""
    out = bytes([0x90 | len(pk)])
    changed = False
    for value in pk:
        if type(value) is int and 0 <= value < 2**32:
            out += b"\xcf" + struct.pack(">Q", value)
            changed = True
        elif type(value) is int and -2**31 <= value < 0:
            out += b"\xd3" + struct.pack(">q", value)
            changed = True
        elif type(value) is str and len(value.encode()) < 256:
            data = value.encode()
            out += b"\xda" + struct.pack(">H", len(data)) + data
            changed = True
        elif packed(value) is None:
            return None
        else:
            out += packed(value)
    return out if changed else None


def packed(value) -> bytes | None:
    try:
        return msgpack.packb(value, use_bin_type=True)
    except (OverflowError, TypeError, ValueError):
        return None


def path_of(rule, pk, raw: bytes) -> str | None:
    dirs = directories(rule, pk, raw)
    return None if dirs is None else f"{dirs}/{filename(raw)}"


@st.composite
def tuples(draw):
    """A (rule, path, blob): a row's, or one made irregular in one of several ways."""
    rule = draw(st.sampled_from(RULES))
    pk = draw(keys)
    if rule.scheme == "int" and draw(st.booleans()):
        pk = [draw(ints)]
    raw = packed(pk)
    path = reference_path(rule, pk)
    how = draw(st.sampled_from(["row", "row", "row", "non-minimal", "unpadded", "directories", "character", "slashes"]))
    if how == "non-minimal":
        wide = non_minimal(pk)
        path = path_of(rule, pk, wide) if wide else path
    elif path is not None and how == "unpadded":
        path = path.rstrip("=")
    elif path is not None and how == "directories":
        path = "A" + path[1:] if path[0] != "A" else "B" + path[1:]
    elif path is not None and how == "character":
        at = draw(st.integers(0, len(path) - 1))
        path = path[:at] + draw(st.sampled_from("=/+A_-\u00e9\ud800")) + path[at + 1:]
    elif path is not None and how == "slashes":
        path = "x/" + path
    if path is None:
        path = draw(st.text(max_size=20))
    header = draw(st.sampled_from([b"\xa3abc", b"\xd9\x28" + b"f" * 40, b"\xa1z"]))
    values = msgpack.packb(draw(st.lists(st.integers(-2**63, 2**64 - 1) | st.text(max_size=3), max_size=3)), use_bin_type=True)
    blob = draw(st.sampled_from([b"\x92" + header + values, b"\x93" + header + values, b"\x92\x01" + values,
                                 b"\x92" + header[:2]]))
    return rule, path, blob, raw


@settings(max_examples=400, deadline=None)
@given(cases=st.lists(tuples(), min_size=1, max_size=8))
def test_split_is_the_python_split(cases) -> None:
    ordinals = {b"\xa3abc": 1, b"\xd9\x28" + b"f" * 40: 2}
    registered = []

    def register(header: bytes) -> int:
        ordinals[header] = len(ordinals) + 1
        registered.append(header)
        return ordinals[header]

    for rule, path, blob, raw in cases:
        splitter = Splitter(7, rule.scheme, rule.branches, rule.levels, rule.alphabet, rule.group_length, KEY_LIMIT,
                            ordinals, register, Row)
        got = splitter.split([path], [blob])[0]
        parts = split_feature(rule, path, blob)
        key = codec(rule).keys([path])[0]
        assert key is None or key == key_of(rule, path)
        assert got is None or key is not None
        if got is not None:
            assert parts is not None, (path, blob)
            assert got == Row(7, parts.count, parts.key, body_of(ordinals[parts.header], parts.values))
            assert type(got) is Row
        elif parts is not None:  # left to Python: only what the compiled splitter does not claim
            pk = msgpack.unpackb(base64.urlsafe_b64decode(path.rpartition("/")[2]))
            assert any(type(v) is not int and type(v) is not str for v in pk) or len(raw or b"") > 380 or \
                any(type(v) is str and len(v.encode()) >= 65536 for v in pk), (path, pk)


@settings(max_examples=200, deadline=None)
@given(pks=st.lists(st.lists(fast_values, min_size=1, max_size=3), min_size=1, max_size=8))
def test_paths_are_the_paths_tables_write(pks) -> None:
    """The codec a table writer batches its paths with (``PathStructure.codec``) gives
    ``encode_path``'s paths (Kart's packing of the key)."""
    from fstore.tables.paths import GENERAL, INT_PK, LEGACY
    for structure in (INT_PK, GENERAL, LEGACY):
        for pk, path in zip(pks, structure.codec.paths(pks)):
            if path is not None:
                assert path == structure.encode_path(pk)
