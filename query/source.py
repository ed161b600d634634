"""The source protocol the query engine reads through, defined here by the engine: a store
gives its own adapter to it (fstore: ``view.query_source()``), as spareval's
``QueryDataset`` trait is defined by the engine and implemented by the store.

:class:`Source` states the contract; :class:`MemorySource` is a small in-memory source for
examples and tests; :func:`as_source` turns a store view or transaction into its source
by asking it (``obj.query_source()``), so the engine imports nothing of the store's
internals.

>>> from query.algebra import Var
>>> src = MemorySource([(None, IRI("http://ex/a"), IRI("http://ex/p"), Literal("x"))])
>>> list(src.match((None, Var("s"), IRI("http://ex/p"), Var("o"))))
[{'s': IRI('http://ex/a'), 'o': Literal('x')}]
>>> src.count((None, Var("s"), Var("p"), Var("o")))
1
"""

from __future__ import annotations

from itertools import islice
from typing import Any, Callable, Iterable, Iterator, Protocol, runtime_checkable

from .algebra import Var
from nstore.terms import IRI, Literal

__all__ = ["Source", "MemorySource", "as_source", "table_graph_test", "distinct_graphs", "Bindings", "QuadPattern"]

Bindings = dict
QuadPattern = tuple


@runtime_checkable
class Source(Protocol):
    """What the query engine reads a dataset through.

    A pattern is a quad ``(g, s, p, o)`` whose items are RDF terms (``IRI``, ``BNode``,
    ``Literal``), query variables (:class:`query.algebra.Var`), ``None`` in the graph
    position (the default graph) or, for ``prepare`` only, ``fstore.Param()``.

    Required:

    * ``match(pattern)`` yields one ``{variable name: RDF term}`` per matching quad (a
      variable in the graph position may bind ``None``: the default graph; a variable
      repeated in the pattern matches the same term in each place);
    * ``count(pattern)`` is the exact number of matches.

    Optional (the engine looks each up, and does without):

    * ``estimate(pattern, cap)``: ``min(count, cap)``, cheaper (a table graph may answer
      a row count above ``cap``: the planner takes it as known rather than capped);
    * ``statistics``: a dict where the planner keeps estimates across queries;
    * ``graphs()``: the names of the non-default graphs ``GRAPH ?g`` ranges over;
    * ``reading()``: a context in which reads share one store transaction (the engine
      runs each query in one);
    * ``accepts_ranges = True`` with ``match(pattern, within)``: ``within`` is a
      ``fstore.NumericRange`` that the filters after the pattern put on its object
      variable, so the source may skip objects outside it (the filters still run on what
      it returns; see :mod:`query.ranges`);
    * ``prepare(pattern)`` for a pattern with ``Param()`` items: a function of their
      values (RDF terms, in order) that yields what ``match`` would (a join's lookups,
      planned once);
    * ``checked(check)``: the same source with ``check`` (a query's deadline, which may
      raise) called inside its own long scans, which may yield nothing for a long time;
    * ``is_table_graph(graph)``: whether ``graph`` names a table graph, one the source
      answers from rows (read when a query names it, never bound by ``GRAPH ?g``, and
      read-only to updates); absent: no graph is one;
    * ``table_changes(since, graph, check)``: the quads of table graph ``graph`` added and
      removed from source ``since`` (an earlier state) to this one, as two lists (what
      ``CHANGES`` reads of a table);
    * ``view``: the store view or transaction the source reads, for the version clauses
      (``AT``, ``CHANGES``, ``VERSIONS``: :class:`query.versioning.VersionContext`).
    """

    def match(self, pattern: QuadPattern) -> Iterator[Bindings]: ...

    def count(self, pattern: QuadPattern) -> int: ...


def _no_table_graphs(graph: Any) -> bool:
    return False


def table_graph_test(source: Any) -> Callable[[Any], bool]:
    """The source's ``is_table_graph``, or, for a source without table graphs, a test that
    says no to every graph.

    >>> table_graph_test(MemorySource([]))(IRI("urn:datae:dataset:towns"))
    False
    """
    return getattr(source, "is_table_graph", _no_table_graphs)


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
    """``obj`` if it already speaks the protocol, else the source a store view or
    transaction gives for itself (``obj.query_source()``: fstore's ``repo.at(ref)``,
    ``repo.transaction(...)``).

    >>> import tempfile, fstore
    >>> repo = fstore.open(tempfile.mkdtemp())
    >>> source = as_source(repo.at("main"))
    >>> as_source(source) is source, source.count((None, Var("s"), Var("p"), Var("o")))
    (True, 0)
    >>> repo.close()
    """
    query_source = getattr(obj, "query_source", None)  # asked first: a view is the usual case
    if query_source is not None:
        return query_source()
    if hasattr(obj, "match") and hasattr(obj, "count"):
        return obj
    raise TypeError(f"not a query source, nor a store view or transaction that gives one: {obj!r}")
