"""The generic n-tuple store against a naive in-memory model, plus bad input and blobs.

The model is a dict keyed by the packed items of each tuple: the store's notion of
identity, under which ``1``, ``1.0`` and ``True`` (equal in Python) are different values.
"""

from __future__ import annotations

import math
import tempfile
from collections import Counter
from itertools import combinations
from typing import Any, Iterable, Sequence

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from nstore import NStore, Var, okvs, select
from nstore.blobs import digest_of
from nstore.errors import CorruptBlobError, PackError, PatternError, ReadOnlyTransactionError
from nstore.okvs import Okvs
from nstore.pack import pack_value
from nstore.terms import IRI, BNode, Literal
from tests.profiles import examples

Row = tuple[Any, ...]
Binding = dict[str, Any]

XSD_INTEGER = "http://www.w3.org/2001/XMLSchema#integer"
SHORT_VALUES: list[Any] = [
    "a",
    "b",
    "",
    "a\x00b",
    0,
    1,
    -1,
    2**70,
    True,  # == 1 in Python, a different value in the store
    1.0,
    0.0,
    -0.0,
    math.nan,
    -2.5,
    b"a",
    b"\x00",
    IRI("http://example.org/a"),
    IRI("http://example.org/b"),
    BNode("b0"),
    Literal("a"),
    Literal("1", datatype=XSD_INTEGER),
    Literal("chat", lang="fr"),
    None,
    "m" * 100,  # inline for triples, a blob for the wider stores
]
# Longer than any inline limit: stored once in the content-addressed blob store.
LONG_VALUES: list[Any] = [
    "x" * 300,
    b"y" * 250,
    IRI("http://example.org/" + "z" * 300),
    Literal("w" * 400, lang="en"),
]
VAR_NAMES = ["x", "y", "z"]
SMALL_MAP = 64 * 1024

values = st.one_of(st.sampled_from(SHORT_VALUES), st.sampled_from(SHORT_VALUES), st.sampled_from(LONG_VALUES))
# Rows drawn from two values only repeat them, so that patterns such as (?x, p, ?x) have
# several matches (and offset and limit on them matter), and rows share blobs.
dense_values = st.sampled_from(["a", LONG_VALUES[0]])


def identity(row: Sequence[Any]) -> tuple[bytes, ...]:
    return tuple(pack_value(v) for v in row)


def canonical(binding: Binding) -> tuple[tuple[str, bytes], ...]:
    return tuple(sorted((name, pack_value(value)) for name, value in binding.items()))


def multiset(bindings: Iterable[Binding]) -> Counter:
    return Counter(canonical(b) for b in bindings)


def match(pattern: Sequence[Any], row: Row) -> Binding | None:
    """The binding of pattern against one row, or None (values compared as packed)."""
    binding: Binding = {}
    for item, value in zip(pattern, row):
        if type(item) is Var:
            if item.name in binding:
                if pack_value(binding[item.name]) != pack_value(value):
                    return None
            else:
                binding[item.name] = value
        elif pack_value(item) != pack_value(value):
            return None
    return binding


def naive_from(rows: Iterable[Row], pattern: Sequence[Any]) -> list[Binding]:
    return [b for row in rows if (b := match(pattern, row)) is not None]


def substitute(pattern: Sequence[Any], binding: Binding) -> list[Any]:
    return [binding.get(item.name, item) if type(item) is Var else item for item in pattern]


def naive_join(rows: list[Row], first: Sequence[Any], second: Sequence[Any]) -> list[Binding]:
    return [
        {**left, **right} for left in naive_from(rows, first) for right in naive_from(rows, substitute(second, left))
    ]


# ------------------------------------------------------------------ state machine


