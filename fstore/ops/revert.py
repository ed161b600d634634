"""Revert: a new commit on a branch undoing one commit's changes, as git does it: a
three-way merge onto the branch's head whose base is the commit and whose other side is
its first parent. A ``(graph, subject, predicate)`` the branch changed again since (or a
table cell) conflicts: :class:`~fstore.errors.RevertConflict`, nothing written.

>>> import tempfile, fstore
>>> from fstore import IRI
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="one") as tx:
...     fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), 1)
>>> with repo.transaction("main", message="two") as tx:
...     fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), 2)
>>> with repo.storage.write() as writer:
...     reverted = revert(writer, "main")
>>> repo.commit(reverted).digest == repo.commit("main~2").digest
True
>>> repo.close()
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from nstore import Var
from nstore.pack import pack

from ..core.storage import Snapshot, Writer
from ..core.history import History, Quad
from ..errors import RevertConflict, UnknownRefError
from .diff import diff_seqs
from .merge_state import refuse_while_merging
from .three_way import Conflict, GraphMerger, MergeSides, graph_mergers, resolution_objects

__all__ = ["plan_revert", "revert"]


def _objects(sides: MergeSides, side: str, gsp: tuple) -> dict[bytes, Any]:
    return {pack(o): o for (_, _, _, o) in sides.match(side, (*gsp, Var("o")))}


def plan_revert(snapshot: Snapshot, history: History, head: int, commit: int,
                parent: int | None) -> tuple[list[tuple[Quad, bool, None]], list[Any]]:
    """The changes that undo commit ``commit`` (against its first parent ``parent``) on top
    of ``head`` in one space, and the conflicts met (then the changes are not meant to be
    written). Each group of objects ``commit`` changed returns to the parent's objects if
    the head still has ``commit``'s; one changed since conflicts."""
    sides = MergeSides(snapshot, {"base": commit, "ours": head, "theirs": parent}, history)
    groups = {pack(*quad[:3]): quad[:3] for _, quad in diff_seqs(snapshot, parent, commit, history=history)}
    keep: dict[bytes, tuple[tuple, dict[bytes, Any]]] = {}
    conflicts: list[Any] = []
    deferred: dict[bytes, tuple[GraphMerger, Any, list[Conflict]]] = {}
    mergers = graph_mergers(snapshot)
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


def revert(writer: Writer, ref: str, branch: str | None = None, *, message: str | None = None,
           author: str | None = None, time: _dt.datetime | None = None) -> str | None:
    """A new commit on ``branch`` (default: the current one) undoing commit ``ref``
    against its first parent; returns its id (None: nothing to undo). Conflicts:
    :class:`~fstore.errors.RevertConflict`, nothing written."""
    branch = branch or writer.current_branch()
    refuse_while_merging(writer, f"revert {ref!r}")
    head = writer.head(branch)
    seq = writer.resolve(ref)
    if seq is None or head is None:
        raise UnknownRefError(f"cannot revert {ref!r} on {branch!r}: no commits")
    commit = writer.commit(seq)
    parents = writer.parents(seq)
    changes, conflicts = {}, []
    for space in writer.spaces:
        found, met = plan_revert(writer, space, head, seq, parents[0] if parents else None)
        changes[space.space.name], conflicts = found, conflicts + met
    if conflicts:
        raise RevertConflict(conflicts)
    if not any(changes.values()):
        return None
    added = sum(1 for found in changes.values() for _, alive, _ in found if alive)
    removed = sum(map(len, changes.values())) - added
    if message is None:
        message = f'Revert "{commit.message}"\n\nThis reverts commit {commit.id}.'
    return writer.write_commit(branch, [head], changes, message, author or "", time, added, removed)

