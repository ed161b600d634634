"""Pins the versioned store's on-disk layout (docs/format.md, "Versioned store", format 2):
if this test must change, the format version must change too."""

from __future__ import annotations

import datetime as dt

import msgpack

import fstore
from fstore import IRI
from fstore.heads import SNAPSHOT_INDICES
from fstore.history import RECORD_INDICES
from nstore.pack import pack

WHEN = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


def test_indices_are_frozen():
    assert RECORD_INDICES == ((0, 1, 2, 3, 4), (4, 0, 1, 2, 3))
    assert SNAPSHOT_INDICES == (
        (0, 1, 2, 3, 4), (0, 1, 3, 4, 2), (0, 2, 3, 4, 1), (0, 3, 4, 1, 2), (0, 4, 1, 2, 3), (0, 4, 2, 3, 1),
    )


def test_raw_keys_of_one_commit(tmp_path):
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="m", author="a", time=WHEN) as tx:
        fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), 1)
    with repo.storage.read() as raw:
        pairs = dict(raw.range(None, None))
    repo.close()

    # The id hashes terms, never the store's own term ids: it is the same as in format 1.
    assert tx.commit_id == "3a9ec090172738d6aef6463a1183ad84bcd57d1b22d02b8b2006c5de1358b58c"
    assert pairs.pop(pack("datae", "format")) == b"2"
    assert pairs.pop(pack("b", "main")) == pack(1)
    assert pairs.pop(pack("i", tx.commit_id)) == pack(1)
    record = msgpack.unpackb(pairs.pop(pack("c", 1)))
    assert record == {"id": tx.commit_id, "parents": [], "message": "m", "author": "a",
                      "time": "2024-01-02T03:04:05+00:00", "added": 1, "removed": 0}
    # The dictionary: IRIs get ids 0 and 1 in the order the commit met them; 1 stays inline.
    s_ref, p_ref = bytes.fromhex("500000000000"), bytes.fromhex("500000000001")
    dictionary = b"\x90"
    assert pairs.pop(dictionary + b"t" + pack(IRI("urn:s"))) == s_ref
    assert pairs.pop(dictionary + b"t" + pack(IRI("urn:p"))) == p_ref
    assert pairs.pop(dictionary + b"i" + s_ref) == pack(IRI("urn:s"))
    assert pairs.pop(dictionary + b"i" + p_ref) == pack(IRI("urn:p"))
    assert pairs.pop(dictionary + b"n") == (2).to_bytes(8, "big")
    # Snapshot 1 holds main's state at commit 1; main uses it and owns it.
    assert msgpack.unpackb(pairs.pop(pack("S", 1))) == [1, "main", 1]
    assert pairs.pop(pack("B", "main")) == pack(1)
    quad = [pack(None), s_ref, p_ref, pack(1)]
    expected = {}
    for number, perm in enumerate(RECORD_INDICES):
        items = quad + [pack(1)]
        expected[bytes([0x91, number]) + b"".join(items[i] for i in perm)] = b"\x01"
    for number, perm in enumerate(SNAPSHOT_INDICES):
        items = [pack(1)] + quad
        expected[bytes([0x92, number]) + b"".join(items[i] for i in perm)] = b""
    assert pairs == expected


def test_tables_live_in_their_own_space(tmp_path):
    import hashlib

    import fstore.tables as tables
    from nstore.pack import unpack

    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="t", author="a", time=WHEN) as tx:
        tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0}])
    with repo.storage.read() as raw:
        keys = [key for key, _ in raw.range(None, None)]
        records = sorted(b"\xff" + b"".join(pack(v) for v in quad) + (b"\x01" if alive else b"\x00")
                         for quad, alive in repo.storage.tables.changes_of(raw, 1))
    repo.close()
    # Nothing under the quads' records (91) or snapshots (92); the table's under 93 and 94.
    assert not any(key.startswith((b"\x91", b"\x92", pack("S"), pack("B"))) for key in keys)
    assert any(key.startswith(b"\x93") for key in keys) and any(key.startswith(b"\x94") for key in keys)
    assert [unpack(key) for key in keys if key.startswith(pack("TB"))] == [("TB", "main")]
    # The commit id as docs/format.md gives it: each tables record marked by ff.
    head = msgpack.packb([b"datae-commit/1", [], "t", "a", WHEN.isoformat()])
    digest = hashlib.sha256(len(head).to_bytes(8, "big") + head)
    for record in records:
        digest.update(len(record).to_bytes(4, "big") + record)
    assert tx.commit_id == digest.hexdigest()
