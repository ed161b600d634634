"""Read-only views of the store as it was at one commit.

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="first") as tx:
...     fstore.add(tx, None, fstore.IRI("urn:a"), fstore.IRI("urn:p"), 1)
>>> view = repo.at("main")
>>> fstore.ask(view, None, fstore.IRI("urn:a"), fstore.IRI("urn:p"), 1)
True
>>> repo.close()
"""

from __future__ import annotations

import copy
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Iterator, Sequence

from .core.history import Quad
from .core.layout import TABLES
from .core.ranges import NumericRange
from .query_source import QuerySource

if TYPE_CHECKING:
    from .core.storage import Opened, Snapshot
    from .core.heads import Reader

__all__ = ["View"]


class View:
    """The state at one commit (``commit`` is None for a branch with no commits yet).

    Obtain one with :meth:`Repository.at`; read it with ``fstore.from_``, ``fstore.ask``...
    Commits never change, so a view stays consistent however the branches move on.
    """

    def __init__(self, repo: Opened, seq: int | None, ref: str, snapshot: Snapshot | None = None) -> None:
        self.repo = repo
        self.seq = seq
        self.ref = ref
        self._snapshot: Snapshot | None = None  # set on the copies :meth:`reading` makes
        self._pinned: Reader | None = None  # the quads reader of that snapshot
        if seq is None:
            self.commit = None
        elif snapshot is not None:  # the read that resolved the ref
            self.commit = snapshot.commit(seq)
        else:
            with repo.storage.read() as own:
                self.commit = own.commit(seq)

    @property
    def commit_id(self) -> str | None:
        return self.commit.id if self.commit else None

    @contextmanager
    def reading(self) -> Iterator[View]:
        """This view with every read inside the block made in one LMDB read transaction,
        rather than one per call: for many small reads in a row (a query's lookups). Use
        it from one thread; iterators taken from it end with the block.

        >>> import tempfile, fstore
        >>> repo = fstore.open(tempfile.mkdtemp())
        >>> with repo.transaction("main", message="m") as tx:
        ...     fstore.add(tx, None, fstore.IRI("urn:a"), fstore.IRI("urn:p"), 1)
        >>> with repo.at("main").reading() as view:
        ...     [fstore.ask(view, None, fstore.IRI("urn:a"), fstore.IRI("urn:p"), n) for n in (1, 2)]
        [True, False]
        >>> repo.close()
        """
        pinned = copy.copy(self)
        with self.repo.storage.read() as snapshot:
            pinned._snapshot = snapshot
            pinned._pinned = snapshot.reader(self.seq)
            try:
                yield pinned
            finally:
                pinned._snapshot = None
                pinned._pinned = None

    def _read(self) -> ContextManager[Snapshot]:
        """The pinned snapshot (see :meth:`reading`), or a new one for this read: the one
        place a view decides which. Reads that return an iterator use it inside a
        generator, so a snapshot of their own lasts as long as the iteration. (No
        generator-made context manager: an unpinned read pays for this once per call.)"""
        pinned = self._snapshot
        return nullcontext(pinned) if pinned is not None else self.repo.storage.read()

    def _quads(self, snapshot: Snapshot) -> Reader:
        """The quads reader at this commit: the pinned one if ``snapshot`` is pinned."""
        if snapshot is self._snapshot and self._pinned is not None:
            return self._pinned
        return snapshot.quads.reader(snapshot.tx, self.seq)

    def table_tuples(self, pattern: Sequence[Any]) -> Iterator[Quad]:
        """The tables space's tuples at this commit (``fstore.core.layout``)."""
        if self._snapshot is not None:  # pinned: no generator around the reader's
            return self._snapshot.reader(self.seq, TABLES.name).match(pattern)
        return self._table_tuples(pattern)

    def _table_tuples(self, pattern: Sequence[Any]) -> Iterator[Quad]:
        with self._read() as snapshot:
            yield from snapshot.reader(self.seq, TABLES.name).match(pattern)

    def count_table_tuples(self, pattern: Sequence[Any], cap: int | None = None) -> int:
        """How many tables-space tuples match at this commit (counting stops at ``cap``),
        none decoded: a table's row count for the query planner."""
        with self._read() as snapshot:
            return snapshot.reader(self.seq, TABLES.name).count(pattern, cap)

    def table_feature_chunks(self, graph: Any, size: int) -> Iterator[tuple[Sequence[str], list[bytes]]]:
        """The features of the table of ``graph`` at this commit, ``size`` at a time, as
        ``(paths, blobs)``: its rows read in bulk in key order (``TablesReader.feature_chunks``)."""
        with self._read() as snapshot:
            yield from snapshot.reader(self.seq, TABLES.name).feature_chunks(graph, size)

    def _match(self, pattern: Sequence[Any], within: NumericRange | None = None, terms: bool = False) -> Iterator[Quad]:
        if self._pinned is not None:  # the hot path (a query's lookups): no generator around the reader's
            return self._pinned.match(pattern, within, terms)
        return self._match_alone(pattern, within, terms)

    def _match_alone(self, pattern: Sequence[Any], within: NumericRange | None, terms: bool) -> Iterator[Quad]:
        """A read in a snapshot of its own (:meth:`_match` took the pinned one if there is
        one): the reader is asked for directly, as this runs once per unpinned read."""
        with self.repo.storage.read() as snapshot:
            yield from snapshot.quads.reader(snapshot.tx, self.seq).match(pattern, within, terms)

    def _prepare(self, pattern: Sequence[Any], terms: bool) -> Callable[..., Iterator[Quad]]:
        token = object()  # names this plan on each reader it runs on

        def read(*values: Any) -> Iterator[Quad]:
            if self._pinned is not None:
                return self._pinned.prepared(token, pattern, terms)(values)
            return self._read_alone(token, pattern, terms, values)

        return read

    def _read_alone(self, token: object, pattern: Sequence[Any], terms: bool, values: tuple) -> Iterator[Quad]:
        with self.repo.storage.read() as snapshot:  # unpinned, as for _match_alone
            yield from snapshot.quads.reader(snapshot.tx, self.seq).prepared(token, pattern, terms)(values)

    def _count(self, pattern: Sequence[Any], cap: int | None = None) -> int:
        with self._read() as snapshot:
            return self._quads(snapshot).count(pattern, cap)

    def _known_count(self, pattern: Sequence[Any]) -> int | None:
        """The matches of ``pattern`` from the counts kept with the heads (see
        :meth:`fstore.core.heads.Reader.known_count`), or None where they do not answer."""
        with self._read() as snapshot:
            return self._quads(snapshot).known_count(pattern)

    def _graphs(self) -> list[Any]:
        with self._read() as snapshot:
            return self._quads(snapshot).graphs()

    def table(self, name: str):
        """The table (Kart dataset) ``name`` at this commit, read-only: ``schema``,
        ``get(pk)``, ``rows()``, ``len()``. See :mod:`fstore.tables`."""
        return self.repo.plugins.provided("table_at")(self, name)

    def __repr__(self) -> str:
        commit = self.commit.short_id if self.commit else "no commits"
        return f"<fstore.View {self.ref!r} at {commit}>"

    def query_source(self) -> QuerySource:
        """What the query engine reads this view through: the store's adapter to the
        engine's source protocol, table graphs included
        (:class:`fstore.query_source.QuerySource`); ``query.as_source`` asks for it.

        >>> import tempfile, fstore
        >>> repo = fstore.open(tempfile.mkdtemp())
        >>> repo.at("main").query_source().graphs()
        []
        >>> repo.close()
        """
        return QuerySource(self)
