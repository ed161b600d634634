"""Keyspaces kept as prefix-compressed blocks (nstore.blocks, nstore._blocks): every read
and write against a sorted-dict model, blocks small enough that every batch splits and
merges them, and damaged blocks refused by name, never read past."""

from __future__ import annotations

import random
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from nstore import okvs
from nstore._blocks import EXTERNAL, BlockError, block_keys, count, decode, find, lookup_sorted, problem, rewrite, slice_of
from nstore.blocks import BLOCK_LIMIT, EXTERNAL_VALUE, Blocks
from nstore.errors import CorruptStoreError
from tests.profiles import examples

START, END, OUTSIDE = b"\x91", b"\x91\xfd", b"\x91\xfd"
LIMIT = 120  # a few entries a block: every batch splits, merges and refences blocks

key_bytes = st.sampled_from([0x00, 0x01, 0x61, 0x62, 0xFC, 0xFF])
keys = st.lists(key_bytes, min_size=0, max_size=6).map(lambda tail: START + bytes(tail)).filter(lambda k: k < END)
small_values = st.binary(max_size=12)
values = st.one_of(small_values, small_values, small_values, st.integers(EXTERNAL_VALUE + 1, 2000).map(lambda n: b"x" * n))
bounds = st.none() | keys


class BlocksMachine(RuleBasedStateMachine):
    """One write transaction kept open (writes and reads mixed, as a commit does), checked
    against a dict after every step, and committed and reread now and then."""

    def __init__(self) -> None:
        super().__init__()
        self.db = okvs.open(tempfile.mkdtemp())
        self.space = Blocks(START, END, external=OUTSIDE, limit=LIMIT)
        self.model: dict[bytes, bytes] = {}
        self.tx = self.db.transaction(write=True)

    def teardown(self) -> None:
        if not self.tx.closed:
            self.tx.abort()
        self.db.close()

    @rule(changes=st.dictionaries(keys, st.none() | values, max_size=30))
    def apply(self, changes: dict[bytes, bytes | None]) -> None:
        ordered = sorted(changes)
        added, removed = self.space.apply(self.tx, ordered, [changes[k] for k in ordered])
        assert added == sum(1 for k in ordered if changes[k] is not None and k not in self.model)
        assert removed == sum(1 for k in ordered if changes[k] is None and k in self.model)
        for key in ordered:
            if changes[key] is None:
                self.model.pop(key, None)
            else:
                self.model[key] = changes[key]

    @rule(key=keys, value=values)
    def set(self, key: bytes, value: bytes) -> None:
        self.space.set(self.tx, key, value)
        self.model[key] = value

    @rule(key=keys)
    def delete(self, key: bytes) -> None:
        self.space.delete(self.tx, key)
        self.model.pop(key, None)

    @rule(pairs=st.lists(st.tuples(keys, small_values), max_size=20))
    def set_many_unsorted(self, pairs: list[tuple[bytes, bytes]]) -> None:
        added = self.space.set_many(self.tx, pairs)
        assert added == len({k for k, _ in pairs} - set(self.model))
        self.model.update(pairs)

    @rule(start=bounds, end=bounds)
    def remove_range(self, start: bytes | None, end: bytes | None) -> None:
        self.space.remove_range(self.tx, start, end)
        for key in [k for k in self.model if (start is None or k >= start) and (end is None or k < end)]:
            del self.model[key]

    @rule(wanted=st.lists(keys, max_size=12))
    def get(self, wanted: list[bytes]) -> None:
        assert [self.space.get(self.tx, k) for k in wanted] == [self.model.get(k) for k in wanted]
        assert self.space.get_many(self.tx, wanted) == [self.model.get(k) for k in wanted]

    @rule(wanted=st.lists(keys, max_size=40))
    def get_sorted(self, wanted: list[bytes]) -> None:
        """Keys in order are read block after block (lookup_sorted: steps to near blocks,
        seeks far ones); out of order, it declines and get_many sorts them."""
        wanted.sort()
        expected = [self.model.get(k) for k in wanted]
        found = lookup_sorted(self.tx.seek_cursor(), START, END, wanted)
        assert [self.space.get(self.tx, k) if v is EXTERNAL else v for k, v in zip(wanted, found)] == expected
        assert self.space.get_many(self.tx, wanted) == expected
        if len(set(wanted)) > 1:
            assert lookup_sorted(self.tx.seek_cursor(), START, END, wanted[::-1]) is None

    @rule(prefixes=st.lists(keys, max_size=8))
    def under_many(self, prefixes: list[bytes]) -> None:
        found = self.space.under_many(self.tx, prefixes)
        assert found == {prefix: [(k, self.model[k]) for k in sorted(self.model) if k.startswith(prefix)]
                         for prefix in prefixes}

    @rule(start=bounds, end=bounds, offset=st.integers(0, 3), limit=st.none() | st.integers(0, 5))
    def scan(self, start: bytes | None, end: bytes | None, offset: int, limit: int | None) -> None:
        expected = [(k, self.model[k]) for k in sorted(self.model)
                    if (start is None or k >= start) and (end is None or k < end)]
        expected = expected[offset:][:limit] if limit is not None else expected[offset:]
        assert list(self.space.range(self.tx, start, end, offset=offset, limit=limit)) == expected

    @rule(low=keys, end=keys)
    def keys_in_block(self, low: bytes, end: bytes) -> None:
        """A lookup's keys from one block (block_keys, what BlockLookup reads), when it
        answers, are the range's; it answers whenever one block holds the range (the
        reason it exists)."""
        high = min(max(low, end) + b"\xff", END)
        expected = [k for k in sorted(self.model) if low <= k < high]
        found = block_keys(self.tx.seek_cursor(), START, low, high) if low < high else []
        if found is not None:
            assert found == expected
        holders = {fence for fence, block in self.space.blocks(self.tx) if fence <= low}
        if expected and holders and all(k < next_fence for k in expected
                                        for next_fence in self._fences_after(max(holders))):
            assert found == expected

    @rule(low=keys, high=keys | st.just(END), cap=st.none() | st.integers(0, 8))
    def count(self, low: bytes, high: bytes, cap: int | None) -> None:
        expected = sum(1 for k in self.model if low <= k < high)
        assert self.space.count(self.tx, low, high, cap) == (expected if cap is None else min(expected, cap))

    def _fences_after(self, fence: bytes) -> list[bytes]:
        return [f for f, _ in self.space.blocks(self.tx) if f > fence][:1]

    @rule(step=st.integers(1, 4))
    def delete_while_scanning(self, step: int) -> None:
        """Deleting keys as a scan yields them (blocks shrink and merge under the scan)
        still yields each key once, in order."""
        seen = []
        for number, (key, _) in enumerate(self.space.range(self.tx)):
            seen.append(key)
            if number % step == 0:
                self.space.delete(self.tx, key)
                del self.model[key]
        assert seen == sorted(seen) and len(seen) == len(set(seen))

    @rule()
    def commit_and_reopen(self) -> None:
        self.tx.commit()
        with self.db.transaction() as reader:
            assert list(self.space.range(reader)) == sorted(self.model.items())
        self.tx = self.db.transaction(write=True)

    @invariant()
    def blocks_are_sound(self) -> None:
        assert list(self.space.problems(self.tx)) == []
        assert self.space.entry_count(self.tx) == len(self.model)
        for fence, block in self.space.blocks(self.tx):
            assert len(fence) + len(block) <= LIMIT or count(fence, block) == 1


