"""Import a whole Kart repository: every Kart commit becomes a datae commit.

Commits are replayed parents first (:meth:`KartRepo.commits`). Each becomes one commit with
Kart's message, author (``Name <email>``) and author time, whose changes are the Kart tree
diff against its first parent turned into quads (:func:`kart_changes`: meta items, legends,
attachments and feature blobs, all stored byte for byte as Kart wrote them). A Kart merge
commit becomes a datae merge of the mapped parents (the same DAG), resolving any conflict to
what Kart's merge commit holds; if the merged state still differs from Kart's (a merge
that was edited by hand), one more commit with the same message makes it equal. Kart
branches and tags become datae branches and tags (optionally under a prefix).

Both V3 (``.table-dataset``) and V2 (``.sno-dataset``) datasets import; a V2 dataset has no
``path-structure.json`` and reads with the legacy structure it implies.

>>> result = import_kart(repo, "/path/to/kart/points")                 # doctest: +SKIP
>>> result.commits["1582725544d9122251acd4b3fc75b5c88ac3fd17"]           # doctest: +SKIP
'3f0c…'
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nstore.pack import pack

from .access import put, remove
from ..history import Quad
from ..refs import BRANCH
from ..merge import Conflict
from .errors import KartRepoError
from .kart_repo import KartCommit, KartDataset, KartRepo, diff_features
from .mapping import ATTACHMENT, FEATURE, META, dataset_graph, dataset_name, meta_object
from .merging import RowConflict, SchemaConflict
from .schema import Schema

if TYPE_CHECKING:
    from ..repository import Repository

__all__ = ["KartImport", "import_kart", "kart_changes", "kart_time", "kart_objects"]

SCRATCH_BRANCH = "kart-import/scratch"


@dataclass
class KartImport:
    """What an import did: ``commits`` maps each Kart commit id to its datae commit id
    (None for a Kart root commit without any dataset), ``branches`` and ``tags`` the refs
    made, ``quads`` the number of quad changes written."""

    commits: dict[str, str | None] = field(default_factory=dict)
    branches: dict[str, str | None] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    quads: int = 0
    fixups: list[str] = field(default_factory=list)


def kart_time(seconds: int, offset: int) -> _dt.datetime:
    """A git timestamp (seconds since the epoch, offset east of UTC in seconds) as an
    aware datetime."""
    return _dt.datetime.fromtimestamp(seconds, _dt.timezone(_dt.timedelta(seconds=offset)))


def _datasets(kart: KartRepo, commit: str | None) -> dict[str, KartDataset]:
    return {} if commit is None else {ds.name: ds for ds in kart.datasets(commit)}


def kart_changes(kart: KartRepo, old: str | None, new: str) -> Iterator[tuple[bool, Quad]]:
    """``(alive, quad)`` changes that turn the quads of Kart commit ``old`` (None: an
    empty state) into those of ``new``: removals of old objects and additions of new ones,
    dataset by dataset, only where the git trees differ."""
    before, after = _datasets(kart, old), _datasets(kart, new)
    for name in sorted(before.keys() | after.keys()):
        a, b = before.get(name), after.get(name)
        graph = dataset_graph(name)
        same_tree = a is not None and b is not None and a.tree_id == b.tree_id
        if not same_tree:
            meta_a = dict(a.meta_items()) if a is not None else {}
            meta_b = dict(b.meta_items()) if b is not None else {}
            yield from _item_changes(graph, META, meta_a, meta_b)
        if a is None or b is None or a.parent_tree_id != b.parent_tree_id:
            yield from _item_changes(graph, ATTACHMENT, dict(a.attachments()) if a else {}, dict(b.attachments()) if b else {})
        if not same_tree:
            for path, old_blob, new_blob in diff_features(a, b):
                if old_blob is not None:
                    yield False, (graph, path, FEATURE, old_blob)
                if new_blob is not None:
                    yield True, (graph, path, FEATURE, new_blob)


def _item_changes(graph: Any, predicate: Any, a: dict[str, bytes], b: dict[str, bytes]) -> Iterator[tuple[bool, Quad]]:
    for item in sorted(a.keys() | b.keys()):
        old, new = a.get(item), b.get(item)
        if old == new:
            continue
        if old is not None:
            yield False, (graph, item, predicate, meta_object(item, old))
        if new is not None:
            yield True, (graph, item, predicate, meta_object(item, new))


def kart_objects(kart: KartRepo, commit: str, graph: Any, subject: str, predicate: Any) -> list[Any]:
    """The objects a (graph, subject, predicate) holds in Kart commit ``commit``."""
    name = dataset_name(graph)
    ds = _datasets(kart, commit).get(name) if name is not None else None
    if ds is None:
        return []
    if predicate == META:
        data = ds.meta_item(subject)
    elif predicate == ATTACHMENT:
        data = dict(ds.attachments()).get(subject)
    elif predicate == FEATURE:
        from .dataset import pk_of_path

        data = ds.feature_blob(pk_of_path(subject))
        return [] if data is None else [data]
    else:
        return []
    return [] if data is None else [meta_object(subject, data)]


def _time(c: KartCommit) -> _dt.datetime:
    return kart_time(c.author_time, c.author_tz)


def _reset(repo: Repository, branch: str, start: str | None) -> None:
    """Point ``branch`` at ``start`` (a commit id, or None: no commits), creating it if
    needed: one write, and allowed for the current branch (the import owns its branches)."""
    storage = repo.storage
    with storage.write() as tx:
        if storage.refs.get(tx, BRANCH, branch)[0]:
            storage.delete_branch(tx, branch, log=False)
        storage.create_branch(tx, branch, None if start is None else storage.resolve(tx, start), None)


def _apply(tx: Any, changes: Sequence[tuple[bool, Quad]] | Iterator[tuple[bool, Quad]]) -> int:
    n = 0
    for alive, quad in changes:
        (put if alive else remove)(tx, *quad)
        n += 1
    return n


def _resolver(kart: KartRepo, target: str) -> Any:
    """A merge policy answering every conflict with what Kart's merge commit holds."""

    def resolve(conflict: Any) -> Any:
        if isinstance(conflict, RowConflict):
            ds = _datasets(kart, target).get(conflict.table)
            return None if ds is None else ds.get_row(list(conflict.pk))
        if isinstance(conflict, SchemaConflict):
            ds = _datasets(kart, target).get(conflict.table)
            return None if ds is None else Schema.from_json(ds.schema_json, strict=False)
        assert isinstance(conflict, Conflict)
        return kart_objects(kart, target, conflict.graph, conflict.subject, conflict.predicate)

    return resolve


