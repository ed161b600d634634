"""The daily loop's look-back commands: show a commit, revert it, reset a branch.

* **show**: a commit and its changes against its first parent (quads; tables row by row
  through ``fstore.tables``).
* **revert**: a new commit on a branch undoing one commit's changes, as git does it: a
  three-way merge onto the branch's head whose base is the commit and whose other side is
  its first parent. A ``(graph, subject, predicate)`` the branch changed again since (or a
  table cell) conflicts: :class:`~fstore.errors.RevertConflict`, nothing written.
* **reset**: datae has no working tree, so a reset only moves a branch. It refuses to
  drop commits no other ref (branch, tag, remote-tracking branch) reaches unless ``hard``;
  whenever the old head is not an ancestor of the new one, the old head goes to the
  reflog, so gc keeps its commits until the entry expires (as ``push --force`` does).

>>> import tempfile, fstore
>>> from fstore import IRI
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="one") as tx:
...     fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), 1)
>>> with repo.transaction("main", message="two") as tx:
...     fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), 2)
>>> [(op, quad[3].value) for op, quad in repo.show("main").quads]
[('+', 2)]
>>> reverted = repo.revert("main")
>>> repo.commit(reverted).digest == repo.commit("main~2").digest
True
>>> repo.close()
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nstore import Var
from nstore.okvs import Transaction as OkvsTransaction
from nstore.pack import pack

from ..core.commits import Commit
from .conflicts import ConflictItem
from .diff import diff_seqs
from ..errors import ResetRefusedError
from ..core.history import History, Quad
from .three_way import Conflict, GraphMerger, MergeSides, graph_mergers, resolution_objects
from ..core.refs import BRANCH, REMOTE, TAG

if TYPE_CHECKING:
    from ..repository import Repository
    from ..core.storage import Storage

__all__ = ["Shown", "plan_revert", "lost_by_reset"]


@dataclass
class Shown:
    """A commit and its changes against its first parent: ``quads`` as ``("+" | "-",
    quad)``, ``tables`` as :class:`fstore.tables.TableDiff` by table name."""

    commit: Commit
    quads: list[tuple[str, Quad]] = field(default_factory=list)
    tables: dict[str, Any] = field(default_factory=dict)


def _objects(sides: MergeSides, side: str, gsp: tuple) -> dict[bytes, Any]:
    return {pack(o): o for (_, _, _, o) in sides.match(side, (*gsp, Var("o")))}


def plan_revert(repo: Repository, tx: OkvsTransaction, history: History, head: int, commit: int,
                parent: int | None) -> tuple[list[tuple[Quad, bool, None]], list[Any]]:
    """The changes that undo commit ``commit`` (against its first parent ``parent``) on top
    of ``head`` in one space, and the conflicts met (then the changes are not meant to be
    written). Each group of objects ``commit`` changed returns to the parent's objects if
    the head still has ``commit``'s; one changed since conflicts."""
    sides = MergeSides(repo, tx, {"base": commit, "ours": head, "theirs": parent}, history)
    groups = {pack(*quad[:3]): quad[:3] for _, quad in diff_seqs(repo.storage, tx, parent, commit, history=history)}
    keep: dict[bytes, tuple[tuple, dict[bytes, Any]]] = {}
    conflicts: list[Any] = []
    deferred: dict[bytes, tuple[GraphMerger, Any, list[Conflict]]] = {}
    mergers = graph_mergers(repo)
    for key, gsp in sorted(groups.items()):
        at_base, at_ours, at_theirs = (_objects(sides, side, gsp) for side in ("base", "ours", "theirs"))
        if at_ours.keys() == at_base.keys():
            keep[key] = (gsp, at_theirs)
            continue
        if at_ours.keys() == at_theirs.keys():
            continue  # already undone
        conflict = Conflict(*gsp, *(tuple(objs[k] for k in sorted(objs)) for objs in (at_base, at_ours, at_theirs)))
        merger = next((m for m in mergers if m.claims(gsp[0])), None)
        if merger is None:
            conflicts.append(conflict.in_terms())
        else:  # a table: rows cell by cell
            deferred.setdefault(pack(gsp[0]), (merger, gsp[0], []))[2].append(conflict)
    for merger, graph, graph_conflicts in deferred.values():
        resolution = merger.merge(sides, graph, graph_conflicts, "abort")
        conflicts += resolution.conflicts + [c.in_terms() for c in resolution.unresolved]
        for gsp, objects in resolution.keep.items():
            held = [_objects(sides, side, gsp) for side in ("base", "ours", "theirs")]
            keep[pack(*gsp)] = (gsp, resolution_objects(objects, held, f"revert of {gsp!r}"))
    changes: list[tuple[Quad, bool, None]] = []
    for gsp, objects in keep.values():
        at_ours = _objects(sides, "ours", gsp)
        changes += [((*gsp, objects[k]), True, None) for k in sorted(objects.keys() - at_ours.keys())]
        changes += [((*gsp, at_ours[k]), False, None) for k in sorted(at_ours.keys() - objects.keys())]
    return changes, conflicts


def revert_items(conflicts: list[Any]) -> list[ConflictItem]:
    """The conflicts of a revert as items (for messages)."""
    return [item for conflict in conflicts for item in conflict.items()]


def lost_by_reset(storage: Storage, tx: OkvsTransaction, branch: str, old: int | None, new: int) -> set[int]:
    """The commits moving ``branch`` from ``old`` to ``new`` leaves no ref reaching."""
    ancestors = storage.commits.ancestors
    dropped = set(ancestors(tx, old)) - ancestors(tx, new)
    for kind in (BRANCH, TAG, REMOTE):
        for name, seq in storage.refs.items(tx, kind):
            if dropped and seq is not None and not (kind == BRANCH and name == branch):
                dropped -= ancestors(tx, seq)
    return dropped


def refuse_reset(branch: str, lost: set[int], target: str) -> None:
    if lost:
        raise ResetRefusedError(f"resetting {branch!r} to {target!r} would drop {len(lost)} commit(s) no other branch "
                                "or tag reaches; reset --hard to drop them (they stay in the reflog until gc expires it)")
