"""Pins the versioned store's on-disk layout (docs/format.md, "Versioned store", format 5):
if this test must change, the format version must change too."""

from __future__ import annotations

import datetime as dt
import hashlib

import msgpack

import fstore
from fstore import IRI
from fstore.core.heads import SNAPSHOT_INDICES
from fstore.core.history import RECORD_INDICES
from nstore.pack import pack

WHEN = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)


def recomputed_digest(marked_identities: list[bytes]) -> str:
    """A state digest as docs/format.md gives it, with nothing but hashlib."""
    total = sum(int.from_bytes(hashlib.sha256(marked).digest(), "big") for marked in marked_identities)
    return (total % (1 << 256)).to_bytes(32, "big").hex()


def recomputed_id(parents: list[str], message: str, author: str, state: str, records: list[bytes]) -> str:
    """A commit id as docs/format.md gives it, with nothing but hashlib and msgpack."""
    head = msgpack.packb([b"datae-commit/2", parents, message, author, WHEN.isoformat(), state])
    digest = hashlib.sha256(len(head).to_bytes(8, "big") + head)
    for record in sorted(records):
        digest.update(len(record).to_bytes(4, "big") + record)
    return digest.hexdigest()


def test_indices_are_frozen():
    assert RECORD_INDICES == ((0, 1, 2, 3, 4), (4, 0, 1, 2, 3))
    assert SNAPSHOT_INDICES == (
        (0, 1, 2, 3, 4), (0, 1, 3, 4, 2), (0, 2, 3, 4, 1), (0, 3, 4, 1, 2), (0, 4, 1, 2, 3), (0, 4, 2, 3, 1),
    )


def test_raw_keys_of_one_commit(tmp_path):
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="m", author="a", time=WHEN) as tx:
        fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), 1)
    with repo.storage.read() as snapshot:
        pairs = dict(snapshot.tx.range(None, None))
    repo.close()

    # The id hashes terms, never the store's own term ids (docs/format.md, "Commit ids").
    identity = pack(None) + pack(IRI("urn:s")) + pack(IRI("urn:p")) + pack(1)
    state = recomputed_digest([identity])
    assert tx.commit_id == recomputed_id([], "m", "a", state, [identity + b"\x01"])
    assert tx.commit_id == "f80ab9f263f71768b42a0221f4c2adc1f39314f76791c7b32d7e2a9e10230291"
    assert pairs.pop(pack("datae", "format")) == b"6"
    assert pairs.pop(pack("b", "main")) == pack(1, tx.commit_id)  # the id lets verify check the seq
    assert pairs.pop(pack("i", tx.commit_id)) == pack(1)
    record = msgpack.unpackb(pairs.pop(pack("c", 1)))
    assert record == {"id": tx.commit_id, "parents": [], "message": "m", "author": "a",
                      "time": "2024-01-02T03:04:05+00:00", "added": 1, "removed": 0, "digest": state}
    # Snapshot 1 holds main's state at commit 1; main uses it and owns it.
    assert msgpack.unpackb(pairs.pop(pack("S", 1))) == [1, "main", 1]
    assert pairs.pop(pack("B", "main")) == pack(1)
    # Its quads counted by (graph, predicate) and by predicate (format 5).
    s_ref, p_ref = bytes.fromhex("500000000000"), bytes.fromhex("500000000001")
    assert pairs.pop(pack("SC", 1, 0) + pack(None) + p_ref) == pack(1)
    assert pairs.pop(pack("SC", 1, 1) + p_ref) == pack(1)
    assert pack("SC", 1, 0).hex(" ") == "02 53 43 00 15 01 14"
    # The keys of the dictionary (90), the records (91) and the snapshots (92), each space
    # in blocks: here one block each, under its first key.
    # The dictionary: IRIs get ids 0 and 1 in the order the commit met them; 1 stays inline.
    dictionary = {b"\x90t" + pack(IRI("urn:s")): s_ref, b"\x90t" + pack(IRI("urn:p")): p_ref,
                  b"\x90i" + s_ref: pack(IRI("urn:s")), b"\x90i" + p_ref: pack(IRI("urn:p")),
                  b"\x90n": (2).to_bytes(8, "big")}
    quad = [pack(None), s_ref, p_ref, pack(1)]
    records, snapshots = {}, {}
    for number, perm in enumerate(RECORD_INDICES):
        items = quad + [pack(1)]
        records[bytes([0x91, number]) + b"".join(items[i] for i in perm)] = b"\x01"
    for number, perm in enumerate(SNAPSHOT_INDICES):
        items = [pack(1)] + quad
        snapshots[bytes([0x92, number]) + b"".join(items[i] for i in perm)] = b""
    assert pairs == dict(block_of(space) for space in (dictionary, records, snapshots))
    # One block byte by byte: the records' two keys share 0x91, then differ.
    record_keys = sorted(records)
    assert block_of(records)[1] == (
        b"\x02"  # two entries
        + bytes([len(record_keys[0]), 0, 2]) + b"\x01"  # the fence: all of it shared, value 01
        + bytes([1, len(record_keys[1]) - 1, 2]) + record_keys[1][1:] + b"\x01"
    )


def varint(number: int) -> bytes:
    """Unsigned LEB128, as docs/format.md's blocks write their numbers."""
    out = bytearray()
    while number >= 0x80:
        out.append(number & 0x7F | 0x80)
        number >>= 7
    return bytes(out) + bytes([number])


