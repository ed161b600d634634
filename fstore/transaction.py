"""Write transactions: one transaction on a branch is one commit.

Changes are collected as intents (quad -> alive) and resolved against the branch head when
the transaction ends: a quad whose state does not change writes nothing, and a transaction
that changes nothing makes no commit. Everything happens in one LMDB write transaction, so
an exception (or a crash) leaves the store exactly as it was.
"""

from __future__ import annotations

import datetime as _dt
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from nstore import Var
from nstore.pack import pack_value
from nstore.store import Param

from .history import Quad
from .ranges import NumericRange
from .values import to_rdf

if TYPE_CHECKING:
    from nstore.okvs import Transaction as OkvsTransaction

    from .heads import Reader

    from .repository import Repository

__all__ = ["Transaction", "matches"]

_SEEN_LIMIT = 4_000_000


def matches(pattern: Sequence[Any], quad: Quad) -> bool:
    """Whether a quad fits a pattern (values compare by their packed bytes, so ``1`` and
    ``True`` differ as they do in the store; a repeated Var must bind one value)."""
    bound: dict[str, bytes] = {}
    for item, value in zip(pattern, quad):
        packed = pack_value(value)
        if type(item) is Var:
            if bound.setdefault(item.name, packed) != packed:
                return False
        elif pack_value(item) != packed:
            return False
    return True


class Transaction:
    """A write transaction on one branch; use ``with repo.transaction(branch, ...)``.

    After the ``with`` block, ``commit_id`` holds the new commit's id, or None if nothing
    changed.
    """

    def __init__(self, repo: Repository, branch: str, message: str, author: str, time: _dt.datetime | None,
                 allow_empty: bool = False) -> None:
        self.repo = repo
        self.allow_empty = allow_empty
        self.branch = branch
        self.message = message
        self.author = author
        self.time = time
        self.commit_id: str | None = None
        self._tx: OkvsTransaction | None = None
        self._pending: dict[bytes, tuple[Quad, bool]] = {}
        # Quads this transaction saw alive at the head while reading: their state needs no
        # second lookup when the commit resolves intents (replacing a graph reads it all).
        self._seen_alive: set[bytes] = set()
        self._head: int | None = None
        self._reader: Reader | None = None  # the head's quads, read in this transaction

    def __enter__(self) -> Transaction:
        tx = self.repo._okvs.transaction(write=True)
        try:
            self._head = self.repo._refs.head(tx, self.branch)
            self._reader = self.repo._history.reader(tx, self._head)
        except BaseException:
            tx.abort()
            raise
        self._tx = tx
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        tx, self._tx = self._tx, None
        if tx is None:
            return
        if exc_type is not None:
            self._reader = None
            tx.abort()
            return
        try:
            self.commit_id = self._commit(tx)
        except BaseException:
            if not tx.closed:
                tx.abort()
            raise
        finally:
            self._reader = None
        if self.commit_id is None:
            tx.abort()
        else:
            tx.commit()

    # -- changes ----------------------------------------------------------------------

    def _require_open(self) -> OkvsTransaction:
        if self._tx is None:
            from nstore.errors import TransactionClosedError

            raise TransactionClosedError("use the transaction inside its `with` block")
        return self._tx

    def _intend(self, quad: Quad, alive: bool) -> None:
        self._require_open()
        self._pending[self.repo._history.identity(quad)] = (quad, alive)

    @contextmanager
    def reading(self) -> Iterator[Transaction]:
        """This transaction: its reads already share its LMDB transaction (the same
        method as :meth:`View.reading`, for code that reads either)."""
        yield self

    def _match(self, pattern: Sequence[Any], within: NumericRange | None = None, terms: bool = False) -> Iterator[Quad]:
        """The head's quads overlaid with this transaction's intents (``within`` and
        ``terms``: see :meth:`History.match`)."""
        if terms:
            return (tuple(map(to_rdf, quad)) for quad in self._match(pattern, within))  # type: ignore[misc]
        return self._overlaid(pattern, within)

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

    def _overlaid(self, pattern: Sequence[Any], within: NumericRange | None) -> Iterator[Quad]:
        tx = self._require_open()
        pending = self._pending
        history = self.repo._history
        if not any(type(item) is Var for item in pattern):  # a point lookup: no scan of intents
            quad = tuple(pattern)
            key = history.identity(quad)
            intent = pending.get(key)
            if (intent[1] if intent is not None else self._alive_at_head(tx, key, quad)):
                yield quad
            return
        seen = self._seen_alive
        remember = len(seen) < _SEEN_LIMIT
        for quad in self._head_reader().match(pattern, within):
            key = history.identity(quad)
            if remember:
                seen.add(key)
            intent = pending.get(key)
            if intent is None or intent[1]:
                yield quad
        for key, (quad, alive) in list(pending.items()):
            if alive and matches(pattern, quad) and not self._alive_at_head(tx, key, quad):
                if within is None or within.holds(history.identity(quad[3:])):
                    yield quad

    def _count(self, pattern: Sequence[Any], cap: int | None = None) -> int:
        if not self._pending:
            return self._head_reader().count(pattern, cap)
        total = 0
        for _ in self._match(pattern):
            total += 1
            if total == cap:
                break
        return total

    def _graphs(self) -> list[Any]:
        if not self._pending:
            return self._head_reader().graphs()
        seen: dict[bytes, Any] = {}
        for quad in self._match((Var("g"), Var("s"), Var("p"), Var("o"))):
            seen.setdefault(pack_value(quad[0]), quad[0])
        return [seen[key] for key in sorted(seen)]

    def _head_reader(self) -> Reader:
        """The committed head's quads (this transaction's intents not included)."""
        if self._reader is None:
            self._require_open()  # raises: the transaction is over
        return self._reader  # type: ignore[return-value]

    def _alive_at_head(self, tx: OkvsTransaction, key: bytes, quad: Quad) -> bool:
        if self._head is None:
            return False
        if key in self._seen_alive:
            return True
        return next(iter(self._head_reader().match(quad)), None) is not None

    # -- commit -----------------------------------------------------------------------

    def _changes(self, tx: OkvsTransaction) -> list[tuple[Quad, bool, bytes]]:
        return [
            (quad, alive, key) for key, (quad, alive) in self._pending.items() if self._alive_at_head(tx, key, quad) != alive
        ]

    def _commit(self, tx: OkvsTransaction) -> str | None:
        changes = self._changes(tx)
        if not changes and not (self.allow_empty and self._head is not None):
            return None
        added = sum(1 for _, alive, _ in changes if alive)
        parents = [] if self._head is None else [self._head]
        return self.repo._write_commit(
            tx, self.branch, parents, changes, self.message, self.author, self.time, added, len(changes) - added
        )

    def table(self, name: str):
        """The writer of table (Kart dataset) ``name`` on this transaction's branch:
        ``insert`` / ``update`` / ``upsert`` / ``delete`` / ``alter``, and reads that see
        this transaction's writes. Create one with ``fstore.tables.create``."""
        from .tables.store import open_table

        return open_table(self, name)

    def __repr__(self) -> str:
        state = "open" if self._tx is not None else "closed"
        return f"<fstore.Transaction on {self.branch!r} {state}, {len(self._pending)} change(s) pending>"
