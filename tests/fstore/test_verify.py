"""verify sees everything (issue 13, point 2; issue 24): every index of every keyspace, the
dictionary, the state digest of every head and snapshot, refs, blobs and their counts,
and the LMDB B-trees as searches read them; byte flips in the file are each refused at
open, reported by verify, or harmless, never a silent change of any read or a signal."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap

import lmdb
import msgpack
import pytest

import fstore
import fstore.tables as tables
from fstore import IRI, Literal, Var
from nstore.pack import Packed, pack, unpack
from tests import lmdb_pages
from tests.fstore import flip_probe
from tests.profiles import PROFILE, examples
from tests.writer_process import committing


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
                yield f"{space.space.name} {what}", store, store.index_prefix(number), number


@pytest.fixture
def repo(tmp_path):
    repo = build(tmp_path / "r")
    assert repo.verify() == []
    yield repo
    repo.close()


def test_a_damaged_key_in_any_index_is_reported(repo):
    for name, store, prefix, number in keyspaces(repo):
        with repo.storage.write() as writer:
            key, value = next(iter(store.range(writer.tx, prefix, prefix + b"\xff")))
            store.space.delete(writer.tx, key)
            store.space.set(writer.tx, key[:-1] + bytes([key[-1] ^ 0x01]), value)
        problems = repo.verify()
        assert any(name in problem and prefix.hex() in problem for problem in problems), (name, number, problems)
        with repo.storage.write() as writer:  # put it back
            store.space.delete(writer.tx, key[:-1] + bytes([key[-1] ^ 0x01]))
            store.space.set(writer.tx, key, value)
        assert repo.verify() == []


def test_a_missing_key_in_any_index_is_reported(repo):
    for name, store, prefix, number in keyspaces(repo):
        with repo.storage.write() as writer:
            key, value = next(iter(store.range(writer.tx, prefix, prefix + b"\xff")))
            store.space.delete(writer.tx, key)
        assert any(name in problem for problem in repo.verify()), (name, number)
        with repo.storage.write() as writer:
            store.space.set(writer.tx, key, value)


def test_the_dictionary_is_checked(repo):
    dictionary = repo.storage.quads.dictionary
    with repo.storage.write() as writer:
        key = dictionary.key_of(IRI("urn:s7"))
        item = dictionary.space.get(writer.tx, key)
        dictionary.space.delete(writer.tx, key)
    assert any("does not map back" in problem for problem in repo.verify())
    with repo.storage.write() as writer:
        dictionary.space.set(writer.tx, key, item)
        dictionary.space.set(writer.tx, dictionary.prefix + b"i" + item, b"\x02oops\x00")  # a string under an IRI id
    assert any("not a term of its kind" in problem for problem in repo.verify())


# -- issue 24: verify sees every flip that changes a read ------------------------------------


def edit_file(path, edit) -> None:
    """Apply ``edit(bytearray of data.mdb)`` to the closed store at ``path``."""
    data_path = os.path.join(path, "data.mdb")
    with open(data_path, "rb") as stream:
        data = bytearray(stream.read())
    edit(data)
    with open(data_path, "wb") as stream:
        stream.write(data)


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(fstore.__file__)))


def run_python(*args: str, timeout: float | None = 300) -> subprocess.CompletedProcess:
    """A child Python importing this checkout's packages (not an installed copy), so a
    signal or abort in it fails a test instead of ending the run."""
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


def lmdb_reads(path):
    """Every key by a scan, and whether each is found again by LMDB's search."""
    env = lmdb.open(str(path), readonly=True, lock=False)
    try:
        with env.begin() as txn:
            keys = [key for key, _ in txn.cursor()]
            return keys, [txn.get(key) is not None for key in keys]
    finally:
        env.close()


