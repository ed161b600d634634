"""Query planning: algebra in, a tree of physical operators out, and EXPLAIN text.

What the planner decides:

* **join order inside each BGP**, greedily: next comes the triple pattern with the lowest
  estimated cost given the variables bound so far, preferring patterns connected to them.
  A pattern's base estimate is its number of matches with only its constants bound
  (``source.estimate`` / ``source.count``, cached per pattern, capped at
  :data:`ESTIMATE_CAP`); each position bound by an earlier pattern divides it.
* **FILTER push-down**: a filter is split into its ``&&`` conjuncts; each conjunct whose
  variables are certainly bound below it (and that has no EXISTS) moves down to the
  earliest point where they are bound: after a BGP step, into one side of a join, into
  the left of an OPTIONAL or MINUS, into every branch of a UNION.
* **join algorithm**: a nested-loop (bind) join that substitutes the left side's bindings
  into the right side's patterns when the right side can use them for index lookups, a
  hash join over the right side's materialised solutions otherwise.
* **GRAPH ?g**: the graph variable is pushed into the quad patterns when that is exact,
  else the named graphs are enumerated.
* **CHANGES / VERSIONS** (datae's version clauses): the pattern inside is planned again for
  each source it is evaluated over (see :mod:`query.temporal`); the plan shown by EXPLAIN
  is planned over the view at the end ref.

Every operator records the variables it certainly binds (``certain``), may bind
(``maybe``) and mentions (``mentioned``); the executor uses them to pass bindings down
without changing SPARQL's bottom-up semantics (``drop`` / ``keep``: the bindings an
operator must not see from outside).

>>> from query.source import MemorySource
>>> from query.parser import parse_query
>>> q = parse_query("SELECT * WHERE { ?s <http://ex/p> ?o FILTER(?o > 1) }")
>>> print(explain_plan(plan_query(q, MemorySource([]))))
Project ?s ?o
  BGP  (est. 0)
    scan ?s <http://ex/p> ?o  (est. 0)
      filter (?o > "1"^^<http://www.w3.org/2001/XMLSchema#integer>)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from fstore import NumericRange

from .algebra import (
    BGP,
    Changes,
    Distinct,
    Exists,
    Extend,
    Filter,
    Graph,
    Group,
    Join,
    LeftJoin,
    Minus,
    Op,
    OrderBy,
    PathPattern,
    Project,
    Query,
    Reduced,
    Service,
    Slice,
    Triple,
    Union,
    Values,
    Var,
    Versions,
    expr_vars,
    pattern_vars,
    term_str,
)
from .errors import UnsupportedFeatureError
from .ranges import object_range
from .expressions import ExprContext, compile_expr
from .source import as_source, table_graph_test
from .temporal import changes_parts, footprint, versions_parts
from .versioning import require

__all__ = [
    "DEFAULT",
    "NAMED",
    "ESTIMATE_CAP",
    "FANOUT_SAMPLE",
    "FANOUT_CAP",
    "PlanNode",
    "BGPPlan",
    "Step",
    "PathPlan",
    "FilterPlan",
    "JoinPlan",
    "LeftJoinPlan",
    "UnionPlan",
    "MinusPlan",
    "GraphPlan",
    "ExtendPlan",
    "ValuesPlan",
    "GroupPlan",
    "OrderPlan",
    "ProjectPlan",
    "DistinctPlan",
    "ReducedPlan",
    "SlicePlan",
    "SourcesPlan",
    "Planner",
    "plan_query",
    "explain_plan",
]

ESTIMATE_CAP = 1_000
"""Estimates read at most this many matches; bigger patterns count as this many times a
factor that shrinks with the number of bound positions."""

FANOUT_SAMPLE = 8
"""Matches of a pattern whose bindings are looked up to measure its matches per binding."""

FANOUT_CAP = 100
"""Each of those lookups counts at most this many matches."""


class _Default:
    """The query's default graph (the store's default graph, or the FROM graphs)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT = _Default()


