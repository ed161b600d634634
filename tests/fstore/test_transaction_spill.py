"""A transaction whose intents spill into the store (fstore.transaction.Staged past its
spill_limit) and whose commit streams them (Storage.write_commit with a ChangeStream) makes
exactly the commit the in-memory path makes, reads the same inside the transaction, and
leaves no scratch key behind, whether it commits, aborts or changes nothing."""

from __future__ import annotations

import datetime as _dt
import os
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fstore
from fstore import IRI, Literal, Var
from fstore.core import storage
from fstore.core.layout import SCRATCH
from fstore.transaction import Staged
from nstore import dictionary
from nstore.okvs import SCRATCH_PREFIX, SCRATCH_TABLE, prefix_end
from nstore.pack import pack
from tests.fstore.test_fstore_model import VersionedStore

TIME = _dt.datetime(2024, 1, 1, tzinfo=_dt.timezone.utc)
G1, G2 = IRI("urn:g1"), IRI("urn:g2")
LONG = "x" * 600  # past what a scratch key holds: its key is cut and hashed
# Quads whose packed forms are longer than a key and agree on every byte a key keeps, so
# that their order comes from the sort of records() alone.
POOL = ([(G1, IRI(f"urn:s{i}"), IRI("urn:p"), i) for i in range(6)]
        + [(G2, IRI(f"urn:s{i}"), IRI("urn:q"), Literal(f"v{i}", lang="en")) for i in range(4)]
        + [(G1, IRI("urn:long"), IRI("urn:p"), LONG + tail) for tail in ("b", "a", "c")]
        + [(None, IRI("urn:s0"), IRI("urn:p"), "default graph")]
        # inline values too long for a key: History.write stores them as blobs (it needs the
        # values themselves, decoded from the scratch range)
        + [(G2, IRI("urn:big"), IRI("urn:p"), 10 ** 2000 + i) for i in range(2)])
ops = st.lists(st.tuples(st.booleans(), st.sampled_from(POOL)), max_size=30)


@pytest.fixture
def spill_at(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Set the spill limit (and the commit's chunk, as small: each chunk boundary is a
    place for a streamed commit to go wrong)."""
    def set_limit(limit: int) -> None:
        monkeypatch.setattr(Staged, "spill_limit", limit)
        monkeypatch.setattr(storage, "STREAM_CHUNK", min(limit, storage.STREAM_CHUNK))

    yield set_limit


def scratch_keys(repo: fstore.Repository) -> list[bytes]:
    """Scratch keys in the committed file (in the store's own keyspace, or a scratch table
    made in it as formats up to 6 did), and scratch files left in the store's directory."""
    with repo.storage.okvs.transaction() as tx:  # the raw keyspace: no API shows scratch keys
        found = [key for key, _ in tx.range(SCRATCH, prefix_end(SCRATCH))]
        found += [SCRATCH_TABLE] * (tx.get(SCRATCH_TABLE) is not None)
    return found + [name.encode() for name in os.listdir(repo.storage.okvs.path) if name.startswith(SCRATCH_PREFIX)]


def everything(view: Any) -> list[bytes]:
    return sorted(pack(*quad) for quad in fstore.quads(view, Var("g"), Var("s"), Var("p"), Var("o")))


def run(path: Any, base: list, changes: list, limit: int) -> tuple[Any, list, list]:
    """A base commit (in memory), then ``changes`` in one transaction spilling past
    ``limit``: the new commit (None if nothing changed), the reads made inside the
    transaction after each change, and every quad at the head."""
    Staged.spill_limit = 10 ** 9
    repo = fstore.open(path)
    try:
        with repo.transaction("main", message="base", author="t", time=TIME) as tx:
            fstore.add_many(tx, base)
        Staged.spill_limit = limit
        storage.STREAM_CHUNK = min(limit, 3)
        dictionary.FRESH_LIMIT = 2 if limit < 10 ** 9 else 1 << 18  # ids it assigned read back from the keys
        seen = []
        with repo.transaction("main", message="change", author="t", time=TIME) as tx:
            for alive, quad in changes:
                (fstore.add if alive else fstore.rm)(tx, *quad)
                seen.append((fstore.ask(tx, *quad), fstore.count(tx, G1, Var("s"), Var("p"), Var("o")),
                             [pack(g) for g in fstore.graphs(tx)], everything(tx)))
        commit = None if tx.commit_id is None else repo.commit(tx.commit_id)
        assert scratch_keys(repo) == []
        assert repo.verify() == []
        return commit, seen, everything(repo.at("main"))
    finally:
        dictionary.FRESH_LIMIT = 1 << 18
        repo.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base=st.lists(st.sampled_from(POOL), unique=True), changes=ops, limit=st.integers(1, 4))
