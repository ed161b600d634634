"""A merge stopped on conflicts, kept in the store until it is continued or aborted.

As git keeps ``MERGE_HEAD`` and the conflicting index stages, a merge made with the
``"record"`` policy that meets conflicts writes no commit but the **merge state**: the
branch merged into, its head then (ours), the commit merged (theirs), the base, the
message and author, and every conflict as a :class:`~fstore.ops.conflicts.ConflictItem` under
its key (``docs/format.md``: the keys under ``pack("merge")``). The changes that merge
without conflict are not stored: ours, theirs and the base determine them, and
:func:`continue_merge` recomputes them (the same three-way merge), settling each conflict
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

import datetime as _dt
from typing import TYPE_CHECKING, Any, Iterable

from nstore.okvs import Transaction as OkvsTransaction

from .conflicts import (SIDES, ConflictItem, MergeState, decode_item, decode_state, encode_item, encode_resolution,
                        encode_state, keyed, location_key)
from ..errors import (MergeInProgressError, MergeStaleError, NoMergeInProgressError, UnknownConflictError,
                     UnresolvedConflictsError)
from .three_way import MergeOutcome, Policy, plan_merge
from ..core.refs import BRANCH

if TYPE_CHECKING:
    from ..repository import Repository
    from ..core.storage import Storage

__all__ = ["plan", "items_of", "refuse_while_merging", "record", "state", "conflicts", "resolve", "resolve_with",
           "continue_merge", "abort"]


def plan(repo: Repository, tx: OkvsTransaction, ours: int, theirs: int, base: int | None,
         policy: Policy) -> tuple[dict[str, MergeOutcome], list[Any]]:
    """The merge of ``theirs`` into ``ours`` in every space, and every conflict met."""
    outcomes = {space.space.name: plan_merge(repo, tx, space, ours, theirs, base, policy)
                for space in repo.storage.spaces}
    return outcomes, [conflict for outcome in outcomes.values() for conflict in outcome.conflicts]


def items_of(conflicts: Iterable[Any]) -> list[ConflictItem]:
    """The items a user settles, keyed (quad conflicts, table rows, cells and schemas)."""
    return keyed([item for conflict in conflicts for item in conflict.items()])


def refuse_while_merging(storage: Storage, tx: OkvsTransaction, doing: str) -> None:
    """Raise :class:`MergeInProgressError` if a merge is in progress."""
    raw = storage.merge_state(tx)
    if raw is not None:
        current = decode_state(raw)
        raise MergeInProgressError(f"cannot {doing}: the merge of {current.other!r} into {current.into!r} is in "
                                   "progress; finish it (datae merge --continue) or abort it (datae merge --abort)")


def record(storage: Storage, tx: OkvsTransaction, merge: MergeState, items: list[ConflictItem]) -> None:
    """Store ``merge`` as the merge in progress, stopped on ``items``."""
    storage.start_merge(tx, encode_state(merge), dict(encode_item(item) for item in items))


def _current(storage: Storage, tx: OkvsTransaction) -> MergeState:
    raw = storage.merge_state(tx)
    if raw is None:
        raise NoMergeInProgressError("no merge is in progress")
    return decode_state(raw)


def _items(storage: Storage, tx: OkvsTransaction) -> list[ConflictItem]:
    resolutions = storage.merge_records(tx, resolutions=True)
    items = [decode_item(key, raw, resolutions.get(key)) for key, raw in storage.merge_records(tx).items()]
    return sorted(items, key=lambda item: item.location)


def state(repo: Repository) -> MergeState | None:
    """The merge in progress, with its counts of conflicts (None: none is)."""
    with repo.storage.read() as tx:
        raw = repo.storage.merge_state(tx)
        if raw is None:
            return None
        items = _items(repo.storage, tx)
        return decode_state(raw, len(items), sum(1 for item in items if not item.resolved))


def conflicts(repo: Repository) -> list[ConflictItem]:
    """Every conflict of the merge in progress, resolved or not, in a stable order."""
    with repo.storage.read() as tx:
        _current(repo.storage, tx)
        return _items(repo.storage, tx)


def _select(items: list[ConflictItem], keys: Iterable[str]) -> list[ConflictItem]:
    """The items ``keys`` name (a key or an unambiguous start of one)."""
    by_key = {item.key: item for item in items}
    chosen = []
    for key in keys:
        found = [by_key[key]] if key in by_key else [item for item in items if key and item.key.startswith(key)]
        if len(found) != 1:
            what = "several conflicts start with" if found else "no conflict"
            raise UnknownConflictError(f"{what} {key!r} in the merge in progress (datae conflicts lists them)")
        chosen.append(found[0])
    return chosen


def resolve(repo: Repository, keys: Iterable[str] | None, side: str) -> list[ConflictItem]:
    """Settle the conflicts ``keys`` (None: every one still unresolved) on ``side``;
    returns them. A key settles its conflict anew even if it was resolved."""
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, not {side!r}")
    with repo.storage.write() as tx:
        _current(repo.storage, tx)
        items = _items(repo.storage, tx)
        chosen = [item for item in items if not item.resolved] if keys is None else _select(items, list(keys))
        for item in chosen:
            repo.storage.set_resolution(tx, item.key, encode_resolution(item, side))
    return chosen


def resolve_with(repo: Repository, key: str, value: Any) -> ConflictItem:
    """Settle conflict ``key`` with an explicit value (see
    :func:`fstore.ops.conflicts.encode_resolution`); returns it."""
    with repo.storage.write() as tx:
        _current(repo.storage, tx)
        item = _select(_items(repo.storage, tx), [key])[0]
        repo.storage.set_resolution(tx, item.key, encode_resolution(item, "value", value))
    return item


def continue_merge(repo: Repository, message: str | None, author: str | None, time: _dt.datetime | None) -> str:
    """Make the merge commit of the merge in progress and forget its state; returns its id."""
    storage = repo.storage
    with storage.write() as tx:
        merge = _current(storage, tx)
        items = _items(storage, tx)
        ours = storage.commits.seq_of(tx, merge.ours)
        if storage.refs.get(tx, BRANCH, merge.into) != (True, ours) or ours is None:
            raise MergeStaleError(f"branch {merge.into!r} moved since the merge of {merge.other!r} began "
                                  f"(it was at {merge.ours[:10]}): abort the merge (datae merge --abort) and merge again")
        unresolved = [item.key for item in items if not item.resolved]
        if unresolved:
            raise UnresolvedConflictsError(unresolved)
        by_location = {item.location: item for item in items}

        def choose(found: ConflictItem) -> tuple:
            stored = by_location.get(found.location)
            if stored is None:  # e.g. a schema settled another way makes rows conflict anew
                raise UnresolvedConflictsError([f"{location_key(found.kind, found.where)[:8]} ({found.describe()})"])
            return stored.resolution

        theirs = storage.commits.seq_of(tx, merge.theirs)
        base = None if merge.base is None else storage.commits.seq_of(tx, merge.base)
        outcomes, _ = plan(repo, tx, ours, theirs, base, lambda conflict: conflict.settle(choose))
        commit_id = storage.write_commit(
            tx, merge.into, [ours, theirs], {name: outcome.records for name, outcome in outcomes.items()},
            merge.message if message is None else message, merge.author if author is None else author, time,
            sum(o.added for o in outcomes.values()), sum(o.removed for o in outcomes.values()))
        storage.clear_merge(tx)
    return commit_id


def abort(repo: Repository) -> MergeState:
    """Forget the merge in progress; returns its state. The merge committed nothing, so
    the branch stays where it is now: at ``ours`` unless commits went onto it while the
    merge was stopped (they stay), so its head, not ``ours``, says where it is."""
    with repo.storage.write() as tx:
        merge = _current(repo.storage, tx)
        repo.storage.clear_merge(tx)
    return merge