class NStoreMachine(RuleBasedStateMachine):
    """Random adds, deletes, bulk loads and queries against a dict of tuples."""

    n = 3

    def __init__(self) -> None:
        super().__init__()
        self.dir = tempfile.TemporaryDirectory()
        self.db = okvs.open(self.dir.name, map_size=SMALL_MAP)
        self.store = NStore(self.db, ("t", self.n), [f"i{k}" for k in range(self.n)])
        self.model: dict[tuple[bytes, ...], Row] = {}

    def teardown(self) -> None:
        self.db.close()
        self.dir.cleanup()

    # -- drawing ------------------------------------------------------------------

    def draw_row(self, data: st.DataObject) -> Row:
        """A stored tuple half the time (when there is one), else a random one."""
        if self.model and data.draw(st.booleans()):
            return data.draw(st.sampled_from(sorted(self.model.values(), key=identity)))
        pool = data.draw(st.sampled_from([values, dense_values]))
        return tuple(data.draw(pool) for _ in range(self.n))

    def draw_pattern(self, data: st.DataObject) -> list[Any]:
        """Each position keeps a (usually stored) value or becomes a variable; names come
        from a small set, so repeated variables such as (?x, p, ?x) are common."""
        base = self.draw_row(data)
        return [data.draw(st.sampled_from([value, Var(data.draw(st.sampled_from(VAR_NAMES)))])) for value in base]

    # -- writes -------------------------------------------------------------------

    @rule(data=st.data())
    def add(self, data: st.DataObject) -> None:
        row = self.draw_row(data)
        with self.db.transaction(write=True) as tx:
            assert self.store.add(tx, *row) == (identity(row) not in self.model)
        self.model[identity(row)] = row

    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        row = self.draw_row(data)
        with self.db.transaction(write=True) as tx:
            assert self.store.delete(tx, *row) == (identity(row) in self.model)
        self.model.pop(identity(row), None)

    @rule(data=st.data(), size=st.integers(0, 8))
    def bulk_add(self, data: st.DataObject, size: int) -> None:
        rows = [self.draw_row(data) for _ in range(size)]
        rows += data.draw(st.lists(st.sampled_from(rows), max_size=3)) if rows else []  # duplicates
        new = {identity(row): row for row in rows if identity(row) not in self.model}
        as_given = data.draw(st.sampled_from([list, iter]))  # bulk_add has a path for each
        with self.db.transaction(write=True) as tx:
            assert self.store.bulk_add(tx, as_given(rows)) == len(new)
        self.model.update(new)

    @rule(data=st.data())
    def failed_transaction_changes_nothing(self, data: st.DataObject) -> None:
        rows = [self.draw_row(data) for _ in range(3)]
        with pytest.raises(RuntimeError), self.db.transaction(write=True) as tx:
            self.store.add(tx, *rows[0])
            self.store.delete(tx, *rows[1])
            self.store.bulk_add(tx, rows)
            raise RuntimeError("abort")

    @rule(data=st.data())
    def bad_input_changes_nothing(self, data: st.DataObject) -> None:
        row = self.draw_row(data)
        with self.db.transaction(write=True) as tx:
            with pytest.raises(PatternError):
                self.store.add(tx, *row, "extra")
            with pytest.raises(PackError):
                self.store.add(tx, *row[:-1], object())
            with pytest.raises(PackError):
                self.store.bulk_add(tx, [row, (*row[:-1], {1})])
        absent = ("never stored " * 30,) * self.n  # long, so the blob path runs first
        with self.db.transaction() as tx:
            with pytest.raises(ReadOnlyTransactionError):
                self.store.add(tx, *absent)
            with pytest.raises(ReadOnlyTransactionError):
                self.store.bulk_add(tx, [row, absent])
            if self.model:
                with pytest.raises(ReadOnlyTransactionError):
                    self.store.delete(tx, *next(iter(self.model.values())))

    # -- reads --------------------------------------------------------------------

    @rule(data=st.data())
    def ask(self, data: st.DataObject) -> None:
        row = self.draw_row(data)
        with self.db.transaction() as tx:
            assert self.store.ask(tx, *row) == (identity(row) in self.model)

    @rule(data=st.data())
    def count(self, data: st.DataObject) -> None:
        pattern = self.draw_pattern(data)
        with self.db.transaction() as tx:
            assert self.store.count(tx, *pattern) == len(naive_from(self.model.values(), pattern))

    @rule(data=st.data(), offset=st.integers(0, 3), limit=st.none() | st.integers(0, 3))
    def from_(self, data: st.DataObject, offset: int, limit: int | None) -> None:
        pattern = self.draw_pattern(data)
        with self.db.transaction() as tx:
            everything = list(self.store.from_(tx, *pattern))
            page = list(self.store.from_(tx, *pattern, offset=offset, limit=limit))
        assert multiset(everything) == multiset(naive_from(self.model.values(), pattern))
        end = None if limit is None else offset + limit
        assert [canonical(b) for b in page] == [canonical(b) for b in everything[offset:end]]
        variables = {item.name for item in pattern if type(item) is Var}
        assert all(set(b) == variables for b in everything)
        if sum(type(item) is Var for item in pattern) == 1:
            self.check_packed_order([next(iter(b.values())) for b in everything])

    def check_packed_order(self, found: list[Any]) -> None:
        """One free variable: values come in packed order. Values kept as blobs sort by
        digest instead (the key holds the digest), so only inline values are checked."""
        inline = [pack_value(v) for v in found if len(pack_value(v)) <= self.store.inline_limit]
        assert inline == sorted(inline)

    @rule(data=st.data())
    def join(self, data: st.DataObject) -> None:
        first, second = self.draw_pattern(data), self.draw_pattern(data)
        rows = list(self.model.values())
        with self.db.transaction() as tx:
            joined = list(select(self.store.from_(tx, *first), self.store.where(tx, *second)))
            seeded = list(select([{"seed": 1}], self.store.where(tx, *first)))
        assert multiset(joined) == multiset(naive_join(rows, first, second))
        assert multiset(seeded) == multiset({"seed": 1, **b} for b in naive_from(rows, first))

    # -- invariants ---------------------------------------------------------------

    @invariant()
    def contents_match(self) -> None:
        everything = [Var(f"v{k}") for k in range(self.n)]
        with self.db.transaction() as tx:
            found = [tuple(b[f"v{k}"] for k in range(self.n)) for b in self.store.from_(tx, *everything)]
            assert self.store.count(tx, *everything) == len(self.model)
            # Every index holds every tuple (bulk_add writes each index on its own).
            for index_prefix in self.store._index_prefixes:
                assert sum(1 for _ in tx.prefix(index_prefix)) == len(self.model)
            stored_blobs = set(self.store.blobs.digests(tx))
        assert Counter(map(identity, found)) == Counter(self.model.keys())
        # A blob lives exactly as long as some tuple refers to it.
        assert stored_blobs == {
            digest_of(item) for key in self.model for item in key if len(item) > self.store.inline_limit
        }