def test_a_spilled_transaction_makes_the_same_commit(tmp_path_factory, spill_at, base, changes, limit) -> None:
    spill_at(10 ** 9)  # run() sets them; the fixture puts them back after the test
    held = run(tmp_path_factory.mktemp("held"), base, changes, 10 ** 9)
    spilled = run(tmp_path_factory.mktemp("spilled"), base, changes, limit)
    assert spilled == held  # the same id, digest and counts, the same reads and head


def test_scratch_keys_never_outlive_the_transaction(tmp_path, spill_at) -> None:
    spill_at(2)
    repo = fstore.open(tmp_path)
    try:
        with pytest.raises(RuntimeError):
            with repo.transaction("main", message="m") as tx:
                fstore.add_many(tx, POOL)
                assert repr(tx).endswith("(more spilled to the store)>")
                raise RuntimeError("abort")
        assert scratch_keys(repo) == [] and repo.head("main") is None
        with repo.transaction("main", message="m") as tx:
            fstore.add_many(tx, POOL)
        assert scratch_keys(repo) == []
        first = repo.head("main")
        with repo.transaction("main", message="nothing changes") as tx:
            fstore.add_many(tx, POOL)  # spills, then resolves to no change at all
        assert tx.commit_id is None and repo.head("main") == first and scratch_keys(repo) == []
        with repo.transaction("main", message="empty", allow_empty=True) as tx:
            fstore.add_many(tx, POOL[:3])
        assert tx.commit_id is not None and repo.commit(tx.commit_id).added == 0
        assert repo.verify() == []
    finally:
        repo.close()


def test_a_branch_reading_a_shared_snapshot(tmp_path_factory, spill_at) -> None:
    """A branch without a snapshot of its own reads its start's through an overlay: its
    streamed commit moves no chunk after the first (the overlay, built from the records,
    holds them all); the same commit made in memory reads the same."""
    found = []
    for limit in (10 ** 9, 3):
        repo = fstore.open(tmp_path_factory.mktemp("store"))
        try:
            spill_at(10 ** 9)
            with repo.transaction("main", message="base", time=TIME) as tx:
                fstore.add_many(tx, [(G1, IRI(f"urn:b{i}"), IRI("urn:p"), i) for i in range(300)])
            repo.branch("dev", "main")
            spill_at(limit)
            with repo.transaction("dev", message="on dev", time=TIME) as tx:
                fstore.add_many(tx, POOL)
                fstore.rm(tx, G1, IRI("urn:b7"), IRI("urn:p"), 7)
            commit = repo.commit("dev")
            assert (commit.added, commit.removed) == (len(POOL), 1)
            assert len(everything(repo.at("main"))) == 300
            assert repo.verify() == []
            found.append((commit, everything(repo.at("dev"))))
        finally:
            repo.close()
    assert found[0] == found[1] and len(found[0][1]) == 300 + len(POOL) - 1


def test_a_streamed_commit_on_a_branch_whose_snapshot_was_dropped(tmp_path, spill_at) -> None:
    """A branch deleted (its snapshot dropped with it, no one else read it) and made again
    at its commit has no snapshot: its next commit starts one by folding in every record
    up to it, the streamed chunks' included, so no chunk is applied a second time (found
    by the state machine below: counts one too high, and an old commit read wrong)."""
    repo = fstore.open(tmp_path)
    try:
        repo.branch("dev", "main")
        with repo.transaction("dev", message="one") as tx:
            fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), Literal("x", lang="en"))
        first = tx.commit_id
        repo.delete_branch("dev")
        repo.branch("dev", first)
        spill_at(2)
        with repo.transaction("dev", message="three more") as tx:
            fstore.add_many(tx, [(None, IRI("urn:s"), IRI("urn:p"), o) for o in (1, "a", IRI("urn:o"))])
        everything_at = {ref: everything(repo.at(ref)) for ref in (first, "dev")}
        assert [len(found) for found in everything_at.values()] == [1, 4]
        assert [fstore.count(repo.at(ref), Var("g"), Var("s"), Var("p"), Var("o")) for ref in everything_at] == [1, 4]
        assert repo.verify() == []
    finally:
        repo.close()


