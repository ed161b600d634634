"""Export the tables' history as a Kart (Datasets V3) git repository, written with dulwich.

The datae commits reachable from the exported refs are walked oldest first (significance
order, so parents come before children). A commit that changes no table is left out and
its children take its place in the graph (git's history simplification), so the Kart
repository holds exactly the commits that changed tables, with the same DAG: a datae merge
of two commits that changed tables is a git merge commit (also when one is an ancestor of
the other, as after ``--no-ff``), and a merge of a side that changed no table is none.
Each kept commit's root tree holds ``.kart.repostructure.version`` and one V3 dataset
tree per table, file for file what :func:`~fstore.tables.kart_export.export_kart_tree`
writes; so a history imported from Kart exports to the same git tree ids. Author, time
and message come from the datae commit (the committer is the author; the time in UTC, as
datae keeps it), so commit ids match too where the original's were made so: an export
imported and exported again gives the same commit ids, but Kart commits made in another
time zone do not keep theirs.

Trees are edited, not rebuilt: a commit costs O(its table changes) (a merge: the diff
against its first parent), not O(rows). New objects go to packs in batches; the
repository is built in a temporary directory beside ``dest`` and renamed at the end, so a
failed export leaves nothing behind.

>>> import tempfile, os, fstore, fstore.tables as tables
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="Create t", author="Ann <ann@example.org>") as tx:
...     t = tables.create(tx, "t", [{"id": "k", "name": "k", "dataType": "integer", "primaryKeyIndex": 0}])
...     t.insert({"k": 77})
>>> dest = os.path.join(tempfile.mkdtemp(), "t-kart")
>>> result = export_kart_repo(repo, dest)
>>> len(result.commits), sorted(result.branches)
(1, ['main'])
>>> sorted(os.listdir(dest))
['.git', '.kart', 'KART_README.txt']
>>> repo.close()
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dulwich.object_store import commit_tree_changes
from dulwich.objects import Blob, ShaFile, Tree
from dulwich.objects import Commit as GitCommit
from dulwich.pack import write_pack
from dulwich.repo import Repo

from ..core.storage import Snapshot
from ..ops.diff import diff_seqs
from .errors import ExportTargetError, NoTablesError
from .kart_export import dataset_file
from .mapping import META, PATH_STRUCTURE_ITEM, SCHEMA_ITEM, dataset_name, object_bytes
from .paths import LEGACY

if TYPE_CHECKING:
    from ..core.commits import Commit
    from ..repository import Repository

__all__ = ["KartExport", "export_kart_repo", "REPOSTRUCTURE_FILE", "KART_INDEX"]

REPOSTRUCTURE_FILE = ".kart.repostructure.version"
# The index Kart writes into every repository: no entries and a "kart" extension, so that
# plain git refuses to treat the directory as a git working copy (same bytes in every
# test repository).
KART_INDEX = bytes.fromhex("4449524300000002000000006b617274000000002b07cad5a0d18828787af2e37875e0b825785925")
_README = (b"This directory is a Kart repository (exported by datae).\n\nEvery version of every dataset is "
           b"stored in the hidden \".kart\" directory.\nRun \"kart log\" or \"kart data ls\" to see what it holds, "
           b"and \"kart create-workingcopy\"\nto check the data out.\n")
_BLOB = 0o100644
_FLUSH_BYTES = 32 << 20  # pack new objects in batches: memory stays bounded by a batch


@dataclass
class KartExport:
    """What an export wrote: ``commits`` maps each walked datae commit id to the git commit
    holding its tables (None before the first table), ``branches`` and ``tags`` the git
    refs set, ``head`` the branch HEAD names, ``objects`` the git objects written."""

    commits: dict[str, str | None] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    head: str | None = None
    objects: int = 0


class _Objects:
    """The export's new git objects, as the object store :func:`commit_tree_changes`
    edits trees in: trees stay in memory (later commits edit them), every object is queued
    once and flushed to the target's packs in batches."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self.trees: dict[bytes, Tree] = {}
        self.seen: set[bytes] = set()
        self.pending: list[tuple[ShaFile, None]] = []
        self.pending_bytes = 0
        self.count = 0

    def __getitem__(self, sha: bytes) -> Tree:
        return self.trees[sha].copy()  # commit_tree_changes edits what it is given

    def add_object(self, obj: ShaFile) -> None:
        if obj.id in self.seen:
            return
        self.seen.add(obj.id)
        if isinstance(obj, Tree):
            self.trees[obj.id] = obj
        self.pending.append((obj, None))
        self.pending_bytes += obj.raw_length()
        self.count += 1
        if self.pending_bytes >= _FLUSH_BYTES:
            self.flush()

    def blob(self, data: bytes) -> bytes:
        blob = Blob.from_string(data)
        self.add_object(blob)
        return blob.id

    def lookup(self, tree: bytes, path: str) -> bytes | None:
        """The id at ``path`` below ``tree``, or None."""
        sha = tree
        for part in path.split("/"):
            entries = self.trees.get(sha)
            if entries is None or part.encode() not in entries:
                return None
            sha = entries[part.encode()][1]
        return sha

    def flush(self) -> None:
        """Write the queued objects as one pack and its index. ``write_pack`` indexes
        what it writes; ``add_objects`` would read the whole pack back twice to index it
        (two thirds of an export's time)."""
        if self.pending:
            base = os.path.join(self.target.pack_dir, f"tmp-{os.getpid()}-{self.count}")
            checksum, _ = write_pack(base, self.pending, self.target.object_format)
            name = os.path.join(self.target.pack_dir, "pack-" + checksum.hex())
            # no reader sees the half-written repository: it is renamed into place at the end
            os.replace(base + ".pack", name + ".pack")
            os.replace(base + ".idx", name + ".idx")
        self.pending, self.pending_bytes = [], 0


