"""Merge requests (fstore.sync.merge_requests, issue 14 point 6): a contributor proposes on a shared
store, a reviewer comments, approves and merges there, and fetches carry the requests back;
conflicting, closed and unknown requests are refused with nothing written; the command
line end to end."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

import fstore
import fstore.tables as tables
from fstore import IRI, Var
from fstore.sync.merge_requests import (RequestConflictError, RequestRefusedError, RequestStateError, UnknownRequestError,
                             mirror_requests)
from fstore.sync import merge_requests
from tests.cli_fixtures import run_cli
from tests.locations import PROJECT

EVERYTHING = (Var("g"), Var("s"), Var("p"), Var("o"))
S, NAME, AGE = IRI("urn:alice"), IRI("urn:name"), IRI("urn:age")


def quads(repo: fstore.Repository, ref: str) -> set[tuple]:
    return set(fstore.quads(repo.at(ref), *EVERYTHING))


def write(repo: fstore.Repository, branch: str, add=(), rm=(), message: str = "change") -> str:
    with repo.transaction(branch, message=message, author="t") as tx:
        for quad in rm:
            fstore.rm(tx, *quad)
        for quad in add:
            fstore.add(tx, *quad)
    return tx.commit_id


@pytest.fixture
def server(tmp_path):
    """Store A (the shared server) with one commit on main, and its path."""
    path = str(tmp_path / "a" / ".datae")
    with fstore.open(path) as a:
        write(a, "main", add=[(None, S, NAME, "Alice"), (None, S, AGE, 30)], message="first")
    return path


def clone(server: str, tmp_path, name: str) -> fstore.Repository:
    return fstore.clone(server, tmp_path / name / ".datae")


def test_round_trip_between_stores(server, tmp_path):
    b, c = clone(server, tmp_path, "b"), clone(server, tmp_path, "c")
    b.branch("feature")
    write(b, "feature", add=[(None, S, IRI("urn:knows"), IRI("urn:bob"))])
    write(b, "feature", add=[(None, S, AGE, 31)], rm=[(None, S, AGE, 30)])
    b.push("origin", "feature")
    a = fstore.open(server)  # A, the shared store, opened where it lives
    try:
        number = a.request_open("feature", "main", "Alice's age and friend", author="bea")
    finally:
        a.close()
    assert number == 1

    # C, the reviewer, works on the server.
    a = fstore.open(server)
    try:
        [listed] = a.requests("open")
        assert (listed["number"], listed["source"], listed["target"], listed["author"]) == (1, "feature", "main", "bea")
        shown = a.request(1)
        preview = shown["preview"]
        assert preview["kind"] == "fast-forward" and preview["conflicts"] == []
        assert preview["quads"] == {"added": 2, "removed": 1} and preview["more"] == 0
        integer = "<http://www.w3.org/2001/XMLSchema#integer>"
        assert preview["changes"] == [f'- <urn:alice> <urn:age> "30"^^{integer} .', f'+ <urn:alice> <urn:age> "31"^^{integer} .',
                                      "+ <urn:alice> <urn:knows> <urn:bob> ."]
        assert a.request(1, limit=1)["preview"]["more"] == 2
        a.request_comment(1, "checked against the register", author="cy")
        a.request_approve(1, author="cy")
        merged = a.request_merge(1, author="cy")
        assert a.head("main") == merged == b.head("feature")
        assert quads(a, "main") == quads(b, "feature")
        record = a.request(1)
        assert record["state"] == "merged" and record["merged_by"] == "cy" and record["merge_commit"] == merged
        assert [x["author"] for x in record["approvals"]] == ["cy"] and record["comments"][0]["text"].startswith("checked")
    finally:
        a.close()

    # B fetches: the request comes back merged, read-only, and works offline.
    assert b.request_mirror("origin").requests() == []
    b.fetch("origin")
    assert b.requests() == []  # B's own requests: none
    [mirrored] = b.request_mirror("origin").requests()
    assert mirrored["state"] == "merged" and mirrored["merge_commit"] == b.resolve("origin/main")
    assert b.request_mirror("origin").request(1)["preview"]["quads"] == {"added": 2, "removed": 1}
    b.remote_remove("origin")
    with pytest.raises(fstore.UnknownRefError):
        b.request_mirror("origin")
    with b.storage.read() as snapshot:
        assert list(snapshot.request_records("origin")) == []
    b.close()
    c.close()


def test_a_file_copy_clone_holds_the_origins_requests_as_copies(server, tmp_path):
    with fstore.open(server) as a:
        a.branch("x")
        write(a, "x", add=[(None, S, NAME, "Al")])
        a.request_open("x", title="rename", author="ann")
    b = clone(server, tmp_path, "b")
    assert b.requests() == [] and [r["title"] for r in b.request_mirror("origin").requests()] == ["rename"]
    b.branch("y")
    write(b, "y", add=[(None, S, NAME, "Ally")])
    assert b.request_open("y", author="bob") == 1  # B numbers its own from 1
    b.close()


def test_preview_counts_table_rows(server):
    with fstore.open(server) as a:
        with a.transaction("main", message="table", author="t") as tx:
            tables.create(tx, "people", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
                                         {"id": "n", "name": "n", "dataType": "text"}])
            tx.table("people").insert_many([{"k": i, "n": str(i)} for i in range(5)])
        a.branch("edit")
        with a.transaction("edit", message="rows", author="t") as tx:
            tx.table("people").update({"k": 1, "n": "one"})
            tx.table("people").delete(2)
            tx.table("people").insert({"k": 9, "n": "nine"})
        number = a.request_open("edit", author="ann")
        assert a.request(number)["preview"]["tables"] == {"people": 3}


def conflicting(a: fstore.Repository) -> int:
    a.branch("theirs")
    write(a, "theirs", add=[(None, S, NAME, "Alicia")], rm=[(None, S, NAME, "Alice")])
    write(a, "main", add=[(None, S, NAME, "Ali")], rm=[(None, S, NAME, "Alice")])
    return a.request_open("theirs", "main", "rename", author="ann")


def test_a_conflicting_request_shows_its_conflicts_and_merging_writes_nothing(server):
    with fstore.open(server) as a:
        number = conflicting(a)
        preview = a.request(number)["preview"]
        [conflict] = preview["conflicts"]
        assert preview["kind"] == "merge"
        assert (conflict["subject"], conflict["predicate"]) == ("<urn:alice>", "<urn:name>")
        assert (conflict["base"], conflict["target"], conflict["source"]) == (['"Alice"'], ['"Ali"'], ['"Alicia"'])
        heads, before = a.branches(), a.requests()
        with pytest.raises(RequestConflictError) as raised:
            a.request_merge(number, author="bob")
        assert raised.value.conflicts == preview["conflicts"] and "Merge main into theirs" in str(raised.value)
        assert a.branches() == heads and a.requests() == before
        # The contributor merges the target into the source and resolves there; then it merges.
        a.merge("theirs", "main", policy="ours", author="ann")  # keep the source's value
        assert a.request(number)["preview"]["conflicts"] == []
        merged = a.request_merge(number, author="bob")
        assert a.head("main") == merged and fstore.ask(a.at("main"), None, S, NAME, "Alicia")


def test_refusals_change_nothing(server):
    with fstore.open(server) as a:
        a.branch("f")
        write(a, "f", add=[(None, S, NAME, "Al")])
        with pytest.raises(RequestRefusedError):
            a.request_open("main", "main")
        with pytest.raises(fstore.UnknownRefError, match="no branch named 'nope'"):
            a.request_open("nope")
        a.branch("behind")
        with pytest.raises(RequestRefusedError, match="nothing to merge"):
            a.request_open("behind")
        number = a.request_open("f", author="ann")
        with pytest.raises(RequestStateError, match=f"#{number} already proposes"):
            a.request_open("f", author="bob")
        with pytest.raises(RequestRefusedError, match="cannot approve"):
            a.request_approve(number, author="ann")
        with pytest.raises(RequestRefusedError):
            a.request_approve(number, author="")
        with pytest.raises(UnknownRequestError, match="no merge request #7"):
            a.request(7)
        with pytest.raises(UnknownRequestError):
            a.request_merge(7, author="bob")
        a.request_close(number, author="bob")
        head = a.head("main")
        before = a.request(number)
        for act in (lambda: a.request_merge(number, author="bob"), lambda: a.request_approve(number, author="bob"),
                    lambda: a.request_close(number, author="bob")):
            with pytest.raises(RequestStateError, match="it is closed"):
                act()
        assert a.head("main") == head and a.request(number) == before and before["preview"] is None
        assert [r["state"] for r in a.requests()] == ["closed"] and a.requests("open") == []
        with pytest.raises(RequestRefusedError):
            a.requests("pending")
        assert a.request_open("f", author="ann") == number + 1  # a closed request does not block a new one


def test_a_second_approval_by_the_same_reviewer_replaces_the_first(server):
    with fstore.open(server) as a:
        a.branch("f")
        write(a, "f", add=[(None, S, NAME, "Al")])
        number = a.request_open("f", author="ann")
        a.request_approve(number, author="bob")
        first = a.request(number)["approvals"][0]["head"]
        write(a, "f", add=[(None, S, NAME, "Ally")])
        a.request_approve(number, author="bob")
        [approval] = a.request(number)["approvals"]
        assert approval["head"] == a.head("f") != first


# Closes request #1 of the store at argv[1] once told to on stdin, in a process of its own.
_CLOSER = """
import sys
import fstore
from fstore.sync.merge_requests import RequestStateError
repo = fstore.open(sys.argv[1])
print("ready", flush=True)
sys.stdin.readline()
try:
    repo.request_close(1, author="dee")
    print("closed", flush=True)
