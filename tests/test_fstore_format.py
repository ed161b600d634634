"""Pins the versioned store's on-disk layout (docs/format.md, "Versioned store", format 1):
if this test must change, the format version must change too."""

from __future__ import annotations

import datetime as dt

import msgpack

import fstore
from fstore import IRI
from fstore.history import HISTORY_INDICES
from nstore.pack import pack

WHEN = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


def test_history_indices_are_frozen():
    assert HISTORY_INDICES == (
        (0, 1, 2, 3, 4), (0, 2, 3, 1, 4), (1, 2, 3, 0, 4), (2, 3, 0, 1, 4), (3, 0, 1, 2, 4), (3, 1, 2, 0, 4),
        (4, 0, 1, 2, 3),
    )


def test_raw_keys_of_one_commit(tmp_path):
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="m", author="a", time=WHEN) as tx:
        fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), 1)
    with repo._okvs.transaction() as raw:
        pairs = dict(raw.range(None, None))
    repo.close()

    assert tx.commit_id == "3a9ec090172738d6aef6463a1183ad84bcd57d1b22d02b8b2006c5de1358b58c"
    assert pairs.pop(pack("datae", "format")) == b"1"
    assert pairs.pop(pack("b", "main")) == pack(1)
    assert pairs.pop(pack("i", tx.commit_id)) == pack(1)
    record = msgpack.unpackb(pairs.pop(pack("c", 1)))
    assert record == {"id": tx.commit_id, "parents": [], "message": "m", "author": "a",
                      "time": "2024-01-02T03:04:05+00:00", "added": 1, "removed": 0}
    quad = [pack(None), pack(IRI("urn:s")), pack(IRI("urn:p")), pack(1)]
    expected = {}
    for number, perm in enumerate(HISTORY_INDICES):
        items = quad + [pack(1)]
        expected[pack(("h",), number) + b"".join(items[i] for i in perm)] = b"\x01"
    assert pairs == expected
    assert pack(("h",), 0).hex() == "050268000014"
    assert pack(IRI("urn:s")).hex() == "4075726e3a7300"
