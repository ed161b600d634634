"""Write transactions: one transaction on a branch is one commit.

Changes are collected as intents (quad -> alive) and resolved against the branch head when
the transaction ends: a quad whose state does not change writes nothing, and a transaction
that changes nothing makes no commit. Everything happens in one LMDB write transaction, so
an exception (or a crash) leaves the store exactly as it was.
"""

from __future__ import annotations

import datetime as _dt
from contextlib import contextmanager
from itertools import islice, repeat
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from nstore import Var
from nstore.bulk import gc_paused
from nstore.errors import TransactionClosedError
from nstore.pack import pack_value
from nstore.store import Param

from .core.history import Quad, matches
from .core.layout import QUADS, TABLES
from .core.ranges import NumericRange
from .query_source import QuerySource
from nstore.terms import to_rdf

if TYPE_CHECKING:
    from nstore.okvs import Transaction as OkvsTransaction

    from .core.storage import Opened, Writer
    from .core.heads import Reader
    from .core.history import History

__all__ = ["Transaction", "Staged"]

_SEEN_LIMIT = 4_000_000
_BATCH = 1 << 16  # quads packed a column at a time by intend_many


class Staged:
    """One space's intents (quad -> alive) in a write transaction, over the head it
    started from: reads see the head overlaid with the intents."""

    def __init__(self, history: History, reader: Reader, head: int | None) -> None:
        self.history = history
        self.reader = reader
        self.head = head
        self.pending: dict[bytes, tuple[Quad, bool, list[bytes]]] = {}  # identity -> intent
        # Quads seen alive at the head while reading: their state needs no second lookup
        # when the commit resolves intents (replacing a graph reads it all).
        self.seen_alive: set[bytes] = set()

    def intend(self, quad: Quad, alive: bool) -> None:
        parts = self.history.parts(quad)
        self.pending[b"".join(parts)] = (quad, alive, parts)

    def intend_many(self, quads: Iterable[Quad], alive: bool) -> None:
        """:meth:`intend` of many quads, packed a column at a time (a batch of quads at a
        time, so the columns never hold more than a batch)."""
        pending, packed = self.pending, self.history.store.packed_column
        source = iter(quads)
        while True:
            batch = list(islice(source, _BATCH))
            if not batch:
                return
            rows = list(zip(*[packed(list(column)) for column in zip(*batch)]))
            pending.update(zip(map(b"".join, rows), zip(batch, repeat(alive), rows)))

    def match(self, pattern: Sequence[Any], within: NumericRange | None) -> Iterator[Quad]:
        pending = self.pending
        identity = self.history.identity
        if not any(type(item) is Var for item in pattern):  # a point lookup: no scan of intents
            quad = tuple(pattern)
            key = identity(quad)
            intent = pending.get(key)
            if (intent[1] if intent is not None else self.alive_at_head(key, quad)):
                yield quad  # type: ignore[misc]
            return
        seen = self.seen_alive
        remember = len(seen) < _SEEN_LIMIT
        for quad in self.reader.match(pattern, within):
            key = identity(quad)
            if remember:
                seen.add(key)
            intent = pending.get(key)
            if intent is None or intent[1]:
                yield quad
        for key, (quad, alive, _) in list(pending.items()):
            if alive and matches(pattern, quad) and not self.alive_at_head(key, quad):
                if within is None or within.holds(identity(quad[3:])):
                    yield quad

    def count(self, pattern: Sequence[Any], cap: int | None = None) -> int:
        if not self.pending:
            return self.reader.count(pattern, cap)
        total = 0
        for _ in self.match(pattern, None):
            total += 1
            if total == cap:
                break
        return total

    def graphs(self) -> list[Any]:
        if not self.pending:
            return self.reader.graphs()
        seen: dict[bytes, Any] = {}
        for quad in self.match((Var("g"), Var("s"), Var("p"), Var("o")), None):
            seen.setdefault(pack_value(quad[0]), quad[0])
        return [seen[key] for key in sorted(seen)]

    def alive_at_head(self, key: bytes, quad: Quad) -> bool:
        if self.head is None:
            return False
        if key in self.seen_alive:
            return True
        return next(iter(self.reader.match(quad)), None) is not None

    def changes(self) -> list[tuple[Quad, bool, list[bytes]]]:
        """The intents that change the head: ``(quad, alive, its packed values)``."""
        return [(quad, alive, parts) for key, (quad, alive, parts) in self.pending.items() if self.alive_at_head(key, quad) != alive]


