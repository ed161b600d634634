"""Bad input to the versioned store: typed errors that name the problem, store unchanged."""

from __future__ import annotations

import datetime as dt
import re
from collections import defaultdict

import pytest

import fstore
from fstore import IRI, Var
from fstore.core.commits import commit_hash
from fstore.core.digest import as_hex, from_hex, moved
from fstore.core.history import ALIVE
from nstore.errors import FormatVersionError, PackError, PatternError
from nstore.pack import pack

S, P = IRI("urn:s"), IRI("urn:p")
WHEN = dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc)


@pytest.fixture
def repo(tmp_path):
    repo = fstore.open(tmp_path / "repo")
    with repo.transaction("main", message="first", author="t") as tx:
        fstore.add(tx, None, S, P, "one")
    repo.tag("v1")
    yield repo
    repo.close()


def snapshot(repo) -> tuple:
    return (repo.branches(), repo.tags(), [c.id for c in repo.log("main")], repo.verify(),
            sorted(str(b) for b in fstore.from_(repo.at("main"), Var("g"), Var("s"), Var("p"), Var("o"))))


def test_unknown_ref(repo):
    before = snapshot(repo)
    for ref in ("nope", "abcdef", "abc", "", "v2"):
        with pytest.raises(fstore.UnknownRefError, match="unknown ref|a ref is"):
            repo.at(ref)
    with pytest.raises(fstore.UnknownRefError, match="no branch named 'ghost'"):
        repo.transaction("ghost", message="x").__enter__()
    assert snapshot(repo) == before


def _colliding_messages(parent: fstore.Commit, record: bytes) -> tuple[str, str]:
    """Two messages whose commits (same parent, change, author, time) share 6 hex digits."""
    state = as_hex(moved(from_hex(parent.digest), [record[:-1]], []))
    seen: dict[str, str] = {}
    for i in range(200_000):
        message = f"m{i}"
        prefix = commit_hash([parent.id], message, "t", WHEN, state, [record])[:6]
        if prefix in seen:
            return seen[prefix], message
        seen[prefix] = message
    raise AssertionError("no collision found")


def test_ambiguous_prefix(repo):
    quad = (None, S, P, "two")
    first, second = _colliding_messages(repo.commit("main"), pack(*quad) + ALIVE)
    repo.branch("a")
    repo.branch("b")
    ids = []
    for branch, message in (("a", first), ("b", second)):
        with repo.transaction(branch, message=message, author="t", time=WHEN) as tx:
            fstore.add(tx, *quad)
        ids.append(tx.commit_id)
    assert ids[0][:6] == ids[1][:6] and ids[0] != ids[1]
    before = snapshot(repo)
    with pytest.raises(fstore.AmbiguousRefError, match=f"prefix '{ids[0][:6]}' is ambiguous"):
        repo.at(ids[0][:6])
    common = next(i for i in range(6, 64) if ids[0][i] != ids[1][i])
    assert repo.at(ids[0][: common + 1]).commit_id == ids[0]
    assert repo.at(ids[1].upper()).commit_id == ids[1]
    assert snapshot(repo) == before


@pytest.mark.parametrize("name", ["bad..name", "-x", "a b", "x.lock", "/a", "a/", "a//b", "a@{1}", "@", "a~1",
                                  "a^", "a:b", "a?", "a*", "a[b", "a\\b", ".hidden", "a/.b", "end.", "", "tab\there"])
def test_invalid_branch_names(repo, name):
    before = snapshot(repo)
    with pytest.raises(fstore.InvalidRefNameError, match="invalid ref name"):
        repo.branch(name)
    with pytest.raises(fstore.InvalidRefNameError):
        repo.tag(name, "main")
    assert snapshot(repo) == before


def test_valid_branch_names(repo):
    for name in ("feature/x", "release-1.0", "user/ann/fix_2", "UPPER", "ünïcode"):
        repo.branch(name)
    assert set(repo.branches()) >= {"feature/x", "release-1.0", "user/ann/fix_2", "UPPER", "ünïcode"}


def test_existing_refs(repo):
    before = snapshot(repo)
    with pytest.raises(fstore.RefExistsError, match="branch named 'main' already exists"):
        repo.branch("main")
    with pytest.raises(fstore.RefExistsError, match="tag named 'v1' already exists"):
        repo.tag("v1")
    with pytest.raises(fstore.UnknownRefError, match="no branch named 'ghost'"):
        repo.delete_branch("ghost")
    assert snapshot(repo) == before


def test_writing_through_a_view(repo):
    before = snapshot(repo)
    view = repo.at("main")
    with pytest.raises(fstore.ReadOnlyViewError, match="cannot write through"):
        fstore.add(view, None, S, P, "two")
    with pytest.raises(fstore.ReadOnlyViewError):
        fstore.rm(view, None, S, P, "one")
    assert snapshot(repo) == before


