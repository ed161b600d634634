"""Merging one ref into a branch, and finishing or abandoning a merge stopped on
conflicts (the state it keeps meanwhile: :mod:`fstore.ops.merge_state`).

A merge fast-forwards when the branch is an ancestor of the other commit, does nothing
when the other commit is already merged, and otherwise plans a three-way merge in every
space (:func:`fstore.ops.three_way.plan_merge`) and writes the merge commit. Conflicts go
to the policy; with ``"record"`` the merge is stored as the merge in progress and
:func:`merge` returns the :class:`~fstore.errors.ConflictsRecorded` to raise once that
write commits (raising inside the write would undo it).

>>> import tempfile, fstore
>>> from fstore import IRI
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main") as tx:
...     fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), 1)
>>> repo.branch("dev")
>>> with repo.transaction("dev") as tx:
...     fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), 2)
>>> with repo.storage.write() as writer:
...     merge(writer, "main", "dev") == writer.commit_id(writer.head("dev"))   # a fast-forward
True
>>> repo.close()
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from ..core.storage import Snapshot, Writer
from ..core.refs import BRANCH, REMOTE, qualified
from ..errors import ConflictsRecorded, MergeConflict, MergeError, MergeStaleError, UnresolvedConflictsError
from . import merge_state
from .conflicts import ConflictItem, MergeState, location_key
from .three_way import MergeOutcome, Policy, check_policy, plan_merge

__all__ = ["plan", "merge", "continue_merge", "abort"]


def plan(snapshot: Snapshot, ours: int, theirs: int, base: int | None,
         policy: Policy) -> tuple[dict[str, MergeOutcome], list[Any]]:
    """The merge of ``theirs`` into ``ours`` in every space, and every conflict met."""
    outcomes = {space.space.name: plan_merge(snapshot, space, ours, theirs, base, policy) for space in snapshot.spaces}
    return outcomes, [conflict for outcome in outcomes.values() for conflict in outcome.conflicts]


def _write(writer: Writer, into: str, ours: int, theirs: int, outcomes: dict[str, MergeOutcome], message: str,
           author: str, time: _dt.datetime | None) -> str:
    """The merge commit of ``outcomes`` on ``into``; returns its id."""
    return writer.write_commit(into, [ours, theirs], {name: o.records for name, o in outcomes.items()}, message,
                               author, time, sum(o.added for o in outcomes.values()),
                               sum(o.removed for o in outcomes.values()))


def merge(writer: Writer, into: str, other: str, *, message: str | None = None, author: str | None = None,
          policy: Policy = "abort", time: _dt.datetime | None = None) -> str | None | ConflictsRecorded:
    """Merge ``other`` (any ref) into branch ``into`` (see
    :meth:`fstore.Repository.merge`); returns the resulting head id, or, when the
    ``"record"`` policy stored the merge in progress, the error to raise after the write
    commits."""
    check_policy(policy)
    if into == other:
        raise MergeError(f"cannot merge branch {into!r} into itself")
    merge_state.refuse_while_merging(writer, f"merge {other!r} into {into!r}")
    ours = writer.head(into)
    theirs = writer.resolve(other)
    if theirs is None or theirs == ours:
        return writer.commit_id(ours)
    if ours is None or ours in writer.ancestors(theirs):
        writer.fast_forward(into, ours, theirs)
        return writer.commit_id(theirs)
    if theirs in writer.ancestors(ours):
        return writer.commit_id(ours)  # already merged
    base = writer.merge_base(ours, theirs)
    outcomes, conflicts = plan(writer, ours, theirs, base, "abort" if policy == "record" else policy)
    kind, name = qualified(other)
    label = name if kind == REMOTE else other  # what pull names: REMOTE/BRANCH, as git shows it
    if message is None:
        message = f"Merge {label!r} into {into!r}"
    if conflicts and policy == "abort":
        raise MergeConflict(conflicts)
    if not conflicts or policy != "record":
        return _write(writer, into, ours, theirs, outcomes, message, author or "", time)
    items = merge_state.items_of(conflicts)
    ids = [writer.commit_id(seq) for seq in (ours, theirs, base)]
    merge_state.record(writer, MergeState(into, label, *ids, message, author or ""), items)
    return ConflictsRecorded(conflicts, items)


def continue_merge(writer: Writer, message: str | None, author: str | None, time: _dt.datetime | None) -> str:
    """Make the merge commit of the merge in progress and forget its state; returns its id."""
    stopped = merge_state.current(writer)
    items = merge_state.items(writer)
    ours = writer.seq_of(stopped.ours)
    if writer.ref(BRANCH, stopped.into) != (True, ours) or ours is None:
        raise MergeStaleError(f"branch {stopped.into!r} moved since the merge of {stopped.other!r} began "
                              f"(it was at {stopped.ours[:10]}): abort the merge (datae merge --abort) and merge again")
    unresolved = [item.key for item in items if not item.resolved]
    if unresolved:
        raise UnresolvedConflictsError(unresolved)
    by_location = {item.location: item for item in items}

    def choose(found: ConflictItem) -> tuple:
        stored = by_location.get(found.location)
        if stored is None:  # e.g. a schema settled another way makes rows conflict anew
            raise UnresolvedConflictsError([f"{location_key(found.kind, found.where)[:8]} ({found.describe()})"])
        return stored.resolution

    theirs = writer.seq_of(stopped.theirs)
    base = None if stopped.base is None else writer.seq_of(stopped.base)
    outcomes, _ = plan(writer, ours, theirs, base, lambda conflict: conflict.settle(choose))
    commit_id = _write(writer, stopped.into, ours, theirs, outcomes, stopped.message if message is None else message,
                       stopped.author if author is None else author, time)
    writer.clear_merge()
    return commit_id


def abort(writer: Writer) -> MergeState:
    """Forget the merge in progress; returns its state. The merge committed nothing, so
    the branch stays where it is now: at ``ours`` unless commits went onto it while the
    merge was stopped (they stay), so its head, not ``ours``, says where it is."""
    stopped = merge_state.current(writer)
    writer.clear_merge()
    return stopped
