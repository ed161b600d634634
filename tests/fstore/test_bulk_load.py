"""The bulk load path: the compiled key sort (nstore._blocks.sorted_changes), fstore.add_many and
rm_many against add and rm, and the page fill of a first load."""

from __future__ import annotations

import datetime as dt
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fstore
from fstore import IRI, Literal, Var
from nstore._blocks import sorted_bytes, sorted_changes
from nstore.errors import PackError
from tests.profiles import examples

WHEN = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)

items = st.binary(min_size=0, max_size=12)


@st.composite
def tables(draw):
    width = draw(st.integers(1, 5))
    rows = draw(st.integers(0, 60))
    columns = [draw(st.lists(items, min_size=rows, max_size=rows)) for _ in range(width)]
    order = tuple(draw(st.permutations(range(width))))
    return columns, order


@given(tables(), st.binary(max_size=3))
@settings(max_examples=examples(300), deadline=None)
def test_sorted_changes_is_pythons_join_then_sort(table, prefix):
    """Any bytes (items need not delimit themselves here), repeats once, a key that begins
    another first: as Python's sort of the joined keys."""
    columns, order = table
    rows = len(columns[0])
    expected = sorted({prefix + b"".join(columns[number][row] for number in order) for row in range(rows)})
    assert sorted_changes(prefix, columns, order, b"").keys() == expected


def test_sorted_changes_at_scale_is_pythons_sort():
    """Enough keys for the radix sort's every path (runs that tie on 8 bytes, keys ending
    inside them), with the shapes of quads: shared prefixes, few and many distinct items."""
    rnd = random.Random(5)
    rows = 20_000
    columns = [[bytes([0x50, 0, 0, 0, 0, i % 7]) for i in range(rows)],
               [bytes([0x50, 0]) + rnd.randbytes(rnd.choice((1, 4))) for _ in range(rows)],
               [rnd.choice([b"\x14", b"\x15\x01", b"\x02a\x00", b"\x02a\x00\xff\x00"]) for _ in range(rows)]]
    for order in ((0, 1, 2), (2, 1, 0), (1, 2, 0)):
        expected = sorted({b"P" + b"".join(columns[c][row] for c in order) for row in range(rows)})
        assert sorted_changes(b"P", columns, order, b"").keys() == expected


def test_sorted_changes_refuses_what_is_not_a_key():
    with pytest.raises(TypeError, match="bytes, not str"):
        sorted_changes(b"P", [[b"a", "b"]], (0,), b"")
    with pytest.raises(ValueError, match="columns of 2 and 1 rows"):
        sorted_changes(b"P", [[b"a", b"b"], [b"c"]], (0, 1), b"")
    assert sorted_changes(b"P", [[]], (0,), b"").keys() == []


def quads_of(n: int) -> list[tuple]:
    return [(IRI(f"urn:g{i % 3}") if i % 4 else None, IRI(f"urn:s{i % 17}"), IRI(f"urn:p{i % 5}"),
             [i, f"text {i}", Literal(f"t{i}", lang="en"), IRI(f"urn:o{i}"), 2.5 * i, "x" * (700 + i), 10 ** (600 + i)][i % 7])
            for i in range(n)]


def test_add_many_makes_the_commit_add_makes(tmp_path):
    quads = quads_of(300)
    one, many = fstore.open(tmp_path / "one"), fstore.open(tmp_path / "many")
    with one.transaction("main", message="m", author="a", time=WHEN) as tx:
        for quad in quads:
            fstore.add(tx, *quad)
    with many.transaction("main", message="m", author="a", time=WHEN) as tx:
        fstore.add_many(tx, iter(quads + quads[:10]))  # any iterable; repeats are one quad
    assert one.commit("main").id == many.commit("main").id
    pattern = (Var("g"), Var("s"), Var("p"), Var("o"))
    assert sorted(map(repr, fstore.quads(one.at("main"), *pattern))) == sorted(map(repr, fstore.quads(many.at("main"), *pattern)))
    with one.transaction("main", message="rm", author="a", time=WHEN) as tx:
        for quad in quads[::2]:
            fstore.rm(tx, *quad)
    with many.transaction("main", message="rm", author="a", time=WHEN) as tx:
        fstore.rm_many(tx, quads[::2])
    assert one.commit("main").id == many.commit("main").id
    assert fstore.count(many.at("main"), *pattern) == 150  # 300 distinct quads, every other one removed
    one.close()
    many.close()


def test_add_many_refuses_a_bad_quad_and_the_commit_leaves_nothing(tmp_path):
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="m") as tx:
        fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), 1)
    head = repo.commit("main").id
    with pytest.raises(PackError, match="quad object: a quad cannot hold a list"):
        with repo.transaction("main", message="bad") as tx:
            fstore.add_many(tx, [(None, IRI("urn:s"), IRI("urn:p"), 2), (None, IRI("urn:s"), IRI("urn:p"), [3])])
    assert repo.commit("main").id == head
    assert fstore.count(repo.at("main"), None, Var("s"), Var("p"), Var("o")) == 1
    repo.close()


def test_a_first_load_fills_its_pages(tmp_path):
    """The prefixes ascend in the order a commit writes, so a first load is appended:
    the store is about as large as the same pairs written in key order (docs/format.md)."""
    import lmdb

    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="m") as tx:
        fstore.add_many(tx, [(IRI(f"urn:g{i % 7}"), IRI(f"urn:s{i}"), IRI(f"urn:p{i % 13}"), f"value {i}") for i in range(20000)])
    with repo.storage.read() as snapshot:
        pairs = list(snapshot.tx.range(None, None))
    repo.close()
    env = lmdb.open(str(tmp_path / "r"), readonly=True, lock=False)
    loaded = env.stat()["leaf_pages"]
    env.close()
    copy = lmdb.open(str(tmp_path / "copy"), map_size=1 << 30)
    with copy.begin(write=True) as txn:
        txn.cursor().putmulti(pairs, append=True)
    in_order = copy.stat()["leaf_pages"]
    copy.close()
    assert loaded <= in_order * 1.1, (loaded, in_order)


@given(st.lists(items, max_size=80))
@settings(max_examples=examples(300), deadline=None)
def test_sorted_bytes_is_pythons_sort(values):
    assert sorted_bytes(values) == sorted(values)
