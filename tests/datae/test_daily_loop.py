"""show, revert and reset: a commit and its changes, a commit undoing another, a branch
moved (and what it drops kept by the reflog)."""

from __future__ import annotations

import datetime

import pytest

import fstore
import fstore.tables as tables
from tests.cli_fixtures import run_cli
from fstore import IRI, Var

P = IRI("urn:p")
SCHEMA = [
    {"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
    {"id": "a", "name": "a", "dataType": "text"},
]


@pytest.fixture
def repo(tmp_path):
    repo = fstore.open(tmp_path / "repo")
    with repo.transaction("main", message="first") as tx:
        fstore.add(tx, None, IRI("urn:s"), P, "one")
        t = tables.create(tx, "t", SCHEMA)
        t.insert({"k": 1, "a": "x"})
    with repo.transaction("main", message="second") as tx:
        fstore.rm(tx, None, IRI("urn:s"), P, "one")
        fstore.add(tx, None, IRI("urn:s"), P, "two")
        tx.table("t").update({"k": 1, "a": "y"})
        tx.table("t").insert({"k": 2, "a": "z"})
    yield repo
    repo.close()


def _objects(repo, ref="main"):
    return {quad[3].value for quad in fstore.quads(repo.at(ref), None, IRI("urn:s"), P, Var("o"))}


def test_show_gives_quad_and_row_changes(repo):
    shown = repo.show("main")
    assert shown.commit.message == "second"
    assert sorted((op, quad[3].value) for op, quad in shown.quads) == [("+", "two"), ("-", "one")]
    diff = shown.tables["t"]
    assert diff.inserted == [{"k": 2, "a": "z"}] and [c.cells for c in diff.updated] == [{"a": ("x", "y")}]
    root = repo.show("main~1")
    assert [op for op, _ in root.quads] == ["+"] and root.tables["t"].inserted == [{"k": 1, "a": "x"}]


def test_revert_restores_the_state_before(repo):
    first, second = repo.commit("main~1"), repo.head("main")
    reverted = repo.revert("main", message="undo")
    commit = repo.commit(reverted)
    assert commit.parents == (second,) and commit.digest != repo.commit(second).digest
    assert commit.digest == first.digest and commit.message == "undo"
    assert _objects(repo) == {"one"} and [r["a"] for r in repo.at("main").table("t").rows()] == ["x"]
    assert repo.revert("main~1") is None  # "second" again: already undone, nothing to commit
    assert repo.revert("main") is not None  # the revert of the revert: back to "second"
    assert repo.commit("main").digest == repo.commit("main~2").digest
    assert repo.verify() == []


def test_conflicting_revert_writes_nothing(repo):
    with repo.transaction("main", message="third") as tx:
        fstore.rm(tx, None, IRI("urn:s"), P, "two")
        fstore.add(tx, None, IRI("urn:s"), P, "three")
        tx.table("t").update({"k": 1, "a": "w"})
    head = repo.head("main")
    with pytest.raises(fstore.RevertConflict) as conflict:
        repo.revert("main~1")
    found = {(item.kind, item.where) for c in conflict.value.conflicts for item in c.items()}
    assert found == {("quad", (None, IRI("urn:s"), P)), ("cell", ("t", (1,), "a"))}
    assert repo.head("main") == head
    with repo.transaction("main", message="drop z") as tx:  # the row insert alone reverts cleanly
        tx.table("t").delete(2)
    assert repo.revert("main") and {r["k"] for r in repo.at("main").table("t").rows()} == {1, 2}


def test_reset_refuses_to_drop_commits_unless_hard_and_logs_the_tip(repo):
    tip, older = repo.head("main"), repo.resolve("main~1")
    with pytest.raises(fstore.ResetRefusedError, match="would drop 1 commit"):
        repo.reset("main~1")
    assert repo.head("main") == tip
    repo.branch("keep", "main")
    assert repo.reset("main~1") == older  # "keep" still reaches the tip
    assert [entry[1:] for entry in repo.reflog()] == [("branch", "main", tip)]  # any move back is logged
    assert repo.reset("keep") == tip  # forward again
    repo.delete_branch("keep", force=True)
    repo.gc(expire=datetime.timedelta(0))  # the reflog entry of "keep" goes
    assert repo.reset("main~1", hard=True) == older
    assert repo.head("main") == older and _objects(repo) == {"one"}
    assert (repo.reflog()[-1][1:]) == ("branch", "main", tip)
    repo.gc()
    assert repo.commit(tip).message == "second" and repo.verify() == []
    repo.gc(expire=datetime.timedelta(0))
    with pytest.raises(fstore.UnknownRefError):
        repo.commit(tip)


def test_revert_and_reset_refused_while_merging(repo):
    repo.branch("dev", "main~1")
    with repo.transaction("dev", message="dev") as tx:
        fstore.rm(tx, None, IRI("urn:s"), P, "one")
        fstore.add(tx, None, IRI("urn:s"), P, "dev")
    with pytest.raises(fstore.ConflictsRecorded):
        repo.merge("main", "dev", policy="record")
    with pytest.raises(fstore.MergeInProgressError):
        repo.revert("main")
    with pytest.raises(fstore.MergeInProgressError):
        repo.reset("main~1", hard=True)
    assert repo.reset("main", "dev", hard=True) == repo.head("main")  # another branch may move


def run(capsys, path, *argv):
    return run_cli(capsys, "--repo", str(path), *argv)


def test_cli_show_revert_reset(tmp_path, capsys):
    path = tmp_path / "repo"
    with fstore.open(path) as repo:
        with repo.transaction("main", message="first") as tx:
            fstore.add(tx, None, IRI("urn:s"), P, IRI("urn:one"))
            tables.create(tx, "t", SCHEMA).insert({"k": 1, "a": "x"})
        with repo.transaction("main", message="second") as tx:
            fstore.add(tx, None, IRI("urn:s"), P, IRI("urn:two"))
            tx.table("t").update({"k": 1, "a": "y"})
        first = repo.commit("main~1")
    code, out, _ = run(capsys, path, "show")
    assert code == 0 and "    second" in out and "+ <urn:s> <urn:p> <urn:two> ." in out
    assert "table t: 0 inserted, 1 updated, 0 deleted" in out and '~ {"k": 1, "a": ["x", "y"]}' in out
    code, out, _ = run(capsys, path, "revert", "HEAD", "-m", "take it back")
    assert code == 0 and "take it back (+1 -2)" in out
    with fstore.open(path) as repo:
        assert repo.commit("main").digest == first.digest
    code, _, err = run(capsys, path, "reset", "main~2")
    assert code == 128 and "reset --hard" in err
    code, out, _ = run(capsys, path, "reset", "--hard", "main~2")
    assert code == 0 and out.startswith(f"main is now at {first.id[:10]}")
    code, out, _ = run(capsys, path, "reflog")
    assert "main" in out
