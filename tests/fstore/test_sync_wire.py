"""The bytes of docs/sync.md's HTTP transport, pinned (fstore.sync.wire, issue 25): every
frame built from the page alone with msgpack and json, compared with what the one wire
module writes, and read back whole or cut at every byte; ``datae serve`` and the HTTP
client share that module, and fstore.sync never imports the facade."""

from __future__ import annotations

import json
from pathlib import Path

import msgpack
import pytest

from fstore.errors import MergeConflict
from fstore.sync import wire
from fstore.sync.merge_requests import RequestConflictError
from fstore.sync.opener import OpenStore
from fstore.sync.protocol import RefUpdate, SyncError, TamperedError, commit_payloads
from tests.fstore.test_sync import commit, store
from tests.test_layers import imports_of, project_modules

ROOT = Path(__file__).resolve().parents[2]
END_1 = bytes.fromhex("81a3656e6401")  # msgpack {"end": 1}: fixmap 1, fixstr "end", 1


@pytest.fixture
def payloads(tmp_path) -> list[dict]:
    repo = store(tmp_path / "r")
    for n in range(3):
        commit(repo, n)
    with repo.storage.read() as snapshot:
        found = list(commit_payloads(snapshot, [repo.commit("main").seq], set()))
    repo.close()
    return found


def test_frames_are_the_documented_bytes(payloads):
    one = payloads[0]
    encoded = wire.encode_payload(one)
    assert encoded == msgpack.packb(one, use_bin_type=True)
    record = one["records"][0]  # a record is msgpack bin, a string msgpack str
    assert len(record) < 256 and bytes([0xC4, len(record)]) + record in encoded
    assert bytes([0xA0 | len("message")]) + b"message" in encoded
    assert b"".join(wire.commit_frames([one])) == encoded + END_1
    assert b"".join(wire.commit_frames([])) == bytes.fromhex("81a3656e6400")
    update = RefUpdate("branch", "main", None, one["id"])
    header = msgpack.packb({"updates": [["branch", "main", None, one["id"]]], "force": True})
    assert b"".join(wire.push_frames([update], True, [one])) == header + encoded + END_1
    assert msgpack.unpackb(wire.error_frame(TamperedError("bad"))) == {"error": "bad", "kind": "TamperedError"}
    ids = {"01" * 32, "00" * 32}
    assert wire.encode_ids(ids) == bytes(32) + b"\x01" * 32
    assert wire.decode_ids(wire.encode_ids(ids), "x") == ids
    with pytest.raises(SyncError, match="cut"):
        wire.decode_ids(bytes(33), "x")
    assert json.loads(wire.encode_fetch(["w"], {"c", "b"})) == {"wants": ["w"], "haves": ["b", "c"]}
    assert wire.decode_fetch(wire.encode_fetch(["w"], {"c", "b"})) == (["w"], {"b", "c"})
    for body in (b"{not json", b'{"wants": 3}', b'["w"]', b'{"wants": ["w"], "haves": [1]}'):
        with pytest.raises(SyncError):
            wire.decode_fetch(body)
    assert wire.PATH == "/sync/v1" and wire.FRAMES_TYPE == "application/x-datae-commits"


def test_a_stream_is_read_however_it_is_cut_into_chunks(payloads):
    stream = b"".join(wire.commit_frames(payloads))
    for cut in range(len(stream) + 1):
        chunks = [stream[:cut], stream[cut:]]
        assert list(wire.read_commits(wire.frames(chunks, "s"), "s")) == payloads
    body = b"".join(wire.push_frames([RefUpdate("tag", "v1", None, payloads[-1]["id"])], False, payloads))
    updates, force, commits = wire.read_push(wire.frames([body[i:i + 7] for i in range(0, len(body), 7)], "p"))
    assert updates == [RefUpdate("tag", "v1", None, payloads[-1]["id"])] and force is False
    assert list(commits) == payloads


def test_broken_streams_are_refused(payloads, monkeypatch):
    frames = [wire.encode_payload(p) for p in payloads]

    def read(data: bytes, *, from_server: bool = False) -> list[dict]:
        return list(wire.read_commits(wire.frames([data], "the stream"), "the stream", from_server=from_server))

    with pytest.raises(SyncError, match="the stream was cut after 3 commits; no ref moved"):
        read(b"".join(frames))
    with pytest.raises(SyncError, match="ended after 3 commits but says 5"):
        read(b"".join(frames) + msgpack.packb({"end": 5}))
    with pytest.raises(SyncError, match="frame 2 is not msgpack"):
        read(frames[0] + b"\xc1")  # 0xc1: never used in msgpack
    with pytest.raises(SyncError, match="field 'id'"):
        read(msgpack.packb({"id": 3}) + END_1)
    # An error frame names its error from a server; from a client it is a malformed commit.
    failed = frames[0] + wire.error_frame(TamperedError("its digest differs"))
    with pytest.raises(TamperedError, match="the stream: its digest differs"):
        read(failed, from_server=True)
    with pytest.raises(SyncError, match="lacks a field") as refused:
        read(failed)
    assert type(refused.value) is SyncError
    for body in (b"", b"\x93not", msgpack.packb({"updates": [["branch"]]})):
        with pytest.raises(SyncError, match="starts with"):
            wire.read_push(wire.frames([body], "the push"))
    monkeypatch.setattr(wire, "MAX_FRAME", 1000)  # a frame never grows msgpack's buffer past the limit
    with pytest.raises(SyncError, match="frame 2 is larger than 1000 bytes"):
        big = msgpack.packb({"a": 1}) + msgpack.packb({"records": [bytes(2000)]})
        list(wire.frames([big[i:i + 100] for i in range(0, len(big), 100)], "the stream"))


def test_errors_travel_by_kind():
    for kind, cls in wire.ERROR_KINDS.items():
        sent = {"error": "why", "kind": kind}
        if cls is not MergeConflict:  # made from a list of conflicts
            assert wire.error_answer(cls("why")) == sent
        received = wire.error_of(json.loads(json.dumps(sent)), "why")
        assert type(received) is cls and str(received) == "why"
    conflict = RequestConflictError("conflicts", [{"text": "s p: base 1"}])
    again = wire.error_of(json.loads(json.dumps(wire.error_answer(conflict))), "conflicts")
    assert type(again) is RequestConflictError and again.conflicts == conflict.conflicts
    assert type(wire.error_of({"kind": "ProtocolError"}, "x")) is SyncError
    assert type(wire.error_of({}, "x")) is SyncError


def test_the_server_frames_nothing_itself(tmp_path):
    """Every frame is fstore.sync.wire's (that sync never imports the facade: tests/test_layers.py)."""
    server = ROOT / "datae" / "server.py"
    known = set(project_modules())
    targets = {found.target for found in imports_of("datae.server", server.read_text(), False, known, ("msgpack", "fstore"))}
    assert "msgpack" not in targets and "fstore.sync.wire" in targets
    repo = store(tmp_path)  # what sync takes instead: the facade answers its protocol
    assert isinstance(repo, OpenStore)
    repo.close()
