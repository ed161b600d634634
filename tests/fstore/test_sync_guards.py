"""What a receiver refuses and what sync leaves alone (review A of issue 24's work):
counts that are booleans, records that change nothing, tags that would make a branch
name ambiguous, and folders a clone did not make."""

from __future__ import annotations

import os

import pytest

import fstore
from fstore import IRI
from fstore.sync import protocol as sync
from fstore.sync.protocol import SyncError, TamperedError


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
    with pytest.raises(SyncError, match=f"{payloads[0]['id']}|field '{field}'"):
        sync.receive_all(b.storage, payloads)
    with b.storage.read() as snapshot:
        assert snapshot.seq_of(payloads[0]["id"]) is None
    with pytest.raises(SyncError):
        sync.check_payload(payloads[0])


@pytest.mark.parametrize("local", [True, False])
@pytest.mark.parametrize("name", [".dst.clone-backup", ".dst.clone-0123456789ab", ".dst.clone-0123456789abcd"])
def test_a_clone_leaves_folders_it_did_not_make(tmp_path, local, name):
    src = fstore.open(str(tmp_path / "src"))
    one_commit(src)
    src.close()
    mine = tmp_path / "lo" / name
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("x")
    fstore.clone(str(tmp_path / "src"), str(tmp_path / "lo" / "dst"), local=local).close()
    assert (mine / "notes.txt").read_text() == "x"
    assert sorted(p.name for p in (tmp_path / "lo").iterdir()) == sorted([name, "dst"])


def test_a_clone_removes_a_killed_clones_marked_folder_but_not_a_live_one(tmp_path):
    from fstore.sync import remotes
    src = fstore.open(str(tmp_path / "src"))
    one_commit(src)
    src.close()
    (tmp_path / "lo").mkdir()
    top = str(tmp_path / "lo" / "dst")
    with remotes._build_folder(top) as live:
        (tmp_path / "lo" / "dead").mkdir()
        dead = tmp_path / "lo" / ".dst.clone-00112233aabb"
        dead.mkdir()
        (dead / remotes._MARKER).write_text("")  # its lock died with its process
        fstore.clone(str(tmp_path / "src"), top + "2").close()  # another name: leaves both alone
        assert dead.exists()
        fstore.clone(str(tmp_path / "src"), str(tmp_path / "lo" / "other")).close()
        with remotes._build_folder(top) as second:
            assert not dead.exists() and os.path.isdir(live) and second != live


def test_a_fetched_tag_named_as_a_local_branch_is_skipped_with_a_warning(tmp_path):
    up = fstore.open(str(tmp_path / "up"))
    tagged = one_commit(up, 1)
    up.tag("feat", "main")
    up.tag("v1", "main")
    down = fstore.open(str(tmp_path / "down"))
    one_commit(down, 2)
    down.branch("feat")
    mine = down.branches()["feat"]
    down.remote_add("up", str(tmp_path / "up"))
    with pytest.warns(fstore.sync.remotes.SkippedTagWarning, match="'feat'"):
        down.fetch("up")
    assert down.tags() == {"v1": tagged}
    assert [c.id for c in down.log("feat")][0] == mine  # the plain name still names one ref
    assert down.verify() == []


def test_a_branch_or_tag_named_as_a_remote_tracking_branch_is_refused_and_pull_still_works(tmp_path):
    up = fstore.open(str(tmp_path / "up"))
    one_commit(up, 1)
    up.close()
    c = fstore.clone(str(tmp_path / "up"), str(tmp_path / "c"))
    for create in (c.branch, c.tag):
        with pytest.raises(fstore.errors.RefExistsError, match="origin/main"):
            create("origin/main")
        with pytest.raises(fstore.errors.RefExistsError, match="origin"):
            create("origin/later")
    assert set(c.branches()) == {"main"} and c.tags() == {}
    up = fstore.open(str(tmp_path / "up"))
    head = one_commit(up, 2)
    assert c.pull("origin", "main") == head