def machine_for(n: int) -> type[NStoreMachine]:
    machine = type(f"NStoreMachine{n}", (NStoreMachine,), {"n": n})
    machine.TestCase.settings = settings(
        max_examples=examples(40),
        stateful_step_count=30,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    return machine


TestNStore3 = machine_for(3).TestCase
TestNStore4 = machine_for(4).TestCase
TestNStore5 = machine_for(5).TestCase
TestNStore6 = machine_for(6).TestCase


# --------------------------------------------------------------- fixed examples


@pytest.fixture
def triples(db: Okvs) -> NStore:
    return NStore(db, ("triples",), ("subject", "predicate", "object"))


def all_rows(db: Okvs, store: NStore) -> list[Row]:
    with db.transaction() as tx:
        return [row for row, _ in store.scan(tx, *(Var(f"v{k}") for k in range(store.n)))]


def load(db: Okvs, store: NStore, rows: Iterable[Row]) -> None:
    with db.transaction(write=True) as tx:
        store.bulk_add(tx, rows)


def test_from_binds_variables_in_pattern_order(db: Okvs, triples: NStore) -> None:
    load(db, triples, [("alice", "knows", "bob"), ("bob", "knows", "carol"), ("bob", "name", "Bob")])
    with db.transaction() as tx:
        found = list(triples.from_(tx, Var("who"), "knows", Var("whom")))
        assert [list(b) for b in found] == [["who", "whom"], ["who", "whom"]]
        assert found == [{"who": "alice", "whom": "bob"}, {"who": "bob", "whom": "carol"}]
        assert list(triples.from_(tx, "alice", "knows", "bob")) == [{}]  # a point lookup
        assert list(triples.from_(tx, "alice", "knows", "carol")) == []


def test_repeated_variable_must_bind_equal_values(db: Okvs, triples: NStore) -> None:
    load(db, triples, [("a", "p", "a"), ("a", "p", "b"), ("b", "p", "b"), ("c", "q", "c")])
    with db.transaction() as tx:
        assert list(triples.from_(tx, Var("x"), "p", Var("x"))) == [{"x": "a"}, {"x": "b"}]
        assert list(triples.from_(tx, Var("x"), Var("p"), Var("x"), offset=1, limit=1)) == [{"x": "b", "p": "p"}]
        assert triples.count(tx, Var("x"), Var("p"), Var("x")) == 3


@pytest.mark.parametrize(
    ("short", "longer"), [("a", "a\x00b"), (b"a", b"a\x00"), (IRI("x"), IRI("x\x00")), ((1,), (1, None))], ids=repr
)
def test_bound_value_does_not_match_a_longer_escaped_one(db: Okvs, triples: NStore, short: Any, longer: Any) -> None:
    # pack(short) is a byte prefix of pack(longer) (the longer continues with 00 ff), so
    # a plain prefix scan for `short` would also reach the keys of `longer`.
    load(db, triples, [(short, "p", "o1"), (longer, "p", "o2"), ("s", short, "o3"), ("s", longer, "o4")])
    with db.transaction() as tx:
        assert list(triples.from_(tx, short, Var("p"), Var("o"))) == [{"p": "p", "o": "o1"}]
        assert list(triples.from_(tx, "s", short, Var("o"))) == [{"o": "o3"}]
        assert triples.count(tx, short, "p", Var("o")) == 1
        assert list(triples.from_(tx, Var("s"), Var("p"), "o4")) == [{"s": "s", "p": longer}]


def test_limit_zero_yields_nothing(db: Okvs, triples: NStore) -> None:
    load(db, triples, [("a", "p", "a"), ("b", "p", "c")])
    with db.transaction() as tx:
        assert list(triples.from_(tx, Var("s"), "p", Var("o"), limit=0)) == []
        assert list(triples.from_(tx, Var("x"), "p", Var("x"), limit=0)) == []  # filtered scan
        assert list(triples.from_(tx, Var("x"), "p", Var("x"), limit=1)) == [{"x": "a"}]


def test_select_chains_joins(db: Okvs, triples: NStore) -> None:
    load(db, triples, [("alice", "knows", "bob"), ("bob", "knows", "carol"), ("carol", "name", "Carol")])
    with db.transaction() as tx:
        friends_of_friends = select(
            triples.from_(tx, Var("a"), "knows", Var("b")),
            triples.where(tx, Var("b"), "knows", Var("c")),
            triples.where(tx, Var("c"), "name", Var("name")),
        )
        assert list(friends_of_friends) == [{"a": "alice", "b": "bob", "c": "carol", "name": "Carol"}]


def test_values_keep_their_type(db: Okvs, triples: NStore) -> None:
    rows = [("s", "p", 1), ("s", "p", True), ("s", "p", 1.0), ("s", "p", "1"), ("s", "p", b"1"), ("s", "p", IRI("1"))]
    load(db, triples, rows)
    with db.transaction() as tx:
        found = [b["o"] for b in triples.from_(tx, "s", "p", Var("o"))]
    assert sorted(map(repr, found)) == sorted(repr(row[2]) for row in rows)
    assert len(found) == 6


def test_long_values_round_trip_and_share_one_blob(db: Okvs, triples: NStore) -> None:
    long_text = "long " * 200
    with db.transaction(write=True) as tx:
        triples.add(tx, "s1", "p", long_text)
        triples.add(tx, "s2", "p", long_text)
        triples.add(tx, long_text, long_text, long_text)
    with db.transaction() as tx:
        assert list(triples.from_(tx, Var("s"), "p", long_text)) == [{"s": "s1"}, {"s": "s2"}]
        assert len(list(triples.blobs.digests(tx))) == 1
    with db.transaction(write=True) as tx:
        triples.delete(tx, "s1", "p", long_text)
        triples.delete(tx, long_text, long_text, long_text)
    with db.transaction() as tx:
        assert len(list(triples.blobs.digests(tx))) == 1  # s2 still refers to it
    with db.transaction(write=True) as tx:
        triples.delete(tx, "s2", "p", long_text)
    with db.transaction() as tx:
        assert list(triples.blobs.digests(tx)) == []


def test_corrupted_blob_raises_on_read(db: Okvs, triples: NStore) -> None:
    long_text = "corruptible " * 50
    with db.transaction(write=True) as tx:
        triples.add(tx, "s", "p", long_text)
    with db.transaction() as tx:
        assert list(triples.from_(tx, "s", "p", Var("o"))) == [{"o": long_text}]  # read once
        (digest,) = triples.blobs.digests(tx)
        blob_keys = [key for key, _ in tx.range() if key.endswith(digest) and tx.get(key) == pack_value(long_text)]
    with db.transaction(write=True) as tx:
        (blob_key,) = blob_keys
        tx.set(blob_key, pack_value("tampered " * 50))
    with db.transaction() as tx:
        # Every read checks the hash, even of a value read before.
        with pytest.raises(CorruptBlobError, match=digest.hex()):
            list(triples.from_(tx, "s", "p", Var("o")))
        assert list(triples.blobs.verify(tx)) == [digest]


# ------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call",
    [
        lambda s, tx: s.add(tx, "a", "b"),
        lambda s, tx: s.add(tx, "a", "b", "c", "d"),
        lambda s, tx: s.delete(tx, "a", "b"),
        lambda s, tx: s.ask(tx, "a", "b"),
        lambda s, tx: s.count(tx, "a", "b"),
        lambda s, tx: list(s.from_(tx, "a", "b")),
        lambda s, tx: s.where(tx, "a", Var("x")),
        lambda s, tx: s.bulk_add(tx, [("a", "b", "c"), ("a", "b")]),
    ],
    ids=["add-short", "add-long", "delete", "ask", "count", "from_", "where", "bulk_add"],
)
def test_wrong_arity_raises_pattern_error_naming_it(db: Okvs, triples: NStore, call) -> None:
    load(db, triples, [("s", "p", "o")])
    with db.transaction(write=True) as tx:
        with pytest.raises(PatternError) as caught:
            call(triples, tx)
    message = str(caught.value)
    assert "3" in message and "subject, predicate, object" in message and "'a'" in message
    assert all_rows(db, triples) == [("s", "p", "o")]