class Transaction:
    """A write transaction on one branch; use ``with repo.transaction(branch, ...)``.

    After the ``with`` block, ``commit_id`` holds the new commit's id, or None if nothing
    changed.
    """

    def __init__(self, repo: Opened, branch: str, message: str, author: str, time: _dt.datetime | None,
                 allow_empty: bool = False) -> None:
        self.repo = repo
        self.allow_empty = allow_empty
        self.branch = branch
        self.message = message
        self.author = author
        self.time = time
        self.commit_id: str | None = None
        self._writer: Writer | None = None
        self._head: int | None = None
        self._staged: dict[str, Staged] = {}  # by space name (fstore.core.layout)

    def __enter__(self) -> Transaction:
        writer = self.repo.storage.write()
        try:
            self._head = writer.head(self.branch)
            self._staged = {space.space.name: Staged(space, space.reader(writer.tx, self._head), self._head)
                            for space in writer.spaces}
        except BaseException:
            writer.tx.abort()
            raise
        self._writer = writer
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        writer, self._writer = self._writer, None
        if writer is None:
            return
        tx = writer.tx
        if exc_type is not None:
            tx.abort()
            return
        try:
            with gc_paused():
                self.commit_id = self._commit(writer)
        except BaseException:
            if not tx.closed:
                tx.abort()
            raise
        if self.commit_id is None:
            tx.abort()
        else:
            tx.commit()

    # -- changes ----------------------------------------------------------------------

    def _require_open(self) -> OkvsTransaction:
        """The LMDB transaction of the open block (what table code reads legends in)."""
        if self._writer is None:
            raise TransactionClosedError("use the transaction inside its `with` block")
        return self._writer.tx

    def _space(self, name: str) -> Staged:
        self._require_open()
        return self._staged[name]

    def _intend(self, quad: Quad, alive: bool) -> None:
        self._space(QUADS.name).intend(quad, alive)

    def _intend_many(self, quads: Iterable[Quad], alive: bool) -> None:
        staged = self._space(QUADS.name)
        with gc_paused():
            staged.intend_many(quads, alive)

    def stage_table_tuple(self, row: Quad, alive: bool) -> None:
        """Stage a table tuple (see :mod:`fstore.tables.mapping`) in the tables space."""
        self._space(TABLES.name).intend(row, alive)

    def stage_table_tuples(self, rows: Iterable[Quad], alive: bool) -> None:
        """Stage many table tuples at once (a bulk insert's rows)."""
        staged = self._space(TABLES.name)
        with gc_paused():
            staged.intend_many(rows, alive)

    @contextmanager
    def reading(self) -> Iterator[Transaction]:
        """This transaction: its reads already share its LMDB transaction (the same
        method as :meth:`View.reading`, for code that reads either)."""
        yield self

    def _match(self, pattern: Sequence[Any], within: NumericRange | None = None, terms: bool = False) -> Iterator[Quad]:
        """The head's quads overlaid with this transaction's intents (``within`` and
        ``terms``: see :meth:`fstore.core.heads.Reader.match`)."""
        staged = self._space(QUADS.name)
        if terms:
            return (tuple(map(to_rdf, quad)) for quad in staged.match(pattern, within))  # type: ignore[misc]
        return staged.match(pattern, within)

    def table_tuples(self, pattern: Sequence[Any]) -> Iterator[Quad]:
        """The tables space's tuples at the head, overlaid with this transaction's."""
        return self._space(TABLES.name).match(pattern, None)

    def count_table_tuples(self, pattern: Sequence[Any], cap: int | None = None) -> int:
        """How many tables-space tuples match, this transaction's writes included
        (counting stops at ``cap``)."""
        return self._space(TABLES.name).count(pattern, cap)

    def committed_table_tuples(self, pattern: Sequence[Any]) -> Iterator[Quad]:
        """The tables space's tuples at the head this transaction started from."""
        return self._space(TABLES.name).reader.match(pattern)

    def _prepare(self, pattern: Sequence[Any], terms: bool) -> Callable[..., Iterator[Quad]]:
        """Reads of one pattern shape (see ``fstore.prepare``): each a :meth:`_match`, which
        overlays this transaction's intents."""
        params = [i for i, item in enumerate(pattern) if type(item) is Param]

        def read(*values: Any) -> Iterator[Quad]:
            filled = list(pattern)
            for position, value in zip(params, values):
                filled[position] = value
            return self._match(filled, None, terms)

        return read

    def _count(self, pattern: Sequence[Any], cap: int | None = None) -> int:
        return self._space(QUADS.name).count(pattern, cap)

    def _graphs(self) -> list[Any]:
        return self._space(QUADS.name).graphs()

    # -- commit -----------------------------------------------------------------------

    def _commit(self, writer: Writer) -> str | None:
        changes = {name: staged.changes() for name, staged in self._staged.items()}
        total = sum(map(len, changes.values()))
        if not total and not (self.allow_empty and self._head is not None):
            return None
        added = sum(1 for found in changes.values() for _, alive, _ in found if alive)
        parents = [] if self._head is None else [self._head]
        return writer.write_commit(self.branch, parents, changes, self.message, self.author, self.time, added,
                                   total - added)

    def table(self, name: str):
        """The writer of table (Kart dataset) ``name`` on this transaction's branch:
        ``insert`` / ``update`` / ``upsert`` / ``delete`` / ``alter``, and reads that see
        this transaction's writes. Create one with ``fstore.tables.create``."""
        return self.repo.plugins.provided("open_table")(self, name)

    def __repr__(self) -> str:
        state = "open" if self._writer is not None else "closed"
        pending = sum(len(staged.pending) for staged in self._staged.values())
        return f"<fstore.Transaction on {self.branch!r} {state}, {pending} change(s) pending>"

    def query_source(self) -> QuerySource:
        """What the query engine reads this transaction through (its own writes included):
        the store's adapter to the engine's source protocol, table graphs included
        (:class:`fstore.query_source.QuerySource`); ``query.as_source`` asks for it.

        >>> import tempfile, fstore
        >>> repo = fstore.open(tempfile.mkdtemp())
        >>> with repo.transaction("main", message="m") as tx:
        ...     fstore.add(tx, fstore.IRI("urn:g"), fstore.IRI("urn:a"), fstore.IRI("urn:p"), 1)
        ...     tx.query_source().graphs()
        [IRI('urn:g')]
        >>> repo.close()
        """
        return QuerySource(self)
