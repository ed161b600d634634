"""The store's adapter to the query engine: :class:`QuerySource`, what ``view.query_source()``
and ``transaction.query_source()`` give.

The query engine defines the protocol it reads through (``query.source.Source``); fstore
does not import the engine, it satisfies that protocol structurally (the model: spareval's
``QueryDataset`` trait, defined by the engine, and Oxigraph's ``DatasetView``, owned by
the store). A pattern's items are RDF terms, ``None`` in the graph position (the default
graph), ``Param()`` (in :meth:`QuerySource.prepare`) or variables: any other object with a
``name`` (the engine's variable type), read as the store's ``Var`` of that name.

Quad graphs are read through the view's (or transaction's) own reads, ``_match`` /
``_prepare`` / ``_count`` / ``_graphs``, patterns checked by :mod:`fstore.patterns` as
``fstore.quads`` / ``fstore.prepare`` / ``fstore.count`` check theirs (this module is
what ``View.query_source`` returns, so it imports neither the views nor ``fstore.api``),
asking for RDF terms (``terms=True``) and turning query literals into stored values with
``canonical``; table
graphs (``<urn:datae:dataset:NAME>``) through the Direct Mapping of their rows, which
``fstore.tables`` provides (:mod:`fstore.tables.sparql_graphs`): like the core, the
adapter never imports the tables.

>>> import tempfile, fstore
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="m") as tx:
...     fstore.add(tx, None, fstore.IRI("urn:a"), fstore.IRI("urn:p"), 7)
>>> source = repo.at("main").query_source()
>>> [(b["s"], b["o"].value) for b in source.match((None, fstore.Var("s"), fstore.IRI("urn:p"), fstore.Var("o")))]
[(IRI('urn:a'), 7)]
>>> source.is_table_graph(fstore.IRI("urn:datae:dataset:towns")), source.count((None, *map(fstore.Var, "spo")))
(True, 1)
>>> repo.close()
"""

from __future__ import annotations

import weakref
from contextlib import contextmanager
from itertools import islice
from typing import Any, Callable, Iterator

from nstore import Var
from nstore.pack import Packed
from nstore.store import Param
from nstore.terms import BNode, IRI, Literal, canonical, to_rdf

from .patterns import check_cap, check_within, params_checked, prepare_pattern

__all__ = ["QuerySource", "ItemReads"]

Bindings = dict
QuadPattern = tuple

_STORED_AS_IS = frozenset({IRI, BNode, type(None)})  # query items the store reads unchanged
_CONSTANTS = _STORED_AS_IS | {Literal, Param}  # any other item is a variable (by its name)

# Estimates per view: a view is a fixed commit, so they stay right for all its queries
# (for a transaction they may lag behind its own writes, which only affects plan quality).
_ESTIMATES: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
STATISTICS_KEPT = 50_000
"""Entries a view's statistics dict holds at most (estimates, fan-outs, kept plans): a
server answering queries with ever new constants at one head would otherwise grow it
without end. Past it, it starts again (about 20 MB at most)."""


class _Statistics(dict):
    """A view's statistics (see :data:`STATISTICS_KEPT`): emptied when full."""

    def __setitem__(self, key: Any, value: Any) -> None:
        if len(self) >= STATISTICS_KEPT and key not in self:
            self.clear()
        super().__setitem__(key, value)
_ANY = object()



def _no_table(graph: Any) -> bool:
    return False