def test_pull_resolves_the_remote_tracking_branch_even_beside_an_older_branch_of_its_name(tmp_path):
    up = fstore.open(str(tmp_path / "up"))
    one_commit(up, 1)
    up.close()
    c = fstore.clone(str(tmp_path / "up"), str(tmp_path / "c"))
    with c.storage.write() as writer:  # what a store made before the rule holds
        writer.set_ref(fstore.core.refs.BRANCH, "origin/main", None)
    up = fstore.open(str(tmp_path / "up"))
    head = one_commit(up, 2)
    assert c.pull("origin", "main") == head


def forged_on(head: str, payload: dict, *, message: str = "noop") -> dict:
    """A commit on ``head`` whose records are ``payload``'s, with a true id and digest."""
    import datetime as dt

    from fstore.core.commits import commit_hash
    from fstore.core.digest import as_hex, from_hex, moved
    records = sorted(payload["records"])
    born = [r[:-1] for r in records if r[-1:] == b"\x01"]
    dead = [r[:-1] for r in records if r[-1:] != b"\x01"]
    digest = as_hex(moved(from_hex(payload["digest"]), born, dead))
    time = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    return {"id": commit_hash([head], message, "evil", time, digest, records), "parents": [head], "message": message,
            "author": "evil", "time": time.isoformat(), "digest": digest, "added": len(born), "removed": len(dead),
            "records": records}


@pytest.mark.parametrize("at_head", [True, False])
def test_a_pushed_record_that_changes_nothing_is_refused(tmp_path, at_head):
    a = fstore.open(str(tmp_path / "a"))
    first = one_commit(a, 1)
    head = one_commit(a, 2) if at_head else first
    a.close()
    b = fstore.clone(str(tmp_path / "a"), str(tmp_path / "b"), local=False)
    (payload,) = [p for p in sync.send(b.storage, [first], set()) if p["id"] == first]
    forged = forged_on(head, payload)
    before = b.branches()
    with pytest.raises(TamperedError, match=f"commit {forged['id']}: its record .*changes nothing"):
        sync.accept_push(b.storage, [sync.RefUpdate("branch", "main", head, forged["id"])], [forged])
    assert b.branches() == before and b.verify() == []


def test_a_root_commit_that_removes_what_is_not_there_is_refused(tmp_path):
    a = fstore.open(str(tmp_path / "a"))
    one_commit(a, 1)
    (payload,) = payloads_of(a)
    import datetime as dt

    from fstore.core.commits import commit_hash
    from fstore.core.digest import EMPTY, as_hex
    records = [r[:-1] + b"\x00" for r in payload["records"]]
    time = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    root = {"id": commit_hash([], "m", "x", time, as_hex(EMPTY), records), "parents": [], "message": "m",
            "author": "x", "time": time.isoformat(), "digest": as_hex(EMPTY), "added": 0, "removed": len(records),
            "records": records}
    b = fstore.open(str(tmp_path / "b"))
    with pytest.raises(TamperedError, match="changes nothing"):
        sync.receive_all(b.storage, [root])


def test_verify_of_many_merges_keeps_few_ancestries_and_counts_them_as_a_naive_diff_does(tmp_path):
    from fstore.core import commits as commit_store
    from fstore import Var
    repo = fstore.open(str(tmp_path / "m"))
    with repo.transaction("main", message="0", author="a") as tx:
        fstore.add(tx, IRI("urn:g"), IRI("urn:s"), IRI("urn:p"), 0)
    repo.branch("dev")
    rounds = commit_store._CACHED_ANCESTRIES + 8
    for r in range(rounds):
        with repo.transaction("dev", message="d", author="a") as tx:
            fstore.add(tx, IRI("urn:g"), IRI(f"urn:d{r}"), IRI("urn:p"), r)
            if r:
                fstore.rm(tx, IRI("urn:g"), IRI(f"urn:m{r - 1}"), IRI("urn:p"), r - 1)
        with repo.transaction("main", message="m", author="a") as tx:
            fstore.add(tx, IRI("urn:g"), IRI(f"urn:m{r}"), IRI("urn:p"), r)
        repo.merge("main", "dev")
        repo.merge("dev", "main")
    repo.close()
    repo = fstore.open(str(tmp_path / "m"))
    assert repo.verify() == []
    assert len(repo.storage.commits._ancestors) <= commit_store._CACHED_ANCESTRIES

    def state(commit_id: str) -> set:
        return set(fstore.quads(repo.at(commit_id), Var("g"), Var("s"), Var("p"), Var("o")))

    merges = [c for c in repo.log("main") if len(c.parents) == 2]
    assert len(merges) == rounds
    for merge in merges:
        now, was = state(merge.id), state(merge.parents[0])
        assert (merge.added, merge.removed) == (len(now - was), len(was - now))