def test_a_separator_that_misdirects_searches_is_reported(tmp_path):
    """A branch page's separator raised past the first key of its subtree, in the middle
    of a snapshot index (objects first): a scan still meets that key, a lookup by its
    object finds nothing."""
    build(tmp_path / "r").close()
    data = (tmp_path / "r" / "data.mdb").read_bytes()
    root, depth = lmdb_pages.main_tree(data)
    assert depth >= 2
    # A separator is the first key of its subtree when the page split, and may sit below
    # it since (a block's fence replaced): take, from the middle out, the first whose
    # raised last byte passes a key of its subtree.
    separators = [(offset, key) for offset, key, _ in lmdb_pages.nodes(data, root) if key[:1] == b"\x92"]
    middle = len(separators) // 2
    for offset, separator in sorted(separators, key=lambda pair: abs(separators.index(pair) - middle)):

        def raise_separator(data, offset=offset, separator=separator):
            data[offset + 8 + len(separator) - 1] += 1  # the separator's last byte, then keys sort below it

        edit_file(tmp_path / "r", raise_separator)
        keys, found = lmdb_reads(tmp_path / "r")
        if not all(found):
            break
        (tmp_path / "r" / "data.mdb").write_bytes(data)
    assert not all(found), "the edit must hide a key from searches, or this test proves nothing"
    with fstore.open(tmp_path / "r") as repo:
        problems = repo.verify()
    assert any("main tree page" in problem and "out of order" in problem for problem in problems), problems


def test_keys_out_of_order_in_a_leaf_are_reported(tmp_path):
    """Two node offsets of a leaf swapped: the scan meets both keys, the binary search
    misses one."""
    build(tmp_path / "r").close()
    data = (tmp_path / "r" / "data.mdb").read_bytes()
    root, _ = lmdb_pages.main_tree(data)
    leaf = lmdb_pages.nodes(data, root)[30][2]
    base = leaf * lmdb_pages.page_size(data)

    def swap(data):
        first, second = data[base + 16: base + 18], data[base + 18: base + 20]
        data[base + 16: base + 18], data[base + 18: base + 20] = second, first

    edit_file(tmp_path / "r", swap)
    _, found = lmdb_reads(tmp_path / "r")
    assert not all(found)
    with fstore.open(tmp_path / "r") as repo:
        problems = repo.verify()
    assert any("out of order" in problem for problem in problems), problems


VERIFY_ONE = textwrap.dedent("""
    import json, sys
    import fstore
    with fstore.open(sys.argv[1]) as repo:
        print(json.dumps(repo.verify()))
""")


def test_a_child_page_of_the_wrong_kind_is_reported_not_a_crash(tmp_path):
    """A branch node pointing at a leaf where a branch belongs: LMDB aborts the process
    on an assertion when a read walks there; verify must say so first (in a child
    process, so an abort fails the test instead of ending it)."""
    flip_probe.build(str(tmp_path / "r"), size=2000)  # enough pages for a tree of three levels
    data = (tmp_path / "r" / "data.mdb").read_bytes()
    root, depth = lmdb_pages.main_tree(data)
    assert depth == 3
    children = lmdb_pages.nodes(data, root)
    leaf = lmdb_pages.nodes(data, children[0][2])[0][2]
    offset = children[1][0]

    def point_at_leaf(data):
        data[offset: offset + 4] = struct.pack("=HH", leaf & 0xFFFF, leaf >> 16)

    edit_file(tmp_path / "r", point_at_leaf)
    (tmp_path / "verify.py").write_text(VERIFY_ONE)
    result = run_python(str(tmp_path / "verify.py"), str(tmp_path / "r"))
    assert result.returncode == 0, result.stderr[-1000:]
    problems = json.loads(result.stdout)
    assert any("not a branch page" in problem or "reached twice" in problem for problem in problems), problems


def test_a_ref_moved_to_another_commit_is_reported(repo):
    """A damaged seq in a ref's value silently moves the ref (reads at the tag give
    another commit's state); the id stored beside it tells."""
    repo.tag("v1", "main~1")
    before = sorted(map(repr, fstore.quads(repo.at("v1"), Var("g"), Var("s"), Var("p"), Var("o"))))
    with repo.storage.write() as writer:
        key = pack("t", "v1")
        fields = unpack(writer.tx.get(key))
        writer.tx.set(key, pack(fields[0] + 1, *fields[1:]))
    assert sorted(map(repr, fstore.quads(repo.at("v1"), Var("g"), Var("s"), Var("p"), Var("o")))) != before
    problems = repo.verify()
    assert any("tag 'v1'" in problem for problem in problems), problems