class QuerySource:
    """The query engine's source over an fstore view or transaction (``repo.at(ref)``,
    ``repo.transaction``): the engine's ``Source`` protocol, table graphs included.
    ``check`` (a query's deadline) is called as table-graph scans go (see :meth:`checked`).
    ``is_table_graph(graph)`` tells whether ``graph`` names a table
    (``<urn:datae:dataset:NAME>``): read through the Direct Mapping of its rows rather
    than stored as quads, never listed by :meth:`graphs`, read-only in SPARQL.

    >>> import tempfile, fstore
    >>> repo = fstore.open(tempfile.mkdtemp())
    >>> QuerySource(repo.at("main")).graphs()
    []
    >>> repo.close()
    """

    accepts_ranges = True  # match() takes a NumericRange of the object (see query.ranges)

    def __init__(self, view: Any, check: Callable[[], None] | None = None) -> None:
        self.view = view  # what the engine's version clauses (AT, CHANGES) start from
        self._reader: Any = None  # the view pinned to one read transaction, see reading()
        self._pin: Any = None
        self._readers = 0
        self._vars: dict[str, Var] = {}  # the store Var of each engine variable, by name
        self._graphs: list | None = None
        self._check = check
        self._table_graphs: Any = None  # made when a pattern first names a table (see _tables)
        self._ids: ItemReads | None = None  # for the read transaction of the moment (see ids)
        # an attribute, not a method: asked for every pattern the engine reads
        # no plug-in, no tables: every graph is a graph of quads
        self.is_table_graph: Callable[[Any], bool] = view.repo.plugins.get("is_table_graph") or _no_table
        try:
            self.statistics = _ESTIMATES.setdefault(view, _Statistics())
        except TypeError:  # not weak-referenceable: cache for this source only
            self.statistics = {}

    @property
    def _tables(self) -> Any:
        """The table graphs (``fstore.tables.sparql_graphs.TableGraphs``), read through the
        Direct Mapping in the read transaction of the moment; their scans call ``check``."""
        if self._table_graphs is None:
            table_graphs = self.view.repo.plugins.provided("table_graphs")
            self._table_graphs = table_graphs(lambda: self._reader or self.view, self._check)
        return self._table_graphs

    def _item(self, item: Any) -> Any:
        kind = type(item)
        if kind is Literal:
            return canonical(item)
        if kind in _CONSTANTS:
            return item
        found = self._vars.get(item.name)
        if found is None:
            found = self._vars[item.name] = Var(item.name)
        return found

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Within the block, read through one LMDB read transaction (``view.reading()``)
        rather than one per pattern; blocks may nest or interleave (several results
        streamed at once), and the transaction ends with the last of them."""
        if self._readers == 0:
            self._pin = self.view.reading()
            self._reader = self._pin.__enter__()
        self._readers += 1
        try:
            yield
        finally:
            self._readers -= 1
            if self._readers == 0:
                pinned, self._pin, self._reader = self._pin, None, None
                pinned.__exit__(None, None, None)

    def checked(self, check: Callable[[], None]) -> QuerySource:
        """A source over the same view whose table-graph scans call ``check`` every 1,024
        rows (a query's deadline: a table filters inside its own scan, so rows that do
        not match never reach a check outside). A new source, so that this one's later
        queries do not inherit the deadline; it shares the view's estimates."""
        return QuerySource(self.view, check)

    def _args(self, pattern: QuadPattern) -> list:
        """A query pattern's items as the store reads them (see :meth:`_item`)."""
        item = self._item
        return [i if type(i) in _STORED_AS_IS else item(i) for i in pattern]

    def match(self, pattern: QuadPattern, within: Any = None) -> Iterator[Bindings]:
        """``{variable name: RDF term}`` per matching quad; ``within``, a
        :class:`fstore.NumericRange`, may leave out objects outside it."""
        if self.is_table_graph(pattern[0]):
            return self._tables.match(pattern)
        args = self._args(pattern)
        slots = list({i.name: at for at, i in enumerate(pattern) if type(i) not in _CONSTANTS}.items())
        prepared = prepare_pattern(args)
        check_within(prepared, within)
        return _bindings((self._reader or self.view)._match(prepared, within, True), slots)

    def prepare(self, pattern: QuadPattern) -> Callable[..., Iterator[Bindings]]:
        """``match`` planned once for a pattern with ``Param()`` items: the function returned
        takes their values (RDF terms, in pattern order) and yields the bindings of the
        pattern's variables, as ``match`` would with those values in place."""
        if self.is_table_graph(pattern[0]):
            return self._tables.prepare(pattern)
        args = self._args(pattern)
        slots = list({i.name: at for at, i in enumerate(pattern) if type(i) not in _CONSTANTS}.items())
        read = params_checked((self._reader or self.view)._prepare(prepare_pattern(args, params=True), True))

        def run(*values: Any) -> Iterator[Bindings]:
            return _bindings(read(*[v if type(v) in _STORED_AS_IS else canonical(v) for v in values]), slots)

        return run

    def ids(self) -> ItemReads | None:
        """Reads on key items, for the engine's joins on ids (:class:`ItemReads`): inside
        :meth:`reading` over a view; None elsewhere (a transaction reads its staged
        writes through :meth:`match`). Table graphs are not read through it."""
        reader = getattr(self._reader, "_pinned", None)
        if reader is None:
            return None
        found = self._ids
        if found is None or found.reader is not reader:
            found = self._ids = ItemReads(reader, self._args)
        return found

    def count(self, pattern: QuadPattern) -> int:
        """The exact number of matches."""
        if self.is_table_graph(pattern[0]):
            return self._tables.count(pattern)
        return (self._reader or self.view)._count(prepare_pattern([self._item(i) for i in pattern]))

    def estimate(self, pattern: QuadPattern, cap: int) -> int:
        """``min(count, cap)``, reading at most ``cap`` matches (cached per view); the exact
        count, which may exceed ``cap``, where the store keeps it (a pattern binding at most
        its graph and predicate: the counts kept with the heads) and for a table graph (its
        row count)."""
        key = (tuple(i if type(i) in _CONSTANTS else _ANY for i in pattern), cap)
        found = self.statistics.get(key)
        if found is None and self.is_table_graph(pattern[0]):
            found = self.statistics[key] = self._tables.estimate(pattern, cap)
        if found is None:
            args = prepare_pattern([self._item(i) for i in pattern])
            check_cap(cap)
            reads = self._reader or self.view
            found = reads._known_count(args)
            if found is None:
                found = reads._count(args, cap)
            self.statistics[key] = found
        return found

    def fanout(self, pattern: QuadPattern, lookup: frozenset, sample: int, cap: int) -> float | None:
        """The mean number of matches of ``pattern`` per binding of its ``lookup``
        variables, over the bindings of its first ``sample`` matches (each count stopping
        at ``cap``): what a join's lookup step will read per solution (the planner's
        measure, ``query.planner``), read on key items inside :meth:`reading`, nothing
        decoded. None where it reads terms instead (a table graph or a graph variable,
        outside ``reading``)."""
        reader = getattr(self._reader, "_pinned", None)
        if reader is None or type(pattern[0]) not in _STORED_AS_IS or self.is_table_graph(pattern[0]):
            return None
        args = prepare_pattern(self._args(pattern))
        positions, rows = reader.scan_items(args)
        looked_up = [(positions.index(at), at) for at, item in enumerate(args)
                     if type(item) is Var and item.name in lookup and at in positions]
        # The other variables match anything: a fresh one per position.
        template = [Var(f".f{at}") if type(item) is Var else item for at, item in enumerate(args)]
        total = seen = 0
        for row in islice(rows, sample):
            bound = template.copy()
            for index, at in looked_up:
                bound[at] = Packed(row[index])
            total += reader.count(bound, cap)
            seen += 1
        return total / seen if seen else 0.0

    def graphs(self) -> list:
        """The names of the non-default quad graphs (table graphs are not listed: a query
        reads one only by naming it)."""
        if self._graphs is None:
            names = [to_rdf(g) for g in (self._reader or self.view)._graphs()]
            self._graphs = [g for g in names if g is not None]
        return self._graphs

    def table_changes(self, since: QuerySource, graph: Any,
                      check: Callable[[], None] | None = None) -> tuple[list[tuple], list[tuple]]:
        """The quads of table graph ``graph`` added and removed from ``since`` (a source
        over an earlier view) to this source's view: what ``CHANGES`` reads of a table
        (see :func:`fstore.tables.sparql_graphs.graph_changes`)."""
        return self.view.repo.plugins.provided("table_graph_changes")(since.view, self.view, graph, check)


