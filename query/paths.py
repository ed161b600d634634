"""Property path evaluation (SPARQL 1.1, section 18.4 and 9).

:func:`eval_path` yields the solutions of ``s path o`` in one graph. Sequences, alternatives
and inverses keep duplicates (they are joins and unions); a negated property set is a set
of node pairs, and so are ``path?``, ``path*`` and ``path+``, computed by a breadth-first
search that visits every node at most once per start node, so cycles terminate. With both
ends free, ``path*`` starts from every node of the graph (zero-length paths), ``path+`` from
every node with an outgoing first step. With both ends free, the sets of pairs are held
rows of the query (:meth:`query.executor.Executor.held_set`: ``max_held_rows``, the memory
budget): ``(a/b)?`` can hold the square of the graph's nodes.

>>> from query.algebra import PathMod, PathLink, Var
>>> from query.source import MemorySource
>>> from query.executor import Executor
>>> ex_p = IRI("http://ex/p")
>>> a, b = IRI("http://ex/a"), IRI("http://ex/b")
>>> ex = Executor(MemorySource([(None, a, ex_p, b), (None, b, ex_p, a)]))
>>> sorted(x["o"].value for x in eval_path(ex, a, PathMod(PathLink(ex_p), "+"), Var("o"), {}, DEFAULT))
['http://ex/a', 'http://ex/b']
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterable, Iterator

from fstore import Param

from .algebra import PathAlt, PathInv, PathLink, PathMod, PathNeg, PathSeq, Var
from .limits import value_size
from .planner import DEFAULT
from nstore.terms import IRI

__all__ = ["eval_path", "pairs", "pair_size", "HELD"]

_S, _P, _O = Var(".ps"), Var(".pp"), Var(".po")
_PARAM = Param()  # the bound end of a one-link lookup (see Executor.prepared)

HELD = "a property path"
"""The operator named when the pairs a path keeps (``?``, a negated set) are too many."""


def pair_size(pair: tuple) -> int:
    """The bytes a held ``(subject, object)`` pair counts (:func:`query.limits.value_size`).

    >>> pair_size((IRI("urn:a"), IRI("urn:b")))
    74
    """
    return value_size(pair[0]) + value_size(pair[1])


def eval_path(ex: Any, s: Any, path: Any, o: Any, hint: dict, graph: Any) -> Iterator[dict]:
    """Solutions of the path pattern, merged with ``hint``; ``graph`` is the active graph
    (DEFAULT, a graph name, or a Var, in which case every named graph is tried)."""
    if type(graph) is Var:
        value = hint.get(graph.name)
        if value is None:
            for name in ex.named_graph_list():
                yield from _eval(ex, s, path, o, {**hint, graph.name: name}, name)
            return
        graph = value
    yield from _eval(ex, s, path, o, hint, graph)


def _eval(ex: Any, s: Any, path: Any, o: Any, hint: dict, graph: Any) -> Iterator[dict]:
    s_name = s.name if type(s) is Var else None
    o_name = o.name if type(o) is Var else None
    s_value = hint.get(s_name) if s_name else s
    o_value = hint.get(o_name) if o_name else o
    if _outside_graph(ex, path, graph, s_value if s_name else None, o_value if o_name else None):
        return
    same = s_name is not None and s_name == o_name
    for a, b in pairs(ex, path, graph, s_value, o_value):
        if same and a != b:
            continue
        if s_value is not None and o_value is not None:
            yield hint
            continue
        new = dict(hint)
        if s_name and s_value is None:
            new[s_name] = a
        if o_name and o_value is None:
            new[o_name] = b
        yield new


def _outside_graph(ex: Any, path: Any, graph: Any, *bound: Any) -> bool:
    """Whether a variable end bound by an earlier pattern (``bound``: its value, or None)
    is no node of the graph, for a path that can be of length zero. A constant end always
    matches itself through a zero-length path, but a variable ranges over the graph's
    nodes only (18.4): a value carried in from a join must not match as if it were a
    constant. Any longer path needs the node in the graph anyway."""
    if not _nullable(path):
        return False
    return any(v is not None and not _in_graph(ex, graph, v) for v in bound)


@functools.lru_cache(maxsize=1024)  # asked once per incoming solution: paths are frozen, and few
def _nullable(path: Any) -> bool:
    """Whether ``path`` matches zero-length paths."""
    kind = type(path)
    if kind is PathMod:
        return path.mod in ("*", "?") or _nullable(path.path)
    if kind is PathInv:
        return _nullable(path.path)
    if kind is PathSeq:
        return all(_nullable(p) for p in path.paths)
    if kind is PathAlt:
        return any(_nullable(p) for p in path.paths)
    return False


def _in_graph(ex: Any, graph: Any, node: Any) -> bool:
    """Whether ``node`` is a subject or an object in the active graph."""
    for pattern in ((node, _P, _O), (_S, _P, node)):
        for _ in ex.match(graph, *pattern):
            return True
    return False


def pairs(ex: Any, path: Any, graph: Any, s: Any, o: Any) -> Iterator[tuple]:
    """``(subject, object)`` pairs connected by ``path``; ``s`` / ``o`` None means free."""
    kind = type(path)
    if kind is PathLink or kind is IRI:
        iri = path.iri if kind is PathLink else path
        if (s is None) != (o is None):  # one end bound: a lookup, planned once per query
            lookup = ex.prepared(graph, _S if s is None else _PARAM, iri, _O if o is None else _PARAM)
            if lookup is not None:
                if s is not None:
                    for b in lookup(s):
                        yield (s, b[".po"])
                else:
                    for b in lookup(o):
                        yield (b[".ps"], o)
                return
        for b in ex.match(graph, s if s is not None else _S, iri, o if o is not None else _O):
            yield (s if s is not None else b[".ps"], o if o is not None else b[".po"])
        return
    if kind is PathInv:
        for b, a in pairs(ex, path.path, graph, o, s):
            yield (a, b)
        return
    if kind is PathSeq:
        yield from _sequence(ex, list(path.paths), graph, s, o)
        return
    if kind is PathAlt:
        for part in path.paths:
            yield from pairs(ex, part, graph, s, o)
        return
    if kind is PathNeg:
        yield from _negated(ex, path, graph, s, o)
        return
    if kind is PathMod:
        yield from _closure(ex, path, graph, s, o)
        return
    raise TypeError(f"not a property path: {path!r}")


def _sequence(ex: Any, parts: list, graph: Any, s: Any, o: Any) -> Iterator[tuple]:
    if len(parts) == 1:
        yield from pairs(ex, parts[0], graph, s, o)
        return
    if s is None and o is not None:
        for middle, b in pairs(ex, parts[-1], graph, None, o):
            for a, _ in _sequence(ex, parts[:-1], graph, None, middle):
                yield (a, b)
        return
    for a, middle in pairs(ex, parts[0], graph, s, None):
        for _, b in _sequence(ex, parts[1:], graph, middle, o):
            yield (a, b)


def _negated(ex: Any, path: PathNeg, graph: Any, s: Any, o: Any) -> Iterator[tuple]:
    """A negated property set: the *set* of node pairs linked by a predicate outside it
    (SPARQL 1.1, 18.5: two predicates linking the same pair give one solution); ``!(a|^b)``
    is the union of its forward and inverse sets."""
    forward = set(path.iris)
    inverse = set(path.inverse)
    if forward or not inverse:
        found = ((s if s is not None else b[".ps"], o if o is not None else b[".po"])
                 for b in ex.match(graph, s if s is not None else _S, _P, o if o is not None else _O)
                 if b[".pp"] not in forward)
        yield from _distinct(ex, found, s, o)
    if inverse:
        found = ((s if s is not None else b[".po"], o if o is not None else b[".ps"])
                 for b in ex.match(graph, o if o is not None else _S, _P, s if s is not None else _O)
                 if b[".pp"] not in inverse)
        yield from _distinct(ex, found, s, o)


def _distinct(ex: Any, found: Iterable[tuple], s: Any, o: Any) -> Iterator[tuple]:
    """The distinct pairs of ``found``. With both ends free they are held rows of the query
    (their number can grow with the square of the graph's nodes); with one end bound they
    are at most the graph's nodes, like the sets ``*`` and ``+`` keep, and are not counted
    (this runs once per incoming solution)."""
    if s is None and o is None:
        return ex.held_set(found, HELD, pair_size)
    return iter(dict.fromkeys(found))


def _zero_or_one(ex: Any, inner: Any, graph: Any, s: Any, o: Any) -> Iterator[tuple]:
    """The pairs of ``inner?``, repeated ones included: the zero-length ones (with both
    ends free, every node of the graph to itself), then ``inner``'s."""
    if s is not None:
        if o is None or o == s:
            yield (s, s)
    elif o is not None:
        yield (o, o)
    else:
        for node in ex.graph_nodes(graph):
            yield (node, node)
    yield from pairs(ex, inner, graph, s, o)


def _reach(step: Callable[[Any], Iterable], start: Any, include_start: bool) -> list:
    """Nodes reachable from ``start`` by repeated ``step`` (each visited once)."""
    seen = {start} if include_start else set()
    found = [start] if include_start else []
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in step(node):
                if nxt not in seen:
                    seen.add(nxt)
                    found.append(nxt)
                    following.append(nxt)
        frontier = following
    return found


def _reach_on_ids(ex: Any, inner: Any, graph: Any, start: Any, zero: bool, forward: bool) -> list | None:
    """:func:`_reach` over one predicate (``p`` or ``^p``) on the store's ids (see
    :mod:`query.id_bgp`): each step a lookup by the item the one before gave, the nodes
    decoded once at the end; None if the path or the source does not allow it."""
    inverse = type(inner) is PathInv
    link = inner.path if inverse else inner
    if type(link) not in (PathLink, IRI):
        return None
    ids = ex.ids(graph)
    if ids is None:
        return None
    item = ids.encode(start)
    if item is None:  # no quad holds the start: only the zero-length path
        return [start] if zero else []
    g = ex.default_graphs[0] if graph is DEFAULT else graph
    iri = link.iri if type(link) is PathLink else link
    ahead = forward != inverse  # from subjects to objects
    positions, run = ex.prepared_on_ids(ids, (g, _PARAM, iri, _O) if ahead else (g, _S, iri, _PARAM))
    at = positions.index(3 if ahead else 1)
    reached = _reach(lambda node: [row[at] for row in run((node,))], item, zero)
    decode = ids.decode
    return [start if node == item else decode(node) for node in reached]


def _closure(ex: Any, path: PathMod, graph: Any, s: Any, o: Any) -> Iterator[tuple]:
    inner = path.path
    mod = path.mod
    zero = mod in ("*", "?")

    def forward(node: Any) -> Iterator:
        return (b for _, b in pairs(ex, inner, graph, node, None))

    def backward(node: Any) -> Iterator:
        return (a for a, _ in pairs(ex, inner, graph, None, node))

    if mod == "?":
        yield from _distinct(ex, _zero_or_one(ex, inner, graph, s, o), s, o)
        return
    if s is not None:
        reached = _reach_on_ids(ex, inner, graph, s, zero, True)
        for node in reached if reached is not None else _reach(forward, s, zero):
            if o is None or node == o:
                yield (s, node)
        return
    if o is not None:
        reached = _reach_on_ids(ex, inner, graph, o, zero, False)
        for node in reached if reached is not None else _reach(backward, o, zero):
            yield (node, o)
        return
    if zero:
        starts = ex.graph_nodes(graph)
    else:
        starts = list(dict.fromkeys(a for a, _ in pairs(ex, inner, graph, None, None)))
    for start in starts:
        for node in _reach(forward, start, zero):
            yield (start, node)
