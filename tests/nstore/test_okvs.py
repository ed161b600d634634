"""The ordered key-value store: scans against a sorted-dict model, transactions, errors,
a map that grows by itself, and readers that see only committed states (threads and
processes)."""

from __future__ import annotations

import hashlib
import multiprocessing
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

import nstore.okvs as okvs_module
from nstore import okvs
from nstore.errors import (
    ReadOnlyTransactionError,
    TransactionClosedError,
    TransactionError,
    TransactionTooLargeError,
)
from nstore.okvs import MAX_KEY_SIZE, InvalidKeyError, Okvs, prefix_end
from tests.profiles import examples

SMALL_MAP = 64 * 1024

# Keys from a tiny alphabet (with 0x00 and 0xff, the edge bytes) so that keys collide,
# share prefixes and fall on range bounds often.
key_bytes = st.sampled_from([0x00, 0x01, 0x61, 0x62, 0xFE, 0xFF])
keys = st.lists(key_bytes, min_size=1, max_size=4).map(bytes)
bounds = st.none() | st.just(b"") | keys
small_values = st.binary(max_size=16)
# Now and then a value of several KiB, so that a 64 KiB map has to grow mid-machine.
values = st.one_of(small_values, small_values, small_values, st.integers(1, 6000).map(lambda n: b"v" * n))
offsets = st.integers(0, 5)
limits = st.none() | st.integers(0, 6)


def model_range(
    model: dict[bytes, bytes],
    start: bytes | None,
    end: bytes | None,
    reverse: bool = False,
    offset: int = 0,
    limit: int | None = None,
) -> list[tuple[bytes, bytes]]:
    """What ``range`` must yield, computed on a plain dict."""
    pairs = [(k, model[k]) for k in sorted(model) if (start is None or k >= start) and (end is None or k < end)]
    if reverse:
        pairs.reverse()
    pairs = pairs[offset:]
    return pairs if limit is None else pairs[:limit]


def contents(db: Okvs) -> dict[bytes, bytes]:
    with db.transaction() as tx:
        return dict(tx.range())


# ------------------------------------------------------------ model-based: scans


