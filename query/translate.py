"""From SPARQL syntax to the SPARQL algebra (W3C SPARQL 1.1, section 18.2).

The parser builds the syntax classes defined here (a group graph pattern is a list of
elements in query order); :func:`translate_group` and :func:`translate_select` turn them into
algebra, following the specification: filters of a group apply to the whole group,
``OPTIONAL { P FILTER(F) }`` becomes ``LeftJoin(G, P, F)``, property paths that are plain
triples (``/``, ``^`` over IRIs) become triple patterns, aggregates become a ``Group``.

>>> from query.algebra import Var, Triple, IRI
>>> t = TriplesSyntax([Triple(Var("s"), IRI("http://ex/p"), Var("o"))])
>>> print(translate_group(GroupSyntax([t, FilterSyntax(Var("o"))])))
Filter(expr=Var(name='o'), pattern=BGP(triples=(Triple(s=Var(name='s'), p=IRI('http://ex/p'), o=Var(name='o')),)))
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from itertools import count
from typing import Any, Callable, Iterator

from .algebra import (
    BGP,
    Aggregate,
    Call,
    Distinct,
    Extend,
    Filter,
    FunctionCall,
    Graph,
    Group,
    Join,
    LeftJoin,
    Minus,
    Op,
    OrderBy,
    PathInv,
    PathLink,
    PathPattern,
    PathSeq,
    Project,
    Reduced,
    Service,
    Slice,
    Triple,
    Union,
    Values,
    Var,
    is_hidden,
    ordered_vars,
    pattern_vars,
)
from .errors import QuerySyntaxError
from nstore.terms import IRI

__all__ = [
    "path_vars_numbered",
    "GroupSyntax",
    "TriplesSyntax",
    "OptionalSyntax",
    "MinusSyntax",
    "GraphSyntax",
    "ServiceSyntax",
    "FilterSyntax",
    "BindSyntax",
    "ValuesSyntax",
    "UnionSyntax",
    "SubSelectSyntax",
    "SelectSyntax",
    "translate_group",
    "translate_select",
    "translate_path",
    "join",
    "EMPTY",
]

EMPTY = BGP(())


@dataclass
class GroupSyntax:
    elements: list
    blocks: list = field(default_factory=list)  # blank-node labels of each BGP inside


@dataclass
class TriplesSyntax:
    """Triple patterns and path patterns of one triples block (paths not yet translated:
    items are ``Triple`` whose predicate may be a path object)."""

    triples: list


@dataclass
class OptionalSyntax:
    group: GroupSyntax


@dataclass
class MinusSyntax:
    group: GroupSyntax


@dataclass
class GraphSyntax:
    name: Any
    group: GroupSyntax


@dataclass
class ServiceSyntax:
    name: Any
    group: GroupSyntax
    silent: bool


@dataclass
class FilterSyntax:
    expr: Any


@dataclass
class BindSyntax:
    expr: Any
    var: Var


@dataclass
class ValuesSyntax:
    values: Values


@dataclass
class UnionSyntax:
    groups: list


@dataclass
class SubSelectSyntax:
    pattern: Any


@dataclass
class SelectSyntax:
    """A SELECT (or the WHERE part of ASK/CONSTRUCT/DESCRIBE, with ``projection`` "*")."""

    where: GroupSyntax
    projection: Any = "*"  # "*" or a list of (Var, expr | None)
    modifier: str | None = None  # "DISTINCT" | "REDUCED"
    group_by: list = field(default_factory=list)  # (expr, Var | None)
    having: list = field(default_factory=list)
    order_by: list = field(default_factory=list)  # (expr, ascending)
    limit: int | None = None
    offset: int = 0
    values: Values | None = None


# ---------------------------------------------------------------------------- groups


def join(left: Any, right: Any) -> Any:
    """``Join(left, right)`` with the spec's simplifications: the empty BGP is the unit and
    two adjacent BGPs merge into one (so the planner may order all their triples)."""
    if left == EMPTY:
        return right
    if right == EMPTY:
        return left
    if type(left) is BGP and type(right) is BGP:
        return BGP(left.triples + right.triples)
    if type(left) is Join and type(left.right) is BGP and type(right) is BGP:
        return Join(left.left, BGP(left.right.triples + right.triples))
    return Join(left, right)


def balanced(items: list, combine: Callable[[Any, Any], Any]) -> Any:
    """``items`` combined pairwise, left to right, into a tree of depth log2(n) rather than
    a left-deep chain of depth n (which the recursive passes over the algebra could not
    walk for thousands of items); for an associative ``combine`` they mean the same.

    >>> balanced(["a", "b", "c", "d", "e"], lambda x, y: f"({x} {y})")
    '(((a b) (c d)) e)'
    """
    while len(items) > 1:
        items = [combine(items[i], items[i + 1]) if i + 1 < len(items) else items[i] for i in range(0, len(items), 2)]
    return items[0]


def conjunction(exprs: list) -> Any:
    """The ``&&`` of a group's FILTERs (a balanced tree: see :func:`balanced`)."""
    return balanced(exprs, lambda a, b: Op("&&", (a, b)))


