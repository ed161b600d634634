"""A process killed with SIGKILL in the middle of a large transaction leaves a store that opens
with every earlier commit intact and no trace of the killed one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import fstore
from fstore import IRI, Var

CHILD = textwrap.dedent(
    """
    import sys
    import fstore
    from fstore import IRI
    from fstore.core.storage import Storage

    path, phase = sys.argv[1], sys.argv[2]
    repo = fstore.open(path)
    for i in range(3):
        with repo.transaction("main", message=f"c{i}", author="child") as tx:
            for j in range(100):
                fstore.add(tx, None, IRI(f"urn:s{i}"), IRI("urn:p"), j)
        print("commit", tx.commit_id, flush=True)

    original = Storage.write_commit
    def announced(self, *args, **kwargs):
        print("writing", flush=True)  # the LMDB write transaction is now filling
        return original(self, *args, **kwargs)
    Storage.write_commit = announced

    def big():  # staged by add_many: half the time of 400,000 adds, the same commit to write
        for j in range(400_000):
            yield None, IRI(f"urn:big{j % 5000}"), IRI("urn:q"), "v" * (j % 300) + str(j)
            if j == 1000 and phase == "adding":
                print("adding", flush=True)

    with repo.transaction("main", message="killed", author="child") as tx:
        fstore.add_many(tx, big())
    print("finished", flush=True)
    """
)


@pytest.mark.parametrize("phase,delay", [("adding", 0.2), ("writing", 0.5), ("writing", 2.0)])
def test_sigkill_mid_transaction(tmp_path, phase, delay):
    path = str(tmp_path / "repo")
    child = subprocess.Popen([sys.executable, "-c", CHILD, path, phase], stdout=subprocess.PIPE, text=True)
    commits = []
    try:
        for line in child.stdout:
            word, *rest = line.split()
            if word == "commit":
                commits.append(rest[0])
            elif word == phase:
                time.sleep(delay)
                os.kill(child.pid, signal.SIGKILL)
                break
            elif word == "finished":
                pytest.fail("the child finished before it was killed: make its transaction larger")
    finally:
        child.kill()
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert len(commits) == 3

    repo = fstore.open(path)
    try:
        assert [c.id for c in repo.log("main")] == commits[::-1]
        assert repo.head("main") == commits[-1]
        assert repo.verify() == []
        for i, commit in enumerate(commits):
            view = repo.at(commit)
            objects = sorted(b["o"].value for b in fstore.from_(view, None, IRI(f"urn:s{i}"), IRI("urn:p"), Var("o")))
            assert objects == list(range(100))
        assert fstore.count(repo.at("main"), Var("g"), Var("s"), IRI("urn:q"), Var("o")) == 0
        with repo.storage.read() as snapshot:
            assert repo.storage.commits.next_seq(snapshot.tx) == 4
            assert list(repo.storage.quads.changes_of(snapshot.tx, 4)) == []
            assert list(repo.storage.quads.store.blobs.digests(snapshot.tx)) == []
            # only the committed terms are in the dictionary: urn:s0..2 and urn:p (numbers are inline)
            assert sorted(term.value for _, term in repo.storage.quads.dictionary.entries(snapshot.tx)) == [
                "urn:p", "urn:s0", "urn:s1", "urn:s2"]
        # the store still takes commits
        with repo.transaction("main", message="after", author="t") as tx:
            fstore.add(tx, None, IRI("urn:after"), IRI("urn:p"), 1)
        assert repo.verify() == []
    finally:
        repo.close()