# object()'s repr holds an address: ids must be the same in every xdist worker.
@pytest.mark.parametrize("bad", [object(), {1}, 1j, "\ud800", IRI("\udc00")],
                         ids=lambda v: "object()" if type(v) is object else repr(v))
def test_unpackable_value_raises_pack_error_and_changes_nothing(db: Okvs, triples: NStore, bad: Any) -> None:
    load(db, triples, [("s", "p", "o")])
    with db.transaction(write=True) as tx:
        with pytest.raises(PackError):
            triples.add(tx, "s", "p", bad)
        with pytest.raises(PackError):
            triples.bulk_add(tx, [("new", "p", "o"), ("new", "p", bad)])
        with pytest.raises(PackError):
            list(triples.from_(tx, bad, Var("p"), Var("o")))
    assert all_rows(db, triples) == [("s", "p", "o")]


@pytest.mark.parametrize("long", [False, True])
def test_write_in_read_transaction_raises_and_changes_nothing(db: Okvs, triples: NStore, long: bool) -> None:
    value = "v" * 500 if long else "v"
    load(db, triples, [("s", "p", "o")])
    with db.transaction() as tx:
        with pytest.raises(ReadOnlyTransactionError):
            triples.add(tx, "s", "p", value)
        with pytest.raises(ReadOnlyTransactionError):
            triples.bulk_add(tx, [("s", "p", value)])
        with pytest.raises(ReadOnlyTransactionError):
            triples.delete(tx, "s", "p", "o")
    assert all_rows(db, triples) == [("s", "p", "o")]
    with db.transaction() as tx:
        assert list(triples.blobs.digests(tx)) == []