def test_the_cli_prints_a_skipped_tag_as_one_warning_line(tmp_path, monkeypatch, capsys):
    from tests.cli_fixtures import run_cli

    up = fstore.open(str(tmp_path / "up" / ".datae"))
    one_commit(up, 1)
    up.tag("feat", "main")
    up.close()
    down = fstore.open(str(tmp_path / "down" / ".datae"))
    one_commit(down, 2)
    down.branch("feat")
    down.remote_add("up", str(tmp_path / "up" / ".datae"))
    down.close()
    monkeypatch.chdir(tmp_path / "down")
    code, _, err = run_cli(capsys, "fetch", "up")  # in this process: what stderr says is tested
    assert code == 0
    assert err.splitlines() == [line for line in err.splitlines() if line.startswith("datae: warning:")]
    assert len(err.splitlines()) == 1 and "'feat'" in err


def test_table_commits_pass_the_record_check_over_sync(tmp_path):
    import fstore.tables as tables
    a = fstore.open(str(tmp_path / "a"))
    with a.transaction("main", message="table", author="t") as tx:
        tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
                                {"id": "v", "name": "v", "dataType": "text"}])
        tx.table("t").insert_many([{"k": i, "v": str(i)} for i in range(5)])
    b = fstore.clone(str(tmp_path / "a"), str(tmp_path / "b"), local=False)
    with b.transaction("main", message="edit", author="t") as tx:
        tx.table("t").update({"k": 1, "v": "one"})
        tx.table("t").delete(2)
        tx.table("t").upsert({"k": 9, "v": "nine"})
    b.remote_add("a2", str(tmp_path / "a"))
    b.push("a2", "main")
    assert a.branches() == b.branches() and a.verify() == []


def test_alive_many_agrees_with_was_alive_one_tuple_at_a_time(tmp_path):
    """The batched check a receiver makes (one sorted walk of the records) gives what the
    per-tuple look-up gives, at every commit of two branches: tuples added, removed and
    added again, one naming a value too long for a key, and terms never stored."""
    import random
    from fstore.core.layout import QUADS
    repo = fstore.open(str(tmp_path / "s"))
    rng = random.Random(7)
    long_text = "x" * 3000
    universe = [(IRI("urn:g"), IRI(f"urn:s{i % 7}"), IRI(f"urn:p{i % 3}"), i % 5) for i in range(40)]
    universe += [(IRI("urn:g"), IRI("urn:s1"), IRI("urn:p0"), long_text), (None, IRI("urn:never"), IRI("urn:p0"), 1)]
    for number in range(12):
        branch = "main" if number < 6 or number % 2 else "dev"
        if number == 6:
            repo.branch("dev", "main")
        with repo.transaction(branch, message=f"c{number}", author="t") as tx:
            for quad in rng.sample(universe[:-1], 10):
                (fstore.rm if fstore.ask(tx, *quad) else fstore.add)(tx, *quad)
    storage = repo.storage
    with storage.read() as snapshot:
        history = storage._by_name[QUADS.name]
        parts = [history.parts(quad) for quad in universe]
        for seq in [None, *(seq for seq, _ in snapshot.all_commits())]:
            one_at_a_time = [snapshot.was_alive(seq, QUADS.name, quad) for quad in universe]
            assert snapshot.alive_many(seq, QUADS.name, universe, parts) == one_at_a_time
            assert any(one_at_a_time) or seq is None