BlocksMachine.TestCase.settings = settings(max_examples=examples(60), stateful_step_count=30, deadline=None,
                                           suppress_health_check=[HealthCheck.too_slow])
TestBlocksMachine = BlocksMachine.TestCase


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=8), min_size=1, max_size=60, unique=True), st.data())
def test_flipped_bytes_raise_or_decode_in_order(entries: list[bytes], data: st.DataObject) -> None:
    """A block with any byte changed either decodes (keys still ascending, starting at the
    fence) or raises BlockError: the reader never runs past the block or out of order."""
    entries.sort()
    blocks, _, _, _ = rewrite([], entries, [b"v"] * len(entries), 4000)
    fence, block = blocks[0]
    position = data.draw(st.integers(0, len(block) - 1))
    damaged = bytearray(block)
    damaged[position] = data.draw(st.integers(0, 255))
    try:
        keys, _ = decode(fence, bytes(damaged))
    except BlockError:
        return
    assert keys[0] == fence and keys == sorted(set(keys))


def test_truncated_and_empty_blocks_are_refused() -> None:
    blocks, _, _, _ = rewrite([], [b"a", b"ab", b"b"], [b"1", b"2", b"3"], 4000)
    fence, block = blocks[0]
    for cut in range(len(block)):
        damaged = block[:cut]
        with pytest.raises(BlockError):
            decode(fence, damaged)
    assert problem(fence, b"", 4000) == "an empty block"
    assert "not the fence" in problem(b"zz", block, 4000)