def test_the_current_branch_and_the_id_index_are_checked(repo):
    with repo.storage.write() as writer:
        writer.tx.set(pack("i", "0" * 64), pack(1))  # a prefix lookup of 000000 now finds commit #1
    assert repo.resolve("000000") is not None
    assert any("id index" in problem for problem in repo.verify())
    with repo.storage.write() as writer:
        writer.tx.delete(pack("i", "0" * 64))
        writer.tx.set(pack("datae", "current-branch"), b"nowhere")
    assert any("current branch 'nowhere'" in problem for problem in repo.verify())


def test_a_snapshot_no_read_chooses_yet_is_checked(tmp_path, monkeypatch):
    """Two snapshots of one commit: reads take the first, so the second is read by no
    one until its branch commits again, and then it is the head's state. Damage to it
    must show now."""
    import fstore.core.heads

    monkeypatch.setattr(fstore.core.heads, "OVERLAY_LIMIT", 2)  # a branch gets its own snapshot soon
    repo = fstore.open(tmp_path / "r")
    with repo.transaction("main", message="one", author="a") as tx:
        fstore.add_many(tx, [(None, IRI(f"urn:s{i}"), IRI("urn:p"), i) for i in range(40)])
    repo.branch("x")
    with repo.transaction("x", message="x", author="a") as tx:
        fstore.add_many(tx, [(None, IRI(f"urn:x{i}"), IRI("urn:p"), i) for i in range(20)])
    repo.merge("main", "x")  # a fast-forward: main's snapshot moves to x's head too
    heads = repo.storage.quads.heads
    with repo.storage.read() as snapshot:
        metas = heads.metas(snapshot.tx)
        assert sorted(seq for seq, _, _ in metas.values()) == [3, 3] or len({m[0] for m in metas.values()}) == 1
        unread = max(metas)
        seq, owner, count = metas[unread]
        assert heads.base(snapshot.tx, seq)[0] != unread
        items = next(iter(heads._quads_of(snapshot.tx, unread)))
    with repo.storage.write() as writer:  # lose one quad from every index of that snapshot
        heads.store.delete(writer.tx, unread, *map(Packed, items))
        heads._set_meta(writer.tx, unread, seq, owner, count - 1)
    problems = repo.verify()
    assert any(f"quads snapshot {unread}" in problem for problem in problems), problems
    repo.close()


def test_blob_reference_counts_and_missing_blobs_are_reported(repo):
    with repo.transaction("main", message="long", author="a") as tx:
        fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), 10 ** 400)  # too long for a key: a blob
    assert repo.verify() == []
    blobs = repo.storage.quads.store.blobs
    with repo.storage.write() as writer:
        digest = next(blobs.digests(writer.tx))
        writer.tx.set(blobs._refs + digest, b"2")  # gc would keep it one reference too long
    assert any("counts b'2' references, but keys hold 1" in problem for problem in repo.verify())
    with repo.storage.write() as writer:
        writer.tx.delete(blobs._refs + digest)
        writer.tx.delete(blobs._data + digest)
    problems = repo.verify()  # a typed report, not a KeyError
    assert any("not stored" in problem for problem in problems), problems


def test_a_snapshot_record_with_a_wrong_count_is_reported(repo):
    heads = repo.storage.quads.heads
    with repo.storage.read() as snapshot:
        number, (seq, owner, count) = next(iter(heads.metas(snapshot.tx).items()))
    with repo.storage.write() as writer:
        heads._set_meta(writer.tx, number, seq, owner, count + 1)
    assert any(f"records {count + 1} quads but holds {count}" in problem for problem in repo.verify())