class OkvsMachine(RuleBasedStateMachine):
    """One write transaction is open at a time; rules write through it, commit it or
    abort it, and scans are compared with a dict of the uncommitted state."""

    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.TemporaryDirectory()
        self.db = okvs.open(self.dir.name, map_size=SMALL_MAP)
        self.committed: dict[bytes, bytes] = {}
        self.model: dict[bytes, bytes] = {}
        self.tx = self.db.transaction(write=True)

    def teardown(self) -> None:
        if not self.tx.closed:
            self.tx.abort()
        self.db.close()
        self.dir.cleanup()

    def draw_key(self, data: st.DataObject) -> bytes:
        """A stored key two times in three (so deletes and bounds hit keys), else any."""
        if self.model and data.draw(st.integers(0, 2)):
            return data.draw(st.sampled_from(sorted(self.model)))
        return data.draw(keys)

    def draw_bound(self, data: st.DataObject) -> bytes | None:
        """None, b"", a key (often a stored one: bounds are inclusive / exclusive there)
        or the first key after one."""
        kind = data.draw(st.sampled_from(["none", "empty", "key", "key", "key", "after"]))
        if kind == "none":
            return None
        if kind == "empty":
            return b""
        key = self.draw_key(data)
        return key if kind == "key" else key + b"\x00"

    @rule(data=st.data(), value=values)
    def set(self, data: st.DataObject, value: bytes) -> None:
        key = self.draw_key(data)
        self.tx.set(key, value)
        self.model[key] = value

    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        key = self.draw_key(data)
        self.tx.delete(key)
        self.model.pop(key, None)

    @rule(data=st.data(), ascending=st.booleans())
    def set_many(self, data: st.DataObject, ascending: bool) -> None:
        items = {self.draw_key(data): data.draw(small_values) for _ in range(data.draw(st.integers(0, 8)))}
        pairs = sorted(items.items()) if ascending else list(items.items())
        self.tx.set_many(pairs, ascending=ascending)
        self.model.update(items)

    @rule(data=st.data())
    def remove_range(self, data: st.DataObject) -> None:
        start, end = self.draw_bound(data), self.draw_bound(data)
        self.tx.remove_range(start, end)
        for key, _ in model_range(self.model, start, end):
            del self.model[key]

    @rule()
    def commit(self) -> None:
        self.tx.commit()
        self.committed = dict(self.model)
        self.tx = self.db.transaction(write=True)

    @rule()
    def abort(self) -> None:
        self.tx.abort()
        self.model = dict(self.committed)
        self.tx = self.db.transaction(write=True)

    @rule()
    def reopen(self) -> None:
        self.commit()
        self.tx.abort()
        self.db.close()
        self.db = okvs.open(self.dir.name, map_size=SMALL_MAP)
        self.tx = self.db.transaction(write=True)

    @rule(data=st.data())
    def get(self, data: st.DataObject) -> None:
        key = self.draw_key(data)
        assert self.tx.get(key) == self.model.get(key)
        assert self.tx.get(key, b"default") == self.model.get(key, b"default")

    @rule(data=st.data(), offset=offsets, limit=limits)
    def scan_range(self, data: st.DataObject, offset: int, limit: int | None) -> None:
        start, end = self.draw_bound(data), self.draw_bound(data)
        for reverse in (False, True):  # each way, whole and one page
            got = list(self.tx.range(start, end, reverse=reverse))
            assert got == model_range(self.model, start, end, reverse)
            got = list(self.tx.range(start, end, reverse=reverse, offset=offset, limit=limit))
            assert got == model_range(self.model, start, end, reverse, offset, limit)

    @rule(data=st.data(), offset=offsets, limit=limits)
    def scan_prefix(self, data: st.DataObject, offset: int, limit: int | None) -> None:
        prefix = data.draw(st.sampled_from([b"", self.draw_key(data), self.draw_key(data)[:1]]))
        for reverse in (False, True):
            got = list(self.tx.prefix(prefix, reverse=reverse, offset=offset, limit=limit))
            expected = [(k, v) for k, v in model_range(self.model, None, None, reverse) if k.startswith(prefix)]
            expected = expected[offset:] if limit is None else expected[offset : offset + limit]
            assert got == expected

    @rule()
    def committed_state_is_isolated(self) -> None:
        # A read transaction of another thread sees only the last commit (and a thread
        # has one LMDB transaction at a time, so read from a new one).
        seen: list[Any] = []
        reader = threading.Thread(target=lambda: seen.append(contents(self.db)))
        reader.start()
        reader.join()
        assert seen == [self.committed]

    @invariant()
    def full_scan_matches(self) -> None:
        assert list(self.tx.range()) == sorted(self.model.items())


