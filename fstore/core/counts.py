"""A commit's counts (``added`` / ``removed``), recomputed from its change records.

A commit's id does not hash its counts: they are a summary of its records, kept in the
commit record so ``log`` need not read the records. So a store never takes counts on
trust from elsewhere: sync recomputes them for every commit it receives
(:func:`fstore.sync.protocol.receive`), and ``verify`` checks the stored counts of every commit
(:func:`count_problems`).

The counts are the tuples (quads and table rows) whose state differs between the first
parent and the commit, the same change the state digest moves by
(:meth:`fstore.core.storage.Storage.record_commit`): for a commit with at most one parent its
alive and dead records (a transaction records only what changes its head); for a merge,
the tuples whose winning record differs between the two ancestries (O(the changes the
merge brings in)).

>>> import fstore, tempfile
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="m", author="a") as tx:
...     fstore.add(tx, fstore.IRI("urn:g"), fstore.IRI("urn:s"), fstore.IRI("urn:p"), 1)
>>> with repo.storage.read() as snapshot:
...     counts_of(snapshot, snapshot.head("main")), count_problems(snapshot)
((1, 0), [])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping

from nstore.errors import DataeError

from .history import ALIVE

if TYPE_CHECKING:
    from .storage import Snapshot

__all__ = ["record_counts", "counts_of", "count_problems"]


def record_counts(records: Iterable[bytes]) -> tuple[int, int]:
    """``(added, removed)`` of a commit with at most one parent, from its packed change
    records (each ends with its state byte, ``docs/sync.md``)."""
    added = removed = 0
    for record in records:
        if record[-1:] == ALIVE:
            added += 1
        else:
            removed += 1
    return added, removed


def counts_of(snapshot: Snapshot, seq: int) -> tuple[int, int]:
    """``(added, removed)`` of commit ``seq``, recomputed from the change records."""
    tx = snapshot.tx
    parents = snapshot.parents(seq)
    if len(parents) < 2:
        return record_counts(payload for space in snapshot.spaces for _, payload in space.raw_changes_of(tx, seq))
    before, after = snapshot.ancestors(parents[0]), snapshot.ancestors(seq)
    added = removed = 0
    for space in snapshot.spaces:
        for _, _, alive in space.state_changes(tx, before, after):
            if alive:
                added += 1
            else:
                removed += 1
    return added, removed


def count_problems(snapshot: Snapshot, known: Mapping[int, tuple[int, int]] | None = None) -> list[str]:
    """Each commit whose stored counts are not what its change records give (for
    verify; commits whose records cannot be read are verify's other checks' business).
    ``known``: counts already taken from the records, by seq (verify counts the commits
    of at most one parent as it hashes their records: their records are not read twice)."""
    problems = []
    for seq, record in snapshot.all_commits():
        counts = known.get(seq) if known else None
        if counts is None:
            try:
                counts = counts_of(snapshot, seq)
            except DataeError:
                continue
        if counts != (record["added"], record["removed"]):
            problems.append(f"commit #{seq} ({record['id']}): it is stored as adding {record['added']} and removing "
                            f"{record['removed']} tuples, but its change records add {counts[0]} and remove "
                            f"{counts[1]}")
    return problems