def _check_target(dest: str) -> None:
    if os.path.isdir(dest):
        if os.listdir(dest):
            raise ExportTargetError(dest, "it is a directory that is not empty")
    elif os.path.lexists(dest):
        raise ExportTargetError(dest, "it is a file")


def _identity(author: str) -> bytes:
    """A git identity ``Name <email>`` (an author datae stored without an email gets an
    empty one, as git accepts)."""
    author = author.strip() or "unknown"
    if not (author.endswith(">") and " <" in author):
        author = f"{author} <>"
    return author.encode("utf-8")


def _refs(repo: Repository, ref: str | None) -> tuple[dict[str, str], dict[str, str], str]:
    """``(git branch -> datae ref, git tag -> datae ref, HEAD's branch)`` to export."""
    if ref is None:
        branches = {name: name for name, head in repo.branches().items() if head is not None}
        return branches, dict(repo.tags()), repo.current_branch
    with repo.storage.read() as snapshot:
        if snapshot.resolve(ref) is None:  # a branch without commits
            raise NoTablesError(ref)
    name = ref if ref in repo.branches() else "main"
    return {name: ref}, {}, name


def _changes(snapshot: Snapshot, commit: Commit, merge: bool, base: int | None) -> Iterator[tuple[bool, tuple]]:
    """``(alive, table tuple)`` that turn the tables at ``base`` into those at ``commit``.
    For a commit with at most one parent (whose tables are ``base``'s) these are its own
    records: each says its tuple's state at the commit. A merge's records are only its
    resolutions, so it takes the diff."""
    tables = snapshot.tables
    if not merge:
        for quad, alive in tables.changes_of(snapshot.tx, commit.seq):  # the space reads the raw transaction
            yield alive, quad
    else:
        for op, quad in diff_seqs(snapshot, base, commit.seq, history=tables):
            yield op == "+", quad


