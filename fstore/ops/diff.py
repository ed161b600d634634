"""Differences between two commits.

Only records of commits in the symmetric difference of two ancestries can make a quad's
state differ between them (if both winners were common to both, they would be the same
record), so a diff costs O(changes between the commits), not O(size of the store).

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="one") as tx:
...     fstore.add(tx, None, fstore.IRI("urn:s"), fstore.IRI("urn:p"), 1)
>>> with repo.storage.read() as snapshot:
...     [(op, quad[3]) for op, quad in diff_seqs(snapshot, None, snapshot.resolve("main"))]
[('+', 1)]
>>> repo.close()
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence

from nstore.pack import pack

from ..core.storage import Snapshot
from ..core.history import History, Quad, matches, winner

__all__ = ["diff_seqs"]


def diff_seqs(snapshot: Snapshot, a: int | None, b: int | None, pattern: Sequence[Any] | None = None,
              history: History | None = None) -> Iterator[tuple[str, Quad]]:
    """``("+", quad)`` for quads alive at b but not a, ``("-", quad)`` for the reverse, in key
    order; only quads matching ``pattern`` if given. ``history``: the space (default the
    quads; the tables space for a table diff)."""
    tx = snapshot.tx
    history = history or snapshot.quads
    anc_a = snapshot.ancestors(a)
    anc_b = snapshot.ancestors(b)
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