class _Named:
    """While planning: "some named graph, known only at run time" (GRAPH ?g enumeration)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NAMED"


NAMED = _Named()


# ---------------------------------------------------------------------------- plan nodes


@dataclass(eq=False)
class PlanNode:
    certain: frozenset = field(default=frozenset(), init=False)
    maybe: frozenset = field(default=frozenset(), init=False)
    mentioned: frozenset = field(default=frozenset(), init=False)
    est: float = field(default=1.0, init=False)
    drop: frozenset = field(default=frozenset(), init=False)
    keep: frozenset | None = field(default=None, init=False)


@dataclass(eq=False)
class Step:
    """One triple pattern of a BGP, in execution order, with the filters applied after it."""

    triple: Triple
    est: float
    filters: list = field(default_factory=list)  # (expr, compiled)
    lookup: tuple = ()  # variables of the pattern bound before it runs (index lookup keys)
    scan_est: float = 0.0  # matches of the pattern with only its constants bound (estimated)
    in_est: float = 1.0  # solutions expected to reach this step (estimated)
    object_range: NumericRange | None = None  # what the filters allow the object, for a range scan


@dataclass(eq=False)
class BGPPlan(PlanNode):
    steps: list
    graph: Any


@dataclass(eq=False)
class PathPlan(PlanNode):
    s: Any
    path: Any
    o: Any
    graph: Any


@dataclass(eq=False)
class FilterPlan(PlanNode):
    child: PlanNode
    exprs: list  # (expr, compiled)


@dataclass(eq=False)
class JoinPlan(PlanNode):
    left: PlanNode
    right: PlanNode
    mode: str  # "nested" | "hash"
    keys: tuple


@dataclass(eq=False)
class LeftJoinPlan(PlanNode):
    left: PlanNode
    right: PlanNode
    expr: Any
    compiled: Any
    mode: str
    keys: tuple


@dataclass(eq=False)
class UnionPlan(PlanNode):
    branches: list


@dataclass(eq=False)
class MinusPlan(PlanNode):
    left: PlanNode
    right: PlanNode


@dataclass(eq=False)
class GraphPlan(PlanNode):
    name: Any
    child: PlanNode
    mode: str  # "const" | "pushdown" | "enumerate"


@dataclass(eq=False)
class ExtendPlan(PlanNode):
    child: PlanNode
    bindings: list  # (var name, expr, compiled)


@dataclass(eq=False)
class ValuesPlan(PlanNode):
    vars: tuple
    rows: list


@dataclass(eq=False)
class GroupPlan(PlanNode):
    child: PlanNode
    keys: list  # (expr, compiled, out name | None)
    aggregates: list  # (name, Aggregate, compiled arg | None)


@dataclass(eq=False)
class OrderPlan(PlanNode):
    child: PlanNode
    conditions: list  # (expr, compiled, ascending)
    top_k: int | None = None


@dataclass(eq=False)
class ProjectPlan(PlanNode):
    child: PlanNode
    vars: tuple


@dataclass(eq=False)
class DistinctPlan(PlanNode):
    child: PlanNode


@dataclass(eq=False)
class ReducedPlan(PlanNode):
    child: PlanNode


@dataclass(eq=False)
class SlicePlan(PlanNode):
    child: PlanNode
    offset: int
    limit: int | None


@dataclass(eq=False)
class SourcesPlan(PlanNode):
    """A pattern evaluated over other sources (CHANGES: the added and the removed quads;
    VERSIONS: each distinct state of the pattern's footprint), its solutions extended with
    each part's bindings. ``parts()`` gives ``[(source, [bindings, ...]), ...]``; ``preview``
    is the pattern planned over the view at the end ref (for EXPLAIN)."""

    label: str
    pattern: Any
    parts: Any
    preview: PlanNode
    extra: frozenset


# ---------------------------------------------------------------------------- helpers


def _plain(p: Any) -> bool:
    """A basic graph pattern, or a ``GRAPH`` block holding only one."""
    return type(p) is BGP or (type(p) is Graph and type(p.pattern) is BGP)


def _names(*nodes: Any) -> set[str]:
    return {n.name for n in nodes if type(n) is Var}


FILTER_KEEPS = 1 / 3
"""The share of solutions a filter conjunct is taken to keep (System R's default for a
range): the planner prefers, of two steps as costly, the one after which filters run."""


def _kept(names: frozenset, known: set, pending: list) -> float:
    """The share of the solutions of a step binding ``names`` that the pending filter
    conjuncts it completes keep."""
    if not pending:
        return 1.0
    after = known | names
    completed = sum(1 for item in pending if item.vars <= after and not item.vars <= known)
    return FILTER_KEEPS ** min(completed, 64)  # (1/3)**647 underflows


def conjuncts(expr: Any) -> list:
    """The ``&&`` operands of an expression, flattened."""
    if type(expr) is Op and expr.op == "&&":
        return conjuncts(expr.args[0]) + conjuncts(expr.args[1])
    return [expr]


def _has_exists(expr: Any) -> bool:
    kind = type(expr)
    if kind is Exists:
        return True
    args = getattr(expr, "args", None)
    if args:
        return any(_has_exists(a) for a in args)
    return False


class _Pending:
    """A pushed-down filter conjunct and its variables."""

    __slots__ = ("expr", "vars")

    def __init__(self, expr: Any) -> None:
        self.expr = expr
        self.vars = frozenset(expr_vars(expr))


# ---------------------------------------------------------------------------- planner


class Planner:
    """Builds physical plans for one query against one source.

    ``substitute`` plans a pattern for EXISTS, whose SPARQL semantics substitute the outer
    solution everywhere in the pattern: then no operator hides outer bindings.
    """

    def __init__(self, source: Any, ctx: ExprContext, *, default_graphs: tuple = (None,), versions: Any = None) -> None:
        self.source = source
        self.ctx = ctx
        self.default_graphs = tuple(default_graphs)
        self.versions = versions  # a query.versioning.VersionContext, for CHANGES / VERSIONS
        # Estimates and fan-outs, kept by the source for all the queries on one view when
        # it offers a ``statistics`` dict (fstore's source does), else for this planner.
        self._estimates: dict = getattr(source, "statistics", None)
        if self._estimates is None:
            self._estimates = {}
        self.substitute = False

    # ------------------------------------------------------------------ estimates

    def estimate(self, triple: Triple, graph: Any) -> float:
        """Matches of the triple with only its constants bound (cached), in the active
        graph (the query's default graph(s), a named graph, or any named graph)."""
        if graph is DEFAULT:
            graphs: tuple = self.default_graphs
        elif graph is NAMED or type(graph) is Var:
            graphs = (Var(".eg"),)
        else:
            graphs = (graph,)
        constants = tuple(item if type(item) is not Var else None for item in (triple.s, triple.p, triple.o))
        key = ("estimate", graphs, constants)
        found = self._estimates.get(key)
        if found is None:
            items = tuple(Var(f".e{i}") if item is None else item for i, item in enumerate(constants))
            estimate = getattr(self.source, "estimate", None)
            n = 0
            known = 0  # estimates above the cap: sizes a source knows (a table's row count)
            for g in graphs:
                if estimate is not None:
                    m = estimate((g, *items), ESTIMATE_CAP)
                else:
                    m = min(self.source.count((g, *items)), ESTIMATE_CAP)
                if m > ESTIMATE_CAP:
                    known += m
                else:
                    n += m
            if n >= ESTIMATE_CAP:
                bound_positions = sum(1 for item in constants if item is not None)
                n = ESTIMATE_CAP * (1000.0, 30.0, 3.0, 1.0)[bound_positions]
                if bound_positions > 1 and constants[1] is not None:
                    # At most the matches of its predicate, where the source knows them
                    # (a store's counts kept with its heads).
                    n = min(n, self.estimate(Triple(Var(".s"), constants[1], Var(".o")), graph))
            found = self._estimates[key] = float(n + known)
        return found

    def _cost(self, triple: Triple, graph: Any, bound: set) -> float:
        """Matches of the triple per solution binding ``bound``: its estimate, or when some
        of its variables are bound, the matches per binding measured on a sample."""
        cost = self.estimate(triple, graph)
        lookup = frozenset(v.name for v in (triple.s, triple.p, triple.o) if type(v) is Var and v.name in bound)
        if lookup and cost > 0 and not (type(graph) is Var and graph.name in bound):
            return max(self._fanout(triple, graph, lookup), 0.5)
        for position, factor in ((triple.s, 0.001), (triple.p, 0.1), (triple.o, 0.01)):
            if type(position) is Var and position.name in bound:
                cost *= factor
        if type(graph) is Var and graph.name in bound:
            cost *= 0.1
        return max(cost, 0.5 if cost > 0 else 0.0)

    def _fanout(self, triple: Triple, graph: Any, lookup: frozenset) -> float:
        """The mean number of matches of ``triple`` once the ``lookup`` variables are bound,
        over the bindings of its first :data:`FANOUT_SAMPLE` matches (each count capped at
        :data:`FANOUT_CAP`): what a lookup join step will read per solution. Cached."""
        key = ("fanout", triple, graph, lookup)
        found = self._estimates.get(key)
        if found is not None:
            return found
        if graph is DEFAULT:
            g: Any = self.default_graphs[0] if self.default_graphs else None
        elif graph is NAMED:
            g = Var(".eg")
        else:
            g = graph
        pattern = (g, triple.s, triple.p, triple.o)
        on_ids = getattr(self.source, "fanout", None)
        if on_ids is not None and (graph is not DEFAULT or self.default_graphs):
            measured = on_ids(pattern, lookup, FANOUT_SAMPLE, FANOUT_CAP)
            if measured is not None:
                self._estimates[key] = measured
                return measured
        sample = list(islice(self.source.match(pattern), FANOUT_SAMPLE)) if graph is not DEFAULT or self.default_graphs else []
        estimate = getattr(self.source, "estimate", None)
        total = 0
        for row in sample:
            bound = tuple(_bind(item, row, lookup, i) for i, item in enumerate(pattern))
            total += estimate(bound, FANOUT_CAP) if estimate is not None else min(self.source.count(bound), FANOUT_CAP)
        found = self._estimates[key] = total / len(sample) if sample else 0.0
        return found

    # ------------------------------------------------------------------ entry points

    def plan(self, pattern: Any, bound: frozenset = frozenset(), graph: Any = DEFAULT, *, substitute: bool = False) -> PlanNode:
        self.substitute = substitute
        return self._plan(pattern, frozenset(bound), graph, [])

    def _compile(self, expr: Any, graph: Any) -> Any:
        return compile_expr(expr, self.ctx, graph)

    # ------------------------------------------------------------------ dispatch

    def _plan(self, p: Any, bound: frozenset, graph: Any, pending: list) -> PlanNode:
        kind = type(p)
        if kind is BGP:
            return self._bgp(p, bound, graph, pending)
        if kind is Filter:
            return self._filter(p, bound, graph, pending)
        if kind is Join:
            return self._join(p, bound, graph, pending)
        if kind is LeftJoin:
            return self._left_join(p, bound, graph, pending)
        if kind is Union:
            return self._union(p, bound, graph, pending)
        if kind is Minus:
            return self._minus(p, bound, graph, pending)
        if kind is Graph:
            return self._graph(p, bound, graph, pending)
        if kind is Extend:
            return self._extend(p, bound, graph, pending)
        if kind is Service:
            raise UnsupportedFeatureError("SERVICE", "federated queries")
        if kind in (Changes, Versions):
            return self._wrap(self._versioned(p, bound, graph), pending, graph)
        node = self._plan_other(p, bound, graph)
        return self._wrap(node, pending, graph)

    def _plan_other(self, p: Any, bound: frozenset, graph: Any) -> PlanNode:
        kind = type(p)
        if kind is PathPattern:
            node = PathPlan(p.s, p.path, p.o, graph)
            names = _names(p.s, p.o)
            if type(graph) is Var:
                names.add(graph.name)
            node.certain = node.maybe = node.mentioned = frozenset(names)
            node.est = 100.0
            return node
        if kind is Values:
            names = [v.name for v in p.vars]
            node = ValuesPlan(tuple(names), [tuple(row) for row in p.rows])
            node.maybe = node.mentioned = frozenset(names)
            node.certain = frozenset(n for i, n in enumerate(names) if all(row[i] is not None for row in p.rows))
            node.est = float(len(p.rows))
            return node
        if kind is Group:
            child = self._plan(p.pattern, frozenset(), graph, [])
            keys = [(expr, self._compile(expr, graph), var.name if var is not None else None) for expr, var in p.keys]
            aggregates = [(var.name, agg, self._compile(agg.arg, graph) if agg.arg is not None else None) for var, agg in p.aggregates]
            node = GroupPlan(child, keys, aggregates)
            plain = frozenset(var.name for expr, var in p.keys if var is not None and type(expr) is Var and expr == var)
            out = frozenset(n for _, _, n in keys if n is not None) | frozenset(n for n, _, _ in aggregates)
            node.maybe = node.mentioned = out
            node.certain = plain & child.certain
            # Only keys every input solution binds may filter the input (an unbound key
            # is a group of its own, which an outer binding must not join into).
            node.keep = plain & child.certain
            node.est = max(1.0, child.est / 10) if keys else 1.0
            return node
        if kind is OrderBy:
            child = self._plan(p.pattern, bound, graph, [])
            conditions = [(expr, self._compile(expr, graph), asc) for expr, asc in p.conditions]
            node = OrderPlan(child, conditions)
            return self._inherit(node, child)
        if kind is Project:
            names = tuple(v.name for v in p.vars)
            inner_bound = bound & frozenset(names)
            child = self._plan(p.pattern, inner_bound, graph, [])
            node = ProjectPlan(child, names)
            node.maybe = node.mentioned = frozenset(names) & child.maybe
            node.certain = frozenset(names) & child.certain
            node.keep = frozenset(names)
            node.est = child.est
            return node
        if kind is Distinct:
            child = self._plan(p.pattern, bound & self._certain(p.pattern, graph), graph, [])
            node = DistinctPlan(child)
            self._inherit(node, child)
            node.drop = child.maybe - child.certain
            return node
        if kind is Reduced:
            child = self._plan(p.pattern, bound & self._certain(p.pattern, graph), graph, [])
            node = ReducedPlan(child)
            self._inherit(node, child)
            node.drop = child.maybe - child.certain
            return node
        if kind is Slice:
            child = self._plan(p.pattern, frozenset(), graph, [])
            if p.limit is not None:
                self._set_top_k(child, p.offset + p.limit)
            node = SlicePlan(child, p.offset, p.limit)
            self._inherit(node, child)
            node.keep = frozenset()
            if p.limit is not None:
                node.est = min(child.est, float(p.limit))
            return node
        raise UnsupportedFeatureError(type(p).__name__)

    @staticmethod
    def _inherit(node: PlanNode, child: PlanNode) -> PlanNode:
        node.certain, node.maybe, node.mentioned, node.est = child.certain, child.maybe, child.mentioned, child.est
        return node

    @staticmethod
    def _set_top_k(node: PlanNode, k: int) -> None:
        """LIMIT over ORDER BY (through a projection) keeps only the first k in memory."""
        while type(node) is ProjectPlan:
            node = node.child
        if type(node) is OrderPlan:
            node.top_k = k

    # ------------------------------------------------------------------ filters

    def _wrap(self, node: PlanNode, pending: list, graph: Any) -> PlanNode:
        """Apply pushed-down conjuncts on the (merged) output of ``node``."""
        if not pending:
            return node
        wrapped = FilterPlan(node, [(c.expr, self._compile(c.expr, graph)) for c in pending])
        self._inherit(wrapped, node)
        wrapped.mentioned = node.mentioned.union(*(c.vars for c in pending))
        wrapped.est = node.est / 2
        return wrapped

    def _filter(self, p: Filter, bound: frozenset, graph: Any, pending: list) -> PlanNode:
        child_certain = self._certain(p.pattern, graph)
        push, keep = [], []
        for expr in conjuncts(p.expr):
            item = _Pending(expr)
            if not _has_exists(expr) and item.vars <= child_certain:
                push.append(item)
            else:
                keep.append(item)
        used = frozenset().union(*(c.vars for c in keep))
        drop = frozenset() if self.substitute else used - child_certain
        visible = bound - drop
        inside, rest = self._split_pending(pending, child_certain | visible)
        child = self._plan(p.pattern, visible, graph, inside + push)
        if not keep:
            return self._wrap(child, rest, graph)
        node = FilterPlan(child, [(c.expr, self._compile(c.expr, graph)) for c in keep])
        self._inherit(node, child)
        node.mentioned = child.mentioned | used
        node.drop = drop
        node.est = child.est / 2
        return self._wrap(node, rest, graph)

    # ------------------------------------------------------------------ BGP

    def _bgp(self, p: BGP, bound: frozenset, graph: Any, pending: list) -> PlanNode:
        remaining = list(p.triples)
        known = set(bound)
        if type(graph) is Var and graph.name in bound:
            known.add(graph.name)
        steps: list[Step] = []
        total = 1.0
        names_of = {id(t): frozenset(_names(t.s, t.p, t.o)) for t in remaining}
        graph_name = frozenset(_names(graph))
        costs: dict = {}  # a triple's cost depends on which of its variables are bound

        def cost_of(t: Triple) -> float:
            key = (id(t), (names_of[id(t)] | graph_name) & known)
            found = costs.get(key)
            if found is None:
                found = costs[key] = self._cost(t, graph, known)
            return found

        while remaining:
            connected = [t for t in remaining if names_of[id(t)] & known]
            candidates = connected if connected and known else remaining
            best = min(candidates, key=lambda t: cost_of(t) * _kept(names_of[id(t)], known, pending))
            remaining.remove(best)
            cost = cost_of(best)
            incoming = total if steps else 1.0
            total = total * max(cost, 1.0) if steps else cost
            steps.append(Step(best, cost, lookup=tuple(sorted(names_of[id(best)] & known)),
                              scan_est=self.estimate(best, graph), in_est=incoming))
            known |= names_of[id(best)]
            if type(graph) is Var:
                known.add(graph.name)
        names = set()
        for t in p.triples:
            names |= _names(t.s, t.p, t.o)
        if type(graph) is Var:
            names.add(graph.name)
        node = BGPPlan(steps, graph)
        node.certain = node.maybe = node.mentioned = frozenset(names)
        node.est = total if steps else 1.0
        # Place each pushed conjunct after the first step that binds all its variables.
        leftover = []
        for item in pending:
            available = set(bound)
            placed = False
            if item.vars <= available and not steps:
                leftover.append(item)
                continue
            for step in steps:
                available |= _names(step.triple.s, step.triple.p, step.triple.o)
                if type(graph) is Var:
                    available.add(graph.name)
                if item.vars <= available:
                    step.filters.append((item.expr, self._compile(item.expr, graph)))
                    placed = True
                    break
            if not placed:
                leftover.append(item)
        for step in steps if getattr(self.source, "accepts_ranges", False) else ():
            if step.filters and not (type(step.triple.o) is Var and step.triple.o.name in step.lookup):
                step.object_range = object_range(step.triple, [expr for expr, _ in step.filters])
        # What reaches each step, now that the filters are placed (each conjunct is taken to
        # keep a third of the solutions, System R's default for a range).
        running = 1.0
        for number, step in enumerate(steps):
            step.in_est = running
            running = (running * max(step.est, 1.0) if number else step.est) * FILTER_KEEPS ** min(len(step.filters), 64)
        return self._wrap(node, leftover, graph)

    # ------------------------------------------------------------------ joins

    def _bindable(self, p: Any, bound: frozenset) -> bool:
        """Whether evaluating ``p`` once per left solution beats one materialisation:
        its first access can use a variable the left side binds."""
        kind = type(p)
        if kind is BGP:
            return any(_names(t.s, t.p, t.o) & bound for t in p.triples)
        if kind is PathPattern:
            return bool(_names(p.s, p.o) & bound)
        if kind in (Filter, Extend, Graph):
            inner = p.pattern
            if kind is Graph and type(p.name) is Var and p.name.name in bound:
                return True
            return self._bindable(inner, bound)
        if kind in (Join, LeftJoin, Minus):
            return self._bindable(p.left, bound)
        if kind is Union:
            return self._bindable(p.left, bound) and self._bindable(p.right, bound)
        return False

    def _split_pending(self, pending: list, target: frozenset) -> tuple[list, list]:
        inside = [c for c in pending if c.vars <= target]
        outside = [c for c in pending if not c.vars <= target]
        return inside, outside

    def _join(self, p: Join, bound: frozenset, graph: Any, pending: list) -> PlanNode:
        if self._right_first(p, bound, graph):
            p = Join(p.right, p.left)
        left_certain = self._certain(p.left, graph)
        to_left, rest = self._split_pending(pending, left_certain | bound)
        left = self._plan(p.left, bound, graph, to_left)
        right_bound = bound | left.certain
        nested = self._bindable(p.right, right_bound)
        if nested:
            right_certain = self._certain(p.right, graph)
            to_right, rest = self._split_pending(rest, right_bound | right_certain)
            right = self._plan(p.right, right_bound, graph, to_right)
        else:
            right = self._plan(p.right, frozenset(), graph, [])
        keys = tuple(sorted(left.certain & right.certain))
        node = JoinPlan(left, right, "nested" if nested else "hash", keys)
        node.certain = left.certain | right.certain
        node.maybe = left.maybe | right.maybe
        node.mentioned = left.mentioned | right.mentioned
        node.est = left.est * max(right.est, 1.0) if not keys else max(left.est, right.est)
        return self._wrap(node, rest, graph)

    def _right_first(self, p: Join, bound: frozenset, graph: Any) -> bool:
        """Whether to run a join's right operand first: both are basic graph patterns (or
        ``GRAPH`` blocks of one), which join the same whichever comes first, they share a
        variable, and the right one is expected to give far fewer solutions (e.g. a quad
        pattern joined with a big table's column: the table is then read by key)."""
        if not (_plain(p.left) and _plain(p.right)):
            return False
        if not self._certain(p.left, graph) & self._certain(p.right, graph):
            return False
        left = self._plan(p.left, bound, graph, []).est
        right = self._plan(p.right, bound, graph, []).est
        return right * 4 < left

    def _left_join(self, p: LeftJoin, bound: frozenset, graph: Any, pending: list) -> PlanNode:
        left_certain = self._certain(p.left, graph)
        right_mentioned = self._mentioned(p.right, graph) | (frozenset(expr_vars(p.expr)) if p.expr is not None else frozenset())
        drop = frozenset() if self.substitute else right_mentioned - left_certain
        visible = bound - drop
        to_left, rest = self._split_pending(pending, left_certain | visible)
        left = self._plan(p.left, visible, graph, to_left)
        right_bound = left.certain | visible
        nested = self._bindable(p.right, right_bound)
        right = self._plan(p.right, right_bound if nested else frozenset(), graph, [])
        compiled = self._compile(p.expr, graph) if p.expr is not None else None
        keys = tuple(sorted(left.certain & right.certain))
        node = LeftJoinPlan(left, right, p.expr, compiled, "nested" if nested else "hash", keys)
        node.certain = left.certain
        node.maybe = left.maybe | right.maybe
        node.mentioned = left.mentioned | right_mentioned | right.mentioned
        node.drop = drop
        node.est = left.est * 1.5
        return self._wrap(node, rest, graph)

    def _minus(self, p: Minus, bound: frozenset, graph: Any, pending: list) -> PlanNode:
        left_certain = self._certain(p.left, graph)
        right_mentioned = self._mentioned(p.right, graph)
        drop = frozenset() if self.substitute else right_mentioned - left_certain
        visible = bound - drop
        to_left, rest = self._split_pending(pending, left_certain | visible)
        left = self._plan(p.left, visible, graph, to_left)
        right = self._plan(p.right, left.certain & self._certain(p.right, graph), graph, [])
        node = MinusPlan(left, right)
        node.certain, node.maybe = left.certain, left.maybe
        node.mentioned = left.mentioned | right_mentioned
        node.drop = drop
        node.est = left.est
        return self._wrap(node, rest, graph)

    def _union(self, p: Union, bound: frozenset, graph: Any, pending: list) -> PlanNode:
        branches = []
        stack = [p]
        flat = []
        while stack:
            item = stack.pop()
            if type(item) is Union:
                stack.append(item.right)
                stack.append(item.left)
            else:
                flat.append(item)
        for branch in flat:
            certain = self._certain(branch, graph)
            inside, outside = self._split_pending(pending, certain | bound)
            planned = self._plan(branch, bound, graph, inside)
            branches.append(self._wrap(planned, outside, graph))
        node = UnionPlan(branches)
        node.certain = frozenset.intersection(*(b.certain for b in branches))
        node.maybe = frozenset().union(*(b.maybe for b in branches))
        node.mentioned = frozenset().union(*(b.mentioned for b in branches))
        node.est = sum(b.est for b in branches)
        return node

    def _extend(self, p: Extend, bound: frozenset, graph: Any, pending: list) -> PlanNode:
        # Collapse a chain of BINDs / SELECT expressions into one operator.
        chain = []
        inner: Any = p
        while type(inner) is Extend:
            chain.append((inner.var, inner.expr))
            inner = inner.pattern
        chain.reverse()
        inner_certain = self._certain(inner, graph)
        assigned = frozenset(v.name for v, _ in chain)
        used = frozenset().union(*(expr_vars(e) for _, e in chain))
        drop = assigned | (frozenset() if self.substitute else used - inner_certain)
        visible = bound - drop
        inside, rest = self._split_pending(pending, inner_certain | visible)  # never uses `assigned`
        child = self._plan(inner, visible, graph, inside)
        node = ExtendPlan(child, [(v.name, e, self._compile(e, graph)) for v, e in chain])
        node.certain = child.certain
        node.maybe = child.maybe | assigned
        node.mentioned = child.mentioned | assigned | used
        node.drop = drop
        node.est = child.est
        return self._wrap(node, rest, graph)

    # ------------------------------------------------------------------ CHANGES / VERSIONS

    def _versioned(self, p: Any, bound: frozenset, graph: Any) -> PlanNode:
        clause = "CHANGES" if type(p) is Changes else "VERSIONS"
        versions = require(self.versions, clause)
        # the state the pattern is previewed (planned) over: CHANGES's end, VERSIONS's ref
        source = as_source(versions.view(p.end if type(p) is Changes else p.ref))
        if type(p) is Versions:
            graphs = {quad[0] for quad in footprint(p.pattern, self.default_graphs)}
            is_table = table_graph_test(source)
            tables = sorted(str(g) for g in graphs if is_table(g))
            if tables:  # they would be empty there: say so rather than answer nothing
                raise UnsupportedFeatureError(f"VERSIONS over a table graph ({', '.join(tables)})",
                                              "VERSIONS reads quads; for rows use AT <ref>, CHANGES, or `datae table log`")
        if type(p) is Changes:
            deadline = self.ctx.deadline
            parts = changes_parts(versions, p, self.default_graphs, deadline.check if deadline is not None else None,
                                  source)
            label = f"Changes from {versions.label(p.start)} to {versions.label(p.end)}: ?{p.var.name} = \"+\" over added quads, \"-\" over removed quads"
        else:
            parts = versions_parts(versions, p, self.default_graphs)
            label = f"Versions over the ancestry of {versions.label(p.ref)}: once per distinct state of the quads the pattern reads, ?{p.var.name} = each commit of that state"
        preview_planner = Planner(source, self.ctx, default_graphs=self.default_graphs)
        preview = preview_planner.plan(p.pattern, bound - {p.var.name}, graph)
        node = SourcesPlan(label, p.pattern, parts, preview, frozenset({p.var.name}))
        node.certain = preview.certain | node.extra
        node.maybe = preview.maybe | node.extra
        node.mentioned = preview.mentioned | node.extra
        node.est = preview.est
        return node

    # ------------------------------------------------------------------ GRAPH

    def _graph(self, p: Graph, bound: frozenset, graph: Any, pending: list) -> PlanNode:
        name = p.name
        if type(name) is not Var:
            child = self._plan(p.pattern, bound, name, pending)
            return self._inherit(GraphPlan(name, child, "const"), child)
        g = name.name
        if self._pushable(p.pattern, g):
            child = self._plan(p.pattern, bound, name, pending)
            rest: list = []
            mode = "pushdown"
        else:
            # Evaluated once per named graph (or in the graph ?g is bound to): inside, ?g
            # is a variable like any other, bound only if the pattern itself binds it.
            inner_bound = bound | {g}
            inside, rest = self._split_pending(pending, self._certain(p.pattern, NAMED) | inner_bound)
            child = self._plan(p.pattern, inner_bound, NAMED, inside)
            mode = "enumerate"
        node = GraphPlan(name, child, mode)
        self._inherit(node, child)
        node.certain = child.certain | {g}
        node.maybe = child.maybe | {g}
        node.mentioned = child.mentioned | {g}
        return self._wrap(node, rest, graph)

    def _pushable(self, p: Any, g: str) -> bool:
        """Whether ``GRAPH ?g { p }`` equals ``p`` with ?g as every pattern's graph."""
        kind = type(p)
        if kind is BGP:
            return bool(p.triples)
        if kind is Join:
            return self._pushable(p.left, g) and self._pushable(p.right, g)
        if kind is Union:
            return self._pushable(p.left, g) and self._pushable(p.right, g)
        if kind is Filter:
            return g not in expr_vars(p.expr) and not _has_exists(p.expr) and self._pushable(p.pattern, g)
        if kind is LeftJoin:
            return (p.expr is None or (g not in expr_vars(p.expr) and not _has_exists(p.expr))) and self._pushable(p.left, g) and self._pushable(p.right, g)
        if kind is Extend:
            return g not in expr_vars(p.expr) and not _has_exists(p.expr) and self._pushable(p.pattern, g)
        return False

    # ------------------------------------------------------------------ variable analysis

    def _certain(self, p: Any, graph: Any) -> frozenset:
        """Variables every solution of ``p`` binds (static analysis on the algebra)."""
        kind = type(p)
        extra = frozenset({graph.name}) if type(graph) is Var else frozenset()
        if kind is BGP:
            names = set()
            for t in p.triples:
                names |= _names(t.s, t.p, t.o)
            return frozenset(names) | extra
        if kind is PathPattern:
            return frozenset(_names(p.s, p.o)) | extra
        if kind is Join:
            return self._certain(p.left, graph) | self._certain(p.right, graph)
        if kind in (LeftJoin, Minus):
            return self._certain(p.left, graph)
        if kind is Union:
            return self._certain(p.left, graph) & self._certain(p.right, graph)
        if kind in (Filter, Extend, OrderBy, Distinct, Reduced, Slice):
            return self._certain(p.pattern, graph)
        if kind is Graph:
            inner = self._certain(p.pattern, p.name)
            return inner | (frozenset({p.name.name}) if type(p.name) is Var else frozenset())
        if kind is Values:
            return frozenset(v.name for i, v in enumerate(p.vars) if all(row[i] is not None for row in p.rows))
        if kind is Project:
            return frozenset(v.name for v in p.vars) & self._certain(p.pattern, graph)
        if kind is Group:
            return frozenset(var.name for expr, var in p.keys if var is not None and expr == var) & self._certain(p.pattern, graph)
        if kind in (Changes, Versions):
            return self._certain(p.pattern, graph) | {p.var.name}
        return frozenset()

    def _mentioned(self, p: Any, graph: Any) -> frozenset:
        """Every variable that occurs in ``p`` and may be visible from outside it."""
        names = set(pattern_vars(p))
        stack = [p]
        while stack:
            item = stack.pop()
            kind = type(item)
            if kind in (Project, Group):
                continue
            if kind is Filter:
                names |= expr_vars(item.expr)
            elif kind is LeftJoin and item.expr is not None:
                names |= expr_vars(item.expr)
            elif kind is Extend:
                names |= expr_vars(item.expr)
            for attr in ("pattern", "left", "right"):
                child = getattr(item, attr, None)
                if child is not None:
                    stack.append(child)
            if kind is Minus:
                names |= pattern_vars(item.right)
        if type(graph) is Var:
            names.add(graph.name)
        return frozenset(names)


def plan_query(query: Query, source: Any, ctx: ExprContext | None = None) -> PlanNode:
    """The physical plan of a parsed query's pattern (its FROM graphs as default graph)."""
    default = query.dataset.default if query.dataset.given else (None,)
    planner = Planner(source, ctx or ExprContext(base=query.base), default_graphs=default)
    return planner.plan(query.pattern)


# ---------------------------------------------------------------------------- EXPLAIN


def _est(value: float) -> str:
    if value >= 1e6:
        return f"{value:.1e}"
    return f"{value:.0f}" if value >= 1 or value == 0 else f"{value:.2f}"


def explain_plan(node: PlanNode, indent: int = 0) -> str:
    """The plan as indented text, one operator per line, with estimated cardinalities."""
    lines: list[str] = []
    _explain(node, indent, lines)
    return "\n".join(lines)


def _graph_str(graph: Any) -> str:
    if graph is DEFAULT:
        return ""
    if graph is NAMED:
        return "  [graph: each named graph]"
    return f"  [graph {term_str(graph)}]"


def _explain(node: PlanNode, depth: int, lines: list) -> None:
    pad = "  " * depth
    lines.append(pad + _headline(node))
    if type(node) is BGPPlan:
        if not node.steps:
            lines.append(f"{pad}  unit (one empty solution)")
        for step in node.steps:
            how = f"lookup by {', '.join('?' + v for v in step.lookup)}, est. {_est(step.est)} per binding" if step.lookup else f"est. {_est(step.est)}"
            if step.object_range is not None:
                how += f", range scan of {step.triple.o} in {_interval(step.object_range)}"
            lines.append(f"{pad}  scan {step.triple}  ({how})")
            for expr, _ in step.filters:
                lines.append(f"{pad}    filter {expr}")
    for child in _explained_children(node):
        _explain(child, depth + 1, lines)


def _bind(item: Any, row: dict, lookup: frozenset, position: int) -> Any:
    """A pattern item with a lookup variable replaced by its value in ``row``, and any
    other variable by a fresh one (so that it matches anything)."""
    if type(item) is not Var:
        return item
    if item.name in lookup and item.name in row:
        return row[item.name]
    return Var(f".f{position}")


def _interval(numbers: NumericRange) -> str:
    """``[30, 32)``, ``(5, +inf)``: a range as EXPLAIN shows it."""
    low = "-inf" if numbers.low is None else str(numbers.low)
    high = "+inf" if numbers.high is None else str(numbers.high)
    return f"{'[' if numbers.include_low and numbers.low is not None else '('}{low}, {high}{']' if numbers.include_high and numbers.high is not None else ')'}"


def _explained_children(node: PlanNode) -> list:
    """The sub-plans EXPLAIN shows below a node, in order."""
    kind = type(node)
    if kind in (JoinPlan, LeftJoinPlan, MinusPlan):
        return [node.left, node.right]
    if kind is UnionPlan:
        return list(node.branches)
    if kind is SourcesPlan:
        return [node.preview]
    if kind in (FilterPlan, GraphPlan, ExtendPlan, GroupPlan, OrderPlan, ProjectPlan, DistinctPlan, ReducedPlan, SlicePlan):
        return [node.child]
    return []


def _headline(node: PlanNode) -> str:
    """The line EXPLAIN prints for a node itself."""
    kind = type(node)
    if kind is BGPPlan:
        return f"BGP  (est. {_est(node.est)}){_graph_str(node.graph)}"
    if kind is PathPlan:
        return f"Path {term_str(node.s)} {node.path} {term_str(node.o)}{_graph_str(node.graph)}"
    if kind is FilterPlan:
        return "Filter " + " && ".join(str(e) for e, _ in node.exprs)
    if kind is JoinPlan:
        on = f" on {', '.join('?' + k for k in node.keys)}" if node.keys else ""
        return f"Join ({'nested loop, left bindings substituted' if node.mode == 'nested' else 'hash'}){on}  (est. {_est(node.est)})"
    if kind is LeftJoinPlan:
        cond = f" filter {node.expr}" if node.expr is not None else ""
        return f"Optional ({'nested loop' if node.mode == 'nested' else 'hash'}){cond}"
    if kind is GraphPlan:
        how = {"const": "", "pushdown": " (graph variable pushed into patterns)", "enumerate": " (for each named graph)"}[node.mode]
        return f"Graph {term_str(node.name)}{how}"
    if kind is ExtendPlan:
        return "Bind " + ", ".join(f"?{v} := {e}" for v, e, _ in node.bindings)
    if kind is ValuesPlan:
        return f"Values {' '.join('?' + v for v in node.vars)}  ({len(node.rows)} rows)"
    if kind is GroupPlan:
        keys = ", ".join(str(e) for e, _, _ in node.keys) or "(one group)"
        aggs = ", ".join(f"?{n} := {a}" for n, a, _ in node.aggregates)
        return f"Group by {keys}" + (f"  aggregates {aggs}" if aggs else "")
    if kind is OrderPlan:
        conds = ", ".join(f"{'ASC' if asc else 'DESC'}({e})" for e, _, asc in node.conditions)
        top = f"  (top {node.top_k})" if node.top_k is not None else ""
        return f"Order by {conds}{top}"
    if kind is ProjectPlan:
        return f"Project {' '.join('?' + v for v in node.vars)}"
    if kind is SlicePlan:
        return f"Slice offset {node.offset} limit {node.limit if node.limit is not None else 'none'}"
    if kind is SourcesPlan:
        return node.label
    return {UnionPlan: "Union", MinusPlan: "Minus", DistinctPlan: "Distinct", ReducedPlan: "Reduced"}.get(kind, kind.__name__)
