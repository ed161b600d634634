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
from contextlib import contextmanager
from itertools import islice
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from nstore import Var
from nstore.store import Param
from nstore.errors import PatternError
from nstore.terms import IRI, check_quad_terms

from .core.history import Quad
from .core.ranges import NumericRange
from nstore.terms import ALREADY_CANONICAL as _CANONICAL
from nstore.terms import check_value

_CANONICAL_OR_VAR = _CANONICAL | {Var}

if TYPE_CHECKING:
    from nstore.okvs import Transaction as OkvsTransaction

    from .core.heads import Reader

    from .repository import Repository

__all__ = ["View", "prepare_pattern", "prepare_quad", "prepare_new_quad"]


def prepare_quad(values: Sequence[Any], what: str = "quad") -> Quad:
    """Check a quad's arity and put each value in canonical form (typed errors otherwise)."""
    if len(values) != 4:
        raise PatternError(f"a {what} has 4 items (graph, subject, predicate, object), not {len(values)}: {tuple(values)!r:.200}")
    g, s, p, o = values
    if type(g) in _CANONICAL and type(s) in _CANONICAL and type(p) in _CANONICAL and type(o) in _CANONICAL:
        return (g, s, p, o)  # the common case, without a call per value
    names = ("graph", "subject", "predicate", "object")
    return tuple(check_value(v, f"{what} {name}") for v, name in zip(values, names))  # type: ignore[return-value]


def prepare_new_quad(values: Sequence[Any], what: str = "quad") -> Quad:
    """A quad to add: :func:`prepare_quad`, then each item checked as a term
    (``nstore.terms.check_quad_terms``: ``InvalidTermError`` naming the bad one).

    >>> prepare_new_quad((None, IRI("urn:a"), IRI("urn:p"), "x"))
    (None, IRI('urn:a'), IRI('urn:p'), 'x')
    """
    return check_quad_terms(prepare_quad(values, what), what)


def prepare_pattern(values: Sequence[Any], params: bool = False) -> tuple:
    """Like :func:`prepare_quad`, letting any position be a ``Var`` (or a ``Param`` if
    ``params``: a pattern for ``fstore.prepare``)."""
    if len(values) != 4:
        raise PatternError(f"a pattern has 4 items (graph, subject, predicate, object), not {len(values)}: {tuple(values)!r:.200}")
    for value in values:
        if type(value) not in _CANONICAL_OR_VAR:
            break
    else:
        return tuple(values)  # the common case, without a call per value
    names = ("graph", "subject", "predicate", "object")
    if not params and any(type(v) is Param for v in values):
        raise PatternError(f"Param() marks a value given later, in a pattern for fstore.prepare; this read takes values or Var: {tuple(values)!r:.200}")
    return tuple(v if type(v) in (Var, Param) else check_value(v, f"pattern {name}") for v, name in zip(values, names))


