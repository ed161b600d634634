"""The narrow data-source protocol the query engine reads through, and its fstore binding.

A source answers quad patterns ``(g, s, p, o)`` whose items are RDF terms, query variables
(:class:`query.algebra.Var`) or ``None`` in the graph position (the default graph):

* ``match(pattern)`` yields one ``{variable name: RDF term}`` per matching quad (a variable
  in the graph position may bind ``None``: the default graph);
* ``count(pattern)`` is the exact number of matches;
* optionally ``estimate(pattern, cap)`` (``min(count, cap)``, cheaper), ``graphs()`` (the
  names of the non-default graphs), ``reading()`` (a context in which reads share one
  store transaction: the engine runs each query in one), and ``accepts_ranges = True``
  with ``match(pattern, within)``: ``within`` is a :class:`fstore.NumericRange` that the
  filters after the pattern put on its object variable, so the source may skip objects
  outside it (the filters still run on what it returns; see :mod:`query.ranges`), a
  ``statistics`` dict where the planner keeps estimates across queries, and
  ``prepare(pattern)`` for a pattern with ``fstore.Param()`` items: a function of their
  values that yields what ``match`` would (a join's lookups, planned once).

:class:`FstoreSource` reads an fstore view or transaction through ``fstore.quads``,
``fstore.prepare`` and ``fstore.count``, asking fstore for RDF terms (``terms=True``) and
turning query terms into stored values with ``canonical``.

>>> from query.algebra import Var
>>> src = MemorySource([(None, IRI("http://ex/a"), IRI("http://ex/p"), Literal("x"))])
>>> list(src.match((None, Var("s"), IRI("http://ex/p"), Var("o"))))
[{'s': IRI('http://ex/a'), 'o': Literal('x')}]
>>> src.count((None, Var("s"), Var("p"), Var("o")))
1
"""

from __future__ import annotations

import weakref
from contextlib import contextmanager
from itertools import islice
from typing import Any, Callable, Iterable, Iterator, Protocol, runtime_checkable

from fstore import Param
from fstore.tables import is_dataset_graph
from nstore.terms import canonical, to_rdf

from .algebra import Var
from .tables import TableGraphs
from nstore.terms import BNode, IRI, Literal

__all__ = ["Source", "FstoreSource", "MemorySource", "as_source", "Bindings", "QuadPattern"]

Bindings = dict
QuadPattern = tuple


@runtime_checkable
class Source(Protocol):
    """What the executor needs from a store."""

    def match(self, pattern: QuadPattern) -> Iterator[Bindings]: ...

    def count(self, pattern: QuadPattern) -> int: ...


_TERM_TYPES = (IRI, Literal, BNode)
_STORED_AS_IS = frozenset({IRI, BNode, type(None)})  # query items fstore stores unchanged


_TERM_CACHE: dict = {}


def _to_term(value: Any) -> Any:
    """The RDF term of a stored value (memoised: numbers and strings repeat a lot)."""
    kind = type(value)
    if kind in _TERM_TYPES or value is None:
        return value
    key = (kind, value)  # the type keeps 1, 1.0 and True apart
    term = _TERM_CACHE.get(key)
    if term is None:
        if len(_TERM_CACHE) > 1 << 16:
            _TERM_CACHE.clear()
        term = _TERM_CACHE[key] = to_rdf(value)
    return term


# Estimates per view: a view is a fixed commit, so they stay right for all its queries
# (for a transaction they may lag behind its own writes, which only affects plan quality).
_ESTIMATES: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
_ANY = object()


