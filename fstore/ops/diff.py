"""Differences between commits, blame, and the history of a pattern.

Only records of commits in the symmetric difference of two ancestries can make a quad's
state differ between them (if both winners were common to both, they would be the same
record), so a diff costs O(changes between the commits), not O(size of the store).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Sequence

from nstore.okvs import Transaction as OkvsTransaction
from nstore.pack import pack

from ..core.history import History, Quad, winner
from ..transaction import matches

if TYPE_CHECKING:
    from ..core.storage import Storage

__all__ = ["diff_seqs", "history_of", "blame_seq", "versions_of"]


def diff_seqs(storage: Storage, tx: OkvsTransaction, a: int | None, b: int | None, pattern: Sequence[Any] | None = None,
              history: History | None = None) -> Iterator[tuple[str, Quad]]:
    """``("+", quad)`` for quads alive at b but not a, ``("-", quad)`` for the reverse, in key
    order; only quads matching ``pattern`` if given. ``history``: the space (default the
    quads; the tables space for a table diff)."""
    commits = storage.commits
    history = history or storage.quads
    anc_a = commits.ancestors(tx, a)
    anc_b = commits.ancestors(tx, b)
    candidates: dict[bytes, Quad] = {}
    for seq in sorted(anc_a ^ anc_b):
        for quad, _ in history.changes_of(tx, seq):
            if pattern is None or matches(pattern, quad):
                candidates.setdefault(pack(*quad), quad)
    for key in sorted(candidates):
        quad = candidates[key]
        records = history.records(tx, quad)
        at_a = winner(records, anc_a)
        at_b = winner(records, anc_b)
        alive_a = at_a is not None and at_a[1]
        alive_b = at_b is not None and at_b[1]
        if alive_a != alive_b:
            yield ("+" if alive_b else "-"), quad


def blame_seq(storage: Storage, tx: OkvsTransaction, seq: int | None, quad: Quad) -> int | None:
    """The commit whose record gives ``quad`` its state at ``seq`` (None: never recorded)."""
    best = storage.deciding_record(tx, seq, quad)
    return None if best is None else best[0]


def history_of(storage: Storage, tx: OkvsTransaction, seq: int | None, pattern: Sequence[Any],
               history: History | None = None) -> Iterator[tuple[int, list[tuple[str, Quad]]]]:
    """For each commit in ``seq``'s ancestry (newest first) that changed quads matching the
    pattern: ``(commit seq, [(op, quad), ...])``. A merge's changes are its diff against its
    first parent. ``history``: the space, as for :func:`diff_seqs`."""
    commits = storage.commits
    history = history or storage.quads
    ancestry = commits.ancestors(tx, seq)
    by_commit: dict[int, list[tuple[str, Quad]]] = {}
    merges = {s for s in ancestry if len(commits.parents(tx, s)) > 1}
    for quad in history.match_records(tx, pattern):
        for record_seq, alive in quad[1]:
            if record_seq in ancestry and record_seq not in merges:
                by_commit.setdefault(record_seq, []).append(("+" if alive else "-", quad[0]))
    for merge in merges:
        changes = list(diff_seqs(storage, tx, commits.parents(tx, merge)[0], merge, pattern, history))
        if changes:
            by_commit[merge] = changes
    for record_seq in sorted(by_commit, reverse=True):
        yield record_seq, by_commit[record_seq]


def versions_of(storage: Storage, tx: OkvsTransaction, seq: int | None, pattern: Sequence[Any]) -> Iterator[tuple[Quad, list[int]]]:
    """For each quad matching ``pattern`` alive in at least one commit of ``seq``'s ancestry:
    ``(quad, [seqs of the commits where it is alive, in significance order])``.

    Cost O(matching quads x commits in the ancestry): each commit's state of a quad is its
    winning record among that commit's ancestors."""
    commits = storage.commits
    ancestry = sorted(commits.ancestors(tx, seq))
    ancestor_sets = [(c, commits.ancestors(tx, c)) for c in ancestry]
    for quad, records in storage.quads.match_records(tx, pattern):
        alive_in = []
        for commit, ancestors in ancestor_sets:
            best = winner(records, ancestors)
            if best is not None and best[1]:
                alive_in.append(commit)
        if alive_in:
            yield quad, alive_in