class View:
    """The state at one commit (``commit`` is None for a branch with no commits yet).

    Obtain one with :meth:`Repository.at`; read it with ``fstore.from_``, ``fstore.ask``...
    Commits never change, so a view stays consistent however the branches move on.
    """

    def __init__(self, repo: Repository, seq: int | None, ref: str) -> None:
        self.repo = repo
        self.seq = seq
        self.ref = ref
        self._tx: OkvsTransaction | None = None  # set on the copies :meth:`reading` makes
        self._pinned: Reader | None = None  # the reader of that transaction
        with repo.storage.read() as tx:
            self.commit = repo.storage.commits.get(tx, seq) if seq is not None else None

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
        with self.repo.storage.read() as tx:
            pinned._tx = tx
            pinned._pinned = self.repo.storage.quads.reader(tx, self.seq)
            try:
                yield pinned
            finally:
                pinned._tx = None
                pinned._pinned = None

    def _reader(self, tx: OkvsTransaction) -> Reader:
        return self.repo.storage.quads.reader(tx, self.seq)

    def table_tuples(self, pattern: Sequence[Any]) -> Iterator[Quad]:
        """The tables space's tuples at this commit (``fstore.core.layout``)."""
        if self._tx is not None:
            return self.repo.storage.tables.reader(self._tx, self.seq).match(pattern)
        return self._match_tables_alone(pattern)

    def count_table_tuples(self, pattern: Sequence[Any], cap: int | None = None) -> int:
        """How many tables-space tuples match at this commit (counting stops at ``cap``),
        none decoded: a table's row count for the query planner."""
        if self._tx is not None:
            return self.repo.storage.tables.reader(self._tx, self.seq).count(pattern, cap)
        with self.repo.storage.read() as tx:
            return self.repo.storage.tables.reader(tx, self.seq).count(pattern, cap)

    def table_value_chunks(self, pattern: Sequence[Any], size: int) -> Iterator[list[list[Any]]]:
        """The tables space's tuples at this commit, ``size`` at a time, as one list of
        values per Var of ``pattern`` (in pattern order), their items decoded in bulk."""
        if self._tx is not None:
            yield from self._value_chunks(self._tx, pattern, size)
            return
        with self.repo.storage.read() as tx:
            yield from self._value_chunks(tx, pattern, size)

    def _value_chunks(self, tx: Any, pattern: Sequence[Any], size: int) -> Iterator[list[list[Any]]]:
        history = self.repo.storage.tables
        _, rows = history.reader(tx, self.seq).packed(pattern)
        while True:
            chunk = list(islice(rows, size))
            if not chunk:
                return
            yield [history.values(tx, list(column)) for column in zip(*chunk)]  # a column's items are alike

    def _match_tables_alone(self, pattern: Sequence[Any]) -> Iterator[Quad]:
        with self.repo.storage.read() as tx:
            yield from self.repo.storage.tables.reader(tx, self.seq).match(pattern)

    def _match(self, pattern: Sequence[Any], within: NumericRange | None = None, terms: bool = False) -> Iterator[Quad]:
        if self._pinned is not None:
            return self._pinned.match(pattern, within, terms)
        return self._match_alone(pattern, within, terms)

    def _match_alone(self, pattern: Sequence[Any], within: NumericRange | None, terms: bool) -> Iterator[Quad]:
        with self.repo.storage.read() as tx:
            yield from self._reader(tx).match(pattern, within, terms)

    def _prepare(self, pattern: Sequence[Any], terms: bool) -> Callable[..., Iterator[Quad]]:
        token = object()  # names this plan on each reader it runs on

        def read(*values: Any) -> Iterator[Quad]:
            if self._pinned is not None:
                return self._pinned.prepared(token, pattern, terms)(values)
            return self._read_alone(token, pattern, terms, values)

        return read

    def _read_alone(self, token: object, pattern: Sequence[Any], terms: bool, values: tuple) -> Iterator[Quad]:
        with self.repo.storage.read() as tx:
            yield from self._reader(tx).prepared(token, pattern, terms)(values)

    def _count(self, pattern: Sequence[Any], cap: int | None = None) -> int:
        with self._transaction() as reader:
            return reader.count(pattern, cap)

    def _graphs(self) -> list[Any]:
        with self._transaction() as reader:
            return reader.graphs()

    @contextmanager
    def _transaction(self) -> Iterator[Reader]:
        """The reader of the pinned read transaction (see :meth:`reading`), or of a new
        one for this read."""
        if self._pinned is not None:
            yield self._pinned
        else:
            with self.repo.storage.read() as tx:
                yield self._reader(tx)

    def table(self, name: str):
        """The table (Kart dataset) ``name`` at this commit, read-only: ``schema``,
        ``get(pk)``, ``rows()``, ``len()``. See :mod:`fstore.tables`."""
        return self.repo.plugins.provided("table_at")(self, name)

    def __repr__(self) -> str:
        commit = self.commit.short_id if self.commit else "no commits"
        return f"<fstore.View {self.ref!r} at {commit}>"

    def query_source(self) -> Any:  # a fstore.query_source.QuerySource
        """What the query engine reads this view through: the store's adapter to the
        engine's source protocol, table graphs included
        (:class:`fstore.query_source.QuerySource`); ``query.as_source`` asks for it.

        >>> import tempfile, fstore
        >>> repo = fstore.open(tempfile.mkdtemp())
        >>> repo.at("main").query_source().graphs()
        []
        >>> repo.close()
        """
        # Imported here: the adapter reads through fstore.api, which imports this module.
        # ``import a.b`` rather than ``from``: a third of the cost, paid once per query.
        import fstore.query_source

        return fstore.query_source.QuerySource(self)