class _Exporter:
    def __init__(self, repo: Repository, git: Repo) -> None:
        self.repo = repo
        self.git = git
        self.objects = _Objects(git.object_store)
        self.version_blob = self.objects.blob(b"3\n")
        root = Tree()
        root.add(REPOSTRUCTURE_FILE.encode(), _BLOB, self.version_blob)
        self.objects.trees[root.id] = root  # written only if a commit has no table
        self.empty_root = root
        self.legacy_blob: bytes | None = None
        self.git_of: dict[int, bytes | None] = {}  # datae seq -> git commit with its tables
        self.state_of: dict[bytes, tuple[int, bytes]] = {}  # git commit -> (datae seq, root tree)
        self.parents_of: dict[bytes, list[bytes]] = {}

    def _is_ancestor(self, a: bytes, b: bytes) -> bool:
        stack, seen = [b], set()
        while stack:
            c = stack.pop()
            if c == a:
                return True
            if c not in seen:
                seen.add(c)
                stack.extend(self.parents_of[c])
        return False

    def _git_parents(self, parent_seqs: list[int]) -> list[bytes]:
        """The git parents of a commit: its parents' git commits, once each. A parent that
        was left out (it changed no table) stands for an older commit; if that one is an
        ancestor of another parent, the side brought no table change and is dropped. A
        parent exported as itself stays, even when it is an ancestor of another (a
        ``--no-ff`` merge is a merge in git too)."""
        mapped: dict[bytes, bool] = {}
        for p in parent_seqs:
            g = self.git_of.get(p)
            if g is not None:
                mapped[g] = mapped.get(g, False) or self.state_of[g][0] == p
        if len(mapped) > 1:
            mapped = {g: itself for g, itself in mapped.items()
                      if itself or not any(o != g and self._is_ancestor(g, o) for o in mapped)}
        return list(mapped)

    def tree(self, base: bytes, changes: Iterable[tuple[bool, tuple]]) -> bytes:
        files: dict[str, bytes | None] = {}
        touched: set[str] = set()
        added = []
        for alive, (graph, item, kind, value) in changes:
            name = dataset_name(graph)
            if name is None:
                continue
            touched.add(name)
            path = dataset_file(name, kind, item)
            if alive:
                added.append((path, value))
            else:  # a dead record is a real removal: a commit records only changes
                files.setdefault(path, None)
        # removals first: an updated file is the removal of its old bytes and the
        # addition of its new ones, in no particular order
        for path, value in added:
            files[path] = self.objects.blob(object_bytes(value))
        edits = [(p.encode("utf-8"), _BLOB if sha else None, sha) for p, sha in files.items()]
        tree = commit_tree_changes(self.objects, base, edits) if edits else base
        return self._legacy_structures(tree, touched)

    def _legacy_structures(self, tree: bytes, names: set[str]) -> bytes:
        """A dataset imported from V2 has no ``path-structure.json``: give it the legacy
        one it implies (and take that away again with the dataset), so every tree is V3."""
        edits = []
        for name in sorted(names):
            ps = dataset_file(name, META, PATH_STRUCTURE_ITEM)
            has_schema = self.objects.lookup(tree, dataset_file(name, META, SCHEMA_ITEM)) is not None
            current = self.objects.lookup(tree, ps)
            if has_schema and current is None:
                if self.legacy_blob is None:
                    self.legacy_blob = self.objects.blob(LEGACY.dumps())
                edits.append((ps.encode("utf-8"), _BLOB, self.legacy_blob))
            elif not has_schema and current is not None and current == self.legacy_blob:
                edits.append((ps.encode("utf-8"), None, None))
        return commit_tree_changes(self.objects, tree, edits) if edits else tree

    def commit(self, snapshot: Snapshot, commit: Commit) -> bytes | None:
        parent_seqs = [snapshot.seq_of(p) for p in commit.parents]
        parents = self._git_parents(parent_seqs)
        # the tree of git_of[p] always holds the tables of datae commit p, so a commit with
        # one parent edits its parent's tree with its own records
        base_seq, base_tree = self.state_of[parents[0]] if parents else (None, self.empty_root.id)
        tree = self.tree(base_tree, _changes(snapshot, commit, len(parent_seqs) > 1, base_seq))
        if len(parents) <= 1 and tree == base_tree:
            return parents[0] if parents else None
        if tree == self.empty_root.id:
            self.objects.add_object(self.empty_root)
        c = GitCommit()
        c.tree = tree
        c.parents = parents
        c.author = c.committer = _identity(commit.author)
        c.author_time = c.commit_time = int(commit.time.timestamp())
        offset = commit.time.utcoffset()
        c.author_timezone = c.commit_timezone = int(offset.total_seconds()) if offset is not None else 0
        c.message = commit.message.encode("utf-8")  # as imported: Kart's own may lack git's final newline
        self.objects.add_object(c)
        self.state_of[c.id] = (commit.seq, tree)
        self.parents_of[c.id] = parents
        return c.id

    def run(self, branches: dict[str, str], tags: dict[str, str], head: str, result: KartExport) -> None:
        with self.repo.storage.read() as snapshot:
            heads = {name: snapshot.resolve(ref) for name, ref in branches.items()}
            tag_seqs = {name: snapshot.resolve(ref) for name, ref in tags.items()}
            seqs: set[int] = set()
            for seq in list(heads.values()) + list(tag_seqs.values()):
                seqs |= snapshot.ancestors(seq)
            for seq in sorted(seqs):  # significance order: parents first
                commit = snapshot.commit(seq)
                git_id = self.commit(snapshot, commit)
                self.git_of[seq] = git_id
                result.commits[commit.id] = None if git_id is None else git_id.decode()
        self.objects.flush()
        result.objects = self.objects.count
        for name, seq in heads.items():
            git_id = self.git_of.get(seq) if seq is not None else None
            if git_id is not None:
                self.git.refs[b"refs/heads/" + name.encode("utf-8")] = git_id
                result.branches[name] = git_id.decode()
        for name, seq in tag_seqs.items():
            git_id = self.git_of.get(seq) if seq is not None else None
            if git_id is not None:
                self.git.refs[b"refs/tags/" + name.encode("utf-8")] = git_id
                result.tags[name] = git_id.decode()
        if not result.branches:
            raise NoTablesError(", ".join(branches) or "any branch")
        result.head = head if head in result.branches else sorted(result.branches)[0]
        self.git.refs.set_symbolic_ref(b"HEAD", b"refs/heads/" + result.head.encode("utf-8"))


