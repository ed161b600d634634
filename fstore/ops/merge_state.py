"""A merge stopped on conflicts, kept in the store until it is continued or aborted.

As git keeps ``MERGE_HEAD`` and the conflicting index stages, a merge made with the
``"record"`` policy that meets conflicts writes no commit but the **merge state**: the
branch merged into, its head then (ours), the commit merged (theirs), the base, the
message and author, and every conflict as a :class:`~fstore.ops.conflicts.ConflictItem` under
its key (``docs/format.md``: the keys under ``pack("merge")``). The changes that merge
without conflict are not stored: ours, theirs and the base determine them, and
:func:`fstore.ops.merge.continue_merge` recomputes them (the same three-way merge), settling each conflict
as resolved. It refuses while a conflict is unresolved, or when the branch moved since the
merge began (the state would no longer describe it).

Only one merge is in progress in a store at a time (git has one per working tree): a
second merge, a pull and a revert are refused meanwhile.

>>> import tempfile, fstore
>>> from fstore import IRI
>>> repo = fstore.open(tempfile.mkdtemp())
>>> s, p = IRI("urn:s"), IRI("urn:p")
>>> with repo.transaction("main") as tx:
...     fstore.add(tx, None, s, p, "base")
>>> repo.branch("dev")
>>> for branch in ("main", "dev"):
...     with repo.transaction(branch) as tx:
...         fstore.rm(tx, None, s, p, "base")
...         fstore.add(tx, None, s, p, branch)
>>> try:
...     repo.merge("main", "dev", policy="record")
... except fstore.ConflictsRecorded as stopped:
...     [item.kind for item in stopped.items]
['quad']
>>> repo.merge_state().unresolved
1
>>> [item.key for item in repo.resolve_conflicts(side="theirs")] == [item.key for item in repo.conflicts()]
True
>>> merged = repo.merge_continue()
>>> [quad[3].value for quad in fstore.quads(repo.at("main"), None, s, p, fstore.Var("o"))], repo.merge_state()
(['dev'], None)
>>> repo.close()
"""

from __future__ import annotations

from typing import Any, Iterable

from ..core.storage import Snapshot, Writer
from ..errors import MergeInProgressError, NoMergeInProgressError, UnknownConflictError
from .conflicts import (SIDES, ConflictItem, MergeState, decode_item, decode_state, encode_item, encode_resolution,
                        encode_state, keyed)

__all__ = ["items_of", "refuse_while_merging", "record", "current", "items", "state", "conflicts", "resolve",
           "resolve_with"]


def items_of(conflicts: Iterable[Any]) -> list[ConflictItem]:
    """The items a user settles, keyed (quad conflicts, table rows, cells and schemas)."""
    return keyed([item for conflict in conflicts for item in conflict.items()])


def refuse_while_merging(snapshot: Snapshot, doing: str) -> None:
    """Raise :class:`MergeInProgressError` if a merge is in progress."""
    raw = snapshot.merge_state()
    if raw is not None:
        current = decode_state(raw)
        raise MergeInProgressError(f"cannot {doing}: the merge of {current.other!r} into {current.into!r} is in "
                                   "progress; finish it (datae merge --continue) or abort it (datae merge --abort)")


def record(writer: Writer, merge: MergeState, items: list[ConflictItem]) -> None:
    """Store ``merge`` as the merge in progress, stopped on ``items``."""
    writer.start_merge(encode_state(merge), dict(encode_item(item) for item in items))


def current(snapshot: Snapshot) -> MergeState:
    """The merge in progress; :class:`NoMergeInProgressError` if none is."""
    raw = snapshot.merge_state()
    if raw is None:
        raise NoMergeInProgressError("no merge is in progress")
    return decode_state(raw)


def items(snapshot: Snapshot) -> list[ConflictItem]:
    """The conflicts of the merge in progress with their resolutions, in a stable order."""
    resolutions = snapshot.merge_records(resolutions=True)
    found = [decode_item(key, raw, resolutions.get(key)) for key, raw in snapshot.merge_records().items()]
    return sorted(found, key=lambda item: item.location)


def state(snapshot: Snapshot) -> MergeState | None:
    """The merge in progress, with its counts of conflicts (None: none is)."""
    raw = snapshot.merge_state()
    if raw is None:
        return None
    found = items(snapshot)
    return decode_state(raw, len(found), sum(1 for item in found if not item.resolved))


def conflicts(snapshot: Snapshot) -> list[ConflictItem]:
    """Every conflict of the merge in progress, resolved or not, in a stable order."""
    current(snapshot)
    return items(snapshot)


def _select(found: list[ConflictItem], keys: Iterable[str]) -> list[ConflictItem]:
    """The items ``keys`` name (a key or an unambiguous start of one)."""
    by_key = {item.key: item for item in found}
    chosen = []
    for key in keys:
        named = [by_key[key]] if key in by_key else [item for item in found if key and item.key.startswith(key)]
        if len(named) != 1:
            what = "several conflicts start with" if named else "no conflict"
            raise UnknownConflictError(f"{what} {key!r} in the merge in progress (datae conflicts lists them)")
        chosen.append(named[0])
    return chosen


def resolve(writer: Writer, keys: Iterable[str] | None, side: str) -> list[ConflictItem]:
    """Settle the conflicts ``keys`` (None: every one still unresolved) on ``side``;
    returns them. A key settles its conflict anew even if it was resolved."""
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, not {side!r}")
    current(writer)
    found = items(writer)
    chosen = [item for item in found if not item.resolved] if keys is None else _select(found, list(keys))
    for item in chosen:
        writer.set_resolution(item.key, encode_resolution(item, side))
    return chosen


def resolve_with(writer: Writer, key: str, value: Any) -> ConflictItem:
    """Settle conflict ``key`` with an explicit value (see
    :func:`fstore.ops.conflicts.encode_resolution`); returns it."""
    current(writer)
    item = _select(items(writer), [key])[0]
    writer.set_resolution(item.key, encode_resolution(item, "value", value))
    return item