def import_kart(repo: Repository, path: str | os.PathLike[str], *, refs: Sequence[str] | None = None,
                branch_prefix: str = "", scratch: str = SCRATCH_BRANCH) -> KartImport:
    """Import the Kart repository at ``path`` (its working directory or git directory)
    into ``repo``: every commit reachable from ``refs`` (default: all branches and tags).
    Kart branch ``b`` becomes branch ``branch_prefix + b``, which must not exist yet or
    have no commits (a new repository's empty ``main`` is fine)."""
    result = KartImport()
    with KartRepo(path) as kart:
        kart_refs = kart.refs()
        wanted = list(refs) if refs is not None else list(kart_refs)
        heads = {name: kart.resolve(name) for name in wanted if not name.startswith("tags/") and name in kart_refs}
        tags = {name[len("tags/"):]: kart.resolve(name) for name in wanted if name.startswith("tags/")}
        existing = repo.branches()
        for name in heads:
            branch = branch_prefix + name
            if existing.get(branch) is not None:
                raise KartRepoError(f"branch {branch!r} already has commits; import under another branch_prefix",
                                    where=str(path))
        try:
            for commit in kart.commits(wanted):
                result.commits[commit.id] = _import_commit(repo, kart, commit, result, scratch)
        finally:
            if scratch in repo.branches():  # internal: no reflog entry
                with repo.storage.write() as tx:
                    repo.storage.delete_branch(tx, scratch, log=False)
        for name, kart_id in heads.items():
            branch = branch_prefix + name
            target = result.commits.get(kart_id)
            _reset(repo, branch, target)
            result.branches[branch] = target
        for name, kart_id in tags.items():
            target = result.commits.get(kart_id)
            if target is not None:
                repo.tag(branch_prefix + name, target)
                result.tags[branch_prefix + name] = target
    return result


def _import_commit(repo: Repository, kart: KartRepo, commit: KartCommit, result: KartImport, scratch: str) -> str | None:
    parents = [result.commits.get(p) for p in commit.parents]
    first_kart = commit.parents[0] if commit.parents else None
    first = parents[0] if parents else None
    _reset(repo, scratch, first)
    info = {"message": commit.message, "author": commit.author, "time": _time(commit)}
    others = [p for p in parents[1:] if p is not None]
    if not others:
        with repo.transaction(scratch, allow_empty=True, **info) as tx:
            result.quads += _apply(tx, kart_changes(kart, first_kart, commit.id))
        return repo.head(scratch)
    for other in others:
        repo.merge(scratch, other, policy=_resolver(kart, commit.id), **info)
    wanted = {(alive, pack(*quad)): (alive, quad) for alive, quad in kart_changes(kart, first_kart, commit.id)}
    actual = {(op == "+", pack(*quad)): (op == "+", quad) for op, quad in repo.diff(first, scratch)} if first else {}
    if wanted.keys() != actual.keys():
        fix = [wanted[k] for k in wanted.keys() - actual.keys()]
        fix += [(not alive, quad) for k, (alive, quad) in actual.items() if k not in wanted]
        with repo.transaction(scratch, **info) as tx:
            result.quads += _apply(tx, fix)
        result.fixups.append(commit.id)
    return repo.head(scratch)