def _init(root: str, name: str) -> Repo:
    """A Kart working-directory layout, as in Kart's own test repositories: the git dir
    ``.kart`` (Kart's config and locked index), ``.git`` pointing at it, a README. The
    working copy is configured (``name.gpkg`` beside the data, Kart's default) but not
    created: ``kart create-workingcopy`` or ``kart checkout`` makes it."""
    git = Repo.init_bare(os.path.join(root, ".kart"), mkdir=True)
    config = git.get_config()
    config.set((b"core",), b"bare", False)
    config.set((b"core",), b"logallrefupdates", b"always")
    config.set((b"kart", b"repostructure"), b"version", b"3")
    config.set((b"kart", b"workingcopy"), b"location", f"{name}.gpkg".encode("utf-8"))
    config.write_to_path()
    with open(os.path.join(root, ".kart", "index"), "wb") as f:
        f.write(KART_INDEX)
    with open(os.path.join(root, ".git"), "wb") as f:
        f.write(b"gitdir: .kart\n")
    with open(os.path.join(root, "KART_README.txt"), "wb") as f:
        f.write(_README)
    return git


def export_kart_repo(repo: Repository, dest: str | os.PathLike[str], *, ref: str | None = None) -> KartExport:
    """Write the history of ``ref`` (default: every branch and tag) as a Kart V3
    repository at ``dest``, which must not exist or be an empty directory. ``ref``'s
    history goes to the git branch of its name (``main`` if it is no branch); all
    branches keep their names, and HEAD names the current branch.

    Raises :class:`ExportTargetError` (``dest`` is a file or a non-empty directory),
    :class:`~fstore.errors.UnknownRefError` (no such ref, from the store) and :class:`NoTablesError`
    (no table in the history); on any error nothing is left at ``dest``."""
    dest = os.path.abspath(os.fspath(dest))
    _check_target(dest)
    branches, tags, head = _refs(repo, ref)
    parent = os.path.dirname(dest)
    if not os.path.isdir(parent):
        raise ExportTargetError(dest, f"its directory {parent} does not exist")
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(dest)}.", suffix=".tmp", dir=parent)
    try:
        os.chmod(tmp, 0o755)
        git = _init(tmp, os.path.basename(dest))
        try:
            result = KartExport()
            _Exporter(repo, git).run(branches, tags, head, result)
        finally:
            git.close()
        _check_target(dest)  # still free: rename replaces at most an empty directory
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return result

