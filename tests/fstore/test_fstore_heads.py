"""Materialised heads (fstore.core.heads): a branch that shares another's snapshot gets one of
its own once its overlay grows, and reads stay exact through every hand-over."""

from __future__ import annotations


from hypothesis import HealthCheck, settings

import fstore
import fstore.core.heads as heads
from fstore import IRI, Var

from tests.fstore import test_fstore_model as model
from tests.profiles import examples

P = IRI("urn:p")


def snapshots(repo) -> dict:
    with repo.storage.read() as snapshot:
        return repo.storage.quads.heads.metas(snapshot.tx)


def objects(repo, ref) -> list:
    return sorted(q[3].value for q in fstore.quads(repo.at(ref), None, Var("s"), P, Var("o")))


def test_a_diverging_branch_gets_its_own_snapshot(tmp_path, monkeypatch):
    monkeypatch.setattr(heads, "OVERLAY_LIMIT", 10)
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="base") as tx:
        for i in range(40):
            fstore.add(tx, None, IRI(f"urn:s{i}"), P, i)
    repo.branch("dev")
    assert len(snapshots(repo)) == 1  # dev shares main's
    with repo.transaction("dev", message="small") as tx:
        fstore.add(tx, None, IRI("urn:new"), P, 100)
    assert len(snapshots(repo)) == 1  # an overlay of one quad
    with repo.transaction("dev", message="big") as tx:
        for i in range(20):
            fstore.rm(tx, None, IRI(f"urn:s{i}"), P, i)
    metas = snapshots(repo)
    assert sorted((seq, owner, count) for seq, owner, count in metas.values()) == [(1, "main", 40), (3, "dev", 21)]
    assert objects(repo, "dev") == list(range(20, 40)) + [100]
    assert objects(repo, "main") == list(range(40))
    with repo.transaction("main", message="on main") as tx:
        fstore.add(tx, None, IRI("urn:main"), P, 200)
    assert objects(repo, "main") == list(range(40)) + [200]
    assert objects(repo, "dev~1") == list(range(40)) + [100]  # time travel from either snapshot
    repo.delete_branch("dev")
    assert [owner for _, owner, _ in snapshots(repo).values()] == ["main"]  # dev's own one dropped
    assert repo.verify() == []
    repo.close()


def test_model_with_snapshots_copied_early(monkeypatch):
    """The model state machine with every overlay past an eighth of its snapshot turned into
    a snapshot of its own: copies, hand-overs and drops on every path."""
    monkeypatch.setattr(heads, "OVERLAY_LIMIT", 0)
    case = model.VersionedStore.TestCase("runTest")
    case.settings = settings(max_examples=examples(40), stateful_step_count=30, deadline=None,
                             suppress_health_check=[HealthCheck.too_slow])
    case.runTest()
