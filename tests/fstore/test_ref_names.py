"""Ref names that would be read as something else (issue 24).

A branch named like a commit id (or a prefix of one) hid that commit from ``log``,
``show`` and ``tag``; a tag and a branch of one name resolved to the branch without a
word; ``HEAD``, bidirectional overrides and NFD look-alikes were accepted as names. Now
such names are refused wherever a ref is made (branch, tag, remote, push, fetch, clone,
Kart import), and a store that holds them from before (made here by relaxing the rule for
a moment) gets an ``AmbiguousRefError`` naming every candidate and how to pick it.
"""

from __future__ import annotations

import os
import subprocess
import unicodedata

import pytest

import fstore
import fstore.core.refs
from datae.context import EXIT_FATAL
from fstore import IRI
from fstore.core.refs import BRANCH, TAG
from tests.cli_fixtures import run_cli

REFUSED = {
    "HEAD": "it is 'HEAD'",
    "c0ffee": "looks like a commit id",
    "C0FFEE12": "looks like a commit id",
    "0123456789": "looks like a commit id",
    "a" * 64: "looks like a commit id",
    "refs/heads/x": "starts with 'refs/'",
    "refs/tags/v1": "starts with 'refs/'",
    "main\u202e": "U+202E RIGHT-TO-LEFT OVERRIDE, a format",
    "\u2066x\u2069": "U+2066 LEFT-TO-RIGHT ISOLATE",
    "x\u200by": "U+200B ZERO WIDTH SPACE",
    "x\u00a0y": "U+00A0 NO-BREAK SPACE, a space",
    "x\u2028y": "U+2028 LINE SEPARATOR",
    "x\x85": "U+0085, a control",
    "\ue000": "U+E000, a private-use",
    "x\u0378": "U+0378, an unassigned",
    "cafe\u0301": "not in Unicode NFC, which spells it 'café'",
    "e\u0301x": "not in Unicode NFC",
}
ACCEPTED = ["abcde", "cafe", "deadbeef-fix", "v1.0", "café", "日本語", "feature/c0ffee", "HEADS", "head"]


def snapshot(repo: fstore.Repository) -> tuple:
    return repo.branches(), repo.tags(), repo.remotes(), repo.remote_branches(), repo.stats()["commits"]


def commit(repo: fstore.Repository, branch: str, n: int) -> str:
    with repo.transaction(branch, message=f"c{n}", author="t") as tx:
        fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), n)
    return tx.commit_id


@pytest.fixture
def repo(tmp_path):
    with fstore.open(tmp_path / "repo") as repo:
        commit(repo, "main", 1)
        yield repo


@pytest.fixture
def older_rules(monkeypatch):
    """Let names in as a store made before these rules holds them; returns an undo."""
    monkeypatch.setattr(fstore.core.refs, "_reads_as_another", lambda name: None, raising=False)
    return monkeypatch.undo


@pytest.mark.parametrize("name", sorted(REFUSED), ids=ascii)
def test_names_read_as_something_else_are_refused(repo, name):
    before = snapshot(repo)
    for make in (repo.branch, lambda n: repo.tag(n, "main"), lambda n: repo.remote_add(n, "/elsewhere")):
        with pytest.raises(fstore.InvalidRefNameError) as caught:
            make(name)
        assert str(caught.value).startswith(f"invalid ref name {name!r}: ") and REFUSED[name] in str(caught.value)
    assert snapshot(repo) == before


def test_names_like_these_are_fine(repo):
    for name in ACCEPTED:
        repo.branch(name)
    assert set(repo.branches()) == {"main", *ACCEPTED}
    assert all(unicodedata.is_normalized("NFC", name) for name in repo.branches())


def test_a_branch_named_like_a_commit_prefix_hides_nothing(repo, older_rules):
    hidden = commit(repo, "main", 2)
    prefix = hidden[:10]
    repo.branch(prefix, "main~1")  # a store made before the rule: a branch named like the id
    older_rules()
    elsewhere = repo.resolve("main~1")
    for read in (repo.log, repo.show, repo.at, repo.resolve, lambda ref: repo.tag("t", ref)):
        with pytest.raises(fstore.AmbiguousRefError) as caught:
            read(prefix)
        said = str(caught.value)
        assert f"ref {prefix!r} is ambiguous" in said
        assert f"branch {prefix!r} (at {elsewhere[:10]}: name it refs/heads/{prefix})" in said
        assert f"commit {hidden[:10]} (name it by its full id {hidden})" in said
    assert repo.tags() == {}
    assert repo.resolve(f"refs/heads/{prefix}") == elsewhere and repo.resolve(hidden) == hidden
    assert repo.resolve(f"refs/heads/{prefix}~0") == elsewhere and repo.resolve(hidden.upper()) == hidden
    assert [c.id for c in repo.log(hidden)][0] == hidden and repo.show(hidden).commit.id == hidden


def test_a_branch_named_like_a_full_id_never_hides_the_commit(repo, older_rules):
    """A full id is never taken for a name (git does the same): the commit is read, and
    the branch through ``refs/heads/``."""
    hidden = commit(repo, "main", 2)
    repo.branch(hidden, "main~1")
    older_rules()
    assert repo.resolve(hidden) == hidden
    assert repo.resolve(f"refs/heads/{hidden}") == repo.resolve("main~1") != hidden
    assert list(repo.log(hidden))[0].id == hidden