def test_codec_functions_agree_with_decode() -> None:
    rnd = random.Random(7)
    entries = sorted({bytes(rnd.randrange(4) for _ in range(rnd.randrange(1, 7))) for _ in range(300)})
    values = [EXTERNAL if i % 17 == 0 else bytes([i % 256]) * (i % 5) for i in range(len(entries))]
    blocks, added, removed, _ = rewrite([], entries, values, 200)
    assert (added, removed) == (len(entries), 0) and len(blocks) > 5
    assert all(len(fence) + len(block) <= 200 for fence, block in blocks)
    merged: list[bytes] = []
    for fence, block in blocks:
        keys, vals = decode(fence, block)
        merged += keys
        for key, value in zip(keys, vals):
            assert find(fence, block, key) == value
        assert find(fence, block, keys[-1] + b"\x00") is None
        assert slice_of(fence, block, keys[1], None, True)[0] == keys[2:]
    assert merged == entries


def test_keys_out_of_order_are_refused() -> None:
    with pytest.raises(ValueError, match="strictly ascending"):
        rewrite([], [b"b", b"a"], [b"", b""], 200)
    with pytest.raises(ValueError, match="strictly ascending"):
        rewrite([], [b"a", b"a"], [b"", b""], 200)


def test_a_damaged_block_is_a_corrupt_store_error() -> None:
    db = okvs.open(tempfile.mkdtemp())
    space = Blocks(START, END, external=OUTSIDE)
    with db.transaction(write=True) as tx:
        space.apply(tx, [START + b"a", START + b"b"], [b"1", b"2"])
        fence, block = next(space.blocks(tx))
        tx.set(fence, block[:-2])
    with db.transaction() as tx:
        with pytest.raises(CorruptStoreError, match="block at key 9161"):
            space.get(tx, START + b"b")
        assert any("runs past the end" in p for p in space.problems(tx))
    db.close()


def test_blocks_are_written_to_their_target_and_read_whatever_their_size() -> None:
    """A writer fills blocks to ``target`` (a block of one entry may pass it, never the
    limit); blocks written full to the limit, as stores before the target were, read and
    verify the same, and later writes into them cut them to the target."""
    chooser = random.Random(7)
    pairs = {START + chooser.randbytes(chooser.randint(1, 24)).replace(b"\xfd", b"a").replace(b"\xfe", b"a").replace(b"\xff", b"a"):
             chooser.randbytes(chooser.choice([0, 8, 300, 600])) for _ in range(3000)}
    keys = sorted(pairs)
    db = okvs.open(tempfile.mkdtemp())
    old, new = Blocks(START, END, external=OUTSIDE, target=2000), Blocks(START, END, external=OUTSIDE, target=300)
    with db.transaction(write=True) as tx:
        old.apply(tx, keys, [pairs[k] for k in keys])  # written full, as before the target
        assert max(len(fence) + len(block) for fence, block in old.blocks(tx)) > 1500
        assert list(new.range(tx, None, None)) == [(k, pairs[k]) for k in keys] and list(new.problems(tx)) == []
        changed = keys[::3]
        new.apply(tx, changed, [b"changed"] * len(changed))
        pairs.update(dict.fromkeys(changed, b"changed"))
        assert list(new.range(tx, None, None)) == [(k, pairs[k]) for k in keys] and list(new.problems(tx)) == []
        sizes = [(len(fence) + len(block), count(fence, block)) for fence, block in new.blocks(tx)]
        assert all(size <= 300 or entries == 1 for size, entries in sizes)
        assert all(size <= BLOCK_LIMIT for size, _ in sizes)
    db.close()


