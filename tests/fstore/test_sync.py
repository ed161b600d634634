"""Sync between real stores in separate directories (fstore.sync, issue 14): clone, fetch,
push and pull, against a model of which commits each store holds; every received commit
checked against its id and state digest; a refused sync changes nothing."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from typing import Callable

import pytest

import fstore
import fstore.tables as tables
from fstore import IRI, Var
from fstore.sync.protocol import NotFastForwardError, SyncError, TamperedError, commit_payloads, receive
from tests.cli_fixtures import run_cli

EVERYTHING = (Var("g"), Var("s"), Var("p"), Var("o"))


def store(path) -> fstore.Repository:
    return fstore.open(os.path.join(path, ".datae"))


def state(repo: fstore.Repository, ref: str) -> list[str]:
    return sorted(map(repr, fstore.quads(repo.at(ref), *EVERYTHING)))


def commit(repo: fstore.Repository, n: int, branch: str = "main", rng: random.Random | None = None) -> str:
    rng = rng or random.Random(n)
    with repo.transaction(branch, message=f"c{n}", author="t") as tx:
        for _ in range(5):
            fstore.add(tx, IRI(f"urn:g{rng.randrange(2)}"), IRI(f"urn:s{rng.randrange(20)}"), IRI("urn:p"), rng.randrange(8))
        for found in list(fstore.quads(tx, IRI("urn:g0"), Var("s"), IRI("urn:p"), Var("o")))[:2]:
            fstore.rm(tx, *found)
    return tx.commit_id


@pytest.mark.parametrize("local", [True, False], ids=["file copy", "commit by commit"])
def test_clone_holds_every_commit_with_equal_ids_and_states(tmp_path, local):
    origin = store(tmp_path / "origin")
    ids = [commit(origin, n) for n in range(6)]
    origin.branch("dev", ids[2])
    commit(origin, 99, "dev")
    with origin.transaction("main", message="table", author="t") as tx:
        tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0}])
        tx.table("t").insert_many([{"k": i} for i in range(10)])
    origin.remote_add("elsewhere", str(tmp_path / "elsewhere"))
    origin.delete_branch("dev")
    origin.branch("dev", ids[2])
    commit(origin, 99, "dev")
    origin.close()
    copy = fstore.clone(str(tmp_path / "origin"), tmp_path / "copy" / ".datae", local=local)
    origin = store(tmp_path / "origin")
    assert [c.id for c in copy.log("main")] == [c.id for c in origin.log("main")]
    assert copy.branches() == {"main": origin.head("main")} and copy.reflog() == []
    assert copy.remote_branches() == {f"origin/{name}": head for name, head in origin.branches().items()}
    for here, there in (("main", "main"), ("origin/dev", "dev"), (ids[3], ids[3])):
        assert state(copy, here) == state(origin, there)
        assert copy.commit(here).digest == origin.commit(there).digest
    assert [r for r in copy.at("main").table("t").rows()] == [r for r in origin.at("main").table("t").rows()]
    assert copy.verify() == [] and copy.remotes() == {"origin": str(tmp_path / "origin")}
    origin.close()
    copy.close()


def seeded_origin(tmp_path) -> str:
    """An origin store with one commit, closed; returns its directory."""
    origin = store(tmp_path / "origin")
    commit(origin, 0)
    origin.close()
    return str(tmp_path / "origin")


def test_fetch_brings_only_new_commits_and_push_fast_forwards(tmp_path):
    copy = fstore.clone(seeded_origin(tmp_path), tmp_path / "copy" / ".datae")
    origin = store(tmp_path / "origin")
    new = [commit(origin, n) for n in range(1, 4)]
    with origin.storage.read() as theirs, copy.storage.read() as ours:
        have = {record["id"] for _, record in ours.all_commits()}
        sent = [p["id"] for p in commit_payloads(theirs, [theirs.head("main")], have)]
    assert sent == new  # only what the copy lacks, parents first
    origin.close()
    assert copy.fetch()["origin/main"] == new[-1]
    assert copy.head("main") != new[-1]  # fetch moves remote-tracking branches only
    assert copy.pull() == new[-1]  # a fast-forward
    mine = commit(copy, 50)
    assert copy.push() == mine
    origin = store(tmp_path / "origin")
    assert origin.head("main") == mine and origin.verify() == []
    assert state(origin, "main") == state(copy, "main")
    origin.close()
    copy.close()


def test_a_push_that_drops_commits_is_refused_unless_forced(tmp_path):
    a = fstore.clone(seeded_origin(tmp_path), tmp_path / "a" / ".datae")
    b = fstore.clone(str(tmp_path / "origin"), tmp_path / "b" / ".datae")
    commit(a, 1)
    a.push()
    mine = commit(b, 2, rng=random.Random(77))
    with pytest.raises(NotFastForwardError, match="refused: the remote's main"):
        b.push()
    origin = store(tmp_path / "origin")
    assert origin.head("main") == a.head("main")
    origin.close()
    assert b.push(force=True) == mine
    origin = store(tmp_path / "origin")
    assert origin.head("main") == mine
    assert [name for _, _, name, _ in origin.reflog()] == ["main"]  # a's commit stays reachable a while
    origin.close()
    b.pull()  # nothing new: already up to date
    merged = a.pull(policy="ours")  # a's main and b's diverged: a real merge
    assert a.commit(merged).parents[1] == mine
    a.close()
    b.close()


def test_tampered_or_orphan_commits_are_refused_and_change_nothing(tmp_path):
    origin = store(tmp_path / "origin")
    for n in range(3):
        commit(origin, n)
    target = store(tmp_path / "target")
    with origin.storage.read() as snapshot:
        payloads = list(commit_payloads(snapshot, [snapshot.head("main")], set()))
    before = target.stats()["commits"]
    cases = [
        ({**payloads[0], "message": "changed"}, TamperedError, "does not hash to its id"),
        ({**payloads[0], "records": payloads[0]["records"][1:]}, TamperedError, "does not hash to its id"),
        (payloads[1], SyncError, "was neither sent nor held"),
    ]
    for payload, error, message in cases:
        with pytest.raises(error, match=message):
            with target.storage.write() as writer:
                receive(writer, payload)
        assert target.stats()["commits"] == before
    # A digest that its records do not give, with an id recomputed to match it.
    from fstore.core.commits import commit_hash
    import datetime as dt

    forged = {**payloads[0], "digest": "0" * 63 + "1"}
    forged["id"] = commit_hash([], forged["message"], forged["author"], dt.datetime.fromisoformat(forged["time"]),
                               forged["digest"], sorted(forged["records"]))
    with pytest.raises(TamperedError, match="do not give the state digest it claims"):
        with target.storage.write() as writer:
            receive(writer, forged)
    assert target.stats()["commits"] == before and target.verify() == []
    origin.close()
    target.close()


def test_bad_remotes_are_typed_errors(tmp_path):
    repo = store(tmp_path / "here")
    commit(repo, 0)
    repo.remote_add("nowhere", str(tmp_path / "missing"))
    with pytest.raises(SyncError, match="no datae store there"):
        repo.fetch("nowhere")
    with pytest.raises(fstore.UnknownRefError, match="no remote named 'ghost'"):
        repo.fetch("ghost")
    other = store(tmp_path / "other")
    commit(other, 1, rng=random.Random(5))
    other.close()
    repo.remote_add("other", str(tmp_path / "other"))
    with pytest.raises(SyncError, match="share no commit"):
        repo.pull("other", "main")
    repo.remote_add("web", "http://127.0.0.1:9")  # the discard port: nothing serves there
    with pytest.raises(SyncError, match="cannot reach the datae server at http://127.0.0.1:9"):
        repo.fetch("web")
    with pytest.raises(SyncError, match="must not hold a token"):
        repo.remote_add("leaky", "http://user:secret@127.0.0.1:9")
    with pytest.raises(SyncError, match="a path to a store or an http:// URL"):
        repo.remote_add("ftp", "ftp://example.org/store")
    for url, reason in [("http://127.0.0.1:abc", "port"), ("http://[::1", "malformed"),
                        ("http://127.0.0.1:8000/?token=x", "takes no query")]:
        with pytest.raises(SyncError, match=reason):
            repo.remote_add("bad", url)
    assert repo.verify() == []
    repo.close()


def random_sync(clones: list[fstore.Repository], rng: random.Random, steps: int, *, token: str | None = None,
                seen: Callable[[fstore.Repository], None] = lambda repo: None) -> None:
    """``steps`` random commits, pushes, fetches and pulls by ``clones`` of one origin, then
    every clone pulled and pushed until all are at one head; ``seen`` is told each store
    after each step that may have made a commit."""
    for step in range(steps):
        repo = rng.choice(clones)
        action = rng.choice(["commit", "commit", "push", "pull", "fetch"])
        if action == "commit":
            commit(repo, 100 + step, rng=rng)
        elif action == "push":
            try:
                repo.push(token=token)
            except NotFastForwardError:
                repo.pull(policy="theirs")
                seen(repo)
                repo.push(token=token)
        elif action == "pull":
            repo.pull(policy="ours")
        else:
            repo.fetch()
        seen(repo)
    for repo in clones:
        repo.pull(policy="ours")
        seen(repo)
        repo.push(token=token)
    clones[0].pull()


def test_three_stores_with_random_histories_agree(tmp_path):
    """Random commits, pushes, fetches and pulls between two clones of a third store:
    every commit id that two stores hold names the same state in both."""
    rng = random.Random(2026)
    clones = [fstore.clone(seeded_origin(tmp_path) if name == "a" else str(tmp_path / "origin"), tmp_path / name / ".datae",
                           local=name == "a") for name in ("a", "b")]
    random_sync(clones, rng, 40)
    origin = store(tmp_path / "origin")
    everyone = [origin, *clones]
    assert len({repo.head("main") for repo in everyone}) == 1
    ids = set.intersection(*({c.id for c in repo.log("main")} for repo in everyone))
    for commit_id in ids:
        expected = state(origin, commit_id)
        assert all(state(repo, commit_id) == expected for repo in clones)
    assert all(repo.verify() == [] for repo in everyone)
    for repo in everyone:
        repo.close()


def test_the_cli_clones_pushes_and_pulls_between_processes(tmp_path):
    def datae(*argv: str, cwd=tmp_path) -> subprocess.CompletedProcess:
        result = subprocess.run([sys.executable, "-m", "datae", *argv], capture_output=True, text=True, cwd=cwd)
        assert result.returncode == 0, (argv, result.stderr)
        return result

    assert "Cloned" in datae("clone", seeded_origin(tmp_path), "a").stdout
    datae("clone", str(tmp_path / "origin"), "b")
    datae("--repo", "a", "query", "INSERT DATA { <urn:x> <urn:y> 1 }")
    assert "main -> origin/main" in datae("--repo", "a", "push").stdout
    assert "origin/main" in datae("--repo", "b", "fetch").stdout
    datae("--repo", "b", "pull")
    assert "remotes/origin/main" in datae("--repo", "b", "branch", "-a").stdout
    assert datae("--repo", "b", "remote", "list").stdout.startswith("origin\t")
    rows = datae("--repo", "b", "query", "SELECT ?o WHERE { <urn:x> <urn:y> ?o }", "--format", "csv").stdout
    assert rows.splitlines()[1:] == ["1"]
    refused = subprocess.run([sys.executable, "-m", "datae", "--repo", "b", "push", "nowhere"],
                             capture_output=True, text=True, cwd=tmp_path)
    assert refused.returncode > 0 and refused.stderr.count("\n") == 1 and "no remote named 'nowhere'" in refused.stderr


def test_a_payload_built_from_docs_sync_md_is_received(tmp_path):
    """docs/sync.md, protocol 1: a commit built from the page alone (msgpack, hashlib and
    pack_value), received by a store that has never seen it."""
    import datetime as dt
    import hashlib

    import msgpack

    from fstore.sync.wire import decode_payload
    from nstore.pack import pack_value

    identity = pack_value(None) + pack_value(IRI("urn:s")) + pack_value(IRI("urn:p")) + pack_value(1)
    record = identity + b"\x01"
    state = (int.from_bytes(hashlib.sha256(identity).digest(), "big") % (1 << 256)).to_bytes(32, "big").hex()
    time = dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc).isoformat()
    head = msgpack.packb([b"datae-commit/2", [], "m", "a", time, state])
    digest = hashlib.sha256(len(head).to_bytes(8, "big") + head + len(record).to_bytes(4, "big") + record)
    wire = msgpack.packb({"id": digest.hexdigest(), "parents": [], "message": "m", "author": "a", "time": time,
                          "digest": state, "added": 1, "removed": 0, "records": [record]}, use_bin_type=True)
    repo = store(tmp_path / "r")
    with repo.storage.write() as writer:
        seq = receive(writer, decode_payload(wire))
    assert repo.commit(digest.hexdigest()).seq == seq
    assert list(fstore.quads(repo.at(digest.hexdigest()), *EVERYTHING)) == [
        (None, IRI("urn:s"), IRI("urn:p"), fstore.to_rdf(1))]
    repo.close()


def test_the_daily_loop_status_branch_and_tag_deletion(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)

    def datae(*argv: str, ok: bool = True) -> subprocess.CompletedProcess:
        # In this process: what is tested is what each command says, not the process.
        code, out, err = run_cli(capsys, "--repo", "b", *argv)
        assert (code == 0) == ok, (argv, err)
        return subprocess.CompletedProcess(argv, code, out, err)

    fresh = store(tmp_path / "fresh")
    with pytest.raises(fstore.RefInUseError, match="it is the current branch"):
        fresh.delete_branch("main")  # a fresh store has no current-branch key: main is current
    fresh.close()
    b = fstore.clone(seeded_origin(tmp_path), tmp_path / "b" / ".datae")
    b.close()
    assert "up to date with origin/main" in datae("status").stdout
    datae("query", "INSERT DATA { <urn:b> <urn:p> 1 }")
    assert "1 commit(s) ahead of origin/main, 0 behind" in datae("status").stdout
    datae("branch", "topic")
    datae("switch", "topic")
    datae("query", "INSERT DATA { <urn:t> <urn:p> 2 }")
    datae("switch", "main")
    refused = datae("branch", "-d", "topic", ok=False)
    assert "is not merged into any other branch" in refused.stderr and refused.stderr.count("\n") == 1
    assert "Deleted branch topic" in datae("branch", "-D", "topic").stdout
    assert "deleted branch topic" in datae("reflog").stdout
    datae("tag", "v1")
    assert "Deleted tag v1" in datae("tag", "-d", "v1").stdout
    assert datae("tag").stdout == ""
    assert "current branch" in datae("branch", "-d", "main", ok=False).stderr


def test_an_interrupted_fetch_moves_no_ref_and_the_next_one_completes(tmp_path, monkeypatch):
    import fstore.sync.protocol as sync

    copy = fstore.clone(seeded_origin(tmp_path), tmp_path / "copy" / ".datae")
    origin = store(tmp_path / "origin")
    new = [commit(origin, n) for n in range(1, 7)]
    origin.close()
    monkeypatch.setattr(sync, "BATCH_RECORDS", 1)  # a transaction per commit
    real, calls = sync.receive, []

    def dropped_after_three(writer, payload):
        calls.append(payload["id"])
        if len(calls) == 4:
            raise ConnectionError("the connection dropped")
        return real(writer, payload)

    monkeypatch.setattr(sync, "receive", dropped_after_three)
    before = copy.remote_branches()
    with pytest.raises(ConnectionError):
        copy.fetch()
    assert copy.remote_branches() == before and copy.verify() == []
    assert copy.stats()["commits"] == 1 + 3  # three arrived, unreachable until a ref reaches them
    monkeypatch.setattr(sync, "receive", real)
    assert copy.fetch()["origin/main"] == new[-1]
    assert [c.id for c in copy.log("origin/main")][:6] == new[::-1] and copy.verify() == []
    copy.close()


def test_a_merge_has_the_same_state_in_stores_that_received_its_parents_in_another_order(tmp_path):
    """Two stores number the same commits in different orders (each its own first). A merge
    of a quad both sides changed must not lean on that order: pushed to the other store,
    it gives the state digest it claims and the state it had where it was made."""
    q = (None, IRI("urn:s"), IRI("urn:p"), 1)
    a = store(tmp_path / "a")
    with a.transaction("main", message="base", author="t") as tx:
        fstore.add(tx, *q)
    a.close()
    b = fstore.clone(str(tmp_path / "a"), tmp_path / "b" / ".datae", local=False)
    a = store(tmp_path / "a")
    with a.transaction("main", message="a removes", author="t") as tx:
        fstore.rm(tx, *q)
    a.close()
    with b.transaction("main", message="b removes", author="t") as tx:
        fstore.rm(tx, *q)
    with b.transaction("main", message="b puts it back", author="t") as tx:
        fstore.add(tx, *q)
    merged = b.pull(policy="ours")  # in b, a's removal arrives last; in a, it came first
    made_here = state(b, merged)
    assert made_here == []  # ours kept base's quad, theirs removed it: the removal wins
    b.push()
    a = store(tmp_path / "a")
    assert a.head("main") == merged and state(a, merged) == made_here and a.verify() == []
    a.close()
    b.close()