def test_a_snapshot_count_by_graph_and_predicate_that_is_wrong_missing_or_stray_is_reported(repo):
    with repo.transaction("main", message="more", author="a") as tx:
        fstore.add_many(tx, [(IRI(f"urn:g{i % 2}"), IRI(f"urn:s{i}"), IRI(f"urn:p{i % 3}"), i) for i in range(30)])
    assert repo.verify() == []
    heads = repo.storage.quads.heads
    with repo.storage.read() as snapshot:
        number = next(iter(heads.metas(snapshot.tx)))
        pairs = dict(snapshot.tx.range(pack("SC", number, 0), pack("SC", number, 0) + b"\xff"))
    key, value = next(iter(pairs.items()))
    tampered = [(key, pack(unpack(value)[0] + 1), "count(s) by graph and predicate differ"),
                (key, None, "count(s) by graph and predicate differ"),
                (pack("SC", number, 1) + key[-6:], None, "count(s) by predicate differ"),
                (pack("SC", number + 7, 1) + key[-6:], pack(1), "belongs to no snapshot")]
    for where, new, reported in tampered:
        with repo.storage.read() as snapshot:
            old = snapshot.tx.get(where)
        with repo.storage.write() as writer:
            writer.tx.delete(where) if new is None else writer.tx.set(where, new)
        assert any(reported in problem for problem in repo.verify()), (where, reported)
        with repo.storage.write() as writer:
            writer.tx.delete(where) if old is None else writer.tx.set(where, old)
        assert repo.verify() == []


def test_byte_flips_are_refused_reported_or_harmless(tmp_path):
    """One bit flipped at a time in a store with history, branches, a tag, a merge, a
    table and values of every kind (``tests/fstore/flip_probe.py``): at random offsets
    and inside the node headers and keys of every kind of B-tree page (by keyspace, leaf
    and branch). Each flip is refused at open, reported by verify, or changes no read at
    all (every pattern shape at seven refs, diff, blame, history, versions, log, refs,
    table rows by scan and key, table diff and log, SPARQL); never a silent change, a
    crash of verify or a signal. A few seconds under the ci profile; ``deep`` runs a
    hundred times as many flips over a larger store."""
    random_flips, per_page_kind, size = examples(10), examples(1), 300 if PROFILE != "deep" else 900
    result = run_python("-m", "tests.fstore.flip_probe", str(tmp_path / "source"), str(tmp_path / "work"),
                        "20261125", str(random_flips), "--pages", str(per_page_kind), "--build", str(size),
                        timeout=None)
    lines = result.stdout.strip().splitlines()
    assert result.returncode == 0, f"the probe process ended with {result.returncode} after {lines[-1:]}: {result.stderr[-2000:]}"
    outcomes = json.loads(lines[-1])["outcomes"]
    bad = [json.loads(line) for line in lines[:-1] if '"outcome"' in line and
           json.loads(line)["outcome"] not in ("refused at open", "reported by verify", "harmless")]
    assert not bad, bad[:5]
    assert outcomes.get("reported by verify"), outcomes  # the flips reach what verify reads


def test_refs_written_before_ids_were_kept_still_verify(repo):
    """A store whose refs hold ``pack(seq)`` alone (written before this format detail)
    reads and verifies as before."""
    with repo.storage.write() as writer:
        for key in (pack("b", "main"), pack("b", "side")):
            writer.tx.set(key, pack(unpack(writer.tx.get(key))[0]))
    assert repo.verify() == []
    with repo.storage.write() as writer:
        writer.tx.set(pack("b", "side"), pack(99))  # a commit that does not exist
    assert any("branch 'side': it names commit #99, which is not stored" in p for p in repo.verify())


def test_a_commit_record_whose_time_or_parents_broke_is_a_typed_error(repo):
    """A flipped byte inside a commit's time or parents used to escape verify as a
    ValueError or TypeError."""
    with repo.storage.write() as writer:
        record = msgpack.unpackb(writer.tx.get(pack("c", 1)))
        forged = record["time"][:11] + "\x10" + record["time"][12:]
        writer.tx.set(pack("c", 1), msgpack.packb({**record, "time": forged}))
    with pytest.raises(fstore.DataeError, match="not ISO 8601"):
        repo.verify()
    with repo.storage.write() as writer:
        writer.tx.set(pack("c", 1), msgpack.packb(record))
        record = msgpack.unpackb(writer.tx.get(pack("c", 2)))
        writer.tx.set(pack("c", 2), msgpack.packb({**record, "parents": [[1]]}))
    with pytest.raises(fstore.DataeError, match="not commit numbers"):
        repo.verify()