def test_a_tag_and_a_branch_of_one_name(repo):
    first = repo.resolve("main")
    repo.tag("v1")
    second = commit(repo, "main", 2)
    with pytest.raises(fstore.RefExistsError, match="a tag named 'v1' already exists: a branch of that name would"):
        repo.branch("v1")
    with pytest.raises(fstore.RefExistsError, match="a branch named 'main' already exists: a tag of that name would"):
        repo.tag("main")
    with repo.storage.write() as writer:  # a store made before the rule holds both
        writer.create_branch("x", writer.resolve(second), None)
        writer.set_ref(TAG, "x", writer.resolve(first))
    with pytest.raises(fstore.AmbiguousRefError) as caught:
        repo.log("x")
    said = str(caught.value)
    assert f"branch 'x' (at {second[:10]}: name it refs/heads/x)" in said
    assert f"tag 'x' (at {first[:10]}: name it refs/tags/x)" in said
    assert repo.resolve("refs/heads/x") == second and repo.resolve("refs/tags/x") == first
    assert repo.resolve("refs/tags/v1") == first and repo.resolve("v1") == first
    with pytest.raises(fstore.UnknownRefError, match="no tag named 'main'"):
        repo.resolve("refs/tags/main")
    repo.branch("y", "refs/heads/x")  # a qualified start shares the branch's snapshot
    assert repo.resolve("y") == second and list(fstore.quads(repo.at("y"), None, IRI("urn:s"), IRI("urn:p"), 2))


def test_head_is_the_current_branch(repo):
    repo.branch("dev")
    first = repo.resolve("main")
    second = commit(repo, "dev", 2)
    assert repo.resolve("HEAD") == first
    repo.switch("dev")
    assert repo.resolve("HEAD") == second and repo.resolve("HEAD~1") == first


def test_moving_a_ref_of_an_old_name_still_works(repo, older_rules):
    """Names refused now can still be committed to, fast-forwarded and deleted where a
    store holds them: only making a new ref is refused."""
    repo.branch("HEAD")
    older_rules()
    commit(repo, "HEAD", 2)
    assert repo.resolve("refs/heads/HEAD") == repo.head("HEAD") != repo.head("main")
    repo.delete_branch("HEAD")
    assert "HEAD" not in repo.branches()


def test_push_of_a_bad_name_stores_nothing(tmp_path, older_rules):
    there = fstore.open(tmp_path / "there")
    commit(there, "main", 0)
    there.close()
    here = fstore.clone(str(tmp_path / "there"), tmp_path / "here")
    here.branch("c0ffee00")
    older_rules()
    commit(here, "c0ffee00", 1)
    with pytest.raises(fstore.InvalidRefNameError, match="invalid ref name 'c0ffee00' \\(a pushed branch\\)"):
        here.push("origin", "c0ffee00")
    with fstore.open(tmp_path / "there") as there:
        assert set(there.branches()) == {"main"} and there.stats()["commits"] == 1
    here.close()


def test_fetch_and_clone_refuse_bad_names(tmp_path, older_rules):
    there = fstore.open(tmp_path / "there")
    commit(there, "main", 0)
    there.branch("main\u202e")
    there.tag("HEAD")
    there.close()
    older_rules()
    here = fstore.open(tmp_path / "here")
    here.remote_add("origin", str(tmp_path / "there"))
    before = snapshot(here)
    with pytest.raises(fstore.InvalidRefNameError, match=r"a branch of remote 'origin'\): it contains U\+202E"):
        here.fetch("origin")
    assert snapshot(here) == before
    here.close()
    for local in (True, False):
        target = tmp_path / f"copy-{local}"
        with pytest.raises(fstore.InvalidRefNameError, match="invalid ref name"):
            fstore.clone(str(tmp_path / "there"), target, local=local)
        assert not os.path.exists(target)


def test_kart_import_checks_names_before_importing(tmp_path):
    from fstore.tables.kart_import import _check_refs

    with fstore.open(tmp_path / "repo") as repo:
        with pytest.raises(fstore.InvalidRefNameError, match="a branch of the Kart repository k"):
            _check_refs(repo, None, [], {"deadbeef": "0" * 40}, {}, "", None, "k")
        with pytest.raises(fstore.InvalidRefNameError, match="a tag of the Kart repository k"):
            _check_refs(repo, None, [], {}, {"HEAD": "0" * 40}, "", None, "k")


def test_cli_says_both_and_refuses_in_one_line(tmp_path, older_rules, capsys):
    with fstore.open(tmp_path / "repo" / ".datae") as repo:
        hidden = commit(repo, "main", 1)
        repo.branch(hidden[:8])
        older_rules()
        commit(repo, hidden[:8], 2)

    def datae(*argv: str) -> subprocess.CompletedProcess:
        # In this process (the rules are back as they are: older_rules() undid the relaxation).
        code, out, err = run_cli(capsys, "--repo", str(tmp_path / "repo" / ".datae"), *argv)
        return subprocess.CompletedProcess(argv, code, out, err)

    for argv in (["log", hidden[:8]], ["show", hidden[:8]], ["tag", "t1", hidden[:8]]):
        done = datae(*argv)
        assert done.returncode == EXIT_FATAL and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith(f"datae: error: ref {hidden[:8]!r} is ambiguous")
        assert f"refs/heads/{hidden[:8]}" in done.stderr and hidden in done.stderr
    assert datae("show", hidden).stdout.startswith(f"commit {hidden}")
    assert datae("log", hidden).stdout.startswith(f"commit {hidden}")
    assert datae("log", f"refs/heads/{hidden[:8]}").stdout.split("\n")[0] != f"commit {hidden}"
    for name in ("HEAD", "0123456789", "a\u202eb"):
        done = datae("branch", name)
        assert done.returncode == EXIT_FATAL and done.stderr.startswith(f"datae: error: invalid ref name {name!r}")
