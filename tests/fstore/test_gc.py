"""gc and compaction (issue 13, point 3): what no ref or recent reflog entry reaches is
dropped, the file shrinks to what a store that never had it holds, another process never
sees a half-swapped file, and SIGKILL at any point leaves the old or the new store whole."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import fstore
from fstore import IRI, Var
from nstore.errors import StoreFileError
from tests.cli_fixtures import run_cli

NOW = dt.timedelta(0)
EVERYTHING = (Var("g"), Var("s"), Var("p"), Var("o"))


def main_quads(n: int = 200) -> list[tuple]:
    return [(None, IRI(f"urn:s{i}"), IRI("urn:p"), i) for i in range(n)]


def with_scratch_branch(path, changes: int) -> fstore.Repository:
    repo = fstore.open(path)
    with repo.transaction("main", message="main", author="a") as tx:
        fstore.add_many(tx, main_quads())
    repo.branch("scratch")
    with repo.transaction("scratch", message="scratch", author="a") as tx:
        fstore.add_many(tx, [(IRI("urn:g"), IRI(f"urn:x{i}"), IRI("urn:q"), f"scratch value {i}") for i in range(changes)])
        fstore.add(tx, IRI("urn:g"), IRI("urn:x"), IRI("urn:q"), "long " * 500)  # a blob
    repo.delete_branch("scratch")
    return repo


def test_a_deleted_branch_is_kept_until_its_reflog_entry_expires(tmp_path):
    repo = with_scratch_branch(tmp_path / "r", 1000)
    [(when, kind, name, commit)] = repo.reflog()
    assert (kind, name) == ("branch", "scratch") and when <= dt.datetime.now(dt.timezone.utc)
    report = repo.gc()  # 30 days by default: nothing goes
    assert (report.commits, report.terms) == (0, 0)
    assert fstore.count(repo.at(commit), *EVERYTHING) == 1201
    report = repo.gc(expire=NOW)
    assert (report.commits, report.records, report.reflog_entries) == (1, 1001, 1)
    assert report.terms == 2 * 1000 + 4  # its subjects and values, urn:g, urn:q, urn:x and the long value
    with pytest.raises(fstore.UnknownRefError):
        repo.at(commit)
    assert sorted(map(repr, fstore.quads(repo.at("main"), *EVERYTHING))) == sorted(map(repr, (tuple(map(fstore.to_rdf, q)) for q in main_quads())))
    assert repo.verify() == [] and repo.reflog() == []
    with repo.storage.read() as snapshot:  # the blob had one reference, from the dropped commit
        assert not any(True for space in repo.storage.spaces for _ in snapshot.tx.prefix(space.store.blobs._data))
    repo.close()


def test_gc_gives_back_the_file_a_store_that_never_had_it_holds(tmp_path):
    repo = with_scratch_branch(tmp_path / "r", 20000)
    repo.gc(expire=NOW)
    stats = repo.stats()
    repo.close()
    never = fstore.open(tmp_path / "never")
    with never.transaction("main", message="main", author="a") as tx:
        fstore.add_many(tx, main_quads())
    never.close()
    never_bytes = os.path.getsize(tmp_path / "never" / "data.mdb")
    assert stats["bytes"] <= 1.1 * never_bytes, (stats, never_bytes)
    assert stats["reclaimable"] == 0


def test_gc_refuses_while_another_handle_is_open(tmp_path):
    repo = with_scratch_branch(tmp_path / "r", 10)
    other = fstore.open(tmp_path / "r")
    with pytest.raises(StoreFileError, match="is open elsewhere"):
        repo.gc(expire=NOW)
    other.close()
    assert fstore.count(repo.at("main"), *EVERYTHING) == 200 and repo.verify() == []
    repo.close()


HOLD = textwrap.dedent("""
    import sys, time, fstore
    repo = fstore.open(sys.argv[1])
    print("open", flush=True)
    time.sleep(60)