def test_a_clone_of_an_empty_store_verifies_and_clones_again(tmp_path):
    """Review finding 2: its remote-tracking branch ``origin/main`` has no commit, which
    verify took for damage, so the clone of that clone was refused as tampered."""
    fstore.open(tmp_path / "a").close()
    with fstore.clone(str(tmp_path / "a"), str(tmp_path / "b")) as b:
        assert b.remote_branches() == {"origin/main": None}
        assert b.verify() == []
    with fstore.clone(str(tmp_path / "b"), str(tmp_path / "c")) as c:
        assert c.verify() == []


def test_a_fetched_empty_branch_verifies(repo, tmp_path):
    """The same after a fetch from a remote that has a branch without commits; a tag or a
    remote-tracking branch naming a commit that is not stored is still reported."""
    with fstore.clone(str(repo.path), str(tmp_path / "b")) as b:
        repo.branch("empty", None)
        b.fetch()
        assert b.remote_branches()["origin/empty"] is None
        assert b.verify() == []
        with b.storage.write() as writer:
            writer.tx.set(pack("t", "v9"), pack(None))
            writer.tx.set(pack("m", "origin/gone"), pack(99))
        problems = b.verify()
    assert any("tag 'v9': its value (None,) is not (commit seq, commit id)" in p for p in problems), problems
    assert any("remote-tracking branch 'origin/gone': it names commit #99" in p for p in problems), problems


def test_verify_holds_while_another_process_commits(tmp_path):
    """Review finding 3: verify on a store another process wrote every few seconds always
    failed ("its B-trees could not be checked: writes kept replacing the state read") and
    ran none of its other checks. Its read transaction keeps the state it checks; the
    writer here commits all through verify, many times during the walk of the trees."""
    path = str(tmp_path / "r")
    with fstore.open(path) as repo:
        with repo.transaction("main", message="bulk", author="a") as tx:  # a walk of a few tenths of a second
            fstore.add_many(tx, [(IRI("urn:g"), IRI(f"urn:s{i}"), IRI(f"urn:p{i % 7}"), i) for i in range(60_000)])
        setup = textwrap.dedent(f"""
            import fstore
            from fstore import IRI
            repo = fstore.open({path!r})
            def commit(n):
                with repo.transaction("side", message="w", author="w") as tx:
                    fstore.add(tx, IRI("urn:g"), IRI(f"urn:w{{n}}"), IRI("urn:p"), n)
            """)
        repo.branch("side")
        with committing(setup, tmp_path, pause=0.002, limit=3000):
            before = repo.commit("side").seq
            problems = repo.verify()
            during = repo.commit("side").seq - before
        assert problems == []
        assert during >= 20, during  # commits the writer made while verify ran
        assert repo.verify() == []  # and what it wrote is whole


def test_b_trees_not_checked_leave_every_other_check_running(repo, monkeypatch):
    """If the trees could not be checked (every read transaction tried lost its meta page
    to two writes before its walk began), verify says so and still runs the other checks:
    it used to return that line alone."""
    from nstore.okvs import Transaction

    with repo.storage.write() as writer:
        writer.tx.set(pack("b", "side"), pack(99))  # a commit that does not exist
    monkeypatch.setattr(Transaction, "tree_problems", lambda self: None)
    problems = repo.verify()
    assert any("its B-trees could not be checked" in p for p in problems), problems
    assert any("branch 'side': it names commit #99, which is not stored" in p for p in problems), problems


def test_a_state_replaced_before_the_walk_is_checked_in_a_newer_one(repo):
    """Two writes after the read transaction began replace its meta page: the walk then
    checks the newest state instead (its pages are read as that transaction begins)."""
    with repo.storage.read() as snapshot:
        for i in range(2):
            with repo.transaction("main", message=f"w{i}", author="a") as write:
                fstore.add(write, IRI("urn:g"), IRI(f"urn:w{i}"), IRI("urn:p"), i)
        assert snapshot.tx.tree_problems() is None
        assert repo.storage.tree_problems(snapshot.tx) == []