class FstoreSource:
    """A source over an fstore view or transaction (``repo.at(ref)``, ``repo.transaction``).

    Uses exactly ``fstore.quads(view, g, s, p, o, within=)``, ``fstore.count``,
    ``fstore.estimate``, ``fstore.graphs``, ``fstore.Var`` and the view's ``reading()``.
    """

    def __init__(self, view: Any, check: Callable[[], None] | None = None) -> None:
        import fstore

        self.view = view
        self._reader: Any = None  # the view pinned to one read transaction, see reading()
        self._pin: Any = None
        self._readers = 0
        self._fstore = fstore
        self._var = fstore.Var
        self._vars: dict[str, Any] = {}  # fstore.Var by name
        self._graphs: list | None = None
        # Graphs naming tables are read through the Direct Mapping (query.tables), in the
        # read transaction of the moment; their scans call ``check`` (see checked).
        self._tables = TableGraphs(lambda: self._reader or self.view, check)
        try:
            self.statistics = _ESTIMATES.setdefault(view, {})
        except TypeError:  # not weak-referenceable: cache for this source only
            self.statistics = {}

    def _item(self, item: Any) -> Any:
        if type(item) is Var:
            found = self._vars.get(item.name)
            if found is None:
                found = self._vars[item.name] = self._var(item.name)
            return found
        return canonical(item) if type(item) is Literal else item

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Within the block, read through one LMDB read transaction (``view.reading()``)
        rather than one per pattern; blocks may nest or interleave (several results
        streamed at once), and the transaction ends with the last of them."""
        pin = getattr(self.view, "reading", None)
        if pin is None:
            yield
            return
        if self._readers == 0:
            self._pin = pin()
            self._reader = self._pin.__enter__()
        self._readers += 1
        try:
            yield
        finally:
            self._readers -= 1
            if self._readers == 0:
                pinned, self._pin, self._reader = self._pin, None, None
                pinned.__exit__(None, None, None)

    def checked(self, check: Callable[[], None]) -> "FstoreSource":
        """A source over the same view whose table-graph scans call ``check`` every 1,024
        rows (a query's deadline: a table filters inside its own scan, so rows that do
        not match never reach a check outside). A new source, so that this one's later
        queries do not inherit the deadline; it shares the view's estimates."""
        return FstoreSource(self.view, check)

    accepts_ranges = True  # match() takes a NumericRange of the object (see query.ranges)

    def match(self, pattern: QuadPattern, within: Any = None) -> Iterator[Bindings]:
        if is_dataset_graph(pattern[0]):
            return self._tables.match(pattern)
        item = self._item
        args = [i if type(i) in _STORED_AS_IS else item(i) for i in pattern]
        slots = list({i.name: at for at, i in enumerate(pattern) if type(i) is Var}.items())
        return _bindings(self._fstore.quads(self._reader or self.view, *args, within=within, terms=True), slots)

    def prepare(self, pattern: QuadPattern) -> Callable[..., Iterator[Bindings]]:
        """``match`` planned once for a pattern with ``Param()`` items: the function returned
        takes their values (RDF terms, in pattern order) and yields the bindings of the
        pattern's variables, as ``match`` would with those values in place."""
        if is_dataset_graph(pattern[0]):
            return self._tables.prepare(pattern)
        item = self._item
        args = [i if type(i) in _STORED_AS_IS or type(i) is Param else item(i) for i in pattern]
        slots = list({i.name: at for at, i in enumerate(pattern) if type(i) is Var}.items())
        read = self._fstore.prepare(self._reader or self.view, *args, terms=True)

        def run(*values: Any) -> Iterator[Bindings]:
            return _bindings(read(*[v if type(v) in _STORED_AS_IS else canonical(v) for v in values]), slots)

        return run

    def count(self, pattern: QuadPattern) -> int:
        if is_dataset_graph(pattern[0]):
            return self._tables.count(pattern)
        return self._fstore.count(self._reader or self.view, *[self._item(i) for i in pattern])

    def estimate(self, pattern: QuadPattern, cap: int) -> int:
        """``min(count, cap)``, reading at most ``cap`` matches (cached per view)."""
        key = (tuple(_ANY if type(i) is Var else i for i in pattern), cap)
        found = self.statistics.get(key)
        if found is None and is_dataset_graph(pattern[0]):
            found = self.statistics[key] = self._tables.estimate(pattern, cap)  # may exceed cap: a row count
        if found is None:
            args = [self._item(i) for i in pattern]
            found = self.statistics[key] = self._fstore.estimate(self._reader or self.view, *args, cap)
        return found

    def graphs(self) -> list:
        if self._graphs is None:
            names = [_to_term(g) for g in self._fstore.graphs(self._reader or self.view)]
            self._graphs = [g for g in names if g is not None]
        return self._graphs


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


def distinct_graphs(source: Any) -> list:
    """The distinct non-default graph names of a source, by one scan of its quads."""
    seen: dict = {}
    for binding in source.match((Var("g"), Var("s"), Var("p"), Var("o"))):
        g = binding["g"]
        if g is not None:
            seen[g] = None
    return list(seen)


class MemorySource:
    """A small in-memory source (a list of quads of RDF terms; graph None is the default
    graph), for documentation examples and unit tests."""

    def __init__(self, quads: Iterable[tuple]) -> None:
        self.quads = list(dict.fromkeys(tuple(q) for q in quads))

    def match(self, pattern: QuadPattern) -> Iterator[Bindings]:
        for quad in self.quads:
            binding: dict = {}
            for item, value in zip(pattern, quad):
                if type(item) is Var:
                    bound = binding.get(item.name, binding)
                    if bound is binding:
                        binding[item.name] = value
                    elif bound != value:
                        break
                elif item != value:
                    break
            else:
                yield binding

    def count(self, pattern: QuadPattern) -> int:
        return sum(1 for _ in self.match(pattern))

    def estimate(self, pattern: QuadPattern, cap: int) -> int:
        return sum(1 for _ in islice(self.match(pattern), cap))


def as_source(obj: Any) -> Any:
    """``obj`` if it already speaks the protocol, else an :class:`FstoreSource` over it."""
    if hasattr(obj, "match") and hasattr(obj, "count"):
        return obj
    return FstoreSource(obj)