def test_variable_names_are_checked() -> None:
    with pytest.raises(PatternError):
        Var("")
    with pytest.raises(PatternError):
        Var(3)  # type: ignore[arg-type]


def test_item_names_must_differ(db: Okvs) -> None:
    with pytest.raises(PatternError, match="differ"):
        NStore(db, ("x",), ("a", "a"))


# -------------------------------------------------------------- custom indices


def test_custom_indices_must_start_with_the_identity(db: Okvs) -> None:
    # add, ask and bulk_add find a tuple in index 0 by its items in order.
    with pytest.raises(PatternError, match="identity"):
        NStore(db, ("x",), ("a", "b"), indices=[(1, 0), (0, 1)])
    with pytest.raises(PatternError, match="permutation"):
        NStore(db, ("x",), ("a", "b"), indices=[(0, 1), (0, 0)])


def test_incomplete_index_cover_still_answers_every_pattern(db: Okvs) -> None:
    # Two indices over three items leave some bound sets without a matching prefix
    # (e.g. {0, 2}); such positions are then checked on each scanned key.
    store = NStore(db, ("partial",), ("a", "b", "c"), indices=[(0, 1, 2), (2, 1, 0)])
    rows = [(a, b, c) for a in "xy" for b in "pq" for c in "uv"]
    load(db, store, rows)
    with db.transaction() as tx:
        for size in range(4):
            for bound in combinations(range(3), size):
                for row in rows:
                    pattern = [row[k] if k in bound else Var(f"v{k}") for k in range(3)]
                    expected = naive_from(rows, pattern)
                    assert multiset(store.from_(tx, *pattern)) == multiset(expected), pattern
                    assert store.count(tx, *pattern) == len(expected)
                    assert sorted(row for row, _ in store.scan(tx, *pattern)) == sorted(
                        tuple(b.get(f"v{k}", pattern[k]) for k in range(3)) for b in expected
                    )