def test_the_compiled_codec_examples_hold() -> None:
    import doctest
    import nstore._blocks
    assert doctest.testmod(nstore._blocks).failed == 0


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.dictionaries(keys, st.none() | small_values, max_size=20), min_size=1, max_size=5),
       st.integers(1, 40), st.integers(1, 7))
def test_runs_merge_in_key_order_the_latest_run_winning(runs: list[dict], piece: int, take: int) -> None:
    """A merge of runs, read back a few bytes at a time (records cut across pieces) and
    taken out a few changes at a time, gives every key once, in order, with the change of
    the last run that holds it."""
    import io
    from nstore._blocks import RunMerge, changes
    files = [io.BytesIO(changes(sorted(run), [run[k] for k in sorted(run)]).dump()) for run in runs]
    merge = RunMerge(files, piece)
    merged = []
    while len(made := merge.take(take)):
        merged += [(made.key(i), made.value(i)) for i in range(len(made))]
    expected: dict[bytes, bytes | None] = {}
    for run in runs:
        expected.update(run)
    assert merged == sorted(expected.items())


def test_a_run_cut_inside_a_change_is_refused() -> None:
    import io
    from nstore._blocks import RunMerge, changes
    dumped = changes([START + b"a", START + b"b"], [b"1", b"2"]).dump()
    with pytest.raises(BlockError, match="ends inside a change"):
        merge = RunMerge([io.BytesIO(dumped[:-1])], 4)
        merge.take(10)


def test_deferred_index_writes_land_when_the_deferral_ends(tmp_path) -> None:
    """Tuples added and deleted in chunks while an NStore defers its index writes are all
    there, in every index, once the deferral ends; an exception inside writes nothing."""
    from nstore import NStore, Var
    from nstore.pack import pack_value
    db = okvs.open(str(tmp_path))
    store = NStore(db, b"\x92", ("a", "b", "c"), blocks=True)
    rows = [(pack_value(i % 7), pack_value(i), pack_value(i * 3 % 11)) for i in range(3000)]
    with db.transaction(write=True) as tx:
        store.bulk_add_items(tx, [list(column) for column in zip(*rows[:1000])])
        with store.deferred(tx):
            for start in range(1000, 3000, 700):
                store.bulk_add_items(tx, [list(column) for column in zip(*rows[start:start + 700])])
            store.bulk_delete_items(tx, [list(column) for column in zip(*rows[:500])])
        kept = {tuple(pack_value(v) for v in found) for found in
                ((row["a"], row["b"], row["c"]) for row in store.from_(tx, Var("a"), Var("b"), Var("c")))}
        assert kept == set(rows[500:])
        for bound in range(7):  # another index: by "a" bound
            assert store.count(tx, bound, Var("b"), Var("c")) == sum(1 for row in rows[500:] if row[0] == pack_value(bound))
        with pytest.raises(ZeroDivisionError):
            with store.deferred(tx):
                store.bulk_add_items(tx, [[pack_value(-1)], [pack_value(-1)], [pack_value(-1)]])
                1 / 0
        assert store.count(tx, -1, Var("b"), Var("c")) == 0
    db.close()


@pytest.mark.parametrize("every", [1, 3, 37])
def test_keys_in_order_are_read_block_after_block(tmp_path, every: int) -> None:
    """lookup_sorted over many blocks: every key (a step to each next block), every third,
    and keys far apart (a seek each), present and absent, as get() reads them."""
    db = okvs.open(tmp_path)
    space = Blocks(START, END, external=OUTSIDE, limit=LIMIT)
    try:
        with db.transaction(write=True) as tx:
            stored = [START + i.to_bytes(2, "big") for i in range(0, 400, 2)]
            space.apply(tx, stored, [b"v%d" % i for i in range(len(stored))])
            tx.set(OUTSIDE + b"\x00", b"past the keyspace")
            assert sum(1 for _ in space.blocks(tx)) > 10
            wanted = [START + i.to_bytes(2, "big") for i in range(0, 400, every)] + [OUTSIDE + b"\x00"]
            found = lookup_sorted(tx.seek_cursor(), START, END, wanted)
            assert found == [space.get(tx, key) for key in wanted[:-1]] + [None]
            assert sum(value is not None for value in found) == len(set(wanted) & set(stored))
    finally:
        db.close()
