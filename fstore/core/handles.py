"""Bound handles on a repository's storage: a :class:`Snapshot` reads one consistent
state (one LMDB read transaction), a :class:`Writer` (a Snapshot that also writes) is the
one write transaction. Every operation of ``fstore.ops`` is a function of one of them, so
no function takes a ``(storage, tx)`` pair and none opens a transaction of its own inside
another (as Oxigraph's ``Storage::snapshot()`` gives a ``StorageReader`` and
``transaction(|writer| ...)`` a ``StorageWriter``).

The :class:`~fstore.core.storage.Storage` stays the owner of the keys: a handle binds its
methods to the handle's transaction and adds nothing to a read's cost but one call.

>>> import tempfile
>>> from fstore.core.storage import Storage
>>> storage = Storage(tempfile.mkdtemp())
>>> with storage.write() as writer:
...     writer.create_branch("dev", None, None)
>>> with storage.read() as snapshot:
...     snapshot.resolve("dev"), snapshot.current_branch(), sorted(snapshot.branches())
(None, 'main', ['dev', 'main'])
>>> storage.close()
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any, Iterator, Protocol

from nstore.okvs import Transaction as OkvsTransaction

from .commits import Commit
from .heads import Reader
from .history import History, Quad
from .layout import QUADS
from .refs import BRANCH, REMOTE, TAG

if TYPE_CHECKING:
    from .storage import Storage

__all__ = ["Snapshot", "Writer", "Opened", "Changes"]

Changes = dict[str, list[tuple[Quad, bool, "list[bytes] | None"]]]  # by space name: (quad, alive, parts)


class Opened(Protocol):
    """What an operation needs of an open repository (``fstore.Repository`` is one): its
    storage. Views, transactions and operations name this rather than the facade, so
    none of them imports it."""

    storage: Storage


class Snapshot:
    """One consistent state of the store: every read made through it sees the same
    commits and refs. A context manager (the read transaction ends with the block);
    ``tx`` is the LMDB transaction, for code below the handles (``fstore.core``)."""

    __slots__ = ("storage", "tx")

    def __init__(self, storage: Storage, tx: OkvsTransaction) -> None:
        self.storage = storage
        self.tx = tx

    def __enter__(self) -> Snapshot:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.tx.__exit__(exc_type, exc, tb)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of {self.storage.path!r}>"

    # -- the parts (the storage's, for reads in self.tx) -------------------------------

    @property
    def spaces(self) -> tuple[History, ...]:
        """The versioned spaces (quads, tables), each a :class:`~fstore.core.history.History`."""
        return self.storage.spaces

    @property
    def quads(self) -> History:
        return self.storage.quads

    @property
    def tables(self) -> History:
        return self.storage.tables

    # -- commits ------------------------------------------------------------------------

    def commit(self, seq: int) -> Commit:
        """The commit numbered ``seq``."""
        return self.storage.commits.get(self.tx, seq)

    def commit_id(self, seq: int | None) -> str | None:
        return self.storage.commit_id(self.tx, seq)

    def seq_of(self, commit_id: str) -> int | None:
        """The number of the commit with id ``commit_id`` (None: not in the store)."""
        return self.storage.commits.seq_of(self.tx, commit_id)

    def parents(self, seq: int) -> list[int]:
        return self.storage.commits.parents(self.tx, seq)

    def ancestors(self, seq: int | None) -> frozenset[int]:
        """``seq`` and every commit it descends from (empty for None)."""
        return self.storage.commits.ancestors(self.tx, seq)

    def merge_base(self, ours: int, theirs: int) -> int | None:
        return self.storage.commits.merge_base(self.tx, ours, theirs)

    def all_commits(self) -> Iterator[tuple[int, dict]]:
        """Every commit record, by seq."""
        return self.storage.commits.all(self.tx)

    # -- refs ---------------------------------------------------------------------------

    def resolve(self, ref: str) -> int | None:
        """The commit ``ref`` names (see :meth:`fstore.core.storage.Storage.resolve`)."""
        return self.storage.resolve(self.tx, ref)

    def head(self, branch: str) -> int | None:
        """Branch ``branch``'s head (None: no commits; an unknown branch raises)."""
        return self.storage.refs.head(self.tx, branch)

    def ref(self, kind: str, name: str) -> tuple[bool, int | None]:
        """``(exists, seq)`` of ref ``name`` of ``kind`` (``fstore.core.refs``)."""
        return self.storage.refs.get(self.tx, kind, name)

    def refs(self, kind: str, *, skip_damaged: bool = False) -> Iterator[tuple[str, int | None]]:
        """Every ref of ``kind`` and its commit."""
        return self.storage.refs.items(self.tx, kind, skip_damaged=skip_damaged)

    def branches(self) -> dict[str, int | None]:
        return dict(self.refs(BRANCH))

    def tags(self) -> dict[str, int | None]:
        return dict(self.refs(TAG))

    def remote_branches(self) -> dict[str, int | None]:
        return dict(self.refs(REMOTE))

    def remotes(self) -> dict[str, str]:
        """Every remote and its URL."""
        return self.storage.refs.remotes(self.tx)

    def reflog(self) -> list[tuple[_dt.datetime, str, str, int]]:
        """The deleted branches and tags, oldest first: ``(when, kind, name, seq)``."""
        return self.storage.refs.reflog(self.tx)

    def current_branch(self) -> str:
        return self.storage.current_branch(self.tx)

    # -- states -------------------------------------------------------------------------

    def reader(self, seq: int | None, space: str = QUADS.name) -> Reader:
        """What is alive at commit ``seq`` in ``space`` (:class:`fstore.core.heads.Reader`)."""
        return self.storage.reader(self.tx, seq, space)

    def deciding_record(self, seq: int | None, quad: Any, space: str = QUADS.name) -> tuple[int, bool] | None:
        return self.storage.deciding_record(self.tx, seq, quad, space)

    def was_alive(self, seq: int | None, space: str, quad: Any) -> bool:
        return self.storage.was_alive(self.tx, seq, space, quad)

    def state_digest(self, seq: int | None) -> str:
        return self.storage.state_digest(self.tx, seq)

    def packed_records(self, seq: int) -> list[bytes]:
        return self.storage.packed_records(self.tx, seq)

    # -- a merge in progress (fstore.ops.merge_state) -----------------------------------

    def merge_state(self) -> bytes | None:
        """The encoded state of the merge in progress (None: no merge is)."""
        return self.storage.merge_state(self.tx)

    def merge_records(self, resolutions: bool = False) -> dict[str, bytes]:
        return self.storage.merge_records(self.tx, resolutions)

    def merge_roots(self) -> list[int]:
        return self.storage.merge_roots(self.tx)


