"""verify sees everything (issue 13, point 2): every index of every keyspace, the
dictionary, the state digest of every head; and random byte flips in the file are each
refused at open, reported by verify, or harmless, never a silent wrong answer or a signal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import fstore
import fstore.tables as tables
from fstore import IRI, Literal, Var


def build(path) -> fstore.Repository:
    repo = fstore.open(path)
    with repo.transaction("main", message="one", author="a") as tx:
        fstore.add_many(tx, [(IRI(f"urn:g{i % 3}"), IRI(f"urn:s{i}"), IRI(f"urn:p{i % 5}"),
                              [i, f"text {i}", Literal(f"t{i}", lang="en")][i % 3]) for i in range(600)])
        tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0},
                                {"id": "v", "name": "v", "dataType": "text"}])
    with repo.transaction("main", message="two", author="a") as tx:
        fstore.rm_many(tx, [(IRI(f"urn:g{i % 3}"), IRI(f"urn:s{i}"), IRI(f"urn:p{i % 5}"), i) for i in range(0, 600, 3)])
        tx.table("t").insert_many([{"k": i, "v": f"row {i}"} for i in range(50)])
    repo.branch("side")
    return repo


def keyspaces(repo):
    storage = repo.storage
    for space in storage.spaces:
        for what, store in (("records", space.store), ("snapshots", space.heads.store)):
            for number in range(len(store.indices)):
                yield f"{space.space.name} {what}", store.index_prefix(number), number


@pytest.fixture
def repo(tmp_path):
    repo = build(tmp_path / "r")
    assert repo.verify() == []
    yield repo
    repo.close()


def test_a_damaged_key_in_any_index_is_reported(repo):
    for name, prefix, number in keyspaces(repo):
        with repo.storage.write() as tx:
            key, value = next(iter(tx.range(prefix, prefix + b"\xff")))
            tx.delete(key)
            tx.set(key[:-1] + bytes([key[-1] ^ 0x01]), value)
        problems = repo.verify()
        assert any(name in problem and prefix.hex() in problem for problem in problems), (name, number, problems)
        with repo.storage.write() as tx:  # put it back
            tx.delete(key[:-1] + bytes([key[-1] ^ 0x01]))
            tx.set(key, value)
        assert repo.verify() == []


def test_a_missing_key_in_any_index_is_reported(repo):
    for name, prefix, number in keyspaces(repo):
        with repo.storage.write() as tx:
            key, value = next(iter(tx.range(prefix, prefix + b"\xff")))
            tx.delete(key)
        assert any(name in problem for problem in repo.verify()), (name, number)
        with repo.storage.write() as tx:
            tx.set(key, value)


def test_the_dictionary_is_checked(repo):
    dictionary = repo.storage.quads.dictionary
    with repo.storage.write() as tx:
        key = dictionary.key_of(IRI("urn:s7"))
        item = tx.get(key)
        tx.delete(key)
    assert any("does not map back" in problem for problem in repo.verify())
    with repo.storage.write() as tx:
        tx.set(key, item)
        tx.set(dictionary.prefix + b"i" + item, b"\x02oops\x00")  # a string under an IRI id
    assert any("not a term of its kind" in problem for problem in repo.verify())


PROBE = textwrap.dedent("""
    import json, os, random, shutil, sys
    import fstore
    from fstore import Var
    from nstore.errors import DataeError

    source, work, seed, count, expected_path = sys.argv[1:]
    expected = json.load(open(expected_path))
    rng = random.Random(int(seed))
    size = os.path.getsize(os.path.join(source, "data.mdb"))
    outcomes = {}

    def answers(repo):
        got = {}
        for ref in ("main", "side", "main~1"):
            view = repo.at(ref)
            got[ref] = sorted(repr(q) for q in fstore.quads(view, Var("g"), Var("s"), Var("p"), Var("o")))
            got[ref + " rows"] = sorted(repr(sorted(r.items())) for r in view.table("t").rows()) if ref != "main~1" else []
        return got

    for probe in range(int(count)):
        shutil.rmtree(work, ignore_errors=True)
        shutil.copytree(source, work)
        offset = rng.randrange(size)
        with open(os.path.join(work, "data.mdb"), "r+b") as stream:
            stream.seek(offset)
            byte = stream.read(1)[0]
            stream.seek(offset)
            stream.write(bytes([byte ^ (1 << rng.randrange(8))]))
        print(json.dumps({"probe": probe, "offset": offset}), flush=True)
        try:
            repo = fstore.open(work)
        except DataeError:
            outcomes["refused at open"] = outcomes.get("refused at open", 0) + 1
            continue
        try:
            problems = repo.verify()
            if problems:
                outcome = "reported by verify"
            else:
                try:
                    same = answers(repo) == expected
                except DataeError:
                    same = False
                outcome = "harmless" if same else "SILENTLY WRONG at offset %d" % offset
        except DataeError:
            outcome = "refused by a typed error"
        finally:
            repo.close()
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    print(json.dumps({"outcomes": outcomes}), flush=True)
""")


def test_random_byte_flips_are_refused_reported_or_harmless(tmp_path):
    """Fixed seed; each probe on a fresh copy. 1,000 probes under DATAE_FLIPS=1000."""
    repo = build(tmp_path / "source")
    expected = {}
    for ref in ("main", "side", "main~1"):
        view = repo.at(ref)
        expected[ref] = sorted(repr(q) for q in fstore.quads(view, Var("g"), Var("s"), Var("p"), Var("o")))
        expected[ref + " rows"] = sorted(repr(sorted(r.items())) for r in view.table("t").rows()) if ref != "main~1" else []
    repo.close()
    (tmp_path / "expected.json").write_text(json.dumps(expected))
    (tmp_path / "probe.py").write_text(PROBE)
    count = os.environ.get("DATAE_FLIPS", "150")
    result = subprocess.run([sys.executable, str(tmp_path / "probe.py"), str(tmp_path / "source"), str(tmp_path / "work"),
                             "20261125", count, str(tmp_path / "expected.json")], capture_output=True, text=True, timeout=600)
    lines = result.stdout.strip().splitlines()
    assert result.returncode == 0, f"the probe process ended with {result.returncode} after {lines[-1:]}: {result.stderr[-2000:]}"
    outcomes = json.loads(lines[-1])["outcomes"]
    assert sum(outcomes.values()) == int(count)
    assert not [name for name in outcomes if name.startswith("SILENTLY")], outcomes
