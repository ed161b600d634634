"""The versioned store: a repository of commits over a DAG of branches, in one LMDB file.

>>> import tempfile, fstore
>>> from fstore import IRI
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="add alice", author="ann") as tx:
...     fstore.add(tx, None, IRI("urn:alice"), IRI("urn:name"), "Alice")
>>> first = tx.commit_id
>>> repo.branch("edit")
>>> with repo.transaction("edit", message="rename") as tx:
...     fstore.rm(tx, None, IRI("urn:alice"), IRI("urn:name"), "Alice")
...     fstore.add(tx, None, IRI("urn:alice"), IRI("urn:name"), "Alicia")
>>> merged = repo.merge("main", "edit")          # a fast-forward
>>> [op + " " + quad[3].value for op, quad in repo.diff(first, "main")]
['- Alice', '+ Alicia']
>>> repo.close()
"""

from __future__ import annotations

import datetime as _dt
import os
from typing import Any, Iterator, Sequence

from nstore.terms import to_rdf

from .core.commits import Commit
from .core.history import Quad
from .core.refs import TAG
from .core.storage import DEFAULT_BRANCH, FORMAT_VERSION, Storage
from .errors import ConflictsRecorded
from .location import STORE_DIR, locate
from .plugins import DEFAULT_PLUGINS, Plugins, load_plugins
from .ops import branches, gc, merge, merge_state, reset, revert, show, stats, verify
from .ops.upgrade import UpgradeReport, upgrade as _upgrade
from .ops.conflicts import ConflictItem, MergeState
from .ops.diff import diff_seqs
from .ops.gc import DEFAULT_EXPIRY, GcReport
from .ops.history import blame_seq, history_of, versions_of
from .ops.show import Shown, commit_at
from .ops.three_way import Policy
from .sync import merge_requests, remote_config, remotes
from .transaction import Transaction
from .patterns import prepare_pattern, prepare_quad
from .view import View

__all__ = ["open", "clone", "upgrade", "locate", "Repository", "FORMAT_VERSION", "DEFAULT_BRANCH", "STORE_DIR"]

def open(path: str | os.PathLike, *, map_size: int | None = None,
         plugins: Sequence[str] = DEFAULT_PLUGINS) -> Repository:
    """Open the repository at ``path`` (found as :func:`locate` says: ``path`` or its
    ``.datae``), creating it (with an empty ``main``) if missing; never beside an existing
    ``.datae``. ``plugins`` names the plug-ins it uses (:mod:`fstore.plugins`; tables by
    default)."""
    return Repository(locate(path), map_size=map_size, plugins=plugins)


def upgrade(path: str | os.PathLike, *, map_size: int | None = None) -> UpgradeReport:
    """Rewrite the store at ``path`` (or its ``.datae``) in this datae's format if it holds
    an older one, verified before it replaces the old file (:mod:`fstore.ops.upgrade`); no
    handle may have it open."""
    return _upgrade(locate(path), map_size)


def clone(url: str, path: str | os.PathLike, *, local: bool = True, token: str | None = None,
          progress: remotes.Progress | None = None) -> Repository:
    """A new store at ``path`` holding every commit of the store at ``url`` (see
    :mod:`fstore.sync.remotes`), with the remote ``origin``, its branches as
    ``origin/BRANCH``, and a local branch, made current, for the remote's current branch.

    The store's file is copied, as git clones a local repository (a consistent copy, at
    one read transaction; over HTTP the server streams it), far faster than sending
    commit by commit; ``local=False`` sends and checks every commit instead, as a fetch
    does. ``token`` is an HTTP server's bearer token (default ``$DATAE_TOKEN``).

    >>> import tempfile, fstore
    >>> origin = open(os.path.join(tempfile.mkdtemp(), ".datae"))
    >>> with origin.transaction("main", message="first") as tx:
    ...     fstore.add(tx, None, fstore.IRI("urn:s"), fstore.IRI("urn:p"), "o")
    >>> first = origin.head("main")
    >>> origin.close()
    >>> for local in (True, False):
    ...     copy = clone(os.path.dirname(origin.path), os.path.join(tempfile.mkdtemp(), ".datae"), local=local)
    ...     print(copy.head("main") == copy.resolve("origin/main") == first, copy.remotes() == {"origin": os.path.dirname(origin.path)})
    ...     copy.close()
    True True
    True True
    """
    return remotes.clone_into(url, os.fspath(path), Repository, local=local, token=token, progress=progress)


