"""nstore.btree against LMDB itself: when the check finds nothing wrong with a file, LMDB's
searches agree with its scan (every key a scan meets is found by ``get`` and by a range
seek, with the value the scan gives, in ascending order); and the check never reads past
a page. Flips run in a child process, so an abort inside LMDB fails the test instead of
ending the run."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import lmdb
import pytest

import nstore
from nstore.btree import tree_problems
from tests.lmdb_pages import pages
from tests.writer_process import committing
from tests.profiles import examples

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(nstore.__file__)))


def build(directory: str) -> None:
    """An LMDB file of a few hundred pages: three levels, keys of many lengths, values
    from empty to overflow pages, and a free-page list (some keys written twice)."""
    rng = random.Random(5)
    env = lmdb.open(directory, map_size=1 << 26)
    for round_ in range(3):
        with env.begin(write=True) as txn:
            for i in range(4000):
                key = b"k%06d" % rng.randrange(20000) + bytes(rng.randrange(40))
                txn.put(key, bytes([round_]) * rng.choice((0, 1, 20, 300, 5000 if i % 97 == 0 else 30)))
    env.close()


def searches_agree(directory: str) -> str | None:
    """None if LMDB's searches agree with its scan, else what differs."""
    env = lmdb.open(directory, readonly=True, lock=False)
    try:
        with env.begin() as txn:
            previous = None
            cursor = txn.cursor()
            seek = txn.cursor()
            for key, value in cursor:
                if previous is not None and key <= previous:
                    return f"the scan meets {key!r} after {previous!r}"
                if txn.get(key) != value:
                    return f"get({key!r}) is not what the scan gives"
                if not seek.set_range(key) or seek.key() != key:
                    return f"a seek to {key!r} lands elsewhere"
                previous = key
    except lmdb.Error as exc:
        return f"LMDB: {exc}"
    finally:
        env.close()
    return None


def probe(directory: str, work: str, seed: int, count: int) -> None:
    """Flip one bit at a time inside the page structure (headers, node tables, nodes and
    keys) of a copy of ``directory``'s file; print one JSON line per flip."""
    with open(os.path.join(directory, "data.mdb"), "rb") as stream:
        data = stream.read()
    spans = [span for _, _, page_spans in pages(data) for span in page_spans if span[1] > span[0]]
    rng = random.Random(seed)
    for number in range(count):
        start, end = rng.choice(spans)
        offset, bit = rng.randrange(start, end), 1 << rng.randrange(8)
        print(json.dumps({"offset": offset, "bit": bit}), flush=True)
        path = os.path.join(work, str(number))
        os.makedirs(path)
        flipped = bytearray(data)
        flipped[offset] ^= bit
        with open(os.path.join(path, "data.mdb"), "wb") as stream:
            stream.write(flipped)
        env = lmdb.open(path, readonly=True, lock=False)
        try:
            with env.begin() as txn:
                found = tree_problems(os.path.join(path, "data.mdb"), txn.id())
        finally:
            env.close()
        outcome = "reported" if found else (searches_agree(path) or "searches agree")
        print(json.dumps({"offset": offset, "bit": bit, "outcome": outcome}), flush=True)


def test_an_intact_file_has_no_problems(tmp_path):
    build(str(tmp_path))
    env = lmdb.open(str(tmp_path), readonly=True, lock=False)
    with env.begin() as txn:
        assert tree_problems(str(tmp_path / "data.mdb"), txn.id()) == []
        assert tree_problems(str(tmp_path / "data.mdb"), txn.id() - 1) == []  # the state before, intact too
        assert tree_problems(str(tmp_path / "data.mdb"), txn.id() + 5) is None  # no such state
        assert tree_problems(str(tmp_path / "data.mdb"), txn.id(), txn.stat()) == []
        # A meta page whose counts are not those LMDB read for the transaction is one
        # caught half rewritten by a later write: not that state's.
        assert tree_problems(str(tmp_path / "data.mdb"), txn.id(), {**txn.stat(), "entries": 1}) is None
        assert txn.stat()["overflow_pages"] and txn.stat()["depth"] == 3
    env.close()


def test_when_no_problem_is_found_searches_agree_with_the_scan(tmp_path):
    build(str(tmp_path / "source"))
    os.makedirs(tmp_path / "work")
    count = examples(80)
    code = (f"from tests.nstore.test_btree import probe; probe({str(tmp_path / 'source')!r}, "
            f"{str(tmp_path / 'work')!r}, 7, {count})")
    env = {**os.environ, "PYTHONPATH": ROOT}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=None)
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode == 0, f"ended with {result.returncode} at {lines[-1:]}: {result.stderr[-1000:]}"
    outcomes = [line["outcome"] for line in lines if "outcome" in line]
    assert len(outcomes) == count
    wrong = [line for line in lines if line.get("outcome") not in (None, "reported", "searches agree")]
    assert not wrong, wrong[:5]
    assert outcomes.count("reported") > count // 10, "the flips must reach what the check reads"


@pytest.mark.parametrize("size", [0, 1, 4095, 4097])
def test_a_cut_or_foreign_file_is_no_crash(tmp_path, size):
    (tmp_path / "data.mdb").write_bytes(os.urandom(size))
    if size == 0:
        assert tree_problems(str(tmp_path / "data.mdb"), 1) == ["the file is empty"]
    else:
        assert tree_problems(str(tmp_path / "data.mdb"), 1) is None  # no meta page of that transaction


def test_writes_during_the_walk_do_not_spoil_it(tmp_path):
    """Review finding 3: the walk gave up when its state's meta page was rewritten while it
    read (two commits), so on a store written every few seconds it never finished. The
    open read transaction keeps that state's pages: the walk holds while another process
    commits all through it."""
    directory = str(tmp_path / "store")
    env = lmdb.open(directory, map_size=1 << 30)
    with env.begin(write=True) as txn:  # enough pages that a walk outlasts many commits
        for i in range(300_000):
            txn.put(b"key %08d" % (i * 7919 % 1_000_003), b"v" * 60)
    setup = (f"import lmdb\nenv = lmdb.open({directory!r}, map_size=1 << 30)\n"
             "def commit(n):\n    with env.begin(write=True) as txn:\n        txn.put(b'w%08d' % n, b'x' * 100)\n")
    walks = []
    with committing(setup, tmp_path, pause=0.001, limit=20_000):
        for _ in range(10):
            if len(walks) == 3:
                break
            with env.begin() as txn:
                # The Python walk: the compiled one ends before two commits land. What is
                # tested is what both share, the meta record copied when the walk starts.
                found = tree_problems(str(tmp_path / "store" / "data.mdb"), txn.id(), txn.stat(), compiled=False)
                commits = env.info()["last_txnid"] - txn.id()
            # None only if two commits came between begin and the walk's start (microseconds).
            if found is not None:
                walks.append((found, commits))
    env.close()
    assert [found for found, _ in walks] == [[], [], []], walks
    assert all(commits >= 2 for _, commits in walks), walks  # what made the walk give up before
