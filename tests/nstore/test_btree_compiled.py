"""nstore._btree (the compiled B-tree walk verify runs) against nstore.btree's Python walk,
its oracle: on intact files and on files with flipped bits, both report the same problems
in the same order and words (or both raise the same exception).

The walks read a file's bytes and never LMDB, so the flips run in this process: a
compiled walk that read past its buffer would crash the run, which is a failure too."""

from __future__ import annotations

import doctest
import os
import random

import lmdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fstore
import nstore._btree
from fstore import IRI, Literal
from nstore import btree
from nstore.btree import _meta_of, compiled_walk, python_walk
from tests.lmdb_pages import pages
from tests.nstore.test_btree import build
from tests.profiles import examples


def outcome(walk, data: bytes, txn_id: int) -> list[str] | str | None:
    """What ``walk`` reports on the file ``data`` for the state ``txn_id``: its problems,
    None if no meta page holds that state, or the name of the exception it raised."""
    try:
        meta = _meta_of(data, txn_id, None)
        if meta is None:
            return None
        page_size, last_page, records = meta
        return walk(data, page_size, len(data) // page_size, last_page, records)
    except Exception as exc:  # compared, not hidden: both walks must raise alike
        return type(exc).__name__


def lmdb_file(directory: str) -> tuple[bytes, int]:
    build(directory)
    with open(os.path.join(directory, "data.mdb"), "rb") as stream:
        data = stream.read()
    env = lmdb.open(directory, readonly=True, lock=False)
    with env.begin() as txn:
        txn_id = txn.id()
    env.close()
    return data, txn_id


def datae_file(directory: str) -> tuple[bytes, int]:
    """A store of a few thousand quads and three commits (a free-page list, both spaces)."""
    repo = fstore.open(directory)
    rng = random.Random(3)
    for number in range(3):
        with repo.transaction("main", message=f"c{number}", author="t") as tx:
            fstore.add_many(tx, [(None, IRI(f"urn:s{rng.randrange(3000)}"), IRI(f"urn:p{i % 7}"),
                                  Literal(f"v{number} {i}" * rng.choice((1, 3, 200)))) for i in range(2000)])
    with repo.storage.read() as snapshot:
        txn_id = snapshot.tx._require_open().id()
    repo.close()
    with open(os.path.join(directory, "data.mdb"), "rb") as stream:
        return stream.read(), txn_id


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, tuple[bytes, int, list[tuple[int, int]]]]:
    """Each file with its newest state and the byte spans of its tree pages (where a
    flip reaches what the walks read, rather than free space)."""
    found = {}
    for name, make in (("lmdb", lmdb_file), ("datae", datae_file)):
        data, txn_id = make(str(tmp_path_factory.mktemp(name)))
        spans = [span for _, _, page_spans in pages(data) for span in page_spans if span[1] > span[0]]
        found[name] = (data, txn_id, spans)
    return found


def test_the_constants_agree():
    assert nstore._btree.MAX_PROBLEMS == btree.MAX_PROBLEMS
    assert doctest.testmod(nstore._btree).failed == 0


@pytest.mark.parametrize("name", ["lmdb", "datae"])
def test_intact_files_have_no_problems_in_either_walk(files, name):
    data, txn_id, _ = files[name]
    for state in (txn_id, txn_id - 1):  # both meta pages' states
        assert outcome(compiled_walk, data, state) == outcome(python_walk, data, state) == []


@pytest.mark.parametrize("name", ["lmdb", "datae"])
@settings(max_examples=examples(150))
@given(seed=st.integers(0, 2**32 - 1), flips=st.integers(1, 3), structure=st.booleans())
def test_flipped_files_give_the_same_problems(files, name, seed, flips, structure):
    data, txn_id, spans = files[name]
    rng = random.Random(seed)
    flipped = bytearray(data)
    page_size = data[40] | data[41] << 8  # the first meta page's md_pad (a small power of 2)
    for _ in range(flips):
        if structure:  # a page header, node table or node of a tree page
            start, end = rng.choice(spans)
            offset = rng.randrange(start, end)
        else:  # anywhere past the meta pages' own fields (their trees' records included)
            offset = rng.choice((rng.randrange(2 * page_size, len(data)), rng.randrange(40, 136)))
        flipped[offset] ^= 1 << rng.randrange(8)
    damaged = bytes(flipped)
    assert outcome(compiled_walk, damaged, txn_id) == outcome(python_walk, damaged, txn_id)


def test_the_flips_reach_what_the_walks_check(files):
    """The comparison above means something only if flips make the walks report: count
    the flips of the node structure that do (most must)."""
    data, txn_id, spans = files["datae"]
    rng = random.Random(11)
    reported = 0
    for _ in range(60):
        flipped = bytearray(data)
        start, end = rng.choice(spans)
        flipped[rng.randrange(start, end)] ^= 1 << rng.randrange(8)
        found = outcome(compiled_walk, bytes(flipped), txn_id)
        assert found == outcome(python_walk, bytes(flipped), txn_id)
        reported += bool(found)
    assert reported > 15, reported


def test_a_huge_last_page_is_refused_as_by_python(files):
    data, txn_id, _ = files["lmdb"]
    page_size, _, records = _meta_of(data, txn_id, None)
    for walk in (compiled_walk, python_walk):
        with pytest.raises(OverflowError):
            walk(data, page_size, len(data) // page_size, (1 << 64) - 1, records)