def translate_group(group: GroupSyntax) -> Any:
    """The algebra of a group graph pattern ``{ ... }``."""
    filters: list = []
    g: Any = EMPTY
    for element in group.elements:
        kind = type(element)
        if kind is TriplesSyntax:
            g = join(g, translate_triples(element.triples))
        elif kind is OptionalSyntax:
            inner = translate_group(element.group)
            direct_filter = any(type(e) is FilterSyntax for e in element.group.elements)
            if type(inner) is Filter and direct_filter:
                g = LeftJoin(g, inner.pattern, inner.expr)
            else:
                g = LeftJoin(g, inner, None)
        elif kind is MinusSyntax:
            g = Minus(g, translate_group(element.group))
        elif kind is BindSyntax:
            if element.var.name in pattern_vars(g):
                raise QuerySyntaxError(f"BIND assigns {element.var}, which is already in scope at that point of the group")
            g = Extend(g, element.var, element.expr)
        elif kind is FilterSyntax:
            filters.append(element.expr)
        elif kind is GraphSyntax:
            g = join(g, Graph(element.name, translate_group(element.group)))
        elif kind is ServiceSyntax:
            g = join(g, Service(element.name, translate_group(element.group), element.silent))
        elif kind is UnionSyntax:
            # UNION is associative: a balanced tree keeps the order of the alternatives
            g = join(g, balanced([translate_group(grp) for grp in element.groups], Union))
        elif kind is ValuesSyntax:
            g = join(g, element.values)
        elif kind is SubSelectSyntax:
            g = join(g, element.pattern)
        else:  # pragma: no cover - the parser builds only the kinds above
            raise TypeError(f"unknown group element {element!r}")
    if filters:
        g = Filter(conjunction(filters), g)
    return g


# ---------------------------------------------------------------------------- triples and paths


_PATH_VARS: ContextVar[Iterator[int]] = ContextVar("path_vars", default=count(1))


@contextmanager
def path_vars_numbered() -> Iterator[None]:
    """Within the block, the hidden variables of path sequences are numbered from 1
    (``.p1``, ``.p2``...): a parse numbers its own, so the same text parses to the same
    query (what :mod:`query.shapes` checks a shape against)."""
    token = _PATH_VARS.set(count(1))
    try:
        yield
    finally:
        _PATH_VARS.reset(token)


def _path_var() -> Var:
    return Var(f".p{next(_PATH_VARS.get())}")


def translate_triples(items: list) -> Any:
    """Triples whose predicate may be a path: plain triples go to one BGP, other paths to
    ``PathPattern`` joined after it (they profit from its bindings)."""
    triples: list = []
    paths: list = []
    for item in items:
        for part in translate_path(item.s, item.p, item.o):
            (triples if type(part) is Triple else paths).append(part)
    result: Any = BGP(tuple(triples))
    for path in paths:
        result = join(result, path) if result != EMPTY else path
    return result


def translate_path(s: Any, path: Any, o: Any) -> list:
    """Triples and path patterns equivalent to ``s path o`` (SPARQL 1.1, 18.2.2.4)."""
    kind = type(path)
    if kind in (IRI, Var):
        return [Triple(s, path, o)]
    if kind is PathLink:
        return [Triple(s, path.iri, o)]
    if kind is PathInv:
        inner = path.path
        if type(inner) in (IRI, PathLink):
            return [Triple(o, inner.iri if type(inner) is PathLink else inner, s)]
        if type(inner) is PathInv:
            return translate_path(s, inner.path, o)
        if type(inner) is PathSeq:
            reversed_seq = PathSeq(tuple(PathInv(p) for p in reversed(inner.paths)))
            return translate_path(s, reversed_seq, o)
        return [PathPattern(s, path, o)]
    if kind is PathSeq:
        parts: list = []
        current = s
        for i, step in enumerate(path.paths):
            nxt = o if i == len(path.paths) - 1 else _path_var()
            parts.extend(translate_path(current, step, nxt))
            current = nxt
        return parts
    return [PathPattern(s, path, o)]


# ---------------------------------------------------------------------------- SELECT


def _contains_aggregate(expr: Any) -> bool:
    kind = type(expr)
    if kind is Aggregate:
        return True
    if kind in (Op, Call, FunctionCall):
        return any(_contains_aggregate(a) for a in expr.args)
    return False


