"""Evaluating CHANGES and VERSIONS: the sources a pattern is matched against, and the
bindings each of their solutions gets.

* ``CHANGES FROM a TO b``: two in-memory sources, the quads added from a to b and the quads
  removed (``repo.diff``); the pattern is evaluated over each, its solutions get ``?op``
  ``"+"`` or ``"-"``. All triple patterns of one solution therefore match quads of the same
  kind of change.
* ``VERSIONS``: a solution holds at commit c when it is a solution of the pattern over the
  state at c. Only the quads the pattern can read matter (its **footprint**: the quads
  matching its triple patterns, with constants kept), so the commits of the ancestry are
  grouped by the footprint's state (``repo.versions`` gives each footprint quad's commits);
  the pattern is evaluated once per distinct state and each solution is repeated for each
  commit of the group, with ``?commit`` bound to the commit id. For a basic graph pattern
  this is exactly "the intersection of the commit sets of the solution's quads"; for
  OPTIONAL, MINUS, NOT EXISTS, paths and aggregates it stays exact, where intersecting would
  not.

>>> from query.algebra import BGP, Triple, Var, Graph
>>> from nstore.terms import IRI
>>> footprint(BGP((Triple(Var("s"), IRI("urn:p"), Var("o")),)), (None,))
[(None, Var(name='.s'), IRI('urn:p'), Var(name='.o'))]
>>> footprint(Graph(Var("g"), BGP((Triple(Var("s"), Var("p"), IRI("urn:x")),))), (None,))
[(Var(name='.g'), Var(name='.s'), Var(name='.p'), IRI('urn:x'))]
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from nstore.terms import canonical
from nstore import Var as StoreVar

from .algebra import (
    BGP,
    Changes,
    Exists,
    Graph,
    PathAlt,
    PathInv,
    PathLink,
    PathMod,
    PathNeg,
    PathPattern,
    PathSeq,
    Var,
    Versions,
)
from .memory import IndexedSource
from .source import as_source, table_graph_test
from nstore.terms import IRI, Literal
from .versioning import VersionContext

__all__ = ["footprint", "changes_parts", "versions_parts", "Parts"]

Parts = Callable[[], list]
"""A thunk giving ``[(source, [extra bindings, ...]), ...]``: evaluate the pattern over each
source, and emit each solution once per extra binding."""

_DEFAULT = object()  # the query's default graph while walking
_WILD = "*"  # a position that may hold anything


def _item(value: Any, position: str) -> Any:
    return Var("." + position) if value is _WILD or type(value) is Var else value


def _pattern(graph: Any, s: Any, p: Any, o: Any) -> tuple:
    return (_item(graph, "g"), _item(s, "s"), _item(p, "p"), _item(o, "o"))


def footprint(pattern: Any, default_graphs: tuple) -> list[tuple]:
    """Quad patterns covering every quad whose state can change the pattern's solutions
    (variables renamed apart, so each is a plain scan; duplicates removed)."""
    found: dict = {}

    def add(graph: Any, s: Any, p: Any, o: Any) -> None:
        graphs = default_graphs if graph is _DEFAULT else (graph,)
        for g in graphs:
            found.setdefault(_pattern(g, s, p, o), None)

    def path_iris(path: Any, graph: Any) -> None:
        kind = type(path)
        if kind is PathLink:
            add(graph, _WILD, path.iri, _WILD)
        elif kind is IRI:
            add(graph, _WILD, path, _WILD)
        elif kind is PathInv:
            path_iris(path.path, graph)
        elif kind in (PathSeq, PathAlt):
            for part in path.paths:
                path_iris(part, graph)
        elif kind is PathMod:
            path_iris(path.path, graph)
            if path.mod in ("*", "?"):  # zero-length paths reach every node of the graph
                add(graph, _WILD, _WILD, _WILD)
        else:  # negated property sets (and anything else): every quad of the graph
            add(graph, _WILD, _WILD, _WILD)

    def walk(node: Any, graph: Any) -> None:
        kind = type(node)
        if kind is BGP:
            if not node.triples and graph is not _DEFAULT and type(graph) is Var:
                add(graph, _WILD, _WILD, _WILD)  # GRAPH ?g {} lists the named graphs
            for t in node.triples:
                add(graph, t.s, t.p, t.o)
            return
        if kind is PathPattern:
            path_iris(node.path, graph)
            return
        if kind is Graph:
            walk(node.pattern, node.name)
            return
        if kind is Exists:
            walk(node.pattern, graph)
            return
        if kind is PathNeg:
            add(graph, _WILD, _WILD, _WILD)
            return
        if dataclasses.is_dataclass(node) and not isinstance(node, type):
            for f in dataclasses.fields(node):
                walk(getattr(node, f.name), graph)
        elif isinstance(node, (tuple, list)):
            for item in node:
                walk(item, graph)

    walk(pattern, _DEFAULT)
    return [tuple(item if type(item) is Var else canonical(item) for item in pat) for pat in found]


def _store_pattern(pattern: tuple) -> tuple:
    return tuple(StoreVar(item.name.lstrip(".")) if type(item) is Var else item for item in pattern)


class _Changed(IndexedSource):
    """Changed quads, table graphs' triples among them: those graphs are read because the
    pattern names them, never listed as named graphs (``GRAPH ?g`` does not bind them).
    ``is_table`` tells them apart (the store's source's ``is_table_graph``)."""

    def __init__(self, quads: list, is_table: Callable[[Any], bool]) -> None:
        super().__init__(quads)
        self._is_table = is_table

    def graphs(self) -> list:
        return [g for g in super().graphs() if not self._is_table(g)]

    def match(self, pattern: tuple) -> Any:
        found = super().match(pattern)
        if type(pattern[0]) is not Var:
            return found
        name, is_table = pattern[0].name, self._is_table
        return (b for b in found if not is_table(b[name]))


def changes_parts(versions: VersionContext, node: Changes, default_graphs: tuple = (None,),
                  check: Callable[[], None] | None = None, end: Any = None) -> Parts:
    """The added and removed quads from ``node.start`` to ``node.end``, as two sources; for
    each table graph the pattern names, its Direct-Mapping triples added and removed, as
    the store's source at ``node.end`` (``end``, else asked of the view there) gives them
    (a table read whole calls ``check``, the query's deadline, as it goes)."""

    def parts() -> list:
        added, removed = [], []
        for op, quad in versions.diff(node.start, node.end):
            (added if op == "+" else removed).append(quad)
        after = end if end is not None else as_source(versions.view(node.end))
        is_table = table_graph_test(after)
        tables = {pattern[0] for pattern in footprint(node.pattern, default_graphs) if is_table(pattern[0])}
        if tables:
            before = as_source(versions.view(node.start))
            for graph in sorted(tables, key=str):
                plus, minus = after.table_changes(before, graph, check)
                added += plus
                removed += minus
        name = node.var.name
        return [
            (_Changed(added, is_table), [{name: Literal("+")}]),
            (_Changed(removed, is_table), [{name: Literal("-")}]),
        ]

    return parts


def _key(quad: tuple) -> tuple:
    """A dictionary key that keeps 1, 1.0 and True apart."""
    return tuple((type(v), v) for v in quad)


def versions_parts(versions: VersionContext, node: Versions, default_graphs: tuple) -> Parts:
    """One source per distinct state of the pattern's footprint over the ancestry of
    ``node.ref``, with the commits that share it."""

    def parts() -> list:
        commits = versions.ancestry(node.ref)
        states: dict[str, set] = {c.id: set() for c in commits}
        quads: dict[tuple, tuple] = {}
        for pattern in footprint(node.pattern, default_graphs):
            for quad, holding in versions.versions(node.ref, _store_pattern(pattern)):
                key = _key(quad)
                if key in quads:
                    continue
                quads[key] = quad
                for commit in holding:
                    states[commit.id].add(key)
        groups: dict[frozenset, list] = {}
        for commit in commits:
            groups.setdefault(frozenset(states[commit.id]), []).append(commit.id)
        name = node.var.name
        return [
            (IndexedSource(quads[k] for k in state), [{name: Literal(c)} for c in ids])
            for state, ids in groups.items()
        ]

    return parts
