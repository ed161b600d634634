"""Read a real Kart repository with dulwich: commits, datasets, meta items and features.

A Kart working directory keeps its git directory in ``<dir>/.kart``; datasets are the
trees named ``.table-dataset`` (V3) or ``.sno-dataset`` (V2), and a dataset's name is the
path of the tree holding that directory. Everything is read lazily: commits come from a
generator in topological order (parents first), features are streamed from the tree,
and blobs are read one at a time, so a large repository is never held in memory.

>>> with KartRepo("/path/to/points") as repo:                    # doctest: +SKIP
...     for commit in repo.commits():
...         for ds in repo.datasets(commit.id):
...             print(commit.id[:8], ds.name, ds.schema, sum(1 for _ in ds.features()))
"""

from __future__ import annotations

import heapq
import os
import re
import struct
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from dulwich.errors import ApplyDeltaError, ChecksumMismatch, NotGitRepository, ObjectFormatException
from dulwich.object_store import tree_lookup_path
from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import Repo

from .errors import KartRepoError, LegendError
from .features import raw_feature, to_python_row
from .paths import LEGACY, PathStructure, decode_filename
from .schema import Legend, Schema

__all__ = [
    "DATASET_DIRNAMES",
    "KartCommit",
    "KartFeature",
    "KartDataset",
    "KartRepo",
    "diff_features",
]

DATASET_DIRNAMES = {".table-dataset": 3, ".sno-dataset": 2}
_TREE_MODE = 0o040000
_GITLINK_MODE = 0o160000