except RequestStateError as exc:
    print("refused:", exc, flush=True)
repo.close()
"""


def test_a_close_from_another_process_waits_for_the_merge_under_way(server, monkeypatch):
    """Two processes on one store (the workers of ``datae serve``): a close of request #1
    sent while a merge of it is under way, after the merge found it open. The merge reads,
    merges and marks in one write transaction, so the close waits for LMDB's writer lock
    and is then refused: the request is merged and its target holds the merge. (Read in
    one transaction and merged in another, the close landed in between and the target was
    merged under a closed request.)"""
    with fstore.open(server) as a:
        a.branch("f")
        write(a, "f", add=[(None, S, NAME, "Al")])
        assert a.request_open("f", author="ann") == 1
        before = a.head("main")
    closer = subprocess.Popen([sys.executable, "-c", _CLOSER, server], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, cwd=PROJECT, env={**os.environ, "PYTHONPATH": str(PROJECT)})
    try:
        assert closer.stdout.readline() == "ready\n"
        checked = merge_requests._require_open

        def then_close(record: dict, action: str) -> None:
            checked(record, action)
            if action == "merge":  # found open: now the other process closes it, if it can
                closer.stdin.write("go\n")
                closer.stdin.flush()
                time.sleep(1.0)

        monkeypatch.setattr(merge_requests, "_require_open", then_close)
        with fstore.open(server) as a:
            merged = a.request_merge(1, author="bob")
            answer, _ = closer.communicate(timeout=60)
            record = a.request(1)
            assert answer.startswith("refused:") and "it is merged" in answer
            assert record["state"] == "merged" and record["merge_commit"] == merged == a.head("main") != before
    finally:
        if closer.poll() is None:
            closer.kill()
            closer.wait()


def test_mirror_replaces_the_copies(server, tmp_path):
    b = clone(server, tmp_path, "b")

    class Remote:  # anything with requests(): later an HTTP client
        def __init__(self, records):
            self.records = records

        def requests(self):
            return self.records

    record = {"number": 4, "state": "open", "source": "s", "target": "main", "approvals": [], "title": "t"}
    assert mirror_requests(b.storage, Remote([record]), "origin") == 1
    assert [r["number"] for r in b.request_mirror("origin").requests()] == [4]
    assert mirror_requests(b.storage, Remote([]), "origin") == 0 and b.request_mirror("origin").requests() == []
    b.close()


run = run_cli


def test_cli_end_to_end(server, tmp_path, capsys, monkeypatch):
    b = clone(server, tmp_path, "b")
    b.branch("feature")
    write(b, "feature", add=[(None, S, IRI("urn:knows"), IRI("urn:bob"))])
    b.close()
    repo_b = str(tmp_path / "b")
    monkeypatch.setenv("DATAE_AUTHOR", "bea")
    code, output, _ = run(capsys, "--repo", repo_b, "request", "open", "--remote", "origin", "--from", "feature",
                          "-m", "Bob is a friend")
    assert code == 0 and output == "Opened merge request #1 on origin: feature -> main\n"
    code, output, _ = run(capsys, "--repo", server, "request", "list")
    assert output == "#1 [open] feature -> main: Bob is a friend (0 approvals)\n"
    code, _, err = run(capsys, "--repo", server, "request", "approve", "1")
    assert code != 0 and err.startswith("datae: error: bea opened merge request #1 and cannot approve it")
    code, output, _ = run(capsys, "--repo", repo_b, "request", "show", "1", "--remote", "origin")
    assert "would merge (fast-forward): +1 -0 quad(s)" in output and "+ <urn:alice> <urn:knows> <urn:bob> ." in output
    assert "no conflicts" in output
    for argv in (("comment", "1", "-m", "ok"), ("approve", "1"), ("merge", "1")):
        code, output, _ = run(capsys, "--repo", server, "request", *argv, "--author", "cy")
        assert code == 0, argv
    assert output.startswith("Merged request #1 into main")
    code, output, _ = run(capsys, "--repo", repo_b, "request", "list", "--remote", "origin", "--cached", "--state", "all")
    assert output == "no merge requests\n"  # not fetched yet
    assert run(capsys, "--repo", repo_b, "fetch")[0] == 0
    code, output, _ = run(capsys, "--repo", repo_b, "request", "list", "--remote", "origin", "--cached", "--state", "all")
    assert output == "#1 [merged] feature -> main: Bob is a friend (1 approval)\n"
    code, output, _ = run(capsys, "--repo", repo_b, "request", "show", "1", "--remote", "origin", "--cached")
    assert "approved by cy" in output and "comment by cy" in output and "merged by cy" in output
    code, _, err = run(capsys, "--repo", server, "request", "close", "1")
    assert code != 0 and err == "datae: error: cannot close merge request #1: it is merged\n"
    code, _, err = run(capsys, "--repo", server, "request", "show", "9")
    assert code != 0 and err == "datae: error: no merge request #9\n"
    code, _, err = run(capsys, "--repo", repo_b, "request", "list", "--cached")
    assert code != 0 and err.startswith("datae: error: --cached")
    assert os.path.exists(os.path.join(server, "data.mdb"))
