"""verify's own reads of commit records and state digests (fstore.ops.verify: key items
read raw, each item's packed value made once, counts taken as the records are hashed)
against the reads every other path uses, their oracle: ``Storage.packed_records``,
``Storage.state_digest`` and ``fstore.core.counts.counts_of``, for every commit of
histories with merges, removals, both spaces and values kept as blobs."""

from __future__ import annotations

import random
import re

import pytest

import fstore
import fstore.tables as tables
from fstore import IRI, Literal
from fstore.core.counts import counts_of
from fstore.core.digest import PackedItems
import fstore.ops.verify as verify_module
from fstore.ops.verify import _commit_problems, _packed_records, _state_digest
from nstore.errors import DataeError
from nstore.pack import BLOBREF_CODE


def history(path, seed: int) -> fstore.Repository:
    """Commits on two branches merged back and forth: adds and removals of quads with
    values of every kind (long ones kept as blobs), and table rows."""
    rng = random.Random(seed)
    repo = fstore.open(path)
    with repo.transaction("main", message="tables", author="a") as tx:
        tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
                                {"id": "v", "name": "v", "dataType": "text"}])
    repo.branch("side")
    alive: dict[str, list] = {"main": [], "side": []}
    values = [lambda i: i, lambda i: f"text {i}", lambda i: Literal(f"t{i}", lang="en"), lambda i: i / 4,
              lambda i: "long " * 200 + str(i), lambda i: bytes(600) + str(i).encode(), lambda i: IRI(f"urn:o{i}"),
              lambda i: 10 ** 400 + i]  # an integer too long for a key: a blob
    for number in range(12):
        branch = rng.choice(("main", "side"))
        with repo.transaction(branch, message=f"c{number}", author="a") as tx:
            added = [(rng.choice((None, IRI("urn:g1"))), IRI(f"urn:s{rng.randrange(50)}"), IRI(f"urn:p{rng.randrange(4)}"),
                      rng.choice(values)(rng.randrange(100))) for _ in range(rng.randrange(1, 40))]
            removed = [alive[branch].pop(rng.randrange(len(alive[branch])))
                       for _ in range(min(len(alive[branch]), rng.randrange(10)))]
            fstore.add_many(tx, added)
            fstore.rm_many(tx, removed)
            tx.table("t").insert_many([{"k": number * 100 + i, "v": f"row {i} " * rng.randrange(1, 60)}
                                       for i in range(rng.randrange(5))])
            alive[branch] += added
        if number % 4 == 3:
            into, other = ("main", "side") if rng.random() < 0.5 else ("side", "main")
            repo.merge(into, other, author="a", policy="ours")
            with repo.storage.read() as snapshot:
                for name in alive:
                    alive[name] = list({q: None for q in snapshot.reader(snapshot.head(name)).match(
                        (fstore.Var("g"), fstore.Var("s"), fstore.Var("p"), fstore.Var("o")))})
    return repo


@pytest.fixture(scope="module", params=[1, 2, 3])
def repo(request, tmp_path_factory):
    repo = history(tmp_path_factory.mktemp("h"), request.param)
    yield repo
    repo.close()


def items_of(snapshot):
    return {space.space.name: PackedItems(space, snapshot.tx, limit=50) for space in snapshot.spaces}  # small: it starts over


@pytest.mark.parametrize("chunk", [1 << 16, 3])
def test_records_digests_and_counts_are_the_oracles(repo, chunk, monkeypatch):
    monkeypatch.setattr(verify_module, "_CHUNK", chunk)  # 3: a commit's records read in many chunks
    with repo.storage.read() as snapshot:
        items = items_of(snapshot)
        seqs = [seq for seq, _ in snapshot.all_commits()]
        merges = [seq for seq in seqs if len(snapshot.parents(seq)) > 1]
        assert merges, "the history must hold merges"
        blobs = 0
        for seq in seqs:
            blobs += sum(item[0] == BLOBREF_CODE for space in snapshot.spaces
                         for row, _ in space.raw_changes_of(snapshot.tx, seq) for item in row)
            records, moved = _packed_records(snapshot, seq, items)
            assert records == snapshot.packed_records(seq), seq
            if seq not in merges:
                assert moved == counts_of(snapshot, seq), seq
            assert _state_digest(snapshot, seq, items) == snapshot.state_digest(seq) == snapshot.commit(seq).digest, seq
        assert blobs, "some values must be kept as blobs"
        counts: dict[int, tuple[int, int]] = {}
        problems: list[str] = []
        _commit_problems(snapshot, problems, items, counts)
        assert problems == []
        assert set(counts) == set(seqs) - set(merges)
        assert all(counts[seq] == counts_of(snapshot, seq) for seq in counts)
    assert repo.verify() == []


def test_a_term_missing_from_the_dictionary_fails_both_alike(tmp_path):
    repo = history(tmp_path / "r", 4)
    storage = repo.storage
    with storage.read() as snapshot:
        head = snapshot.head("main")
        (row, _), *_ = storage.quads.raw_changes_of(snapshot.tx, head)
    term = next(item for item in row if item[0] != 0 and len(item) == 6)  # a dictionary id
    with storage.write() as writer:
        storage.quads.dictionary.space.delete(writer.tx, storage.quads.dictionary._id_key + term)
    repo.close()
    repo = fstore.open(tmp_path / "r")  # no term cached
    with repo.storage.read() as snapshot:
        with pytest.raises(DataeError) as oracle:
            snapshot.state_digest(head)
        with pytest.raises(DataeError) as ours:
            _state_digest(snapshot, head, items_of(snapshot))
        assert str(ours.value) == str(oracle.value)
        failed = 0
        for seq, _ in snapshot.all_commits():
            try:
                expected = snapshot.packed_records(seq)
            except DataeError as exc:  # the commits that recorded the term
                with pytest.raises(DataeError, match=re.escape(str(exc))):
                    _packed_records(snapshot, seq, items_of(snapshot))  # its ids read at once
                failed += 1
                continue
            assert _packed_records(snapshot, seq, items_of(snapshot))[0] == expected
        assert failed
    assert any("cannot be read" in problem for problem in repo.verify())
    repo.close()
