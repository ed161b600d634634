"""The worked example of docs/versioning.md, checked record by record, and merge details."""

from __future__ import annotations

import pytest

import fstore
from fstore import IRI, Literal, Var

S, P = IRI("urn:s"), IRI("urn:p")


def objects(repo, ref):
    """The objects at ``ref`` as the strings written (``.value`` of the literals read)."""
    return sorted(b["o"].value for b in fstore.from_(repo.at(ref), None, S, P, Var("o")))


def records_of(repo, commit_id):
    with repo.storage.read() as snapshot:
        seq = snapshot.seq_of(commit_id)
        return sorted((quad[3], alive) for quad, alive in repo.storage.quads.changes_of(snapshot.tx, seq))


@pytest.fixture
def story(tmp_path):
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="1") as tx:
        fstore.add(tx, None, S, P, "a")
    repo.branch("dev")
    with repo.transaction("main", message="2") as tx:
        fstore.add(tx, None, S, P, "b")
    with repo.transaction("dev", message="3") as tx:
        fstore.rm(tx, None, S, P, "a")
    yield repo
    repo.close()


def test_worked_example_ours(story):
    repo = story
    with pytest.raises(fstore.MergeConflict) as caught:
        repo.merge("main", "dev")
    (conflict,) = caught.value.conflicts
    assert (conflict.base, conflict.ours, conflict.theirs) == ((Literal("a"),), (Literal("a"), Literal("b")), ())
    dev_head = repo.head("dev")
    merge = repo.merge("main", "dev", policy="ours")
    assert objects(repo, merge) == ["a", "b"]
    assert records_of(repo, merge) == [("a", True)]
    assert objects(repo, dev_head) == []
    commit = repo.commit(merge)
    assert (commit.added, commit.removed) == (0, 0)
    assert repo.blame("main", None, S, P, "a").id == merge
    assert repo.verify() == []


def test_worked_example_theirs(story):
    repo = story
    merge = repo.merge("main", "dev", policy="theirs")
    assert objects(repo, merge) == []
    assert records_of(repo, merge) == [("b", False)]
    commit = repo.commit(merge)
    assert (commit.added, commit.removed) == (0, 2)


def test_callable_policy_can_add_new_objects(story):
    repo = story
    seen = []

    def resolve(conflict):
        seen.append(conflict)
        return ["c"]

    merge = repo.merge("main", "dev", policy=resolve)
    assert len(seen) == 1
    assert objects(repo, merge) == ["c"]


def test_non_conflicting_changes_merge_as_sets(tmp_path):
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="base") as tx:
        fstore.add(tx, None, S, P, "a")
        fstore.add(tx, None, S, IRI("urn:q"), "x")
    repo.branch("dev")
    with repo.transaction("main", message="ours") as tx:
        fstore.add(tx, None, S, P, "b")
    with repo.transaction("dev", message="theirs") as tx:
        fstore.rm(tx, None, S, IRI("urn:q"), "x")
        fstore.add(tx, None, IRI("urn:t"), P, 1)
    merge = repo.merge("main", "dev", message="merge dev")
    assert [c.message for c in repo.log("main")] == ["merge dev", "theirs", "ours", "base"]
    assert sorted(str(b) for b in fstore.from_(repo.at(merge), Var("g"), Var("s"), Var("p"), Var("o"))) == sorted(
        str(b) for b in [{"g": None, "s": S, "p": P, "o": fstore.to_rdf("a")}, {"g": None, "s": S, "p": P, "o": fstore.to_rdf("b")},
                         {"g": None, "s": IRI("urn:t"), "p": P, "o": fstore.to_rdf(1)}])
    # merging again changes nothing; merging main into dev fast-forwards dev
    assert repo.merge("main", "dev") == merge
    assert repo.merge("dev", "main") == merge
    assert repo.head("dev") == merge
    repo.close()