""")


def test_gc_refuses_while_another_process_has_it_open(tmp_path):
    repo = with_scratch_branch(tmp_path / "r", 10)
    repo.close()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / "r")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        repo = fstore.open(tmp_path / "r")
        with pytest.raises(StoreFileError, match="is open elsewhere"):
            repo.gc(expire=NOW)
        assert len(repo.reflog()) == 1  # refused before any change
    finally:
        holder.kill()
        holder.wait()
    repo.gc(expire=NOW)
    assert repo.verify() == []
    repo.close()


GC = textwrap.dedent("""
    import datetime, sys, fstore
    repo = fstore.open(sys.argv[1])
    print("start", flush=True)
    repo.gc(expire=datetime.timedelta(0))
    print("done", flush=True)
""")


@pytest.mark.slow
def test_sigkill_during_gc_leaves_the_old_or_the_new_store(tmp_path):
    """Kill gc at moments spread over its run (timed first, uncut): the store opens,
    verifies, and holds main's quads."""
    import shutil

    source = tmp_path / "source"
    with_scratch_branch(source, 8000).close()
    expected = sorted(map(repr, (tuple(map(fstore.to_rdf, q)) for q in main_quads())))

    def gc_in_a_child(attempt: int, cut: float | None) -> tuple[Path, float]:
        path = tmp_path / f"r{attempt}"
        shutil.copytree(source, path)
        child = subprocess.Popen([sys.executable, "-c", GC, str(path)], stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline().strip() == "start"
        began = time.monotonic()
        if cut is None:
            assert child.stdout.readline().strip() == "done"
        else:
            time.sleep(cut)
            child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        return path, time.monotonic() - began

    # The kill moments are fractions of the time gc takes here, now (a loaded machine is slower).
    uncut, took = gc_in_a_child(0, None)
    outcomes = []
    cuts = [gc_in_a_child(attempt, fraction * took)[0]
            for attempt, fraction in enumerate([0.0, 0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 1.0, 1.5], 1)]
    for attempt, path in enumerate([uncut, *cuts]):
        repo = fstore.open(path)
        assert repo.verify() == [], attempt
        assert sorted(map(repr, fstore.quads(repo.at("main"), *EVERYTHING))) == expected
        outcomes.append(len(repo.reflog()))  # 1: the old store, 0: the new one
        repo.gc(expire=NOW)  # and a gc after the crash completes
        assert repo.verify() == [] and os.path.getsize(path / "data.mdb") < os.path.getsize(source / "data.mdb")
        repo.close()
    assert outcomes[0] == 0 and set(outcomes) <= {0, 1}, outcomes  # the old store (its reflog entry kept) or the new one


def test_opening_during_compaction_is_a_typed_error(tmp_path):
    from nstore.lmdbfile import OpenLock

    repo = with_scratch_branch(tmp_path / "r", 10)
    repo.close()
    lock = OpenLock(str(tmp_path / "r"), exclusive=True)
    try:
        with pytest.raises(StoreFileError, match="is being compacted"):
            fstore.open(tmp_path / "r")
    finally:
        lock.release()
    fstore.open(tmp_path / "r").close()


def test_the_cli_shows_the_reflog_collects_and_verifies(tmp_path, capsys):
    with_scratch_branch(tmp_path / "repo" / ".datae", 500).close()

    def datae(*argv: str) -> subprocess.CompletedProcess:
        code, out, err = run_cli(capsys, "--repo", str(tmp_path / "repo"), *argv)  # in this process
        return subprocess.CompletedProcess(argv, code, out, err)

    assert "deleted branch scratch" in datae("reflog").stdout
    stats = datae("stats").stdout
    assert "reflog       1" in stats and "live bytes" in stats and "reclaimable" in stats
    kept = datae("gc")
    assert kept.returncode == 0 and "dropped 0 commit(s)" in kept.stdout
    dropped = datae("gc", "--expire", "0")
    assert dropped.returncode == 0 and "dropped 1 commit(s), 501 change record(s)" in dropped.stdout, dropped
    assert datae("reflog").stdout == ""
    verified = datae("verify")
    assert verified.returncode == 0 and verified.stdout.startswith("ok: the B-trees, every commit id and its counts")
    assert datae("verify", "--quick").stdout == "ok: the B-trees and every commit id verified\n"
    assert "reclaimable  0" in datae("stats").stdout
