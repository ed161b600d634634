"""Import a whole Kart repository: every Kart commit becomes a datae commit.

Commits are replayed parents first (:meth:`KartRepo.commits`). Each becomes one commit with
Kart's message, author (``Name <email>``) and author time, whose changes are the Kart tree
diff against its first parent turned into quads (:func:`kart_changes`: meta items, legends,
attachments and feature blobs, all stored byte for byte as Kart wrote them). A Kart merge
commit becomes a datae merge commit of the mapped parents (the same DAG) holding exactly
what Kart's merge commit holds, however it was resolved: no three-way merge is run, the
merge records the tuples that make its state Kart's (see :func:`_write_merge`). Kart
branches and tags become datae branches and tags (optionally under a prefix).

Both V3 (``.table-dataset``) and V2 (``.sno-dataset``) datasets import; a V2 dataset has no
``path-structure.json`` and reads with the legacy structure it implies. A repository that
declares another structure version is refused (:class:`KartVersionError`).

Into a store that holds data already, the history can be grafted (``onto`` a branch or
commit): Kart's root commits then get that commit as their parent, so every imported
commit holds the store's data plus Kart's tables (a table of the same name at ``onto`` is
refused). A datae branch that already has commits takes a Kart branch of its name only
when it moves forward (its head is ``onto`` or an ancestor of it), as ``git pull
--ff-only`` would.

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
from ..core.history import Quad, winner
from ..core.refs import BRANCH, check_ref_name
from ..patterns import prepare_quad
from .dataset import list_datasets
from .errors import KartRepoError, KartVersionError
from .kart_repo import KartCommit, KartDataset, KartRepo, diff_features
from .mapping import ATTACHMENT, FEATURE, META, dataset_graph, meta_object

if TYPE_CHECKING:
    from ..repository import Repository

__all__ = ["KartImport", "import_kart", "kart_changes", "kart_time"]

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


def _time(c: KartCommit) -> _dt.datetime:
    return kart_time(c.author_time, c.author_tz)


def _reset(repo: Repository, branch: str, start: str | None) -> None:
    """Point ``branch`` at ``start`` (a commit id, or None: no commits), creating it if
    needed: one write, and allowed for the current branch (the import owns its branches)."""
    with repo.storage.write() as writer:
        if writer.ref(BRANCH, branch)[0]:
            writer.delete_branch(branch, log=False)
        writer.create_branch(branch, None if start is None else writer.resolve(start), None)


def _apply(tx: Any, changes: Sequence[tuple[bool, Quad]] | Iterator[tuple[bool, Quad]]) -> int:
    n = 0
    for alive, quad in changes:
        (put if alive else remove)(tx, *quad)
        n += 1
    return n


SUPPORTED_VERSIONS = ("2", "3")


def _check_refs(repo: Repository, kart: KartRepo, commits: list[KartCommit], heads: dict[str, str],
                tags: dict[str, str], branch_prefix: str, onto: str | None, where: str) -> None:
    """Refuse, before anything is written, an import that would rewrite a branch or tag
    or mix two tables of one name."""
    for kind, names in (("branch", heads), ("tag", tags)):  # before a commit is imported
        for name in names:
            check_ref_name(branch_prefix + name, what=f"a {kind} of the Kart repository {where}")
    with repo.storage.read() as snapshot:
        ancestors = snapshot.ancestors(snapshot.resolve(onto)) if onto else frozenset()
        for name in sorted(heads):
            branch = branch_prefix + name
            exists, seq = snapshot.ref(BRANCH, branch)
            if exists and seq is not None and seq not in ancestors:
                hint = "" if onto else " (it was not grafted on)"
                raise KartRepoError(f"branch {branch!r} already has commits the import does not descend from{hint}: "
                                    "import under a branch prefix (--branch-prefix)", where=where)
    existing_tags = repo.tags()
    for name in tags:
        if branch_prefix + name in existing_tags:
            raise KartRepoError(f"tag {branch_prefix + name!r} exists already: import under a branch prefix "
                                "(--branch-prefix)", where=where)
    if onto:
        present = set(list_datasets(repo.at(onto).table_tuples))
        for commit in commits:
            for ds in kart.datasets(commit.id):
                if ds.name in present:
                    raise KartRepoError(f"table {ds.name!r} is in the Kart repository and at {onto!r} already: import "
                                        "under a branch prefix (--branch-prefix) and merge", where=where)


def import_kart(repo: Repository, path: str | os.PathLike[str], *, refs: Sequence[str] | None = None,
                branch_prefix: str = "", onto: str | None = None, scratch: str = SCRATCH_BRANCH) -> KartImport:
    """Import the Kart repository at ``path`` (its working directory or git directory)
    into ``repo``: every commit reachable from ``refs`` (default: all branches and tags).
    Kart branch ``b`` becomes branch ``branch_prefix + b``, which must not exist yet, have
    no commits (a new repository's empty ``main`` is fine) or, with ``onto`` (a branch or
    commit whose data Kart's root commits descend from), be at or behind ``onto``."""
    result = KartImport()
    with KartRepo(path) as kart:
        version = kart.structure_version
        if version is not None and version not in SUPPORTED_VERSIONS:
            raise KartVersionError(version, where=kart.git_dir)
        kart_refs = kart.refs()
        wanted = list(refs) if refs is not None else list(kart_refs)
        heads = {name: kart.resolve(name) for name in wanted if not name.startswith("tags/") and name in kart_refs}
        tags = {name[len("tags/"):]: kart.resolve(name) for name in wanted if name.startswith("tags/")}
        commits = list(kart.commits(wanted))
        base = repo.commit(onto).id if onto else None
        _check_refs(repo, kart, commits, heads, tags, branch_prefix, onto, str(path))
        try:
            for commit in commits:
                result.commits[commit.id] = _import_commit(repo, kart, commit, result, scratch, base)
        finally:
            if scratch in repo.branches():  # internal: no reflog entry
                with repo.storage.write() as writer:
                    writer.delete_branch(scratch, log=False)
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


def _import_commit(repo: Repository, kart: KartRepo, commit: KartCommit, result: KartImport, scratch: str,
                   base: str | None) -> str | None:
    """Replay one Kart commit; ``base`` (the graft point, or None) stands for a parent
    that holds no dataset."""
    parents = [result.commits.get(p) or base for p in commit.parents]
    first_kart = commit.parents[0] if commit.parents else None
    first = parents[0] if parents else base
    _reset(repo, scratch, first)
    info = {"message": commit.message, "author": commit.author, "time": _time(commit)}
    others = list(dict.fromkeys(p for p in parents[1:] if p is not None and p != first))
    if not others:
        with repo.transaction(scratch, allow_empty=True, **info) as tx:
            result.quads += _apply(tx, kart_changes(kart, first_kart, commit.id))
        return repo.head(scratch)
    result.quads += _write_merge(repo, kart_changes(kart, first_kart, commit.id), first, others, scratch, info)
    return repo.head(scratch)


def _write_merge(repo: Repository, changes: Iterator[tuple[bool, Quad]], first: str | None, others: list[str],
                 branch: str, info: dict[str, Any]) -> int:
    """Write a merge commit of ``first`` (the head of ``branch``) and ``others`` whose
    tables are ``first``'s with ``changes``: exactly what the Kart merge commit holds,
    however it was resolved (by hand, ``--no-ff`` of a descendant…), so no three-way merge
    is run. Under the significance rule, a tuple's state at the merge is its record there
    if any, else its most significant record in the union of the parents' ancestries; so
    the merge records every tuple Kart changed and every tuple the other parents' own
    commits touched (keeping ``first``'s state), and nothing else can differ. Returns
    the number of changes against ``first``."""
    with repo.storage.write() as writer:
        tables, tx = writer.tables, writer.tx  # the space's records are read in the raw transaction
        seq_first = writer.resolve(first) if first is not None else None
        seq_others = [writer.resolve(o) for o in others]
        anc_first = writer.ancestors(seq_first)
        states: dict[bytes, tuple[Quad, bool | None]] = {}
        for alive, quad in changes:
            prepared = prepare_quad(quad, "table tuple")
            states[pack(*prepared)] = (prepared, alive)
        added = sum(1 for _, alive in states.values() if alive)
        removed = len(states) - added
        theirs: set[int] = set()
        for seq in seq_others:
            theirs |= writer.ancestors(seq)
        for key, quad in tables.quads_changed_by(tx, sorted(theirs - anc_first)).items():
            states.setdefault(key, (quad, None))  # None: as at first
        records = []
        for key in sorted(states):
            quad, alive = states[key]
            if alive is None:
                best = winner(tables.records(tx, quad), anc_first)
                alive = best is not None and best[1]
            records.append((quad, alive, None))
        parents = ([seq_first] if seq_first is not None else []) + seq_others
        writer.write_commit(branch, parents, {tables.space.name: records}, info["message"], info["author"],
                            info["time"], added, removed)
    return added + removed
