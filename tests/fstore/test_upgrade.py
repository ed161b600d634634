"""`datae upgrade` (fstore.ops.upgrade): stores written by datae in formats 3, 4 and 5 (the
files in tests/fstore/data, made by tests/fstore/data/make_old_format.py with the datae of
each format) become format 6: every key they held outside the tables space kept, the tables'
regular feature tuples moved into rows (their dictionary terms dropped), the snapshots'
counts as their tuples give them, the same commit ids and a clean verify; a rewrite that
fails verify leaves the old file as it was; and a format-6 file written earlier reads as it
did."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import lmdb
import pytest

import fstore
from fstore.core.layout import BLOCKED, DICTIONARY, FORMAT_KEY, ROW_SNAPSHOTS, SPACES, TABLES
from fstore.core.rows import FEATURE_ITEM
from nstore import okvs
from nstore.blocks import Blocks
from nstore.errors import CorruptStoreError, FormatVersionError
from nstore.pack import pack, split, unpack

DATA = Path(__file__).parent / "data"
# The heads make_old_format.py printed when it wrote each file (ids hash content, not layout).
MAIN = "cbbb0c9bd0e619162a37f9affab9d090f387ca5869b0a0be6fea5ed128e72885"
SIDE = "870eb1524a37514e6cc05cd749fa7910f51cb685738b7e63b01e00ca3a9b1c96"


def unpacked(version: int, tmp_path: Path) -> Path:
    store = tmp_path / f"old{version}"
    store.mkdir()
    with gzip.open(DATA / f"format{version}-data.mdb.gz") as source, open(store / "data.mdb", "wb") as target:
        shutil.copyfileobj(source, target)
    return store


@pytest.fixture(params=[3, 4, 5])
def old(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[int, Path]:
    return request.param, unpacked(request.param, tmp_path)


@pytest.fixture
def format3(tmp_path: Path) -> Path:
    return unpacked(3, tmp_path)


def raw_pairs(path: Path) -> dict[bytes, bytes]:
    env = lmdb.open(str(path), readonly=True, lock=False)
    try:
        with env.begin() as txn:
            return dict(txn.cursor())
    finally:
        env.close()


def logical_pairs(path: Path) -> dict[bytes, bytes]:
    """Every key the store holds as its layers see them: the blocked keyspaces decoded."""
    spaces = [Blocks.under(prefix) for prefix in BLOCKED]
    pairs = {key: value for key, value in raw_pairs(path).items()
             if not any(space.start <= key < space.end + b"\xff" for space in spaces)}
    with okvs.open(path, readonly=True) as db, db.transaction() as tx:
        for space in spaces:
            pairs.update(space.range(tx))
    return pairs


def test_a_store_of_this_format_written_earlier_reads_as_it_did(tmp_path: Path) -> None:
    """The format-6 file made by make_old_format.py (the same history as the older ones):
    opened as it is, every id, read and check as when it was written; nothing to upgrade.
    When the format changes, this file becomes the next upgrade's fixture."""
    path = unpacked(6, tmp_path)
    with fstore.open(path) as repo:
        assert repo.verify() == []
        assert (repo.head("main"), repo.head("side"), repo.resolve("v1")) == (MAIN, SIDE, MAIN)
        assert repo.at("main").table("towns").get(3)["name"] == "renamed"
        assert fstore.count(repo.at("main"), None, fstore.IRI("http://example.org/s"), fstore.Var("p"), fstore.Var("o")) == 2
        pattern = (fstore.Var("g"), fstore.Var("s"), fstore.IRI("http://example.org/p1"), fstore.Var("o"))
        for ref in ("main", "side", "main~1"):  # from the counts kept with the heads, as a scan finds
            assert fstore.count(repo.at(ref), *pattern) == sum(1 for _ in fstore.quads(repo.at(ref), *pattern)) > 0
    assert fstore.upgrade(path).upgraded is False


def test_an_old_store_is_refused_with_the_way_out(old: tuple[int, Path]) -> None:
    version, path = old
    with pytest.raises(FormatVersionError, match=f"holds datae format {version}; this datae reads format 6; `datae upgrade`"):
        fstore.open(path)