def _replace_aggregates(expr: Any, aggregates: dict) -> Any:
    """``expr`` with each aggregate replaced by the hidden variable that will hold it."""
    kind = type(expr)
    if kind is Aggregate:
        if _contains_aggregate(expr.arg):
            raise QuerySyntaxError(f"aggregates cannot be nested: {expr}")
        var = aggregates.get(expr)
        if var is None:
            var = aggregates[expr] = Var(f".agg{len(aggregates)}")
        return var
    if kind in (Op, Call):
        return replace(expr, args=tuple(_replace_aggregates(a, aggregates) for a in expr.args))
    if kind is FunctionCall:
        return replace(expr, args=tuple(_replace_aggregates(a, aggregates) for a in expr.args))
    return expr


def _free_vars(expr: Any) -> set[str]:
    """Variables used outside aggregates and EXISTS (those that must be group keys)."""
    kind = type(expr)
    if kind is Var:
        return {expr.name}
    if kind in (Op, Call, FunctionCall):
        found: set[str] = set()
        for a in expr.args:
            found |= _free_vars(a)
        return found
    return set()


def translate_select(sel: SelectSyntax) -> tuple[Any, tuple]:
    """The algebra of a SELECT (solution modifiers included) and its projected variables."""
    pattern = translate_group(sel.where)
    return translate_modifiers(pattern, sel)


def translate_modifiers(pattern: Any, sel: SelectSyntax) -> tuple[Any, tuple]:
    """Wrap the WHERE pattern in grouping, HAVING, VALUES, projection expressions,
    ORDER BY, projection, DISTINCT/REDUCED and OFFSET/LIMIT (SPARQL 1.1, 18.2.4-5)."""
    projection = sel.projection
    select_exprs = [] if projection == "*" else [(v, e) for v, e in projection if e is not None]
    uses_aggregates = (
        bool(sel.group_by)
        or bool(sel.having)
        or any(_contains_aggregate(e) for _, e in select_exprs)
        or any(_contains_aggregate(e) for e, _ in sel.order_by)
    )
    having = list(sel.having)
    order_by = list(sel.order_by)
    if uses_aggregates:
        if projection == "*":
            raise QuerySyntaxError("SELECT * cannot be used with GROUP BY or aggregates")
        aggregates: dict = {}
        keys = []
        key_names: set[str] = set()
        for expr, var in sel.group_by:
            if _contains_aggregate(expr):
                raise QuerySyntaxError(f"GROUP BY cannot use an aggregate: {expr}")
            if var is None and type(expr) is Var:
                var = expr
            keys.append((expr, var))
            if var is not None:
                key_names.add(var.name)
        select_exprs = [(v, _replace_aggregates(e, aggregates)) for v, e in select_exprs]
        having = [_replace_aggregates(e, aggregates) for e in having]
        order_by = [(_replace_aggregates(e, aggregates), asc) for e, asc in order_by]
        # Every variable used outside an aggregate must be a group key (or an earlier alias).
        visible = set(key_names)
        for var, expr in projection:
            if expr is None:
                if var.name not in visible:
                    raise QuerySyntaxError(f"{var} is projected but is neither grouped (GROUP BY) nor aggregated")
            else:
                replaced = _replace_aggregates(expr, aggregates)
                loose = {n for n in _free_vars(replaced) if not n.startswith(".agg")} - visible
                if loose:
                    raise QuerySyntaxError(f"?{sorted(loose)[0]} is used in ({expr} AS {var}) but is neither grouped nor aggregated")
                visible.add(var.name)
        pattern = Group(pattern, tuple(keys), tuple((v, a) for a, v in aggregates.items()))
        if having:
            pattern = Filter(conjunction(having), pattern)
    if sel.values is not None:
        pattern = join(pattern, sel.values)
    in_scope = set(pattern_vars(pattern))
    for var, expr in select_exprs:
        if var.name in in_scope:
            raise QuerySyntaxError(f"{var} is assigned with AS but is already in scope")
        pattern = Extend(pattern, var, expr)
        in_scope.add(var.name)
    if order_by:
        pattern = OrderBy(pattern, tuple(order_by))
    if projection == "*":
        names = [n for n in ordered_vars(pattern) if not is_hidden(n)]
        vars_ = tuple(Var(n) for n in names)
    else:
        seen: list = []
        for var, _ in projection:
            if var in seen:
                raise QuerySyntaxError(f"{var} is projected twice")
            seen.append(var)
        vars_ = tuple(seen)
    pattern = Project(pattern, vars_)
    if sel.modifier == "DISTINCT":
        pattern = Distinct(pattern)
    elif sel.modifier == "REDUCED":
        pattern = Reduced(pattern)
    if sel.offset or sel.limit is not None:
        pattern = Slice(pattern, sel.offset, sel.limit)
    return pattern, vars_