def test_stores_with_different_prefixes_are_separate(db: Okvs) -> None:
    first = NStore(db, ("one",), ("a", "b"))
    second = NStore(db, ("two",), ("a", "b"))
    load(db, first, [("x", "y")])
    load(db, second, [("y", "x"), ("z", "z")])
    assert all_rows(db, first) == [("x", "y")]
    assert sorted(all_rows(db, second)) == [("y", "x"), ("z", "z")]


def test_payload_is_kept_beside_the_tuple(db: Okvs, triples: NStore) -> None:
    with db.transaction(write=True) as tx:
        triples.add(tx, "s", "p", "o", payload=b"meta")
        triples.bulk_add(tx, [("s", "p", "o2")], payload=b"bulk")
    with db.transaction() as tx:
        assert sorted(triples.scan(tx, "s", "p", Var("o"))) == [(("s", "p", "o"), b"meta"), (("s", "p", "o2"), b"bulk")]
        assert list(triples.scan(tx, Var("s"), Var("p"), "o")) == [(("s", "p", "o"), b"meta")]


def test_store_prefixes_do_not_collide(tmp_path):
    """("q",) is not a byte prefix of ("q", 0): prefixes pack as one nested tuple."""
    db = okvs.open(tmp_path / "db")
    outer = NStore(db, ("q",), ("s", "p", "o"))
    inner = NStore(db, ("q", 0), ("s", "p", "o"))
    with db.transaction(write=True) as tx:
        inner.add(tx, "x", "y", "z" * 600)
        outer.add(tx, "a", "b", "c")
    with db.transaction() as tx:
        assert outer.count(tx, Var("s"), Var("p"), Var("o")) == 1
        assert inner.count(tx, Var("s"), Var("p"), Var("o")) == 1
        assert len(list(outer.blobs.digests(tx))) == 0
        assert len(list(inner.blobs.digests(tx))) == 1
    db.close()


def test_blobref_values_and_overlong_prefixes_are_refused(tmp_path):
    from nstore.pack import BlobRef

    db = okvs.open(tmp_path / "db")
    store = NStore(db, ("q",), ("s", "p", "o"))
    fake = BlobRef(bytes(range(32)))
    with pytest.raises(PackError, match="internal blob reference"):
        with db.transaction(write=True) as tx:
            store.add(tx, "s", "p", fake)
    with pytest.raises(PackError, match="internal blob reference"):
        with db.transaction(write=True) as tx:
            store.bulk_add(tx, [("s", "p", fake)])
    with db.transaction() as tx:
        assert store.count(tx, Var("s"), Var("p"), Var("o")) == 0
    with pytest.raises(PatternError, match="bytes per item"):
        NStore(db, ("x" * 300,), ("a", "b", "c", "d", "e", "f", "g", "h"))
    db.close()


def test_raw_byte_prefix_layout(tmp_path):
    """A store under a raw one-byte prefix: index i's keys are prefix + byte(i) + items,
    blobs under prefix + fe (docs/format.md, format 2)."""
    from nstore import IRI, NStore, okvs
    from nstore.pack import pack

    db = okvs.open(tmp_path / "db")
    store = NStore(db, b"\x90", ("s", "p", "o"))
    with db.transaction(write=True) as tx:
        store.add(tx, IRI("a"), IRI("p"), 7)
        store.add(tx, IRI("a"), IRI("p"), "x" * 600)
        keys = [key for key, _ in tx.range(None, None)]
        assert store.ask(tx, IRI("a"), IRI("p"), "x" * 600)
    item = pack(IRI("a"), IRI("p"), 7)
    assert b"\x90\x00" + item in keys
    assert b"\x90\x01" + pack(IRI("p"), 7, IRI("a")) in keys
    assert sum(key.startswith(b"\x90\xfe") for key in keys) == 2  # the long value and its count
    assert all(key[:1] == b"\x90" for key in keys)
    db.close()