class Writer(Snapshot):
    """The write transaction (one at a time): a :class:`Snapshot` that also writes.
    Nothing is visible to others until the block ends without an exception (an exception
    aborts it, so the store stays as it was)."""

    __slots__ = ()

    def write_commit(self, branch: str, parents: list[int], changes: Changes, message: str, author: str,
                     time: _dt.datetime | None, added: int, removed: int) -> str:
        """Record a commit of ``changes`` on ``branch``; returns its id
        (:meth:`fstore.core.storage.Storage.write_commit`)."""
        return self.storage.write_commit(self.tx, branch, parents, changes, message, author, time, added, removed)

    def fast_forward(self, branch: str, ours: int | None, theirs: int) -> None:
        """Move ``branch`` from ``ours`` to its descendant ``theirs`` (no new commit)."""
        self.storage.fast_forward(self.tx, branch, ours, theirs)

    def create_branch(self, name: str, seq: int | None, start_branch: str | None) -> None:
        self.storage.create_branch(self.tx, name, seq, start_branch)

    def delete_branch(self, name: str, *, log: bool = True) -> None:
        self.storage.delete_branch(self.tx, name, log=log)

    def set_current_branch(self, branch: str) -> None:
        self.storage.set_current_branch(self.tx, branch)

    def create_ref(self, kind: str, name: str, seq: int | None) -> None:
        """A new ref (refused if one of that kind and name exists)."""
        self.storage.refs.create(self.tx, kind, name, seq)

    def delete_ref(self, kind: str, name: str) -> None:
        self.storage.refs.delete(self.tx, kind, name)

    def log_ref(self, kind: str, name: str, seq: int | None) -> None:
        """Put ``seq`` in the reflog under ``name`` (gc keeps it until the entry expires)."""
        self.storage.refs.log(self.tx, kind, name, seq)

    def start_merge(self, state: bytes, conflicts: dict[str, bytes]) -> None:
        self.storage.start_merge(self.tx, state, conflicts)

    def set_resolution(self, key: str, resolution: bytes) -> None:
        self.storage.set_resolution(self.tx, key, resolution)

    def clear_merge(self) -> None:
        self.storage.clear_merge(self.tx)