OkvsMachine.TestCase.settings = settings(
    max_examples=examples(50), stateful_step_count=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
TestOkvsAgainstModel = OkvsMachine.TestCase


@settings(max_examples=examples(60), deadline=None)
@given(
    model=st.dictionaries(keys, small_values, max_size=25),
    start=bounds,
    end=bounds,
    reverse=st.booleans(),
    offset=offsets,
    limit=limits,
)
def test_range_matches_sorted_dict(
    tmp_path_factory: pytest.TempPathFactory,
    model: dict[bytes, bytes],
    start: bytes | None,
    end: bytes | None,
    reverse: bool,
    offset: int,
    limit: int | None,
) -> None:
    with okvs.open(tmp_path_factory.mktemp("range")) as db:
        with db.transaction(write=True) as tx:
            for key, value in model.items():
                tx.set(key, value)
        with db.transaction() as tx:
            got = list(tx.range(start, end, reverse=reverse, offset=offset, limit=limit))
        assert got == model_range(model, start, end, reverse, offset, limit)


def test_start_is_inclusive_and_end_exclusive_both_ways(db: Okvs) -> None:
    with db.transaction(write=True) as tx:
        for key in (b"a", b"b", b"c", b"d"):
            tx.set(key, key)
    with db.transaction() as tx:
        assert [k for k, _ in tx.range(b"b", b"d")] == [b"b", b"c"]
        assert [k for k, _ in tx.range(b"b", b"d", reverse=True)] == [b"c", b"b"]
        assert [k for k, _ in tx.range(b"b", None, reverse=True)] == [b"d", b"c", b"b"]
        assert [k for k, _ in tx.range(None, b"b", reverse=True)] == [b"a"]
        assert [k for k, _ in tx.range(b"b", b"d", reverse=True, offset=1, limit=5)] == [b"b"]


def test_empty_and_inverted_ranges(db: Okvs) -> None:
    with db.transaction(write=True) as tx:
        for key in (b"a", b"b", b"c"):
            tx.set(key, key)
    with db.transaction() as tx:
        assert list(tx.range(b"b", b"b")) == []
        assert list(tx.range(b"c", b"a")) == []
        assert list(tx.range(b"c", b"a", reverse=True)) == []
        assert list(tx.range(b"x", None)) == []
        assert list(tx.range(None, b"a", reverse=True)) == []
        assert list(tx.range(limit=0)) == []
        assert list(tx.range(offset=3)) == []
        assert list(tx.prefix(b"z")) == []


def test_negative_offset_or_limit_raise(db: Okvs) -> None:
    with db.transaction() as tx:
        with pytest.raises(ValueError):
            tx.range(offset=-1)
        with pytest.raises(ValueError):
            tx.prefix(b"a", limit=-1)


@pytest.mark.parametrize(
    ("prefix", "end"), [(b"a", b"b"), (b"a\xff", b"b"), (b"\x00", b"\x01"), (b"\xff\xff", None), (b"", None)]
)
def test_prefix_end(prefix: bytes, end: bytes | None) -> None:
    assert prefix_end(prefix) == end


def test_remove_range_removes_exactly_the_range(db: Okvs) -> None:
    with db.transaction(write=True) as tx:
        for i in range(10):
            tx.set(bytes([i + 1]), b"x")
        tx.remove_range(b"\x03", b"\x06")
        tx.remove_range(None, b"\x02")
        tx.remove_range(b"\x0a", None)
    assert sorted(contents(db)) == [bytes([i]) for i in (2, 6, 7, 8, 9)]


# --------------------------------------------------------------- transactions


def test_get_set_delete(db: Okvs) -> None:
    with db.transaction(write=True) as tx:
        assert tx.get(b"k") is None
        tx.set(b"k", b"v1")
        assert tx.get(b"k") == b"v1"
        tx.set(b"k", b"v2")  # replaces
        tx.set(bytearray(b"m"), memoryview(b"w"))  # bytes-like keys and values are fine
        tx.delete(b"absent")  # deleting what is not there is a no-op
    with db.transaction(write=True) as tx:
        assert tx.get(b"k") == b"v2" and tx.get(b"m") == b"w"
        tx.delete(b"k")
        assert tx.get(b"k", b"gone") == b"gone"
    assert contents(db) == {b"m": b"w"}


def test_commit_on_normal_exit(db: Okvs) -> None:
    with db.transaction(write=True) as tx:
        tx.set(b"a", b"1")
    assert tx.closed
    assert contents(db) == {b"a": b"1"}


def test_abort_on_exception_leaves_state_unchanged(db: Okvs) -> None:
    with db.transaction(write=True) as tx:
        tx.set(b"a", b"1")
    with pytest.raises(KeyError, match="boom"):
        with db.transaction(write=True) as tx:
            tx.set(b"a", b"changed")
            tx.set(b"b", b"new")
            tx.delete(b"a")
            raise KeyError("boom")
    assert tx.closed
    assert contents(db) == {b"a": b"1"}


def test_explicit_abort(db: Okvs) -> None:
    tx = db.transaction(write=True)
    tx.set(b"a", b"1")
    tx.abort()
    assert contents(db) == {}


@pytest.mark.parametrize(
    ("op", "call"),
    [
        ("set", lambda tx: tx.set(b"a", b"x")),
        ("delete", lambda tx: tx.delete(b"a")),
        ("remove_range", lambda tx: tx.remove_range(None, None)),
        ("set_many", lambda tx: tx.set_many([(b"z", b"z")])),
    ],
)
def test_write_in_read_transaction_raises_and_changes_nothing(db: Okvs, op: str, call) -> None:
    with db.transaction(write=True) as tx:
        tx.set(b"a", b"1")
    with db.transaction() as tx:
        with pytest.raises(ReadOnlyTransactionError, match=op):
            call(tx)
        assert tx.get(b"a") == b"1"  # the transaction is still usable
    assert contents(db) == {b"a": b"1"}


def test_readonly_store_refuses_write_transactions(tmp_store: Path) -> None:
    with okvs.open(tmp_store) as db, db.transaction(write=True) as tx:
        tx.set(b"a", b"1")
    with okvs.open(tmp_store, readonly=True) as ro:
        with pytest.raises(ReadOnlyTransactionError):
            ro.transaction(write=True)
        assert contents(ro) == {b"a": b"1"}
    with okvs.open(tmp_store) as db:
        assert contents(db) == {b"a": b"1"}


def test_readonly_open_of_missing_store_raises(tmp_store: Path) -> None:
    with pytest.raises(FileNotFoundError):
        okvs.open(tmp_store, readonly=True)


def test_closed_store_refuses_transactions(tmp_store: Path) -> None:
    db = okvs.open(tmp_store)
    db.close()
    with pytest.raises(TransactionError):
        db.transaction()


@pytest.mark.parametrize("write", [False, True])
def test_iterator_after_transaction_closed_raises(db: Okvs, write: bool) -> None:
    with db.transaction(write=True) as tx:
        for i in range(5):
            tx.set(bytes([65 + i]), b"x")
    with db.transaction(write=write) as tx:
        started = tx.range()
        assert next(started) == (b"A", b"x")
        untouched = tx.prefix(b"")
    with pytest.raises(TransactionClosedError):
        next(started)
    with pytest.raises(TransactionClosedError):
        next(untouched)
    with pytest.raises(TransactionClosedError):
        tx.get(b"A")
    with pytest.raises(TransactionClosedError):
        tx.commit()


@pytest.mark.parametrize(
    "bad_key",
    [b"", bytearray(), memoryview(b""), b"k" * (MAX_KEY_SIZE + 1), bytearray(b"k" * 600)],
    ids=["empty", "empty-bytearray", "empty-memoryview", "512-bytes", "600-byte-bytearray"],
)
def test_invalid_keys_raise(db: Okvs, bad_key: Any) -> None:
    with db.transaction(write=True) as tx:
        with pytest.raises(InvalidKeyError, match="key"):
            tx.set(bad_key, b"v")
        with pytest.raises(InvalidKeyError):
            tx.get(bad_key)
        with pytest.raises(InvalidKeyError):
            tx.delete(bad_key)
        tx.set(b"k" * MAX_KEY_SIZE, b"longest key")
    assert contents(db) == {b"k" * MAX_KEY_SIZE: b"longest key"}


def test_non_bytes_keys_and_values_raise_type_error(db: Okvs) -> None:
    with db.transaction(write=True) as tx:
        with pytest.raises(TypeError):
            tx.set("text", b"v")
        with pytest.raises(TypeError):
            tx.set(b"k", "text")
    with db.transaction() as tx, pytest.raises(ReadOnlyTransactionError, match="set"):
        tx.set(5, b"v")  # the read-only error wins, whatever the key
    assert contents(db) == {}


# ------------------------------------------------------------------ map growth


def blob(i: int, size: int) -> bytes:
    seed = hashlib.sha256(i.to_bytes(8, "big")).digest()
    return (seed * (size // 32 + 1))[:size]


def test_map_grows_within_one_large_transaction(tmp_store: Path) -> None:
    with okvs.open(tmp_store, map_size=SMALL_MAP) as db:
        with db.transaction(write=True) as tx:
            for i in range(600):  # about 6 MB in a map of 64 KiB
                tx.set(b"big%05d" % i, blob(i, 10_000))
            for i in range(5000):
                tx.set(b"small%05d" % i, b"%d" % i)
        assert db.map_size > SMALL_MAP
    with okvs.open(tmp_store, map_size=SMALL_MAP) as db:
        with db.transaction() as tx:
            assert all(tx.get(b"big%05d" % i) == blob(i, 10_000) for i in range(600))
            assert sum(1 for _ in tx.prefix(b"small")) == 5000


def test_map_grows_across_many_transactions(tmp_store: Path) -> None:
    with okvs.open(tmp_store, map_size=SMALL_MAP) as db:
        for i in range(300):
            with db.transaction(write=True) as tx:
                tx.set(b"k%05d" % i, blob(i, 12_000))
                tx.delete(b"k%05d" % (i - 100))  # churn, so free pages get reused too
    with okvs.open(tmp_store) as db, db.transaction() as tx:
        stored = dict(tx.range())
    assert stored == {b"k%05d" % i: blob(i, 12_000) for i in range(200, 300)}


def test_map_grows_inside_set_many_and_remove_range(tmp_store: Path) -> None:
    with okvs.open(tmp_store, map_size=SMALL_MAP) as db:
        with db.transaction(write=True) as tx:
            tx.set_many([(b"a%05d" % i, blob(i, 3000)) for i in range(1000)], ascending=True)
            tx.remove_range(b"a00500", None)
            tx.set_many([(b"b%05d" % i, blob(i, 100)) for i in reversed(range(2000))])
        assert contents(db) == {
            **{b"a%05d" % i: blob(i, 3000) for i in range(500)},
            **{b"b%05d" % i: blob(i, 100) for i in range(2000)},
        }


@pytest.mark.parametrize("reverse", [False, True])
def test_iterator_survives_growth_in_its_transaction(tmp_store: Path, reverse: bool) -> None:
    # Growing replays the transaction into a new LMDB transaction; an open scan must
    # carry on after the last key it yielded.
    with okvs.open(tmp_store, map_size=SMALL_MAP) as db:
        with db.transaction(write=True) as tx:
            for i in range(20):
                tx.set(b"a%02d" % i, b"x")
        with db.transaction(write=True) as tx:
            scan = tx.prefix(b"a", reverse=reverse)
            first = [next(scan) for _ in range(5)]
            size = db.map_size
            for i in range(400):
                tx.set(b"z%05d" % i, blob(i, 8000))
            assert db.map_size > size  # the scan really crossed a growth
            rest = list(scan)
        expected = sorted((b"a%02d" % i, b"x") for i in range(20))
        assert first + rest == (expected[::-1] if reverse else expected)


def test_rejected_write_is_not_replayed_after_growth(tmp_store: Path) -> None:
    # A write LMDB refused must not be journalled: replaying it into the grown map would
    # fail again and lose the whole transaction.
    with okvs.open(tmp_store, map_size=SMALL_MAP) as db:
        with db.transaction(write=True) as tx:
            with pytest.raises(InvalidKeyError):
                tx.set_many([(b"", b"empty key")])
            for i in range(200):
                tx.set(b"k%05d" % i, blob(i, 5000))
        assert len(contents(db)) == 200


def test_failed_growth_leaves_the_store_usable(tmp_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # LMDB cannot resize the map while this process has a transaction open; when growing
    # gives up, the failed write transaction must not be counted out twice, or no later
    # transaction could ever grow the map again.
    monkeypatch.setattr(okvs_module, "_GROW_WAIT_SECONDS", 0.2)
    with okvs.open(tmp_store, map_size=SMALL_MAP) as db, okvs.open(tmp_store) as other:
        reader = other.transaction()
        with pytest.raises(TransactionError, match="cannot grow"):
            with db.transaction(write=True) as tx:
                for i in range(100):
                    tx.set(b"k%05d" % i, blob(i, 10_000))
        reader.abort()
        assert contents(db) == {}
        with db.transaction(write=True) as tx:
            for i in range(100):
                tx.set(b"k%05d" % i, blob(i, 10_000))
        assert len(contents(db)) == 100


def test_transaction_too_large_to_replay_grows_the_map_for_a_rerun(
    tmp_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Past JOURNAL_LIMIT a transaction cannot be replayed; the error says the map was
    # grown and to run it again. The total size is unknown when the map fills, so a rerun
    # may fill it again, but every failure must grow the map (at least double it), so
    # reruns succeed after a few attempts and never loop forever.
    monkeypatch.setattr(okvs_module, "JOURNAL_LIMIT", 50_000)

    def load(db: Okvs) -> None:
        with db.transaction(write=True) as tx:
            for i in range(200):
                tx.set(b"k%05d" % i, blob(i, 10_000))

    with okvs.open(tmp_store, map_size=SMALL_MAP) as db:
        for _ in range(10):
            size = db.map_size
            try:
                load(db)
                break
            except TransactionTooLargeError as exc:
                assert "run it again" in str(exc)
                assert contents(db) == {}
                assert db.map_size >= 2 * size
        assert len(contents(db)) == 200


def test_second_write_transaction_in_one_thread_raises(db: Okvs) -> None:
    with db.transaction(write=True) as tx:
        tx.set(b"a", b"1")
        with pytest.raises(TransactionError, match="already"):
            db.transaction(write=True)
    assert contents(db) == {b"a": b"1"}


def test_writer_threads_take_turns(db: Okvs) -> None:
    # LMDB has one writer at a time: the others wait for it rather than fail.
    def add(start: int) -> None:
        for i in range(start, start + 50):
            with db.transaction(write=True) as tx:
                tx.set(b"k%05d" % i, blob(i, 500))

    threads = [threading.Thread(target=add, args=(n * 1000,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_TIMEOUT)
    assert len(contents(db)) == 200


def test_two_handles_on_one_path(tmp_store: Path) -> None:
    first = okvs.open(tmp_store)
    second = okvs.open(Path(tmp_store) / ".." / Path(tmp_store).name)  # another spelling
    with first.transaction(write=True) as tx:
        tx.set(b"a", b"1")
    assert contents(second) == {b"a": b"1"}
    with second.transaction(write=True) as tx:
        tx.set(b"b", b"2")
    first.close()
    assert contents(second) == {b"a": b"1", b"b": b"2"}
    with pytest.raises(TransactionError):
        first.transaction()
    second.close()
    with okvs.open(tmp_store) as third:
        assert contents(third) == {b"a": b"1", b"b": b"2"}


# ------------------------------------------------- concurrent readers and a writer

N_KEYS = 40
WRITER_SECONDS = 1.5
JOIN_TIMEOUT = 60.0


def _write_generation(tx: okvs.Transaction, generation: int) -> None:
    """One committed state: every k-key holds the generation, and there are exactly
    ``generation + 1`` log keys (0..generation). Value sizes vary so the small map keeps growing."""
    stamp = generation.to_bytes(8, "big")
    for i in range(N_KEYS):
        tx.set(b"k%03d" % i, stamp + blob(generation * N_KEYS + i, 100 + 300 * ((generation + i) % 7)))
    tx.set(b"log%08d" % generation, stamp + blob(generation, 1000))
    tx.set(b"generation", stamp)


def _check_state(tx: okvs.Transaction) -> int:
    """Check the invariants of one snapshot; return its generation."""
    generation = int.from_bytes(tx.get(b"generation"), "big")
    stamps = {value[:8] for _, value in tx.prefix(b"k")}
    assert stamps == {generation.to_bytes(8, "big")}, f"mixed generations {sorted(stamps)} at {generation}"
    assert sum(1 for _ in tx.prefix(b"k")) == N_KEYS
    assert sum(1 for _ in tx.prefix(b"log")) == generation + 1, f"log length differs from generation {generation}"
    return generation


def _writer_process(path: str, ready: Any, done: Any) -> None:
    db = okvs.open(path, map_size=SMALL_MAP)
    try:
        ready.wait(JOIN_TIMEOUT)
        deadline = time.monotonic() + WRITER_SECONDS
        generation = 0
        while time.monotonic() < deadline or generation < 20:
            generation += 1
            with db.transaction(write=True) as tx:
                _write_generation(tx, generation)
    finally:
        done.set()
        db.close()


def _reader_process(path: str, ready: Any, done: Any, results: Any) -> None:
    seen: list[int] = []
    try:
        db = okvs.open(path, readonly=True)
        ready.set()
        while True:
            finished = done.is_set()  # read before the snapshot: the last one is final
            with db.transaction() as tx:
                generation = _check_state(tx)
            if seen and generation < seen[-1]:
                raise AssertionError(f"went back in time from {seen[-1]} to {generation}")
            seen.append(generation)
            if finished:
                break
        db.close()
        results.put(("ok", len(seen), sorted(set(seen))))
    except BaseException as exc:  # report anything to the parent, which asserts
        ready.set()
        results.put(("error", repr(exc), sorted(set(seen))))


def test_reader_process_sees_consistent_states_while_writer_commits(tmp_store: Path) -> None:
    with okvs.open(tmp_store, map_size=SMALL_MAP) as db, db.transaction(write=True) as tx:
        _write_generation(tx, 0)
    ctx = multiprocessing.get_context("spawn")
    ready, done, results = ctx.Event(), ctx.Event(), ctx.Queue()
    readers = [ctx.Process(target=_reader_process, args=(str(tmp_store), ready, done, results)) for _ in range(2)]
    writer = ctx.Process(target=_writer_process, args=(str(tmp_store), ready, done))
    for process in (*readers, writer):
        process.start()
    reports = [results.get(timeout=JOIN_TIMEOUT) for _ in readers]
    for process in (writer, *readers):
        process.join(JOIN_TIMEOUT)
        assert process.exitcode == 0
    with okvs.open(tmp_store) as db, db.transaction() as tx:
        final = _check_state(tx)
    for status, detail, generations in reports:
        assert status == "ok", detail
        # Each reader saw the state before the writer started and the final one.
        assert generations[-1] == final and final >= 20
        assert len(generations) >= 2


def test_reader_threads_see_consistent_states_while_writer_thread_commits(tmp_store: Path) -> None:
    db = okvs.open(tmp_store, map_size=SMALL_MAP)
    with db.transaction(write=True) as tx:
        _write_generation(tx, 0)
    done = threading.Event()
    errors: list[BaseException] = []
    seen: list[list[int]] = [[], []]

    def write() -> None:
        try:
            for generation in range(1, 61):
                with db.transaction(write=True) as tx:
                    _write_generation(tx, generation)
        except BaseException as exc:
            errors.append(exc)
        finally:
            done.set()

    def read(log: list[int]) -> None:
        try:
            while True:
                finished = done.is_set()
                with db.transaction() as tx:
                    log.append(_check_state(tx))
                if finished:
                    return
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write)] + [threading.Thread(target=read, args=(log,)) for log in seen]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_TIMEOUT)
    db.close()
    assert not errors, errors
    for log in seen:
        assert log == sorted(log) and log[-1] == 60


def _scratch_dirs(path: Path) -> list[str]:
    return sorted(name for name in __import__("os").listdir(path) if name.startswith(okvs_module.SCRATCH_PREFIX))


def test_scratch_lives_in_its_own_file_and_ends_with_the_transaction(tmp_store: Path) -> None:
    """A write transaction's scratch table is read back as written, survives the map
    growing under the store's transaction, and leaves no page in the store's file and no
    file behind, whether the transaction commits or aborts."""
    db = okvs.open(tmp_store, map_size=1 << 20)  # small: the store's map grows mid-transaction
    try:
        size = (tmp_store / "data.mdb").stat().st_size
        for commit in (True, False):
            tx = db.transaction(write=True)
            tx.set_many([(b"s%06d" % i, b"x" * 200) for i in range(30000)], ascending=True, scratch=True)
            tx.set_many([b"t%06d" % i for i in range(2000)], value=b"y", scratch=True)
            assert _scratch_dirs(tmp_store) and tx.get(b"s000007", scratch=True) == b"x" * 200
            tx.set_many([(b"k%06d" % i, b"v" * 500) for i in range(3000)])  # grows the store's map
            tx.delete(b"s000007", scratch=True)
            assert tx.get(b"s000007", scratch=True) is None and tx.get(b"k000001") == b"v" * 500
            assert [k for k, _ in tx.batch(b"s", b"t", 3, scratch=True)] == [b"s000000", b"s000001", b"s000002"]
            tx.commit() if commit else tx.abort()
            assert _scratch_dirs(tmp_store) == []
        with db.transaction() as tx:
            assert tx.get(b"k000001") == b"v" * 500 and tx.get(b"s000000") is None
            assert tx.get(okvs_module.SCRATCH_TABLE) is None
        # the scratch's 6 MB (twice) never entered the store's file: it holds the 1.5 MB committed
        assert (tmp_store / "data.mdb").stat().st_size < size + 4_000_000
    finally:
        db.close()


def _crash_with_scratch(path: str) -> None:
    db = okvs.open(path)
    tx = db.transaction(write=True)
    tx.set_many([(b"s%04d" % i, b"x") for i in range(100)], ascending=True, scratch=True)
    __import__("os")._exit(3)  # a crash: no abort, no cleanup


def test_a_crashed_writers_scratch_is_removed_at_the_next_open(tmp_store: Path) -> None:
    okvs.open(tmp_store).close()
    child = multiprocessing.get_context("spawn").Process(target=_crash_with_scratch, args=(str(tmp_store),))
    child.start()
    child.join()
    assert child.exitcode == 3 and len(_scratch_dirs(tmp_store)) == 1
    db = okvs.open(tmp_store)
    try:
        assert _scratch_dirs(tmp_store) == []
        with db.transaction() as tx:
            assert tx.get(b"s0000") is None
    finally:
        db.close()