def block_of(pairs: dict[bytes, bytes]) -> tuple[bytes, bytes]:
    """One block of ``pairs`` as docs/format.md ("Blocks") lays it out, written here from
    the text alone: ``(its fence, its bytes)``."""
    keys = sorted(pairs)
    out = bytearray(varint(len(keys)))
    previous = keys[0]
    for key in keys:
        shared = 0
        while shared < min(len(key), len(previous)) and key[shared] == previous[shared]:
            shared += 1
        out += varint(shared) + varint(len(key) - shared) + varint(2 * len(pairs[key])) + key[shared:] + pairs[key]
        previous = key
    return keys[0], bytes(out)


def test_tables_live_in_their_own_space(tmp_path):
    import fstore.tables as tables
    from nstore.pack import unpack

    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="t", author="a", time=WHEN) as tx:
        tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0}])
    with repo.storage.read() as snapshot:
        keys = [key for key, _ in snapshot.tx.range(None, None)]
        records = sorted(b"\xff" + b"".join(pack(v) for v in quad) + (b"\x01" if alive else b"\x00")
                         for quad, alive in repo.storage.tables.changes_of(snapshot.tx, 1))
    repo.close()
    # Nothing under the quads' records (91) or snapshots (92); the table's under 93 and 94.
    assert not any(key.startswith((b"\x91", b"\x92", pack("S"), pack("B"))) for key in keys)
    assert any(key.startswith(b"\x93") for key in keys) and any(key.startswith(b"\x94") for key in keys)
    assert [unpack(key) for key in keys if key.startswith(pack("TB"))] == [("TB", "main")]
    # The commit id as docs/format.md gives it: each tables record marked by ff, and the
    # state digest over the table tuples (all alive after this first commit).
    assert all(record.endswith(b"\x01") for record in records)
    state = recomputed_digest([record[:-1] for record in records])
    assert tx.commit_id == recomputed_id([], "t", "a", state, records)


def test_a_row_is_kept_by_table_and_key(tmp_path):
    """Format 6 (docs/format.md, "Rows"): a regular feature tuple is a row of its table,
    keyed by the primary key packed order-preserving, its body the legend's ordinal and
    the blob's values; the commit id and the state digest are those of the tuple, as in
    format 5."""
    import fstore.tables as tables
    from fstore.tables.paths import INT_PK

    repo = fstore.open(tmp_path / "r")
    schema = [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
              {"id": "v", "name": "v", "dataType": "text"}]
    with repo.transaction("main", message="t", author="a", time=WHEN) as tx:
        tables.create(tx, "t", schema)
    with repo.transaction("main", message="row", author="a", time=WHEN) as tx:
        tx.table("t").insert({"k": 77, "v": "x"})
    with repo.storage.read() as snapshot:
        pairs = dict(snapshot.tx.range(None, None))
        (_, blob), = repo.at("main").table("t").features()
        first_id, first_state = snapshot.commit(1).id, snapshot.commit(1).digest
        generic = sorted(b"\xff" + b"".join(pack(v) for v in quad) + (b"\x01" if alive else b"\x00")
                         for quad, alive in repo.storage.tables.changes_of(snapshot.tx, 1))
    repo.close()
    graph = IRI("urn:datae:dataset:t")
    path = INT_PK.encode_path([77])
    assert path == "A/A/A/B/kU0="
    header, values = blob[1:43], blob[43:]
    assert blob[:3] == b"\x92\xd9\x28" and values == b"\x91\xa1x"  # [legend name, ["x"]]
    # The registry: graph -> table 1, table 1 -> its graph, path rule and legend headers.
    assert pairs.pop(pack("TN", graph.value)) == pack(1)
    assert pairs.pop(pack("TR")) == pack(1)
    assert msgpack.unpackb(pairs.pop(pack("TR", 1))) == [graph.value, ["int", 64, 4, "base64"], [header]]
    # The row's records (95 00 by row, 95 01 by commit) and the snapshot's entry (96).
    records = {b"\x95\x00" + pack(1, 1) + pack(77) + pack(2, 1): b"\x01" + values,
               b"\x95\x01" + pack(2, 1, 1) + pack(77) + pack(1): b""}
    assert pairs.pop(b"\x95\x00" + pack(1, 1) + pack(77) + pack(2, 1)) == block_of(records)[1]
    snapshot_number = 1
    assert msgpack.unpackb(pairs[pack("TS", snapshot_number)])[:2] == [2, "main"]
    entry = {b"\x96" + pack(snapshot_number, 1, 1) + pack(77): pack(2)}
    assert pairs.pop(b"\x96" + pack(snapshot_number, 1, 1) + pack(77)) == block_of(entry)[1]
    # Counted under the row's graph and predicate as inline items.
    feature = pack(IRI("urn:datae:table:feature"))
    assert pairs.pop(pack("TSC", snapshot_number, 0) + pack(graph) + feature) == pack(1)
    assert pairs.pop(pack("TSC", snapshot_number, 1) + feature) == pack(1)
    # No dictionary term holds the path or the blob.
    assert not any(key.startswith(b"\x90t") and (pack(path) in key or pack(blob) in key) for key in pairs)
    # The id of the commit hashes the tuple, as every format did.
    identity = pack(graph) + pack(path) + feature + pack(blob)
    state = recomputed_digest([record[:-1] for record in generic] + [b"\xff" + identity])
    assert tx.commit_id == recomputed_id([first_id], "row", "a", state, [b"\xff" + identity + b"\x01"])
    assert first_state != state
