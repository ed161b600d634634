"""Conflicts as state: a merge stopped on conflicts is kept in the store (quads and table
cells), settled conflict by conflict (ours, theirs, explicit values), then continued or
aborted; pulls stop the same way; the CLI drives it all."""

from __future__ import annotations

import pytest

import fstore
import fstore.tables as tables
from tests.cli_fixtures import run_cli
from fstore import IRI, Var
from fstore.core.layout import MERGE_PREFIX
from nstore.okvs import prefix_end

P = IRI("urn:p")
S = {n: IRI(f"urn:s{n}") for n in range(1, 6)}
SCHEMA = [
    {"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
    {"id": "a", "name": "a", "dataType": "text"},
    {"id": "b", "name": "b", "dataType": "integer"},
]


def _set(tx, s, value) -> None:
    for found in list(fstore.quads(tx, None, s, P, Var("o"))):
        fstore.rm(tx, None, s, P, found[3])
    fstore.add(tx, None, s, P, value)


def _diverge(repo) -> None:
    """Base on main, a dev branch, then both sides change the same quads and cells."""
    with repo.transaction("main", message="base") as tx:
        for n in (1, 2, 3):
            fstore.add(tx, None, S[n], P, f"base{n}")
        t = tables.create(tx, "t", SCHEMA)
        for k in range(4):
            t.insert({"k": k, "a": f"a{k}", "b": k})
    repo.branch("dev")
    with repo.transaction("main", message="ours") as tx:
        for n in (1, 2, 3):
            _set(tx, S[n], f"main{n}")
        fstore.add(tx, None, S[4], P, "ours-only")
        t = tx.table("t")
        t.update({"k": 1, "a": "ours", "b": 10})
        t.update({"k": 2, "a": "o2"})
        t.delete(3)
        t.insert({"k": 7, "a": "seven", "b": 7})
    with repo.transaction("dev", message="theirs") as tx:
        for n in (1, 2, 3):
            _set(tx, S[n], f"dev{n}")
        fstore.add(tx, None, S[5], P, "theirs-only")
        t = tx.table("t")
        t.update({"k": 1, "a": "theirs", "b": 20})
        t.update({"k": 2, "a": "t2"})
        t.update({"k": 3, "b": 30})
        t.update({"k": 0, "b": 100})


def _objects(repo, ref: str, s) -> set:
    return {quad[3].value for quad in fstore.quads(repo.at(ref), None, s, P, Var("o"))}


def _rows(repo, ref: str = "main") -> dict:
    return {row["k"]: row for row in repo.at(ref).table("t").rows()}


def _merge_keys(repo) -> list[bytes]:
    with repo.storage.read() as snapshot:
        return [key for key, _ in snapshot.tx.range(MERGE_PREFIX, prefix_end(MERGE_PREFIX))]


def _key(items, kind: str, *where) -> str:
    return next(item.key for item in items if item.kind == kind and item.where[:len(where)] == where)


@pytest.fixture
def repo(tmp_path):
    repo = fstore.open(tmp_path / "repo")
    _diverge(repo)
    yield repo
    repo.close()


def test_merge_stops_and_is_settled_by_side_and_by_value(repo):
    ours, theirs = repo.head("main"), repo.head("dev")
    with pytest.raises(fstore.ConflictsRecorded) as stopped:
        repo.merge("main", "dev", policy="record", author="ann")
    assert repo.head("main") == ours  # nothing committed
    items = repo.conflicts()
    assert sorted((item.kind, item.where) for item in items) == sorted(
        [("quad", (None, S[n], P)) for n in (1, 2, 3)]
        + [("cell", ("t", (1,), "a")), ("cell", ("t", (1,), "b")), ("cell", ("t", (2,), "a")), ("row", ("t", (3,)))])
    assert {item.key for item in stopped.value.items} == {item.key for item in items}
    cell = next(item for item in items if item.where == ("t", (1,), "a"))
    assert (cell.base, cell.ours, cell.theirs, cell.detail) == ("a1", "ours", "theirs", "update/update")
    row = next(item for item in items if item.kind == "row")
    assert (row.base, row.ours, row.theirs) == ((("b", 3),), None, (("b", 30),))
    state = repo.merge_state()
    assert (state.into, state.other, state.ours, state.theirs, state.author) == ("main", "dev", ours, theirs, "ann")
    assert (state.conflicts, state.unresolved) == (7, 7)

    repo.resolve_conflicts([_key(items, "quad", None, S[1]), _key(items, "cell", "t", (1,), "b")], "ours")
    repo.resolve_conflicts([_key(items, "quad", None, S[2]), _key(items, "cell", "t", (1,), "a"),
                            _key(items, "row", "t", (3,))[:5]], "theirs")  # a key's prefix will do
    repo.resolve_with(_key(items, "quad", None, S[3]), ["both", "x"])
    repo.resolve_with(_key(items, "cell", "t", (2,), "a"), "chosen")
    assert repo.merge_state().unresolved == 0
    merged = repo.merge_continue()

    assert repo.head("main") == merged and repo.commit(merged).parents == (ours, theirs)
    assert repo.commit(merged).author == "ann" and repo.merge_state() is None and _merge_keys(repo) == []
    expected_quads = {1: {"main1"}, 2: {"dev2"}, 3: {"both", "x"}, 4: {"ours-only"}, 5: {"theirs-only"}}
    for n, objects in expected_quads.items():
        assert _objects(repo, "main", S[n]) == objects, n
    expected_rows = {0: {"k": 0, "a": "a0", "b": 100}, 1: {"k": 1, "a": "theirs", "b": 10},
                     2: {"k": 2, "a": "chosen", "b": 2}, 3: {"k": 3, "a": "a3", "b": 30},
                     7: {"k": 7, "a": "seven", "b": 7}}
    got = _rows(repo)
    assert sorted(got) == sorted(expected_rows)
    for k, row in expected_rows.items():
        for column, value in row.items():
            assert got[k][column] == value, (k, column)
    assert repo.verify() == []


def test_abort_leaves_the_branch_exactly_as_before(repo):
    head, digest = repo.head("main"), repo.commit("main").digest
    with pytest.raises(fstore.ConflictsRecorded) as first:
        repo.merge("main", "dev", policy="record")
    keys = _merge_keys(repo)  # the layout docs/format.md gives, byte for byte
    conflict_prefix = bytes.fromhex("02 6d 65 72 67 65 00 02 63 6f 6e 66 6c 69 63 74 00")
    assert bytes.fromhex("02 6d 65 72 67 65 00 02 73 74 61 74 65 00") in keys
    assert sorted(key for key in keys if key.startswith(conflict_prefix)) == sorted(
        conflict_prefix + b"\x02" + item.key.encode() + b"\x00" for item in first.value.items)
    state = repo.merge_abort()
    assert state.ours == head and repo.merge_state() is None and _merge_keys(repo) == []
    assert repo.head("main") == head and repo.commit("main").digest == digest
    with pytest.raises(fstore.NoMergeInProgressError):
        repo.merge_abort()
    with pytest.raises(fstore.ConflictsRecorded) as again:  # the same merge, the same keys
        repo.merge("main", "dev", policy="record")
    assert sorted(i.key for i in again.value.items) == sorted(i.key for i in first.value.items)


def test_refusals_while_merging(repo):
    with pytest.raises(fstore.ConflictsRecorded):
        repo.merge("main", "dev", policy="record")
    keys = sorted(item.key for item in repo.conflicts())
    repo.resolve_conflicts(keys[:2], "ours")
    with pytest.raises(fstore.UnresolvedConflictsError) as unresolved:
        repo.merge_continue()
    assert unresolved.value.keys == [item.key for item in repo.conflicts() if not item.resolved]
    assert all(key in str(unresolved.value) for key in keys[2:]) and keys[0] not in str(unresolved.value)
    repo.branch("other", "dev")
    with pytest.raises(fstore.MergeInProgressError, match="'dev' into 'main' is in progress"):
        repo.merge("other", "main", policy="ours")
    with pytest.raises(fstore.UnknownConflictError, match="no conflict 'zzz'"):
        repo.resolve_conflicts(["zzz"], "ours")
    with pytest.raises(fstore.ResolutionError):
        repo.resolve_with(_key(repo.conflicts(), "quad", None, S[1]), "not a list")
    with pytest.raises(fstore.ResolutionError):
        repo.resolve_with(_key(repo.conflicts(), "row", "t", (3,)), 42)
    repo.resolve_conflicts(side="theirs")
    head = repo.head("main")
    with repo.transaction("main", message="meanwhile") as tx:
        fstore.add(tx, None, IRI("urn:late"), P, 1)
    with pytest.raises(fstore.MergeStaleError, match="moved since"):
        repo.merge_continue()
    assert repo.merge_state() is not None and repo.commit("main").parents == (head,)
    repo.merge_abort()
    assert repo.merge("main", "dev", policy="theirs") == repo.head("main")


def test_merge_state_keeps_theirs_from_gc(repo):
    theirs = repo.head("dev")
    with pytest.raises(fstore.ConflictsRecorded):
        repo.merge("main", theirs, policy="record")
    repo.delete_branch("dev")
    repo.gc(expire=__import__("datetime").timedelta(0))
    repo.resolve_conflicts(side="theirs")
    merged = repo.merge_continue()
    assert repo.commit(merged).parents[1] == theirs and _objects(repo, "main", S[1]) == {"dev1"}


def test_pull_with_conflicts_leaves_the_merge_in_progress(tmp_path):
    a = fstore.open(tmp_path / "a")
    with a.transaction("main", message="base") as tx:
        fstore.add(tx, None, S[1], P, "base")
    a.close()
    b = fstore.clone(str(tmp_path / "a"), tmp_path / "b")
    a = fstore.open(tmp_path / "a")
    for repo, value in ((a, "there"), (b, "here")):
        with repo.transaction("main", message=value) as tx:
            _set(tx, S[1], value)
    theirs = a.head("main")
    a.close()
    ours = b.head("main")
    with pytest.raises(fstore.ConflictsRecorded):
        b.pull("origin")
    state = b.merge_state()
    assert (state.into, state.other, state.ours, state.theirs, state.unresolved) == ("main", "origin/main", ours, theirs, 1)
    with pytest.raises(fstore.MergeInProgressError):
        b.pull("origin")
    (item,) = b.conflicts()
    b.resolve_with(item.key, ["here", "there"])
    merged = b.merge_continue()
    assert b.commit(merged).parents == (ours, theirs) and _objects(b, "main", S[1]) == {"here", "there"}
    b.close()


def run(capsys, repo, *argv):
    return run_cli(capsys, "--repo", str(repo), *argv)


def test_cli_merge_conflicts_resolve_continue_with_tables(tmp_path, capsys):
    path = tmp_path / "repo"
    with fstore.open(path) as repo:
        _diverge(repo)
        ours, theirs = repo.head("main"), repo.head("dev")
    code, out, _ = run(capsys, path, "merge", "dev")
    assert code == 1
    assert "table 't', row 1, column 'a' (update/update)" in out and "  theirs  'theirs'" in out
    assert "table 't', row 3 (delete/update)" in out and "  ours    (no row)" in out
    assert "<urn:s1> <urn:p>" in out and "datae merge --continue" in out
    assert run(capsys, path, "status")[1].splitlines()[1] == "merging dev into main: 7 unresolved conflict(s)"
    code, _, err = run(capsys, path, "merge", "dev")
    assert code == 128 and "in progress" in err
    code, out, _ = run(capsys, path, "conflicts")
    keys = {line.split()[1]: line for line in out.splitlines() if line.startswith("CONFLICT ")}
    assert len(keys) == 7 and out.endswith("7 conflict(s), 7 unresolved\n")
    cell_a1 = next(key for key, line in keys.items() if "row 1, column 'a'" in line)
    code, out, _ = run(capsys, path, "resolve", "--theirs", cell_a1)
    assert code == 0 and f"Resolved {cell_a1}" in out and "6 unresolved" in out
    code, _, err = run(capsys, path, "merge", "--continue")
    assert code == 128 and "6 unresolved conflict(s)" in err and cell_a1 not in err
    assert run(capsys, path, "resolve")[1].endswith("0 unresolved conflict(s) left; datae merge --continue to commit the merge\n")
    assert "[resolved: theirs]" in run(capsys, path, "conflicts")[1]
    code, out, _ = run(capsys, path, "merge", "--continue", "-m", "merged by hand")
    assert code == 0 and out.startswith("Merge made: [main ")
    with fstore.open(path) as repo:
        commit = repo.commit("main")
        assert commit.parents == (ours, theirs) and commit.message == "merged by hand"
        rows = _rows(repo)
        assert rows[1] == {"k": 1, "a": "theirs", "b": 10} and rows[2] == {"k": 2, "a": "o2", "b": 2}
        assert 3 not in rows and rows[0]["b"] == 100
        assert _objects(repo, "main", S[1]) == {"main1"} and repo.merge_state() is None
    assert run(capsys, path, "status")[1].count("\n") == 1
    code, _, err = run(capsys, path, "merge", "--abort")
    assert code == 128 and "no merge is in progress" in err


def test_cli_merge_abort_and_policies(tmp_path, capsys):
    path = tmp_path / "repo"
    with fstore.open(path) as repo:
        _diverge(repo)
        head, digest = repo.head("main"), repo.commit("main").digest
    assert run(capsys, path, "merge", "dev")[0] == 1
    code, out, _ = run(capsys, path, "merge", "--abort")
    assert code == 0 and out.startswith("Merge of dev into main aborted")
    with fstore.open(path) as repo:
        assert repo.head("main") == head and repo.commit("main").digest == digest and repo.merge_state() is None
    code, out, _ = run(capsys, path, "merge", "dev", "--policy", "abort")
    assert code == 1 and "row 1, column 'b'" in out and "nothing was written" in out
    assert run(capsys, path, "merge", "dev", "--policy", "ours")[1].startswith("Merge made: [main ")
    with fstore.open(path) as repo:
        assert _rows(repo)[1] == {"k": 1, "a": "ours", "b": 10}
