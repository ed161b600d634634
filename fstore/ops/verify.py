"""Verify: every check of a store's integrity, in one read (``docs/format.md``, "What
verify checks").

The LMDB B-trees are checked first (the reads after it trust them, and LMDB aborts the
process on some damage); then every commit id is recomputed from its records, with its
counts; the state digest of every branch and tag head and of every snapshot from the
tuples it holds; every blob hash and reference count; that every index of every keyspace
holds the same tuples, that the dictionary agrees with itself both ways, and that every
ref names the commit it recorded.

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="one") as tx:
...     fstore.add(tx, None, fstore.IRI("urn:s"), fstore.IRI("urn:p"), 1)
>>> with repo.storage.read() as snapshot:
...     verify(snapshot)
[]
>>> repo.close()
"""

from __future__ import annotations

import datetime as _dt
from itertools import islice

from nstore import Var
from nstore.errors import DataeError
from nstore.lmdbfile import DATA_FILE

from ..core.commits import commit_hash
from ..core.counts import count_problems, record_counts
from ..core.digest import EMPTY, MODULUS, PackedItems, as_hex, identity_sum
from ..core.history import ALIVE, DEAD
from ..core.storage import Snapshot
from ..core.refs import BRANCH, TAG

__all__ = ["verify"]

_EVERYTHING = (Var("g"), Var("s"), Var("p"), Var("o"))
_CHUNK = 1 << 16  # records of a commit read at once


def verify(snapshot: Snapshot, *, quick: bool = False, tags: bool = True) -> list[str]:
    """A description of each mismatch in the state ``snapshot`` reads (an empty list: the
    store is intact). ``quick`` checks the B-trees and the commit chain only; ``tags=False``
    leaves out the state of heads only tags reach (see :meth:`fstore.Repository.verify`)."""
    storage, tx = snapshot.storage, snapshot.tx
    problems: list[str] = []
    trees = storage.tree_problems(tx)
    if trees:  # the reads below trust the trees (and LMDB aborts on some damage)
        return trees
    if trees is None:  # not known to be damaged: every other check still runs
        problems.append(f"{DATA_FILE}: its B-trees could not be checked: writes kept replacing the "
                        "state read before its walk began; run verify again")
    # Every pass below reads tuples as key items; each item's packed value is made once.
    items = {space.space.name: PackedItems(space, snapshot.tx) for space in snapshot.spaces}
    counts: dict[int, tuple[int, int]] = {}
    ids = _commit_problems(snapshot, problems, items, counts)
    if quick:
        return problems
    problems += count_problems(snapshot, counts)  # the counts are not in the id
    heads: dict[int, list[str]] = {}
    for kind in (BRANCH, TAG) if tags else (BRANCH,):
        for name, seq in snapshot.refs(kind, skip_damaged=True):  # refs.problems names those
            if seq is not None:
                heads.setdefault(seq, []).append(f"{'branch' if kind == BRANCH else 'tag'} {name}")
    for seq, names in sorted(heads.items()):
        try:
            stored = snapshot.commit(seq).digest
            held = _state_digest(snapshot, seq, items)
        except DataeError as exc:  # a damaged blob or dictionary entry
            problems.append(f"commit #{seq} ({', '.join(names)}): its state cannot be read: {exc}")
            continue
        if held != stored:
            problems.append(f"commit #{seq} ({', '.join(names)}): its state digest is {stored} but the "
                            f"quads and rows it holds sum to {held}")
    problems += storage.snapshot_problems(tx, set(heads))
    problems += storage.refs.problems(tx, snapshot.current_branch())
    problems += storage.commits.index_problems(tx, len(ids))
    problems += storage.index_problems(tx)
    for space in snapshot.spaces:
        for digest in space.store.blobs.verify(tx):
            problems.append(f"blob {digest.hex()} does not hash to its address")
    return problems


def _commit_problems(snapshot: Snapshot, problems: list[str], items: dict[str, PackedItems],
                     counts: dict[int, tuple[int, int]]) -> dict[int, str]:
    """Recompute every commit id from its parents' ids and its records, adding each
    mismatch to ``problems``; returns the ids by seq. The counts of each commit of at
    most one parent, which its records give (:func:`fstore.core.counts.record_counts`),
    go to ``counts``."""
    ids: dict[int, str] = {}
    for seq, record in snapshot.all_commits():
        parents = []
        for parent in record["parents"]:
            if parent not in ids:
                problems.append(f"commit {record['id']}: parent #{parent} missing or not earlier")
            parents.append(ids.get(parent, ""))
        time = _dt.datetime.fromisoformat(record["time"])
        try:
            changes, moved = _packed_records(snapshot, seq, items)
        except DataeError as exc:  # a damaged blob or dictionary entry
            problems.append(f"commit #{seq} ({record['id']}): its records cannot be read: {exc}")
            ids[seq] = record["id"]
            continue  # its counts are recounted by count_problems
        if len(record["parents"]) < 2:
            counts[seq] = moved
        expected = commit_hash(parents, record["message"], record["author"], time, record["digest"], changes)
        if expected != record["id"]:
            problems.append(f"commit #{seq} is stored as {record['id']} but hashes to {expected}")
        if snapshot.seq_of(record["id"]) != seq:
            problems.append(f"commit {record['id']}: id index does not point at #{seq}")
        ids[seq] = record["id"]
    return ids


def _packed_records(snapshot: Snapshot, seq: int, items: dict[str, PackedItems]) -> tuple[list[bytes], tuple[int, int]]:
    """Commit ``seq``'s records as its id hashes them (:meth:`fstore.core.storage.Storage.packed_records`,
    this one's test oracle: the same bytes, made from the key items with one term object
    per distinct term rather than one per value), and the ``(added, removed)`` they give
    (:func:`fstore.core.counts.record_counts`). The records are read a chunk at a time, so
    a large commit never holds its key items all at once."""
    join, records, added, removed = b"".join, [], 0, 0
    for space in snapshot.spaces:
        mark, packed = space.space.mark, items[space.space.name]
        packed_of = packed.__getitem__
        rows = space.raw_changes_of(snapshot.tx, seq)
        while chunk := list(islice(rows, _CHUNK)):
            born, died = record_counts(payload for _, payload in chunk)
            added, removed = added + born, removed + died
            packed.fill(item for row, _ in chunk for item in row)
            records += [mark + join(map(packed_of, row)) + (ALIVE if payload == ALIVE else DEAD)
                        for row, payload in chunk]
    records.sort()
    return records, (added, removed)


def _state_digest(snapshot: Snapshot, seq: int, items: dict[str, PackedItems]) -> str:
    """The state digest of commit ``seq`` recomputed from every tuple alive at it
    (:meth:`fstore.core.storage.Storage.state_digest`, this one's test oracle): the same
    reads (through the nearest snapshot), summed from the key items read raw."""
    total = EMPTY
    for space in snapshot.spaces:
        _, rows = space.reader(snapshot.tx, seq).packed(_EVERYTHING)
        total += identity_sum(rows, space.space.mark, items[space.space.name])
    return as_hex(total % MODULUS)