def _terms(quad: Quad) -> Quad:
    """A quad as RDF terms (what every read of the API gives; see ``fstore.to_rdf``)."""
    return tuple(map(to_rdf, quad))  # type: ignore[return-value]


class Repository:
    """A versioned quad store. See :func:`open`."""

    def __init__(self, path: str | os.PathLike, *, map_size: int | None = None,
                 plugins: Sequence[str] = DEFAULT_PLUGINS) -> None:
        self.path = os.fspath(path)
        self._map_size = map_size
        self.storage = Storage(self.path, map_size=map_size, plugins=load_plugins(plugins))

    # -- life cycle -----------------------------------------------------------------

    def close(self) -> None:
        self.storage.close()

    def __enter__(self) -> Repository:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<fstore.Repository {self.path!r}>"

    @property
    def plugins(self) -> Plugins:
        """What the store's plug-ins registered (:mod:`fstore.plugins`); its storage holds it."""
        return self.storage.plugins

    # -- refs -----------------------------------------------------------------------

    def resolve(self, ref: str) -> str | None:
        """The commit id a branch, tag, id or id prefix names (None: a branch with no commits)."""
        with self.storage.read() as snapshot:
            return snapshot.commit_id(snapshot.resolve(ref))

    def at(self, ref: str) -> View:
        """A read-only view of the state at ``ref`` (branch, tag, commit id or its prefix)."""
        with self.storage.read() as snapshot:
            return View(self, snapshot.resolve(ref), ref, snapshot)

    def head(self, branch: str) -> str | None:
        """The id of a branch's head commit (None if it has no commits)."""
        with self.storage.read() as snapshot:
            return snapshot.commit_id(snapshot.head(branch))

    def branch(self, name: str, start: str | None = DEFAULT_BRANCH) -> None:
        """Create branch ``name`` at ``start`` (any ref; None: an empty branch with no
        commits, whose first commit is a root). O(1): it writes one key."""
        with self.storage.write() as writer:
            branches.create_branch(writer, name, start)

    @property
    def current_branch(self) -> str:
        """The branch that commands without an explicit branch work on (git's HEAD)."""
        with self.storage.read() as snapshot:
            return snapshot.current_branch()

    def switch(self, branch: str) -> None:
        """Make ``branch`` (which must exist) the current branch."""
        with self.storage.write() as writer:
            writer.set_current_branch(branch)

    def branches(self) -> dict[str, str | None]:
        """Every branch and its head commit id."""
        with self.storage.read() as snapshot:
            return {name: snapshot.commit_id(seq) for name, seq in snapshot.branches().items()}

    def delete_branch(self, name: str, *, force: bool = True) -> None:
        """Delete a branch, never the current one. Without ``force``, only a branch whose
        commits another branch holds (git's ``branch -d``; ``-D`` forces). Its commits stay
        reachable from the reflog until gc expires the entry."""
        with self.storage.write() as writer:
            branches.delete_branch(writer, name, force=force)

    def delete_tag(self, name: str) -> None:
        """Delete a tag (its commit stays reachable from the reflog until gc expires it)."""
        with self.storage.write() as writer:
            writer.delete_ref(TAG, name)

    def status(self) -> dict[str, Any]:
        """The current branch, its head, and for each remote-tracking branch of the same
        name the commits ahead (here only) and behind (there only), as of the last fetch."""
        with self.storage.read() as snapshot:
            return branches.status(snapshot)

    # -- remotes (see fstore.sync) ----------------------------------------------------

    def remote_add(self, name: str, url: str) -> None:
        """Add remote ``name`` at ``url``: a path to another store, or ``http://HOST:PORT``
        of ``datae serve`` (never with a token in it: the URL is stored in the store)."""
        remote_config.add_remote(self.storage, name, url)

    def remote_remove(self, name: str) -> None:
        """Remove remote ``name``, its remote-tracking branches and the copies of its
        merge requests."""
        remote_config.remove_remote(self.storage, name)

    def remotes(self) -> dict[str, str]:
        """Every remote and its URL."""
        return remote_config.remote_urls(self.storage)

    def remote_url(self, name: str) -> str:
        """The URL of remote ``name`` (UnknownRefError if there is none)."""
        return remote_config.remote_url(self.storage, name)

    def remote_branches(self) -> dict[str, str | None]:
        """Every remote-tracking branch (``REMOTE/BRANCH``) and the commit id it was at
        when last fetched or pushed."""
        return remote_config.tracking_branches(self.storage)

    def fetch(self, remote: str = "origin", *, token: str | None = None,
              progress: remotes.Progress | None = None) -> dict[str, str | None]:
        """Bring ``remote``'s new commits and tags here; returns its branches as
        ``REMOTE/BRANCH``. ``token``: an HTTP server's bearer token (default
        ``$DATAE_TOKEN``)."""
        return remotes.fetch(self.storage, remote, Repository, token=token, progress=progress)

    def push(self, remote: str = "origin", branch: str | None = None, *, force: bool = False, tags: bool = False,
             token: str | None = None, progress: remotes.Progress | None = None) -> str | None:
        """Send ``branch`` (default: the current one; with ``tags``, every tag too) to
        ``remote``; refused unless it fast-forwards the remote's refs, or ``force``."""
        return remotes.push(self.storage, remote, branch or self.current_branch, Repository, force=force, tags=tags,
                            token=token, progress=progress)

    def pull(self, remote: str = "origin", branch: str | None = None, *, policy: Policy = "record",
             token: str | None = None, author: str | None = None) -> str | None:
        """Fetch ``remote`` and merge its ``branch`` (default: the current branch's name)
        into the current branch; returns the new head. Conflicts stop it as the merge in
        progress (``ConflictsRecorded``; see :meth:`merge`), unless another ``policy``.
        ``author``: of the merge commit, if one is made."""
        return remotes.pull(self, remote, branch, Repository, policy=policy, token=token, author=author)

    def tag(self, name: str, ref: str = DEFAULT_BRANCH) -> str:
        """Tag the commit ``ref`` names; returns its id."""
        with self.storage.write() as writer:
            return branches.tag(writer, name, ref)

    def tags(self) -> dict[str, str]:
        """Every tag and the commit id it names."""
        with self.storage.read() as snapshot:
            return {name: snapshot.commit_id(seq) for name, seq in snapshot.tags().items()}

    # -- writing --------------------------------------------------------------------

    def transaction(self, branch: str = DEFAULT_BRANCH, *, message: str = "", author: str = "",
                    time: _dt.datetime | None = None, allow_empty: bool = False) -> Transaction:
        """A write transaction on ``branch``: one commit when the ``with`` block ends, none if
        nothing changed (unless ``allow_empty``, as ``git commit --allow-empty``); an
        exception inside leaves the store as it was. ``time`` (aware datetime) defaults to
        now, in UTC."""
        if time is not None and time.utcoffset() is None:
            raise ValueError(f"commit time must be timezone-aware, not {time!r}")
        return Transaction(self, branch, message, author, time, allow_empty)

    def merge(self, into: str, other: str, *, message: str | None = None, author: str | None = None,
              policy: Policy = "abort", time: _dt.datetime | None = None) -> str | None:
        """Merge ``other`` (any ref) into branch ``into``; returns the resulting head id.

        Fast-forwards when ``into`` is an ancestor of ``other``; does nothing when ``other``
        is already merged. Conflicts go to ``policy``: "abort" (raise MergeConflict and write
        nothing), "ours", "theirs", a callable ``f(conflict) -> objects to keep``, or
        "record": store the merge in progress (git's way; see :mod:`fstore.ops.merge_state`)
        and raise :class:`ConflictsRecorded`, listing each conflict with the key to settle
        it by (:meth:`resolve_conflicts`, :meth:`resolve_with`), then :meth:`merge_continue` or
        :meth:`merge_abort`. Refused while a merge is in progress.
        """
        with self.storage.write() as writer:
            merged = merge.merge(writer, into, other, message=message, author=author, policy=policy, time=time)
        if isinstance(merged, ConflictsRecorded):
            raise merged  # after the merge state is committed
        return merged

    # -- a merge in progress (see fstore.ops.merge_state) ----------------------------------

    def merge_state(self) -> MergeState | None:
        """The merge in progress (None: none is), with its counts of conflicts.

        >>> import tempfile
        >>> open(tempfile.mkdtemp()).merge_state() is None
        True
        """
        with self.storage.read() as snapshot:
            return merge_state.state(snapshot)

    def conflicts(self) -> list[ConflictItem]:
        """Every conflict of the merge in progress (resolved or not), each with its ``key``;
        :class:`~fstore.errors.NoMergeInProgressError` if none is."""
        with self.storage.read() as snapshot:
            return merge_state.conflicts(snapshot)

    def resolve_conflicts(self, keys: list[str] | None = None, side: str = "ours") -> list[ConflictItem]:
        """Settle the conflicts ``keys`` (each key, or a prefix of it; None: all unresolved) on ``side``
        (``"ours"``: the branch merged into, ``"theirs"``); returns them. (Not ``resolve``:
        that names the commit of a ref.)"""
        with self.storage.write() as writer:
            return merge_state.resolve(writer, keys, side)

    def resolve_with(self, key: str, value: Any) -> ConflictItem:
        """Settle conflict ``key`` with an explicit value: the objects to keep (a quad
        conflict), the cell's value (a cell), the row as a dict or None to delete it (a row),
        the ``schema.json`` text (a schema)."""
        with self.storage.write() as writer:
            return merge_state.resolve_with(writer, key, value)

    def merge_continue(self, message: str | None = None, author: str | None = None,
                       time: _dt.datetime | None = None) -> str:
        """Make the merge commit of the merge in progress (parents: the branch's head and
        the commit merged), with the changes that merged and each conflict as resolved;
        forgets the merge state. Refused (nothing written) while a conflict is unresolved
        (:class:`~fstore.errors.UnresolvedConflictsError` names them) or if the branch moved
        since the merge began (:class:`~fstore.errors.MergeStaleError`)."""
        with self.storage.write() as writer:
            return merge.continue_merge(writer, message, author, time)

    def merge_abort(self) -> MergeState:
        """Forget the merge in progress; the branch stays as it was (nothing was committed)."""
        with self.storage.write() as writer:
            return merge.abort(writer)

    # -- show, revert, reset (see fstore.ops.show, .revert, .reset) ---------------------------

    def show(self, ref: str, *, python: bool = True) -> Shown:
        """The commit ``ref`` names and its changes against its first parent: quads, and
        each table's rows (a :class:`fstore.tables.TableDiff`; rows in Python values, or
        stored values with ``python=False``)."""
        with self.storage.read() as snapshot:
            shown, first = show.show(snapshot, ref)
        table_diffs = self.plugins.get("table_diffs")  # none without the tables' plug-in
        shown.tables = {} if table_diffs is None else table_diffs(self, first, shown.commit.seq, python=python)
        return shown

    def revert(self, ref: str, branch: str | None = None, *, message: str | None = None, author: str | None = None,
               time: _dt.datetime | None = None) -> str | None:
        """A new commit on ``branch`` (default: the current one) undoing the changes of
        commit ``ref`` against its first parent; returns its id (None: nothing to undo).
        If the branch changed them again since: :class:`~fstore.errors.RevertConflict`,
        nothing written."""
        with self.storage.write() as writer:
            return revert.revert(writer, ref, branch, message=message, author=author, time=time)

    def reset(self, ref: str, branch: str | None = None, *, hard: bool = False) -> str:
        """Move ``branch`` (default: the current one) to commit ``ref``; returns its id.
        datae has no working tree, so this is all a reset does. Refused if it would drop
        commits no other branch, tag or remote-tracking branch reaches, unless ``hard``;
        the old head goes to the reflog whenever it is not an ancestor of the new one, so
        gc keeps what it reached until the entry expires. Refused on the branch of a merge
        in progress."""
        with self.storage.write() as writer:
            return reset.reset(writer, ref, branch, hard=hard)

    # -- merge requests (see fstore.sync.merge_requests; arguments and results are JSON) -------------

    def request_open(self, source: str, target: str = DEFAULT_BRANCH, title: str = "", author: str = "") -> int:
        """Open a merge request of branch ``source`` into branch ``target``; returns its
        number. See :mod:`fstore.sync.merge_requests` for an example."""
        return merge_requests.open_request(self.storage, source, target, title, author)

    def requests(self, state: str | None = None) -> list[dict]:
        """Every merge request (``state``: only "open", "merged" or "closed" ones)."""
        return merge_requests.list_requests(self.storage, state)

    def request(self, n: int, *, limit: int = merge_requests.PREVIEW_LIMIT) -> dict:
        """Merge request ``n`` and its ``preview``: the changes it would apply (the first
        ``limit`` as text) and its conflicts, from a dry run of the merge."""
        return merge_requests.show_request(self, n, limit)

    def request_comment(self, n: int, text: str, author: str = "") -> None:
        """Comment on merge request ``n``."""
        merge_requests.comment_request(self.storage, n, text, author)

    def request_approve(self, n: int, author: str) -> None:
        """Approve open merge request ``n`` (not its own author's)."""
        merge_requests.approve_request(self.storage, n, author)

    def request_merge(self, n: int, author: str = "", message: str | None = None) -> str:
        """Merge open request ``n``'s source into its target; returns the new head.
        Refused (nothing written) when it conflicts: ``RequestConflictError``."""
        return merge_requests.merge_request(self.storage, n, author, message)

    def request_close(self, n: int, author: str = "") -> None:
        """Close open merge request ``n`` without merging it."""
        merge_requests.close_request(self.storage, n, author)

    def request_mirror(self, remote: str) -> merge_requests.Mirror:
        """The copies of ``remote``'s merge requests the last fetch made (read-only)."""
        return merge_requests.Mirror(self, remote)

    # -- history --------------------------------------------------------------------

    def log(self, ref: str = DEFAULT_BRANCH, limit: int | None = None) -> Iterator[Commit]:
        """The commits reachable from ``ref``, newest first (significance order)."""
        with self.storage.read() as snapshot:
            seqs = sorted(snapshot.ancestors(snapshot.resolve(ref)), reverse=True)
            return iter([snapshot.commit(seq) for seq in seqs[:limit]])

    def commit(self, ref: str) -> Commit:
        """The commit ``ref`` names."""
        with self.storage.read() as snapshot:
            return commit_at(snapshot, ref)

    def diff(self, a: str, b: str) -> Iterator[tuple[str, Quad]]:
        """``("+" | "-", quad)`` for each quad whose state differs from commit a to commit b."""
        with self.storage.read() as snapshot:
            for op, quad in diff_seqs(snapshot, snapshot.resolve(a), snapshot.resolve(b)):
                yield op, _terms(quad)

    def blame(self, ref: str, graph: Any, subject: Any, predicate: Any, object: Any) -> Commit | None:
        """The commit that gave this quad its state (present or removed) at ``ref``; None if
        no commit ever touched it."""
        quad = prepare_quad((graph, subject, predicate, object))
        with self.storage.read() as snapshot:
            seq = blame_seq(snapshot, snapshot.resolve(ref), quad)
            return None if seq is None else snapshot.commit(seq)

    def history(self, ref: str, *pattern: Any) -> Iterator[tuple[Commit, list[tuple[str, Quad]]]]:
        """For each commit in ``ref``'s ancestry that changed quads matching ``pattern``
        (newest first): the commit and those changes."""
        pattern = prepare_pattern(pattern)
        with self.storage.read() as snapshot:
            for seq, changes in history_of(snapshot, snapshot.resolve(ref), pattern):
                yield snapshot.commit(seq), [(op, _terms(quad)) for op, quad in changes]
    # -- tables (see fstore.tables) -----------------------------------------------------

    def table_diff(self, a: str, b: str, name: str, *, python: bool = True):
        """Rows of table ``name`` inserted, deleted and updated (with the changed cells)
        from ref ``a`` to ref ``b``: a :class:`fstore.tables.changes.TableDiff`."""
        return self.plugins.provided("table_diff")(self, a, b, name, python=python)

    def table_log(self, ref: str, name: str, pk: Any, *, python: bool = True):
        """The commits that changed one row of table ``name``, newest first (a list of
        :class:`fstore.tables.changes.LogEntry`)."""
        return self.plugins.provided("table_log")(self, ref, name, pk, python=python)

    def table_blame(self, ref: str, name: str, pk: Any, column: str) -> Commit | None:
        """The commit that gave one cell of table ``name`` its value at ``ref``."""
        return self.plugins.provided("table_blame")(self, ref, name, pk, column)

    def versions(self, ref: str, *pattern: Any) -> Iterator[tuple[Quad, list[Commit]]]:
        """For each quad matching ``pattern`` that holds in some commit of ``ref``'s ancestry:
        the quad and the commits in which it holds (oldest first)."""
        pattern = prepare_pattern(pattern)
        with self.storage.read() as snapshot:
            for quad, seqs in versions_of(snapshot, snapshot.resolve(ref), pattern):
                yield _terms(quad), [snapshot.commit(s) for s in seqs]

    def verify(self, *, quick: bool = False, tags: bool = True) -> list[str]:
        """Check the LMDB B-trees as searches read them (first: the reads after it trust
        them), recompute every commit id and its counts, the state digest of every branch
        and tag head and of every snapshot from the tuples it holds, every blob hash and
        reference count; check that every index of every keyspace holds the same tuples,
        that the dictionary agrees with itself both ways, and that every ref names the
        commit it recorded. Returns a description of each mismatch (an empty list: the
        store is intact). It reads one state, so writes meanwhile (a server's) change
        nothing; B-trees that could not be checked are named as such, and every other
        check still runs. ``quick`` checks the B-trees and the commit chain only (every id,
        from its records); ``tags=False`` leaves out the state of heads only tags reach (an
        old commit's whole state is the slowest read; their records are covered by the
        ids): what a clone checks its copy with. See ``docs/format.md``, "What verify
        checks"."""
        with self.storage.read() as snapshot:
            return verify.verify(snapshot, quick=quick, tags=tags)

    def stats(self) -> dict[str, Any]:
        """Counts for people: commits, branches, tags, reflog entries, and the data file's
        size, the bytes its live pages hold, and what compaction (``gc``) would give back."""
        with self.storage.read() as snapshot:
            return stats.stats(snapshot)

    def reflog(self) -> list[tuple[_dt.datetime, str, str, str]]:
        """The deleted branches and tags, oldest first: ``(when, "branch" or "tag", name,
        the commit id it reached)``; gc keeps those commits until the entry expires."""
        with self.storage.read() as snapshot:
            return branches.reflog(snapshot)

    def gc(self, *, expire: _dt.timedelta = DEFAULT_EXPIRY) -> GcReport:
        """Drop what no branch, tag, remote-tracking branch or reflog entry younger than
        ``expire`` reaches, then compact the file (see :mod:`fstore.ops.gc`). No other handle on the store may be open,
        in this process or another; views taken before are closed with it."""
        self.storage.close()
        try:
            return gc.gc(self.path, self._map_size, expire)
        finally:
            self.storage = Storage(self.path, map_size=self._map_size, plugins=self.plugins)