def _text(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def _is_tree(mode: int) -> bool:
    return (mode & 0o170000) == _TREE_MODE


@dataclass(frozen=True)
class KartCommit:
    """One commit: id, parent ids, root tree id, message, author and committer."""

    id: str
    parents: tuple[str, ...]
    tree: str
    message: str
    author: str
    author_time: int
    author_tz: int
    committer: str
    commit_time: int
    commit_tz: int

    @property
    def author_name(self) -> str:
        return self.author.rsplit(" <", 1)[0]

    @property
    def author_email(self) -> str:
        return self.author.rsplit(" <", 1)[-1].rstrip(">")


@dataclass(frozen=True)
class KartFeature:
    """A feature as stored: its path below ``feature/``, primary-key values and blob."""

    path: str
    pk_values: tuple[Any, ...]
    blob: bytes


class KartDataset:
    """One table dataset at one commit (V3 ``.table-dataset`` or V2 ``.sno-dataset``)."""

    def __init__(self, repo: "KartRepo", commit_id: str, name: str, dirname: str, tree_id: bytes,
                 parent_tree_id: bytes) -> None:
        self._repo = repo
        self.commit_id = commit_id
        self.name = name
        self.dirname = dirname
        self.version = DATASET_DIRNAMES[dirname]
        self._tree_id = tree_id
        self._parent_tree_id = parent_tree_id

    def __repr__(self) -> str:
        return f"KartDataset({self.name!r}, v{self.version}, commit {self.commit_id[:8]})"

    # -- tree access --------------------------------------------------------------------
    def _subtree(self, *names: str) -> Tree | None:
        tree = self._repo._object(self._tree_id)
        for name in names:
            try:
                mode, sha = tree[name.encode("utf-8")]
            except KeyError:
                return None
            if not _is_tree(mode):
                return None
            tree = self._repo._object(sha)
        return tree

    def _walk_blobs(self, tree: Tree, prefix: str = "") -> Iterator[tuple[str, bytes]]:
        for entry in tree.iteritems():
            path = prefix + _text(entry.path)
            if _is_tree(entry.mode):
                yield from self._walk_blobs(self._repo._object(entry.sha), path + "/")
            elif entry.mode != _GITLINK_MODE:
                yield path, entry.sha

    # -- meta items ---------------------------------------------------------------------
    def meta_items(self) -> Iterator[tuple[str, bytes]]:
        """Every meta item as ``(path below meta/, bytes)``, legends included."""
        meta = self._subtree("meta")
        if meta is None:
            return
        for path, sha in self._walk_blobs(meta):
            yield path, self._repo._object(sha).as_raw_string()

    def meta_item(self, path: str) -> bytes | None:
        """One meta item's bytes (``"schema.json"``, ``"crs/EPSG:4326.wkt"``…), or ``None``."""
        parts = path.split("/")
        tree = self._subtree("meta", *parts[:-1])
        if tree is None:
            return None
        try:
            mode, sha = tree[parts[-1].encode("utf-8")]
        except KeyError:
            return None
        if _is_tree(mode):
            return None
        return self._repo._object(sha).as_raw_string()

    def attachments(self) -> Iterator[tuple[str, bytes]]:
        """Files beside the dataset directory (e.g. ``metadata.xml``), as ``(name, bytes)``."""
        tree = self._repo._object(self._parent_tree_id)
        for entry in tree.iteritems():
            if not _is_tree(entry.mode) and entry.mode != _GITLINK_MODE:
                yield _text(entry.path), self._repo._object(entry.sha).as_raw_string()

    @property
    def title(self) -> str | None:
        data = self.meta_item("title")
        return None if data is None else data.decode("utf-8")

    @property
    def description(self) -> str | None:
        data = self.meta_item("description")
        return None if data is None else data.decode("utf-8")

    @property
    def schema_json(self) -> bytes:
        data = self.meta_item("schema.json")
        if data is None:
            raise KartRepoError("dataset has no meta/schema.json", where=self._where())
        return data

    @cached_property
    def schema(self) -> Schema:
        """The current schema (read leniently: unknown extra keys are kept)."""
        return Schema.from_json(self.schema_json, strict=False)

    @property
    def path_structure_json(self) -> bytes | None:
        return self.meta_item("path-structure.json")

    @cached_property
    def path_structure(self) -> PathStructure:
        """The dataset's path structure; V2 datasets (and V3 ones without the meta item)
        use the implied legacy structure."""
        if self.version == 2:
            return LEGACY
        data = self.path_structure_json
        return LEGACY if data is None else PathStructure.from_json(data)

    def crs_definitions(self) -> dict[str, str]:
        """``{identifier: WKT}`` from ``meta/crs/<identifier>.wkt``."""
        tree = self._subtree("meta", "crs")
        if tree is None:
            return {}
        result = {}
        for path, sha in self._walk_blobs(tree):
            if path.endswith(".wkt"):
                result[path[: -len(".wkt")]] = self._repo._object(sha).as_raw_string().decode("utf-8")
        return result

    def legend_blobs(self) -> dict[str, bytes]:
        """``{legend name: legend blob}``."""
        tree = self._subtree("meta", "legend")
        if tree is None:
            return {}
        return {path: self._repo._object(sha).as_raw_string() for path, sha in self._walk_blobs(tree)}

    @cached_property
    def legends(self) -> dict[str, Legend]:
        """``{legend name: Legend}``, each checked against its name."""
        result = {}
        for name, blob in self.legend_blobs().items():
            try:
                result[name] = Legend.loads(blob, name=name)
            except LegendError as e:
                raise KartRepoError(str(e), where=self._where(f"meta/legend/{name}")) from None
        return result

    # -- features -----------------------------------------------------------------------
    def feature_paths(self) -> Iterator[tuple[str, bytes]]:
        """``(path below feature/, blob id)`` for every feature, in git tree order."""
        tree = self._subtree("feature")
        if tree is not None:
            yield from self._walk_blobs(tree)

    def feature_count(self) -> int:
        return sum(1 for _ in self.feature_paths())

    def features(self) -> Iterator[KartFeature]:
        """Stream every feature: path, primary-key values (from its file name) and blob."""
        for path, sha in self.feature_paths():
            pk = tuple(decode_filename(path.rsplit("/", 1)[-1]))
            yield KartFeature(path, pk, self._repo._object(sha).as_raw_string())

    def raw_features(self) -> Iterator[tuple[KartFeature, dict[str, Any]]]:
        """Stream ``(feature, stored values by column id)`` through each feature's legend."""
        legends = self.legends
        for f in self.features():
            yield f, raw_feature(f.blob, f.pk_values, legends, path=self._where(f"feature/{f.path}"))

    def rows(self, *, python: bool = True) -> Iterator[dict[str, Any]]:
        """Stream rows of the current schema (column name -> value). ``python=False``
        gives stored values (strings for dates, numerics…) instead of Python values."""
        schema = self.schema
        for _f, raw in self.raw_features():
            row = schema.adapt(raw)
            yield to_python_row(schema, row) if python else row

    def feature_blob(self, pk_values: Sequence[Any]) -> bytes | None:
        """The blob of the feature with these primary-key values, or ``None``."""
        path = self.path_structure.encode_path(list(pk_values))
        parts = path.split("/")
        tree = self._subtree("feature", *parts[:-1])
        if tree is None:
            return None
        try:
            mode, sha = tree[parts[-1].encode("ascii")]
        except KeyError:
            return None
        return self._repo._object(sha).as_raw_string()

    def get_row(self, pk_values: Sequence[Any], *, python: bool = True) -> dict[str, Any] | None:
        """The row with these primary-key values in the current schema, or ``None``."""
        blob = self.feature_blob(pk_values)
        if blob is None:
            return None
        row = self.schema.adapt(raw_feature(blob, list(pk_values), self.legends))
        return to_python_row(self.schema, row) if python else row

    @property
    def tree_id(self) -> str:
        """The git id of the dataset's ``.table-dataset`` tree (equal ids: equal datasets)."""
        return _text(self._tree_id)

    @property
    def parent_tree_id(self) -> str:
        """The git id of the tree holding the dataset directory (and its attachments)."""
        return _text(self._parent_tree_id)

    def _where(self, inner: str = "") -> str:
        path = f"{self.name}/{self.dirname}" + (f"/{inner}" if inner else "")
        return f"{self._repo.git_dir}@{self.commit_id[:12]}:{path}"


class KartRepo:
    """A Kart repository opened read-only. ``path`` is the Kart working directory (with
    ``.kart`` inside), or the git directory itself. Use as a context manager or call
    :meth:`close`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        path = os.fspath(path)
        candidates = [os.path.join(path, ".kart"), path, os.path.join(path, ".git")]
        git_dir = next(
            (c for c in candidates if os.path.isfile(os.path.join(c, "HEAD")) and os.path.isdir(os.path.join(c, "objects"))),
            None,
        )
        if git_dir is None:
            raise KartRepoError("not a Kart repository (no .kart git directory)", where=path)
        try:
            self._repo = Repo(git_dir)
        except NotGitRepository as e:
            raise KartRepoError(f"not a git repository ({e})", where=git_dir) from None
        self.git_dir = git_dir

    def close(self) -> None:
        self._repo.close()

    def __enter__(self) -> "KartRepo":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _object(self, sha: bytes | str) -> Any:
        key = sha.encode("ascii") if isinstance(sha, str) else sha
        try:
            return self._repo.object_store[key]
        except (KeyError, AssertionError, ValueError):
            problem = f"missing git object {_text(key)}"
        except (ChecksumMismatch, ObjectFormatException, ApplyDeltaError, zlib.error, struct.error) as e:
            problem = f"git object {_text(key)} is damaged (a corrupt or truncated pack?): {e}"
        # Raised outside the except clause: the dulwich frames (and the pack's mmap
        # buffers they hold) are freed first, so closing the repository still works.
        raise KartRepoError(problem, where=self.git_dir)

    @property
    def structure_version(self) -> str | None:
        """The repository structure version the repository declares: Kart's config
        ``kart.repostructure.version`` (Sno's ``sno.repository.version``), else the
        ``.kart.repostructure.version`` / ``.sno.repository.version`` file at HEAD; None if
        it declares none."""
        config = self._repo.get_config()
        for section, key in (((b"kart", b"repostructure"), b"version"), ((b"sno", b"repository"), b"version")):
            try:
                return _text(config.get(section, key)).strip()
            except KeyError:
                pass
        head = self.head
        for name in (".kart.repostructure.version", ".sno.repository.version"):
            data = self.read_blob(head, name) if head is not None else None
            if data is not None:
                return _text(data).strip()
        return None

    # -- refs and commits ---------------------------------------------------------------
    def refs(self) -> dict[str, str]:
        """``{ref name: commit id}`` for branches (``main``) and tags (``tags/v1``)."""
        result = {}
        for ref, sha in self._repo.get_refs().items():
            name = _text(ref)
            if name.startswith("refs/heads/"):
                result[name[len("refs/heads/"):]] = _text(sha)
            elif name.startswith("refs/tags/"):
                obj = self._object(sha)
                while not isinstance(obj, Commit) and hasattr(obj, "object"):
                    obj = self._object(obj.object[1])
                if isinstance(obj, Commit):
                    result["tags/" + name[len("refs/tags/"):]] = _text(obj.id)
        return result

    @property
    def head(self) -> str | None:
        """The commit HEAD points at, or ``None`` in an empty repository."""
        try:
            return _text(self._repo.head())
        except KeyError:
            return None

    def resolve(self, ref: str) -> str:
        """A branch or tag name, ``HEAD``, or a full commit id -> commit id."""
        if ref == "HEAD":
            head = self.head
            if head is None:
                raise KartRepoError("HEAD points at no commit", where=self.git_dir)
            return head
        refs = self.refs()
        if ref in refs:
            return refs[ref]
        if "tags/" + ref in refs:
            return refs["tags/" + ref]
        if re.fullmatch(r"[0-9a-f]{40}", ref):
            try:
                if isinstance(self._object(ref), Commit):
                    return ref
            except KartRepoError:
                pass
        raise KartRepoError(f"{ref!r} is not a commit", where=self.git_dir)

    def commit(self, commit_id: str) -> KartCommit:
        c = self._object(commit_id)
        if not isinstance(c, Commit):
            raise KartRepoError(f"{commit_id} is not a commit", where=self.git_dir)
        return KartCommit(
            id=_text(c.id),
            parents=tuple(_text(p) for p in c.parents),
            tree=_text(c.tree),
            message=c.message.decode(c.encoding.decode() if c.encoding else "utf-8", "replace"),
            author=_text(c.author),
            author_time=c.author_time,
            author_tz=c.author_timezone,
            committer=_text(c.committer),
            commit_time=c.commit_time,
            commit_tz=c.commit_timezone,
        )

    def commits(self, refs: Sequence[str] | None = None) -> Iterator[KartCommit]:
        """Every commit reachable from ``refs`` (default: all branches and tags), parents
        before children; among commits ready at once, the oldest (commit time, then id)
        first. Only ids and parents are kept in memory while ordering."""
        starts = [self.resolve(r) for r in refs] if refs is not None else list(self.refs().values())
        parents: dict[str, tuple[str, ...]] = {}
        times: dict[str, int] = {}
        stack = list(dict.fromkeys(starts))
        while stack:
            cid = stack.pop()
            if cid in parents:
                continue
            c = self.commit(cid)
            parents[cid] = c.parents
            times[cid] = c.commit_time
            stack.extend(p for p in c.parents if p not in parents)
        children: dict[str, list[str]] = {cid: [] for cid in parents}
        waiting = {cid: len(set(ps)) for cid, ps in parents.items()}
        for cid, ps in parents.items():
            for p in set(ps):
                children[p].append(cid)
        ready = [(times[c], c) for c, n in waiting.items() if n == 0]
        heapq.heapify(ready)
        while ready:
            _t, cid = heapq.heappop(ready)
            yield self.commit(cid)
            for child in children[cid]:
                waiting[child] -= 1
                if waiting[child] == 0:
                    heapq.heappush(ready, (times[child], child))

    # -- datasets -----------------------------------------------------------------------
    def datasets(self, commit_id: str) -> Iterator[KartDataset]:
        """Every table dataset in the commit's tree, in tree order."""
        commit = self.commit(self.resolve(commit_id))
        yield from self._find_datasets(commit.id, self._object(commit.tree), "")

    def _find_datasets(self, commit_id: str, tree: Tree, prefix: str) -> Iterator[KartDataset]:
        for entry in tree.iteritems():
            if not _is_tree(entry.mode):
                continue
            name = _text(entry.path)
            if name in DATASET_DIRNAMES and prefix:
                yield KartDataset(self, commit_id, prefix.rstrip("/"), name, entry.sha, tree.id)
            elif not name.startswith("."):
                yield from self._find_datasets(commit_id, self._object(entry.sha), prefix + name + "/")

    def dataset(self, commit_id: str, name: str) -> KartDataset:
        """The dataset called ``name`` at the commit."""
        for ds in self.datasets(commit_id):
            if ds.name == name:
                return ds
        raise KartRepoError(f"no dataset {name!r} at commit {commit_id}", where=self.git_dir)

    def read_blob(self, commit_id: str, path: str) -> bytes | None:
        """Any file of the commit's tree by path, or ``None``."""
        commit = self.commit(self.resolve(commit_id))
        try:
            mode, sha = tree_lookup_path(self._repo.object_store.__getitem__, commit.tree.encode(), path.encode())
        except KeyError:
            return None
        obj = self._object(sha)
        return obj.as_raw_string() if isinstance(obj, Blob) else None


def diff_features(old: KartDataset | None, new: KartDataset | None) -> Iterator[tuple[str, bytes | None, bytes | None]]:
    """``(path below feature/, old blob, new blob)`` for each feature that differs between
    two versions of a dataset (None: the dataset or the feature is missing on that side).
    Subtrees with equal ids are skipped, so this costs O(changes), not O(features)."""
    repo = (new or old)._repo if (new or old) is not None else None
    if repo is None:
        return
    trees = [ds._subtree("feature") if ds is not None else None for ds in (old, new)]
    yield from _diff_trees(repo, trees[0], trees[1], "")


def _diff_trees(repo: KartRepo, a: Tree | None, b: Tree | None, prefix: str) -> Iterator[tuple[str, bytes | None, bytes | None]]:
    if a is not None and b is not None and a.id == b.id:
        return
    entries_a = {e.path: (e.mode, e.sha) for e in a.iteritems()} if a is not None else {}
    entries_b = {e.path: (e.mode, e.sha) for e in b.iteritems()} if b is not None else {}
    for name in sorted(entries_a.keys() | entries_b.keys()):
        ea, eb = entries_a.get(name), entries_b.get(name)
        if ea == eb:
            continue
        path = prefix + _text(name)
        tree_a = ea is not None and _is_tree(ea[0])
        tree_b = eb is not None and _is_tree(eb[0])
        if tree_a or tree_b:
            yield from _diff_trees(repo, repo._object(ea[1]) if tree_a else None, repo._object(eb[1]) if tree_b else None,
                                   path + "/")
        blob_a = repo._object(ea[1]).as_raw_string() if ea is not None and not tree_a and ea[0] != _GITLINK_MODE else None
        blob_b = repo._object(eb[1]).as_raw_string() if eb is not None and not tree_b and eb[0] != _GITLINK_MODE else None
        if blob_a != blob_b:
            yield path, blob_a, blob_b