def test_merge_into_itself_and_bad_policy(repo):
    before = snapshot(repo)
    with pytest.raises(fstore.MergeError, match="cannot merge branch 'main' into itself"):
        repo.merge("main", "main")
    with pytest.raises(ValueError, match="merge policy"):
        repo.merge("main", "v1", policy="mine")
    assert snapshot(repo) == before


def test_bad_values_abort_the_transaction(repo):
    before = snapshot(repo)
    with pytest.raises(PackError, match="cannot hold a set"):
        with repo.transaction("main", message="bad") as tx:
            fstore.add(tx, None, S, P, "kept only if committed")
            fstore.add(tx, None, S, P, {1, 2})
    with pytest.raises(PackError, match="not valid Unicode"):
        with repo.transaction("main", message="bad") as tx:
            fstore.add(tx, None, S, P, "\ud800")
    with pytest.raises(PatternError, match="4 items"):
        list(fstore.from_(repo.at("main"), S, P, Var("o")))
    with pytest.raises(ValueError, match="timezone-aware"):
        repo.transaction("main", time=dt.datetime(2024, 1, 1))
    assert snapshot(repo) == before


def test_exception_inside_leaves_store_unchanged(repo):
    before = snapshot(repo)
    with pytest.raises(RuntimeError):
        with repo.transaction("main", message="boom") as tx:
            for i in range(1000):
                fstore.add(tx, None, IRI(f"urn:x{i}"), P, i)
            raise RuntimeError("boom")
    assert tx.commit_id is None
    assert snapshot(repo) == before


# a future format, format 1 (before the dictionary), 2 (before state digests), 3 (before blocks: upgradable),
# 4 (before counts), 5 (before rows): upgradable
@pytest.mark.parametrize("version", [b"99", b"1", b"2", b"3", b"4", b"5"])
def test_format_version_is_checked(tmp_path, version):
    repo = fstore.open(tmp_path / "r")
    with repo.storage.write() as writer:
        writer.tx.set(pack("datae", "format"), version)
    repo.close()
    hint = "; `datae upgrade` rewrites it in this format" if version in (b"3", b"4", b"5") else ""
    with pytest.raises(FormatVersionError, match=f"holds datae format {version.decode()}; this datae reads format 6{re.escape(hint)}$"):
        fstore.open(tmp_path / "r")


def test_tampering_is_reported_by_verify(repo):
    with repo.transaction("main", message="long", author="t") as tx:
        fstore.add(tx, None, S, P, 10**2000)  # a number too long for a key: a blob
    assert repo.verify() == []
    okvs = repo.storage.okvs
    blobs = repo.storage.quads.store.blobs
    with okvs.transaction(write=True) as tx:
        digest = next(blobs.digests(tx))
        tx.set(blobs._data + digest, b"tampered")
    problems = repo.verify()
    assert any("does not hash to its address" in p for p in problems)


def test_tampered_dictionary_is_reported_by_verify(repo):
    with repo.transaction("main", message="long", author="t") as tx:
        fstore.add(tx, None, S, P, "x" * 2000)
    assert repo.verify() == []
    dictionary = repo.storage.quads.dictionary
    with repo.storage.write() as writer:
        ref = dictionary.space.get(writer.tx, dictionary.key_of("x" * 2000))
        dictionary.space.set(writer.tx, dictionary.prefix + b"i" + ref, pack("y" * 2000))
    repo.close()
    reopened = fstore.open(repo.path)  # a new process would not have the term cached
    problems = reopened.verify()
    reopened.close()
    # The commit that wrote the term no longer hashes to its id, the head's state no longer
    # sums to its digest, and the dictionary's entries no longer map both ways.
    assert len(problems) == 3, problems
    assert "hashes to" in problems[0] and "sum to" in problems[1] and "does not map back" in problems[2], problems


def test_tampered_commit_message_is_reported(repo):
    import msgpack

    with repo.storage.write() as writer:
        raw = msgpack.unpackb(writer.tx.get(pack("c", 1)))
        raw["message"] = "rewritten"
        writer.tx.set(pack("c", 1), msgpack.packb(raw))
    problems = repo.verify()
    assert len(problems) == 1 and "hashes to" in problems[0]


def test_blame_and_history_in_a_linear_story(repo):
    first = repo.head("main")
    with repo.transaction("main", message="second", author="t") as tx:
        fstore.rm(tx, None, S, P, "one")
        fstore.add(tx, None, S, P, "uno")
    second = tx.commit_id
    assert repo.blame("main", None, S, P, "uno").id == second
    assert repo.blame("main", None, S, P, "one").id == second  # it removed it
    assert repo.blame(first, None, S, P, "one").id == first
    assert repo.blame("main", None, S, P, "never") is None
    story = [(c.message, sorted((op, q[3].value) for op, q in changes)) for c, changes in repo.history("main", None, S, P, Var("o"))]
    assert story == [("second", [("+", "uno"), ("-", "one")]), ("first", [("+", "one")])]
    by_commit = defaultdict(list)
    for op, quad in repo.diff(first, second):
        by_commit[op].append(quad[3].value)
    assert dict(by_commit) == {"+": ["uno"], "-": ["one"]}
