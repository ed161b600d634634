"""Pins the on-disk format, version 1 (docs/format.md): packed bytes of every type code,
the frozen index lists, and the raw LMDB keys an NStore writes.

Every expected value is written out by hand here (the same bytes as in docs/format.md);
nothing is computed from the code under test. A failure means the format changed: stores
written before would no longer read back, so bump the format version instead of editing
these bytes.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import uuid
from decimal import Decimal
from pathlib import Path

import lmdb
import pytest

import nstore
from nstore import BlobRef, BNode, IRI, Literal, NStore, minimal_permutations, okvs, pack, unpack

XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
PLUS_ONE = dt.timezone(dt.timedelta(hours=1))

# (value, its packed bytes in hex) -- the table of docs/format.md, "Packing examples".
VECTORS = [
    # FoundationDB tuple-layer codes (the vectors first).
    (None, "00"),
    (b"foo\x00bar", "01 66 6f 6f 00 ff 62 61 72 00"),
    ("F\u00d4O\u0000bar", "02 46 c3 94 4f 00 ff 62 61 72 00"),
    ("", "02 00"),
    (-5551212, "11 ab 4b 93"),
    (-256, "12 fe ff"),
    (-255, "13 00"),
    (-1, "13 fe"),
    (0, "14"),
    (1, "15 01"),
    (255, "15 ff"),
    (256, "16 01 00"),
    (2**64, "1d 09 01 00 00 00 00 00 00 00 00"),
    (-(2**64), "0b f6 fe ff ff ff ff ff ff ff ff"),
    (1.5, "21 bf f8 00 00 00 00 00 00"),
    (-1.5, "21 40 07 ff ff ff ff ff ff"),
    (0.0, "21 80 00 00 00 00 00 00 00"),
    (-0.0, "21 7f ff ff ff ff ff ff ff"),
    (float("inf"), "21 ff f0 00 00 00 00 00 00"),
    (False, "26"),
    (True, "27"),
    (uuid.UUID(int=1), "30 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01"),
    ((1, None, "a"), "05 15 01 00 ff 02 61 00 00"),
    ((), "05 00"),
    # datae's own codes.
    (IRI("http://a/b"), "40 68 74 74 70 3a 2f 2f 61 2f 62 00"),
    (BNode("b0"), "41 62 30 00"),
    (Literal("chat", lang="fr"), "42 63 68 61 74 00 00 66 72 00"),
    (
        Literal("1", XSD_INTEGER),
        "42 31 00 68 74 74 70 3a 2f 2f 77 77 77 2e 77 33 2e 6f 72 67 2f 32 30 30 31 2f 58 4d 4c"
        " 53 63 68 65 6d 61 23 69 6e 74 65 67 65 72 00 00",
    ),
    (Literal("x"), "42 78 00 00 00"),
    (Decimal("-12.5"), "43 13 fd 38 37 34 ff"),
    (Decimal(0), "44"),
    (Decimal("1.50"), "45 15 01 31 35 00"),
    (dt.date(2020, 1, 2), "46 17 0b 40 92"),
    (dt.datetime(1970, 1, 1, 0, 0, 1), "47 17 0f 42 40"),
    (dt.datetime(1970, 1, 1, 1, 0, tzinfo=PLUS_ONE), "48 14 16 0e 10"),
    (
        BlobRef(bytes(range(32))),
        "4f 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10 11 12 13 14 15 16 17 18 19 1a 1b 1c 1d 1e 1f",
    ),
]


@pytest.mark.parametrize(("value", "expected"), VECTORS, ids=[repr(v)[:40] for v, _ in VECTORS])
def test_packed_bytes_are_pinned(value, expected: str) -> None:
    assert pack(value).hex(" ") == expected
    assert unpack(bytes.fromhex(expected)) == (value,)


def test_format_version_is_1() -> None:
    assert nstore.FORMAT_VERSION == 1


def test_frozen_index_lists_are_pinned() -> None:
    lists = [minimal_permutations(n) for n in range(1, 9)]
    assert [len(perms) for perms in lists] == [1, 2, 3, 6, 10, 20, 35, 70]
    assert all(perms[0] == tuple(range(n)) for n, perms in enumerate(lists, 1))
    digest = hashlib.sha256(repr(lists).encode()).hexdigest()
    assert digest == "624c71b543db661eedea4f01095877e5640b8d880849216b0b3859b7f8ef3022"
    assert minimal_permutations(3) == ((0, 1, 2), (1, 2, 0), (2, 0, 1))
    assert minimal_permutations(4) == ((0, 1, 2, 3), (0, 2, 3, 1), (1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2), (3, 1, 2, 0))


# The raw LMDB content of the store built below, in key order (docs/format.md, "Example").
DIGEST = "34 de 83 e0 d5 55 94 b8 4b 3a 19 d7 48 a8 95 70 da d3 25 1c 55 cc f5 fb 45 8a 55 b7 7f e3 cb 3d"
LONG = "x" * 200  # packed: 202 bytes, past the inline limit of 168 for 3 items under ("t",)
EXPECTED = [
    ("05 02 74 00 00 02 62 6c 6f 62 00 64 " + DIGEST, "02 " + "78 " * 200 + "00"),  # blob data
    ("05 02 74 00 00 02 62 6c 6f 62 00 72 " + DIGEST, "31"),  # its reference count, "1"
    ("05 02 74 00 00 14 40 61 00 40 70 00 15 07", ""),  # index 0 (s, p, o)
    ("05 02 74 00 00 14 40 61 00 40 70 00 4f " + DIGEST, ""),
    ("05 02 74 00 00 15 01 40 70 00 15 07 40 61 00", ""),  # index 1 (p, o, s)
    ("05 02 74 00 00 15 01 40 70 00 4f " + DIGEST + " 40 61 00", ""),
    ("05 02 74 00 00 15 02 15 07 40 61 00 40 70 00", ""),  # index 2 (o, s, p)
    ("05 02 74 00 00 15 02 4f " + DIGEST + " 40 61 00 40 70 00", ""),
]


def raw_content(path: Path) -> list[tuple[str, str]]:
    env = lmdb.open(str(path), readonly=True, lock=False)
    try:
        with env.begin() as txn:
            return [(key.hex(" "), value.hex(" ")) for key, value in txn.cursor()]
    finally:
        env.close()


@pytest.mark.parametrize("how", ["add", "bulk_add"])
def test_raw_keys_of_a_tiny_store(tmp_path: Path, how: str) -> None:
    db = okvs.open(tmp_path)
    store = NStore(db, ("t",), ("s", "p", "o"))
    assert store.inline_limit == 168
    rows = [(IRI("a"), IRI("p"), 7), (IRI("a"), IRI("p"), LONG)]
    with db.transaction(write=True) as tx:
        if how == "add":
            for row in rows:
                store.add(tx, *row)
        else:
            store.bulk_add(tx, rows)
    db.close()
    assert sorted(os.listdir(tmp_path)) == ["data.mdb", "datae.lock", "lock.mdb"]
    assert raw_content(tmp_path) == [(key, value.strip()) for key, value in EXPECTED]
    assert hashlib.sha256(pack(LONG)).hexdigest() == DIGEST.replace(" ", "")
