"""The past of quads: blame (the commit that gave a quad its state), the history of a
pattern (the commits that changed its quads), and the versions of a pattern (the commits
in which each of its quads holds).

>>> import tempfile, fstore
>>> from fstore import IRI, Var
>>> repo = fstore.open(tempfile.mkdtemp())
>>> for n in (1, 2):
...     with repo.transaction("main", message=f"set {n}") as tx:
...         fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), n)
>>> with repo.storage.read() as snapshot:
...     head = snapshot.resolve("main")
...     [(seq, [(op, q[3]) for op, q in changes]) for seq, changes in history_of(snapshot, head, (Var("g"), Var("s"), Var("p"), Var("o")))]
[(2, [('+', 2)]), (1, [('+', 1)])]
>>> repo.close()
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

from ..core.storage import Snapshot
from ..core.history import History, Quad, winner
from .diff import diff_seqs

__all__ = ["blame_seq", "history_of", "versions_of"]


def blame_seq(snapshot: Snapshot, seq: int | None, quad: Quad) -> int | None:
    """The commit whose record gives ``quad`` its state at ``seq`` (None: never recorded)."""
    best = snapshot.deciding_record(seq, quad)
    return None if best is None else best[0]


def history_of(snapshot: Snapshot, seq: int | None, pattern: Sequence[Any],
               history: History | None = None) -> Iterator[tuple[int, list[tuple[str, Quad]]]]:
    """For each commit in ``seq``'s ancestry (newest first) that changed quads matching the
    pattern: ``(commit seq, [(op, quad), ...])``. A merge's changes are its diff against its
    first parent. ``history``: the space, as for :func:`fstore.ops.diff.diff_seqs`."""
    history = history or snapshot.quads
    ancestry = snapshot.ancestors(seq)
    by_commit: dict[int, list[tuple[str, Quad]]] = {}
    merges = {s for s in ancestry if len(snapshot.parents(s)) > 1}
    for quad in history.match_records(snapshot.tx, pattern):
        for record_seq, alive in quad[1]:
            if record_seq in ancestry and record_seq not in merges:
                by_commit.setdefault(record_seq, []).append(("+" if alive else "-", quad[0]))
    for merge in merges:
        changes = list(diff_seqs(snapshot, snapshot.parents(merge)[0], merge, pattern, history))
        if changes:
            by_commit[merge] = changes
    for record_seq in sorted(by_commit, reverse=True):
        yield record_seq, by_commit[record_seq]


def versions_of(snapshot: Snapshot, seq: int | None, pattern: Sequence[Any]) -> Iterator[tuple[Quad, list[int]]]:
    """For each quad matching ``pattern`` alive in at least one commit of ``seq``'s ancestry:
    ``(quad, [seqs of the commits where it is alive, in significance order])``.

    Cost O(matching quads x commits in the ancestry): each commit's state of a quad is its
    winning record among that commit's ancestors."""
    ancestry = sorted(snapshot.ancestors(seq))
    ancestor_sets = [(c, snapshot.ancestors(c)) for c in ancestry]
    for quad, records in snapshot.quads.match_records(snapshot.tx, pattern):
        alive_in = []
        for commit, ancestors in ancestor_sets:
            best = winner(records, ancestors)
            if best is not None and best[1]:
                alive_in.append(commit)
        if alive_in:
            yield quad, alive_in