def counted(pairs: dict[bytes, bytes]) -> dict[bytes, bytes]:
    """The count keys of the snapshots (format 5), taken out of ``pairs``, each checked
    against a count made here of the snapshot keys (index 0: snapshot, graph, subject,
    predicate, object) and of the tables' rows (``96 ‖ pack(snapshot, table, n) ‖ key``,
    counted under the table's graph and the feature predicate as inline items)."""
    added = {}
    graphs = {unpack(value)[0]: fstore.IRI(graph) for key, value in pairs.items()
              if key.startswith(pack("TN")) and (graph := unpack(key)[1])}
    for space in SPACES:
        tag = pack(space.counts)
        added.update({key: pairs.pop(key) for key in [key for key in pairs if key.startswith(tag)]})
        by_pair: Counter = Counter()
        index0 = space.snapshots + b"\x00"  # the first index (docs/format.md)
        for key in pairs:
            if key.startswith(index0):
                number, graph, _, predicate, _ = split(key, len(index0), 5)
                by_pair[(number, graph, predicate)] += 1
            elif space is TABLES and key.startswith(ROW_SNAPSHOTS):
                number, table = split(key, 1)[:2]
                by_pair[(number, pack(graphs[unpack(table)[0]]), FEATURE_ITEM)] += 1
        expected = {}
        for (number, graph, predicate), count in by_pair.items():
            expected[tag + number + pack(0) + graph + predicate] = pack(count)
            key = tag + number + pack(1) + predicate
            expected[key] = pack((unpack(expected[key])[0] if key in expected else 0) + count)
        assert {key: value for key, value in added.items() if key.startswith(tag)} == expected
    return added


def test_upgrade_keeps_every_tuple_and_id(old: tuple[int, Path]) -> None:
    version, path = old
    before = logical_pairs(path) if version >= 4 else raw_pairs(path)
    report = fstore.upgrade(path)
    assert (report.version, report.upgraded) == (version, True)
    if version == 3:
        assert report.bytes_after < report.bytes_before
    after = logical_pairs(path)
    assert after.pop(FORMAT_KEY) == b"6" and before.pop(FORMAT_KEY) == str(version).encode()
    assert counted(after)  # the snapshots' counts, as the snapshots hold
    for space in SPACES:
        for key in [key for key in before if key.startswith(pack(space.counts))]:
            del before[key]
    rows = {key for key in after if key[:1] in (b"\x95", b"\x96") or key.startswith((pack("TN"), pack("TR")))}
    assert any(key.startswith(b"\x95") for key in rows) and any(key.startswith(b"\x96") for key in rows)
    kept = {key: value for key, value in after.items() if key not in rows}
    assert all(before.get(key) == value for key, value in kept.items())
    moved = before.keys() - kept.keys()  # the feature tuples' records, snapshot keys and terms
    assert moved and {key[:1] for key in moved} <= {DICTIONARY, TABLES.records, TABLES.snapshots}
    with fstore.open(path) as repo:
        assert repo.verify() == []  # every commit id and digest recomputed from the rows
        assert (repo.head("main"), repo.head("side"), repo.resolve("v1")) == (MAIN, SIDE, MAIN)
        assert repo.at("main").table("towns").get(3)["name"] == "renamed"
        assert repo.at("main~1").table("towns").get(3)["name"] == "town 3"
        assert len(repo.at("main").table("towns")) == 200
        assert fstore.count(repo.at("main"), None, fstore.IRI("http://example.org/s"), fstore.Var("p"), fstore.Var("o")) == 2
        with repo.transaction("main", message="after") as tx:  # and it takes commits
            fstore.add(tx, None, fstore.IRI("urn:new"), fstore.IRI("urn:p"), 1)
            tx.table("towns").update({"k": 4, "name": "four"})
        assert repo.verify() == []
    assert fstore.upgrade(path).upgraded is False


def test_a_rewrite_that_fails_verify_keeps_the_old_file(format3: Path) -> None:
    """A format-3 file whose snapshot lost a key: the rewrite in format 6 fails verify,
    and the old file is left byte for byte."""
    env = lmdb.open(str(format3), map_size=1 << 26)
    with env.begin(write=True) as txn:
        key = next(key for key, _ in txn.cursor() if key[:2] == b"\x92\x03")
        txn.delete(key)
    env.close()
    old = (format3 / "data.mdb").read_bytes()
    with pytest.raises(CorruptStoreError, match="fails verify, so the old file was kept"):
        fstore.upgrade(format3)
    assert (format3 / "data.mdb").read_bytes() == old
    assert not (format3 / ".compacting").exists()


def test_datae_upgrade_command(format3: Path) -> None:
    def datae(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "datae", "--repo", str(format3), *args],
                              capture_output=True, text=True, timeout=120)

    refused = datae("log")
    assert refused.returncode != 0 and "datae upgrade" in refused.stderr and "Traceback" not in refused.stderr
    done = datae("upgrade")
    assert done.returncode == 0, done.stderr
    assert "upgraded from format 3 to 6 (verified)" in done.stdout
    again = datae("upgrade")
    assert again.returncode == 0 and "nothing to do" in again.stdout
    assert datae("verify").returncode == 0