class ItemReads:
    """A query's reads in one read transaction on the key items that stand for terms
    (dictionary references, inline numbers and dates): what joins compare and look up by,
    terms being decoded only where a value is needed. Items are bytes; equal items are
    the same stored term.

    >>> import tempfile, fstore
    >>> repo = fstore.open(tempfile.mkdtemp())
    >>> with repo.transaction("main", message="m") as tx:
    ...     fstore.add(tx, None, fstore.IRI("urn:a"), fstore.IRI("urn:p"), fstore.IRI("urn:b"))
    >>> source = repo.at("main").query_source()
    >>> with source.reading():
    ...     ids = source.ids()
    ...     positions, rows = ids.scan((None, fstore.Var("s"), fstore.IRI("urn:p"), fstore.Var("o")))
    ...     [sorted(zip(positions, map(ids.decode, row))) for row in rows]
    [[(1, IRI('urn:a')), (3, IRI('urn:b'))]]
    >>> repo.close()
    """

    def __init__(self, reader: Any, args: Callable[[QuadPattern], list]) -> None:
        self.reader = reader  # fstore.core.heads.Reader, pinned to the read transaction
        self._args = args  # a query pattern as the store reads it (QuerySource._args)
        cache, slow = reader.history.decoding(True)
        tx = reader.tx

        def decode(item: bytes) -> Any:
            term = cache.get(item, _ANY)
            return slow(tx, item) if term is _ANY else term

        self.decode: Callable[[bytes], Any] = decode  # the RDF term of an item

    def encode(self, term: Any) -> bytes | None:
        """The item of an RDF term, None when no quad holds it (the dictionary keeps the
        items of the terms it looked up)."""
        return self.reader.item(canonical(term) if type(term) is Literal else term)

    def scan(self, pattern: QuadPattern, within: Any = None) -> tuple[tuple[int, ...], Iterator[list[bytes]]]:
        """The positions (0-based) of each row's items and the rows of the quads matching
        ``pattern`` (as :meth:`QuerySource.match` reads it): the items at those positions."""
        args = prepare_pattern(self._args(pattern))
        check_within(args, within)
        return self.reader.scan_items(args, within)

    def known_count(self, pattern: QuadPattern) -> int | None:
        """The matches of ``pattern`` from the counts the store keeps with its heads (a
        pattern binding at most its graph and predicate; see
        :meth:`fstore.core.heads.Reader.known_count`), or None."""
        return self.reader.known_count(self._args(pattern))

    def predicate_counts(self, graph: Any) -> dict[bytes, int]:
        """The quads of ``graph`` (None: the default graph) by predicate item, from the
        counts the store keeps (:meth:`fstore.core.heads.Reader.predicate_counts`)."""
        return self.reader.predicate_counts(graph)

    def prepare(self, pattern: QuadPattern) -> tuple[tuple[int, ...], Callable[..., Iterator[list[bytes]]]]:
        """:meth:`scan` planned once for a pattern with ``Param()`` items: the positions, and
        a function of the params' items (in pattern order) giving the rows."""
        return self.reader.prepare_items(prepare_pattern(self._args(pattern), params=True))


def _bindings(quads: Iterator[tuple], slots: list[tuple[str, int]]) -> Iterator[Bindings]:
    """``{name: RDF term}`` per quad of RDF terms, for the variables at their positions."""
    if len(slots) == 1:
        ((name, at),) = slots
        for quad in quads:
            yield {name: quad[at]}
    elif len(slots) == 2:
        ((name, at), (other, other_at)) = slots
        for quad in quads:
            yield {name: quad[at], other: quad[other_at]}
    else:
        for quad in quads:
            yield {name: quad[at] for name, at in slots}
