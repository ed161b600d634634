"""Show a commit: the commit and its changes against its first parent (quads here;
each table's rows through ``fstore.tables``, which the facade adds).

>>> import tempfile, fstore
>>> from fstore import IRI
>>> repo = fstore.open(tempfile.mkdtemp())
>>> for n in (1, 2):
...     with repo.transaction("main", message=f"set {n}") as tx:
...         fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), n)
>>> with repo.storage.read() as snapshot:
...     shown, parent = show(snapshot, "main")
>>> shown.commit.message, [(op, quad[3].value) for op, quad in shown.quads], parent
('set 2', [('+', 2)], 1)
>>> repo.close()
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.commits import Commit
from ..core.storage import Snapshot
from ..core.history import Quad
from nstore.terms import to_rdf
from ..errors import UnknownRefError
from .diff import diff_seqs

__all__ = ["Shown", "show", "commit_at"]


@dataclass
class Shown:
    """A commit and its changes against its first parent: ``quads`` as ``("+" | "-",
    quad)``, ``tables`` as :class:`fstore.tables.TableDiff` by table name."""

    commit: Commit
    quads: list[tuple[str, Quad]] = field(default_factory=list)
    tables: dict[str, Any] = field(default_factory=dict)


def commit_at(snapshot: Snapshot, ref: str) -> Commit:
    """The commit ``ref`` names (:class:`UnknownRefError` if it names a branch with no
    commits)."""
    seq = snapshot.resolve(ref)
    if seq is None:
        raise UnknownRefError(f"{ref!r} has no commits")
    return snapshot.commit(seq)


def show(snapshot: Snapshot, ref: str) -> tuple[Shown, int | None]:
    """The commit ``ref`` names with its quad changes (as RDF terms), and the seq of its
    first parent (None: a root), which the table diffs start from."""
    commit = commit_at(snapshot, ref)
    first = snapshot.seq_of(commit.parents[0]) if commit.parents else None
    quads = [(op, tuple(map(to_rdf, quad))) for op, quad in diff_seqs(snapshot, first, commit.seq)]
    return Shown(commit, quads), first  # type: ignore[arg-type]
