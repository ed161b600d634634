"""What a receiver refuses and what sync leaves alone (review A of issue 24's work):
counts that are booleans, records that change nothing, tags that would make a branch
name ambiguous, and folders a clone did not make."""

from __future__ import annotations

import pytest

import fstore
from fstore import IRI, sync
from fstore.sync import SyncError, TamperedError


def one_commit(repo: fstore.Repository, n: int = 1, branch: str = "main") -> str:
    with repo.transaction(branch, message=f"c{n}", author="t") as tx:
        fstore.add(tx, IRI("urn:g"), IRI(f"urn:s{n}"), IRI("urn:p"), n)
    return tx.commit_id


def payloads_of(repo: fstore.Repository, branch: str = "main") -> list[dict]:
    return list(sync.send(repo.storage, [repo.branches()[branch]], set()))

@pytest.mark.parametrize("field, forged", [("added", True), ("removed", False), ("added", -1)])
def test_counts_that_are_booleans_or_negative_are_refused(tmp_path, field, forged):
    a = fstore.open(str(tmp_path / "a"))
    one_commit(a)
    payloads = payloads_of(a)
    payloads[0][field] = forged
    b = fstore.open(str(tmp_path / "b"))
    with pytest.raises(SyncError, match=f"{payloads[0]['id']}|wrong type"):
        sync.receive_all(b.storage, payloads)
    with b.storage.read() as tx:
        assert b.storage.commits.seq_of(tx, payloads[0]["id"]) is None
    with pytest.raises(SyncError):
        sync.check_payload(payloads[0])
