"""`datae upgrade` (fstore.ops.upgrade): a store written by datae in format 3 (the file in
tests/fstore/data, made by tests/fstore/data/make_format3.py with the datae of that format)
becomes format 4 holding every key it held, with the same commit ids and a clean verify;
a rewrite that fails verify leaves the old file as it was."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path

import lmdb
import pytest

import fstore
from fstore.core.layout import BLOCKED, FORMAT_KEY
from nstore import okvs
from nstore.blocks import Blocks
from nstore.errors import CorruptStoreError, FormatVersionError

DATA = Path(__file__).parent / "data" / "format3-data.mdb.gz"
# The heads make_format3.py printed when it wrote the file (ids hash content, not layout).
MAIN = "cbbb0c9bd0e619162a37f9affab9d090f387ca5869b0a0be6fea5ed128e72885"
SIDE = "870eb1524a37514e6cc05cd749fa7910f51cb685738b7e63b01e00ca3a9b1c96"


@pytest.fixture
def format3(tmp_path: Path) -> Path:
    store = tmp_path / "old"
    store.mkdir()
    with gzip.open(DATA) as source, open(store / "data.mdb", "wb") as target:
        shutil.copyfileobj(source, target)
    return store


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


def test_a_format_3_store_is_refused_with_the_way_out(format3: Path) -> None:
    with pytest.raises(FormatVersionError, match="holds datae format 3; this datae reads format 4; `datae upgrade`"):
        fstore.open(format3)


def test_upgrade_keeps_every_key_and_id(format3: Path) -> None:
    before = raw_pairs(format3)
    report = fstore.upgrade(format3)
    assert (report.version, report.upgraded) == (3, True)
    assert report.bytes_after < report.bytes_before
    after = logical_pairs(format3)
    assert after.pop(FORMAT_KEY) == b"4" and before.pop(FORMAT_KEY) == b"3"
    assert after == before
    with fstore.open(format3) as repo:
        assert repo.verify() == []
        assert (repo.head("main"), repo.head("side"), repo.resolve("v1")) == (MAIN, SIDE, MAIN)
        assert repo.at("main").table("towns").get(3)["name"] == "renamed"
        assert fstore.count(repo.at("main"), None, fstore.IRI("http://example.org/s"), fstore.Var("p"), fstore.Var("o")) == 2
        with repo.transaction("main", message="after") as tx:  # and it takes commits
            fstore.add(tx, None, fstore.IRI("urn:new"), fstore.IRI("urn:p"), 1)
        assert repo.verify() == []
    assert fstore.upgrade(format3).upgraded is False


def test_a_rewrite_that_fails_verify_keeps_the_old_file(format3: Path) -> None:
    """A format-3 file whose snapshot lost a key: the rewrite in format 4 fails verify,
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
    assert "upgraded from format 3 to 4 (verified)" in done.stdout
    again = datae("upgrade")
    assert again.returncode == 0 and "nothing to do" in again.stdout
    assert datae("verify").returncode == 0