class SpillingVersionedStore(VersionedStore):
    """The model-based state machine of test_fstore_model with every transaction of two
    intents or more spilling (its merges, reverts and gc go through the same store)."""

    def __init__(self) -> None:
        super().__init__()
        self.limits = Staged.spill_limit, storage.STREAM_CHUNK, dictionary.FRESH_LIMIT
        Staged.spill_limit = storage.STREAM_CHUNK = dictionary.FRESH_LIMIT = 2

    def teardown(self) -> None:
        Staged.spill_limit, storage.STREAM_CHUNK, dictionary.FRESH_LIMIT = self.limits
        super().teardown()


SpillingVersionedStore.TestCase.settings = VersionedStore.TestCase.settings
TestSpillingVersionedStore = SpillingVersionedStore.TestCase


def test_a_streamed_load_stages_as_it_reads(tmp_path_factory, spill_at) -> None:
    """fstore.rdf.load(stream=True), as `datae import` runs it, makes the commit a load
    of the whole parsed list makes; a syntax error in the file aborts the transaction the
    caller leaves with it, whatever was staged before the error."""
    from fstore.rdf import RdfSyntaxError, load, serialize

    text = serialize(POOL, "nq")
    found = []
    for stream in (False, True):
        spill_at(3 if stream else 10 ** 9)
        repo = fstore.open(tmp_path_factory.mktemp("store"))
        try:
            with repo.transaction("main", message="load", time=TIME) as tx:
                assert load(tx, text, "nq", stream=stream) == len(POOL)
            found.append((repo.commit(tx.commit_id), everything(repo.at("main"))))
            with pytest.raises(RdfSyntaxError):
                with repo.transaction("main", message="broken") as tx:
                    load(tx, serialize([(G2, IRI(f"urn:n{i}"), IRI("urn:p"), i) for i in range(9)], "nq") + b"<oops",
                         "nq", stream=stream)
            assert repo.commit("main") == found[-1][0] and scratch_keys(repo) == []
        finally:
            repo.close()
    assert found[0] == found[1]


def test_ids_an_aborted_transaction_assigned_are_not_remembered(tmp_path, monkeypatch, spill_at) -> None:
    """Past FRESH_LIMIT a streamed commit finds the ids its earlier chunks assigned in the
    dictionary's keys; they must not enter the caches of committed ids (an abort takes them
    back), so a later transaction that stores the same terms gives them ids of its own."""
    from fstore.core.heads import Heads
    monkeypatch.setattr(dictionary, "FRESH_LIMIT", 3)
    spill_at(2)  # chunks of two changes: several assignments in one commit
    repo = fstore.open(tmp_path)
    try:
        quads = [(G1, IRI(f"urn:s{i}"), IRI("urn:p"), Literal(f"v{i}", lang="en")) for i in range(20)]
        moved = Heads.moved

        def fail(*args: Any) -> None:
            raise RuntimeError("the commit fails after its records are written")

        monkeypatch.setattr(Heads, "moved", fail)
        with pytest.raises(RuntimeError):
            with repo.transaction("main", message="aborted") as tx:
                fstore.add_many(tx, quads)
        monkeypatch.setattr(Heads, "moved", moved)
        other = (G2, IRI("urn:other"), IRI("urn:q"), Literal("x", lang="en"))
        with repo.transaction("main", message="other terms first") as tx:
            fstore.add(tx, *other)
        with repo.transaction("main", message="the same terms") as tx:
            fstore.add_many(tx, quads)
        assert sorted(map(pack_quad, fstore.quads(repo.at("main"), Var("g"), Var("s"), Var("p"), Var("o")))) == \
            sorted(map(pack_quad, quads + [other]))
        assert repo.verify() == []
    finally:
        repo.close()


def pack_quad(quad: Any) -> bytes:
    return pack(*quad)
