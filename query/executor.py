"""Streaming evaluation of physical plans (see :mod:`query.planner`).

``Executor.run(plan, hint, graph)`` yields the solutions of ``plan`` *joined with* the
solution ``hint``: everything is a generator, and a nested-loop join passes each left
solution as the hint of its right side, so bound variables become constants of the next
quad pattern (an index lookup) instead of a filter after a scan. Operators whose SPARQL
semantics must not see outer bindings (FILTER, OPTIONAL, MINUS, BIND, sub-SELECT...) get a
hint without them (``drop`` / ``keep`` in the plan) and the executor re-joins those after.

**Adaptive BGP steps.** A step that looks its pattern up once per incoming solution may
switch to a hash join. Alongside its lookups it reads the pattern itself (only its
constants bound), :data:`SCAN_ROWS_PER_LOOKUP` rows per lookup in chunks of
:data:`SCAN_CHUNK`; if that scan ends, the step probes a hash table of the rows from then
on. It starts reading at once when the planner expects more incoming solutions than the
pattern's rows cost in lookups, and otherwise only once its lookups have cost what reading
the whole pattern is expected to (:data:`LOOKUPS_BEFORE_SCAN` at least). A hash join is
cheaper exactly when the pattern has fewer rows than the lookups would cost, which the
planner's estimates (capped at 1,000 reads) cannot tell; this way a step costs at most
about twice the better of the two (the ski-rental argument). The state lasts for the query
(an OPTIONAL's right side is run once per left solution).

>>> from query.source import MemorySource
>>> from query.planner import Planner
>>> from query.algebra import BGP, Triple, Var
>>> from query.expressions import ExprContext
>>> p = IRI("http://ex/p")
>>> src = MemorySource([(None, IRI("http://ex/a"), p, IRI("http://ex/b"))])
>>> ex = Executor(src)
>>> plan = Planner(src, ex.ctx).plan(BGP((Triple(Var("x"), p, Var("y")),)))
>>> [sol["y"] for sol in ex.run(plan, {}, DEFAULT)]
[IRI('http://ex/b')]
"""

from __future__ import annotations

import heapq
import sys
from itertools import islice
from typing import Any, Callable, Iterable, Iterator

from fstore import Param
from nstore.collector import paused_gc

from .aggregates import ERROR, Budget, new_accumulator
from .algebra import Dataset, Var
from .errors import IntermediateTooLargeError
from .expressions import ExprContext, compile_expr, filter_passes, order_key
from .id_bgp import ItemStep, bgp_layout, item_row_size, run_steps
from .limits import TAKE_EVERY, Memory, row_size, value_size
from .nesting import guard_recursion
from .paths import eval_path
from .planner import (
    DEFAULT,
    BGPPlan,
    DistinctPlan,
    ExtendPlan,
    FilterPlan,
    GraphPlan,
    GroupPlan,
    JoinPlan,
    LeftJoinPlan,
    MinusPlan,
    OrderPlan,
    PathPlan,
    Planner,
    PlanNode,
    ProjectPlan,
    ReducedPlan,
    SlicePlan,
    SourcesPlan,
    UnionPlan,
    ValuesPlan,
)
from .source import distinct_graphs, table_graph_test
from nstore.terms import IRI, XSD_INTEGER, Literal  # noqa: F401 - IRI is used by the doctest
from .errors import EvalError

__all__ = ["Executor", "compatible", "SCAN_ROWS_PER_LOOKUP", "LOOKUPS_BEFORE_SCAN", "SCAN_CHUNK", "ADAPTIVE_STEPS",
           "LONG_BINDING"]

Solution = dict

SCAN_ROWS_PER_LOOKUP = 5
"""Rows of a step's whole pattern read per index lookup while deciding to hash. A prepared
lookup through fstore costs about three scanned rows (~7 µs against ~2.4 µs, measured with
``bench/query_bench.py``); reading a little more than that favours the hash join, which
wins on big inputs, and keeps a step within about 2.7x of the better strategy."""

LOOKUPS_BEFORE_SCAN = 64
"""Lookups a step makes before it starts reading its whole pattern, at least: small queries
never pay for the scan. A step waits longer when the planner expects its pattern to be big
next to its input: until its lookups have cost what reading the pattern would. When the
planner expects the input to be the bigger, the step reads from its first lookup."""

SCAN_CHUNK = 256
"""The scan advances this many rows at a time (fewer switches between the two cursors)."""

_NO_TABLE = object()  # _step: matches came from a prepared lookup, not a hash table
_PARAM = object()  # a Param in the cache key of a prepared read (Params are all alike)

ADAPTIVE_STEPS = True
"""Whether lookup steps may switch to hash joins (False: always nested loops)."""

LONG_BINDING = 4096
"""Characters a BIND (or a SELECT expression) may add to a solution before the solution's
whole size is checked against the query's memory budget: the check costs a pass over
the solution, so short values skip it, and a chain of BINDs that doubles a string is
caught as soon as its values are long."""


class _StepState:
    """What an adaptive step has learnt: the scan of its whole pattern so far, and the hash
    table once that scan has ended. The scan stops for good at ``limit`` rows (max_held_rows):
    the step then keeps looking up, which gives the same solutions without holding any."""

    __slots__ = ("scan", "rows", "table", "keys", "others", "lookups", "wait", "credit", "limit", "memory", "held",
                 "pending", "size", "fill")

    def __init__(self, scan: Iterator[Any], keys: tuple, others: tuple, wait: int, limit: int | None = None,
                 memory: Memory | None = None, size: Callable[[Any], int] = row_size) -> None:
        self.limit = limit
        self.size = size  # the bytes of a row (a solution, or a row of items: query.id_bgp)
        self.fill: list = []  # for rows of items: where a table row's items go (query.id_bgp)
        self.memory = memory  # the scan's rows count against it too; past it, the step gives up as past limit
        self.held = 0  # bytes taken from memory
        self.pending = 0  # counted, taken TAKE_EVERY bytes at a time
        self.lookups = 0
        self.wait = wait
        self.credit = 0
        self.scan: Iterator[dict] | None = scan
        self.rows: list = []
        self.table: dict | None = None
        self.keys = keys  # lookup variables: the hash key
        self.others = others  # the pattern's other variables (checked against the solution)

    def lookup(self) -> bool:
        """Account for one lookup; True once the hash table is ready."""
        if self.lookups < self.wait:
            self.lookups += 1
            return False
        self.credit += SCAN_ROWS_PER_LOOKUP
        if self.credit < SCAN_CHUNK:
            return False
        n, self.credit = self.credit, 0
        return self.advance(n)

    def advance(self, n: int) -> bool:
        """Read up to ``n`` more rows; True once the whole pattern is read (and indexed)."""
        if self.scan is None:
            return self.table is not None
        with paused_gc():  # rows kept for the hash table: see nstore.collector
            return self._read(n)

    def _read(self, n: int) -> bool:
        scan = self.scan
        rows = self.rows
        memory = self.memory
        for _ in range(n):
            row = next(scan, None)
            if row is None:
                if memory is not None and not self._fits():
                    return self._give_up()
                self.scan = None
                table: dict = {}
                keys = self.keys
                if len(keys) == 1:  # the key itself, not a 1-tuple (see _step)
                    (name,) = keys
                    for r in rows:
                        table.setdefault(r[name], []).append(r)
                else:
                    for r in rows:
                        table.setdefault(tuple([r[k] for k in keys]), []).append(r)
                self.table = table
                self.rows = []
                return True
            if len(rows) == self.limit:  # one more than the cap: the hash join is not worth it
                return self._give_up()
            if memory is not None:
                self.pending += self.size(row)
                if self.pending >= TAKE_EVERY and not self._fits():
                    return self._give_up()
            rows.append(row)
        return False

    def _fits(self) -> bool:
        """Take the bytes counted so far, if the query's budget has room for them."""
        memory = self.memory
        pending, self.pending = self.pending, 0
        if memory.limit is not None and memory.held + pending > memory.limit:
            return False
        memory.held += pending
        self.held += pending
        return True

    def _give_up(self) -> bool:
        """Stop scanning for good (the step keeps looking up): its rows and bytes go."""
        self.scan = None
        self.rows = []
        if self.memory is not None:
            self.memory.give(self.held)
            self.held = 0
        return False


class _Reverse:
    """Inverts the order of a sort key (for ORDER BY DESC in a single sort)."""

    __slots__ = ("key",)

    def __init__(self, key: Any) -> None:
        self.key = key

    def __lt__(self, other: "_Reverse") -> bool:
        return other.key < self.key

    def __gt__(self, other: "_Reverse") -> bool:
        return other.key > self.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reverse) and other.key == self.key


class _HashTable:
    """Materialised solutions of a join's right side, indexed by the join keys."""

    def __init__(self, rows: list, keys: tuple) -> None:
        self.keys = keys
        self.rows = rows
        if keys:
            index: dict = {}
            for row in rows:
                index.setdefault(tuple([row[k] for k in keys]), []).append(row)
            self.index = index

    def candidates(self, sol: Solution) -> list:
        if not self.keys:
            return self.rows
        return self.index.get(tuple([sol[k] for k in self.keys]), ())


def compatible(a: Solution, b: Solution) -> bool:
    """Whether two solutions agree on every variable they both bind."""
    if len(a) > len(b):
        a, b = b, a
    for name, value in a.items():
        other = b.get(name)
        if other is not None and other != value:
            return False
    return True


_CHECK_EVERY = 1024


def _checked(rows: Iterator[Solution], check: Callable[[], None]) -> Iterator[Solution]:
    """``rows``, calling ``check`` before the first and every 1,024th (it may raise)."""
    check()
    for count, row in enumerate(rows, 1):
        if not count % _CHECK_EVERY:
            check()
        yield row


def _capped(rows: Iterable[Solution], limit: int, operator: str) -> Iterator[Solution]:
    for count, row in enumerate(rows, 1):
        if count > limit:
            raise IntermediateTooLargeError(operator, limit)
        yield row


class _Held:
    """The rows an operator keeps, counted as they are read: at most ``limit`` of them
    (None: any) and their bytes (``size`` of each: :func:`row_size` for a solution) taken
    from ``memory`` (``held`` so far; :meth:`release` gives them back when the operator
    lets them go)."""

    __slots__ = ("rows", "operator", "limit", "memory", "held", "size")

    def __init__(self, rows: Iterable[Any], operator: str, limit: int | None, memory: Memory,
                 size: Callable[[Any], int] = row_size) -> None:
        self.rows, self.operator, self.limit, self.memory, self.size = rows, operator, limit, memory, size
        self.held = 0

    def __iter__(self) -> Iterator[Any]:
        operator, take, size_of, every = self.operator, self.memory.take, self.size, TAKE_EVERY
        limit = self.limit if self.limit is not None else sys.maxsize
        pending = 0  # counted, not yet taken: taken TAKE_EVERY bytes at a time
        for count, row in enumerate(self.rows, 1):
            if count > limit:
                raise IntermediateTooLargeError(operator, limit)
            pending += size_of(row)
            if pending >= every:
                self.held += pending  # first: take counts it even when it raises
                take(pending, operator)
                pending = 0
            yield row
        self.held += pending
        take(pending, operator)

    def release(self) -> None:
        self.memory.give(self.held)
        self.held = 0


def _first_sight(items: Iterable[Any], kept: dict) -> Iterator[Any]:
    """The ``items`` not yet in ``kept``, each put there as it goes by."""
    for item in items:
        if item not in kept:
            kept[item] = None
            yield item


def _released(rows: Iterable[Any], memory: Memory, size: int) -> Iterator[Any]:
    """``rows``, giving ``size`` bytes back to ``memory`` once they are all read, or when
    the reader lets go of them, even unread (a LIMIT 0 never starts reading)."""
    stream = _releasing(rows, memory, size)
    next(stream)  # into its try: closing or collecting it now gives the bytes back
    return stream


def _releasing(rows: Iterable[Any], memory: Memory, size: int) -> Iterator[Any]:
    try:
        yield None
        yield from rows
    finally:
        memory.give(size)


class Executor:
    """Runs plans against a source for one query (its dataset and expression context);
    ``check``, if given, is called as rows flow between operators (e.g. a deadline)."""

    def __init__(self, source: Any, *, dataset: Dataset | None = None, ctx: ExprContext | None = None,
                 check: Callable[[], None] | None = None, max_held_rows: int | None = None,
                 memory: Memory | None = None) -> None:
        self.source = source
        self.check = check  # called every _CHECK_EVERY rows an operator yields (a deadline)
        self.max_held_rows = max_held_rows  # rows one materialising operator may hold (None: any)
        self.memory = memory  # the query's memory budget (None: none), shared by its operators
        self.ctx = ctx or ExprContext()
        if memory is not None:
            self.ctx.memory = memory
        self.ctx.exists = self.exists
        dataset = dataset or Dataset()
        self.dataset = dataset
        if dataset.given:
            self.default_graphs: list = list(dict.fromkeys(dataset.default))
            self.named: list | None = None if dataset.all_named else list(dict.fromkeys(dataset.named))
        else:
            self.default_graphs = [None]
            self.named = None
        self.named_set = set(self.named) if self.named is not None else None
        self._is_table = table_graph_test(source)  # looked up once: asked per graph bound
        self._named_list: list | None = None
        self._nodes: dict = {}
        self._tables: dict = {}
        self._table_bytes = 0  # taken from memory by the hash tables (see release)
        self._steps: dict = {}
        self._item_reads = getattr(source, "ids", None)  # joins on ids (query.id_bgp), if the source offers them
        self._item_plans: dict = {}
        self._layouts: dict = {}
        self._reads: dict = {}  # prepared reads of the source, by graph and pattern (see prepared)
        self._compiled: dict = {}
        self._exists_plans: dict = {}
        self._dispatch = {
            BGPPlan: self._bgp,
            PathPlan: self._path,
            FilterPlan: self._filter,
            JoinPlan: self._join,
            LeftJoinPlan: self._left_join,
            UnionPlan: self._union,
            MinusPlan: self._minus,
            GraphPlan: self._graph,
            ExtendPlan: self._extend,
            ValuesPlan: self._values,
            GroupPlan: self._group,
            OrderPlan: self._order,
            ProjectPlan: self._project,
            DistinctPlan: self._distinct,
            ReducedPlan: self._reduced,
            SlicePlan: self._slice,
            SourcesPlan: self._sources,
        }

    # ------------------------------------------------------------------ data access

    def match(self, graph: Any, s: Any, p: Any, o: Any, within: Any = None) -> Iterator[dict]:
        """Bindings of one triple pattern in the active graph (DEFAULT, a name, a Var).
        ``within``: a range the object's filters allow (a source that ``accepts_ranges``
        may return only objects in it; the filters still decide)."""
        source = self.source
        if within is not None and type(o) is Var and type(graph) is not Var:
            if graph is not DEFAULT:
                return source.match((graph, s, p, o), within)
            if len(self.default_graphs) == 1:
                return source.match((self.default_graphs[0], s, p, o), within)
        if graph is DEFAULT:
            graphs = self.default_graphs
            if len(graphs) == 1:
                return source.match((graphs[0], s, p, o))
            if not graphs:
                return iter(())
            return self._match_merged(graphs, s, p, o)
        if type(graph) is Var:
            if self.named is not None:
                return self._match_each_named(graph, s, p, o)
            name = graph.name
            return (b for b in source.match((graph, s, p, o)) if b.get(name) is not None)
        return source.match((graph, s, p, o))

    def _match_merged(self, graphs: list, s: Any, p: Any, o: Any) -> Iterator[dict]:
        """The RDF merge of several FROM graphs: each triple once."""
        seen = set()
        for g in graphs:
            for b in self.source.match((g, s, p, o)):
                key = tuple(b.items())
                if key not in seen:
                    seen.add(key)
                    yield b

    def _match_each_named(self, graph: Var, s: Any, p: Any, o: Any) -> Iterator[dict]:
        for name in self.named:
            items = [name if (type(x) is Var and x == graph) else x for x in (s, p, o)]
            for b in self.source.match((name, *items)):
                b = dict(b)
                b[graph.name] = name
                for x in (s, p, o):
                    if type(x) is Var and x == graph:
                        b[x.name] = name
                yield b

    def unnamed_table(self, graph: Any) -> bool:
        """Whether ``graph`` is a table graph outside the dataset's named graphs: without
        ``FROM NAMED`` those are the store's quad graphs, so ``GRAPH ?g`` with ?g bound to
        a table graph matches nothing (``GRAPH <table>`` or ``FROM NAMED`` read it)."""
        return self.named_set is None and self._is_table(graph)

    def named_graph_list(self) -> list:
        """The named graphs of the dataset (FROM NAMED, or every graph of the store)."""
        if self.named is not None:
            return self.named
        if self._named_list is None:
            lister = getattr(self.source, "graphs", None)
            self._named_list = list(lister()) if lister is not None else distinct_graphs(self.source)
        return self._named_list

    def graph_nodes(self, graph: Any) -> list:
        """Every subject and object of the active graph (the nodes of zero-length paths)."""
        key = ("nodes", graph if type(graph) is not Var else None)
        found = self._nodes.get(key)
        if found is None:
            nodes: dict = {}
            for b in self.match(graph, Var(".ns"), Var(".np"), Var(".no")):
                nodes[b[".ns"]] = None
                nodes[b[".no"]] = None
            found = self._nodes[key] = list(nodes)
        return found

    def held(self, rows: Iterable[Any], operator: str, size: Callable[[Any], int] = row_size) -> Iterable[Any]:
        """``rows``, which ``operator`` keeps in memory: an IntermediateTooLargeError past
        :attr:`max_held_rows` of them, a MemoryLimitError past the query's memory budget
        (then a :class:`_Held`, whose ``release`` gives their bytes back; ``size`` counts
        a row's bytes)."""
        limit = self.max_held_rows
        if self.memory is not None:
            return _Held(rows, operator, limit, self.memory, size)
        if limit is None:
            return rows
        return _capped(rows, limit, operator)

    def held_set(self, items: Iterable[Any], operator: str, size: Callable[[Any], int]) -> Iterator[Any]:
        """The distinct ``items`` (hashable), all read first and kept until they are read
        back, as ``operator``'s held rows: at most :attr:`max_held_rows` of them, their
        ``size`` taken from the query's memory and given back once read (or let go).

        >>> from query.source import MemorySource
        >>> ex = Executor(MemorySource([]), max_held_rows=2)
        >>> list(ex.held_set(["a", "b", "a"], "a set", len))
        ['a', 'b']
        >>> list(ex.held_set("abc", "a set", len))
        Traceback (most recent call last):
        ...
        query.errors.IntermediateTooLargeError: a set holds more than 2 rows (the limit on rows held in memory); narrow the query or raise the limit (max_held_rows, --max-held-rows)
        """
        if self.max_held_rows is None and self.memory is None:
            return iter(dict.fromkeys(items))
        kept: dict = {}
        held = self.held(_first_sight(items, kept), operator, size)
        for _ in held:  # the count: kept fills as it goes
            pass
        if self.memory is None:
            return iter(kept)
        return _released(kept, self.memory, held.held)

    def _compile(self, expr: Any, graph: Any) -> Any:
        key = (id(expr), graph)
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = self._compiled[key] = compile_expr(expr, self.ctx, graph)
        return compiled

    def exists(self, pattern: Any, sol: Solution, graph: Any) -> bool:
        """EXISTS: whether ``pattern``, with ``sol`` substituted, has a solution."""
        key = (id(pattern), graph)
        plan = self._exists_plans.get(key)
        if plan is None:
            planner = Planner(self.source, self.ctx, default_graphs=tuple(self.default_graphs))
            plan = self._exists_plans[key] = planner.plan(pattern, frozenset(sol), graph, substitute=True)
        for _ in self.run(plan, sol, graph):
            return True
        return False

    # ------------------------------------------------------------------ dispatch

    def run(self, node: PlanNode, hint: Solution, graph: Any) -> Iterator[Solution]:
        """Solutions of ``node`` joined with ``hint`` in the active graph ``graph``."""
        if self.check is not None:
            return _checked(self._run(node, hint, graph), self.check)
        return self._run(node, hint, graph)

    def _run(self, node: PlanNode, hint: Solution, graph: Any) -> Iterator[Solution]:
        fn = self._dispatch[type(node)]
        if hint:
            keep = node.keep
            if keep is not None:
                if any(k not in keep for k in hint):
                    inner = {k: v for k, v in hint.items() if k in keep}
                    outer = {k: v for k, v in hint.items() if k not in keep}
                    return _merge(fn(node, inner, graph), outer)
            elif node.drop:
                drop = node.drop
                if any(k in drop for k in hint):
                    inner = {k: v for k, v in hint.items() if k not in drop}
                    outer = {k: v for k, v in hint.items() if k in drop}
                    return _merge(fn(node, inner, graph), outer)
        return fn(node, hint, graph)

    def solutions(self, node: PlanNode) -> Iterator[Solution]:
        """All solutions of a top-level plan; a RecursionError from too long a chain (the
        operators' generators nest as deep as the plan) becomes a QueryTooComplexError,
        whoever reads them (a query's result, an update's WHERE)."""
        with guard_recursion("evaluating"):
            yield from self.run(node, {}, DEFAULT)

    def _table(self, node: PlanNode, graph: Any, keys: tuple, operator: str = "a hash join's table") -> _HashTable:
        key = (id(node), graph)
        table = self._tables.get(key)
        if table is None:
            with paused_gc():  # materialising: see nstore.collector
                held = self.held(self.run(node, {}, graph), operator)
                rows = list(held)
                if self.memory is not None:
                    self._table_bytes += held.held
                table = self._tables[key] = _HashTable(rows, keys)
        return table

    def release(self) -> None:
        """Let go of what this executor keeps for the rest of its query — its hash tables
        and adaptive steps' tables — and give their bytes back to the query's memory: for
        an executor that ends before its query does (one part of CHANGES or VERSIONS)."""
        if self.memory is not None:
            self.memory.give(self._table_bytes + sum(state.held for state in self._steps.values()))
        self._table_bytes = 0
        self._tables.clear()
        self._steps.clear()

    # ------------------------------------------------------------------ operators

    def _bgp(self, node: BGPPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        if not node.steps:
            return self._unit(hint, graph)
        ids = self.ids(graph)
        if ids is not None:
            return self._bgp_on_ids(node, hint, graph, ids)
        stream: Any = (hint,)
        for step in node.steps:
            stream = self._step(step, stream, graph)
        return stream

    def ids(self, graph: Any) -> Any:
        """The source's reads on ids for patterns in ``graph`` (see :mod:`query.id_bgp`), or
        None: they are read as terms (a graph variable, several default graphs, a table
        graph, a source without them)."""
        if self._item_reads is None or type(graph) is Var:
            return None
        if graph is DEFAULT:
            if len(self.default_graphs) != 1:
                return None
            graph = self.default_graphs[0]
        if graph is not None and self._is_table(graph):
            return None
        return self._item_reads()

    def prepared_on_ids(self, ids: Any, pattern: tuple) -> tuple[tuple[int, ...], Callable[..., Any]]:
        """``ids.prepare(pattern)``, planned once per query."""
        key = (ids, *[("?", i.name) if type(i) is Var else i for i in pattern])
        found = self._item_plans.get(key)
        if found is None:
            found = self._item_plans[key] = ids.prepare(pattern)
        return found

    def _bgp_on_ids(self, node: BGPPlan, hint: Solution, graph: Any, ids: Any) -> Iterator[Solution]:
        names, bound, rows = self._bgp_rows(node, hint, graph, ids)
        return _decoded(rows, hint, [(name, slot) for slot, name in enumerate(names) if slot not in bound], ids.decode)

    def _rows_on_ids(self, node: Any, hint: Solution, graph: Any, ids: Any) -> tuple[tuple, list, Iterator[list]]:
        """:meth:`_bgp_rows` of a BGP, or of a chain of OPTIONALs over one
        (:func:`_optional_chain`): each left row extended by the matches of the right
        BGP read with the row's items in place, or kept alone (its right slots None)."""
        if type(node) is BGPPlan:
            return self._bgp_rows(node, hint, graph, ids)
        left_names, bound, rows = self._rows_on_ids(node.left, hint, graph, ids)
        right = node.right
        right_names = self._layouts.get(id(right))
        if right_names is None:
            right_names = self._layouts[id(right)] = bgp_layout(right.steps)
        names = left_names + tuple(name for name in right_names if name not in left_names)
        shared = [slot for slot, name in enumerate(left_names) if name in right_names]
        return names, bound, self._optional_rows(node, graph, ids, rows, names, shared, len(names) - len(left_names), hint)

    def _optional_rows(self, node: LeftJoinPlan, graph: Any, ids: Any, rows: Iterator[list], names: tuple,
                       shared: list, extra: int, hint: Solution) -> Iterator[list]:
        pad = [None] * extra
        for row in rows:
            start = row + pad
            bound = tuple([slot for slot in shared if row[slot] is not None])  # a row of an OPTIONAL may leave some unbound
            key = (id(node), graph, bound, ids)
            planned = self._item_plans.get(key)
            if planned is None:
                planned = self._item_plans[key] = self._plan_on_ids(node.right, graph, names, frozenset(bound), ids)
            steps, states = planned
            found = False
            for extended in run_steps(steps, states, start, ids.decode, hint):
                found = True
                yield extended
            if not found:
                yield start

    def _bgp_rows(self, node: BGPPlan, hint: Solution, graph: Any, ids: Any) -> tuple[tuple, list, Iterator[list]]:
        """The rows of items of a BGP joined with ``hint`` (see :mod:`query.id_bgp`): its
        variables (a row's slots), the slots the hint bound, and the rows."""
        names = self._layouts.get(id(node))
        if names is None:
            names = self._layouts[id(node)] = bgp_layout(node.steps)
        start: list = [None] * len(names)
        bound = []
        for slot, name in enumerate(names):
            value = hint.get(name)
            if value is not None:
                item = ids.encode(value)
                if item is None:  # a term no quad holds: nothing matches
                    return names, bound, iter(())
                start[slot] = item
                bound.append(slot)
        key = (id(node), graph, tuple(bound), ids)
        planned = self._item_plans.get(key)
        if planned is None:
            planned = self._item_plans[key] = self._plan_on_ids(node, graph, names, frozenset(bound), ids)
        steps, states = planned
        return names, bound, run_steps(steps, states, start, ids.decode, hint)

    def _plan_on_ids(self, node: BGPPlan, graph: Any, names: tuple, bound: frozenset, ids: Any) -> tuple[list, list]:
        """The :class:`~query.id_bgp.ItemStep` of each step of ``node`` (with these slots
        bound on entry) and each one's adaptive state (None: it always reads)."""
        g = self.default_graphs[0] if graph is DEFAULT else graph
        slots = {name: slot for slot, name in enumerate(names)}
        steps, states = [], []
        for step in node.steps:
            filters = [self._compile(expr, graph) for expr, _ in step.filters]
            item_step = ItemStep(ids, step, g, slots, bound, filters)
            state = None
            if item_step.params and ADAPTIVE_STEPS:
                state_key = (id(step), graph, tuple(item_step.params))
                state = self._steps.get(state_key)
                if state is None:
                    state = self._steps[state_key] = _StepState(None, (), (), _wait(step), self.max_held_rows,
                                                                self.memory, item_row_size)
                    state.scan = item_step.adaptive_scan(ids, step, g, slots, state)
            steps.append(item_step)
            states.append(state)
            bound = bound | {slots[item.name] for item in (step.triple.s, step.triple.p, step.triple.o) if type(item) is Var}
        return steps, states

    def _unit(self, hint: Solution, graph: Any) -> Iterator[Solution]:
        if type(graph) is Var and graph.name not in hint:
            for name in self.named_graph_list():
                yield {**hint, graph.name: name}
            return
        yield hint

    def _step(self, step: Any, stream: Any, graph: Any) -> Iterator[Solution]:
        """One BGP step: for each input solution, the pattern with its bound variables
        substituted is one index lookup (or a hash probe, see the module docstring); then
        the filters placed after this step."""
        triple = step.triple
        s, p, o = triple.s, triple.p, triple.o
        s_var = s.name if type(s) is Var else None
        p_var = p.name if type(p) is Var else None
        o_var = o.name if type(o) is Var else None
        g_var = graph.name if type(graph) is Var else None
        filters = [self._compile(expr, graph) for expr, _ in step.filters]
        match = self.match
        within = step.object_range
        state = self._step_state(step, graph) if step.lookup and g_var is None and ADAPTIVE_STEPS else None
        lookup, params = self._prepared(step, graph) if step.lookup and within is None else (None, ())
        # Pattern variables a prepared lookup leaves free: a solution that binds one (a hint
        # from outside the BGP) is looked up with it substituted, below.
        unbound = frozenset(n for n in (s_var, p_var, o_var) if n is not None and n not in params)
        for sol in stream:
            table = None
            if state is not None:
                if state.table is not None or state.lookup():
                    table = state.table
            if table is not None:
                try:
                    key = sol[state.keys[0]] if len(state.keys) == 1 else tuple([sol[k] for k in state.keys])
                except KeyError:
                    key = None
                if key is not None:
                    matches = table.get(key, ())
                    if state.others and not sol.keys().isdisjoint(state.others):
                        # the pattern's other variables that the solution binds too
                        shared = [n for n in state.others if n in sol]
                        matches = [r for r in matches if all(r[n] == sol[n] for n in shared)]
                else:
                    table = None
            if table is None and lookup is not None and unbound.isdisjoint(sol.keys()):
                try:
                    matches = lookup(*[sol[name] for name in params])
                except KeyError:  # a lookup variable left unbound (OPTIONAL): substitute below
                    pass
                else:
                    table = _NO_TABLE
            if table is None:
                qs = sol.get(s_var, s) if s_var else s
                qp = sol.get(p_var, p) if p_var else p
                qo = sol.get(o_var, o) if o_var else o
                g = sol.get(g_var, graph) if g_var else graph
                if g_var and g is not graph and self.unnamed_table(g):
                    matches = ()  # ?g bound to a table graph the dataset does not name
                else:
                    matches = match(g, qs, qp, qo, within)
            if table is _NO_TABLE:
                table = None
            for b in matches:
                if not sol and table is None:
                    new = b  # a fresh dict from the source: no copy needed
                elif b:
                    new = sol.copy()
                    new.update(b)
                else:
                    new = sol
                if filters:
                    for f in filters:
                        if not filter_passes(f, new):
                            break
                    else:
                        yield new
                else:
                    yield new

    def _prepared(self, step: Any, graph: Any) -> tuple[Any, tuple[str, ...]]:
        """A lookup step's prepared read (its lookup variables as params, see
        :meth:`prepared`) and those variables in pattern order, or (None, ())."""
        triple = step.triple
        items = (triple.s, triple.p, triple.o)
        lookup = self.prepared(graph, *[Param() if type(i) is Var and i.name in step.lookup else i for i in items])
        if lookup is None:
            return None, ()
        return lookup, tuple(i.name for i in items if type(i) is Var and i.name in step.lookup)

    def prepared(self, graph: Any, s: Any, p: Any, o: Any) -> Any:
        """The source's read of a triple pattern with ``Param()`` items, planned once per
        query (``source.prepare``): a function of the params' values yielding bindings.
        None when the source cannot prepare or the graph is not one fixed graph."""
        prepare = getattr(self.source, "prepare", None)
        if prepare is None or type(graph) is Var or (graph is DEFAULT and len(self.default_graphs) != 1):
            return None
        key = (graph, *[_PARAM if type(i) is Param else i for i in (s, p, o)])
        found = self._reads.get(key)
        if found is None:
            g = self.default_graphs[0] if graph is DEFAULT else graph
            found = self._reads[key] = prepare((g, s, p, o))
        return found

    def _step_state(self, step: Any, graph: Any) -> _StepState:
        key = (id(step), graph)
        state = self._steps.get(key)
        if state is None:
            triple = step.triple
            names = list(dict.fromkeys(n.name for n in (triple.s, triple.p, triple.o) if type(n) is Var))
            keys = tuple(n for n in names if n in step.lookup)
            others = tuple(n for n in names if n not in keys)
            scan = self.match(graph, triple.s, triple.p, triple.o, step.object_range)
            state = self._steps[key] = _StepState(scan, keys, others, _wait(step), self.max_held_rows, self.memory)
        return state

    def _path(self, node: PathPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        return eval_path(self, node.s, node.path, node.o, hint, graph)

    def _filter(self, node: FilterPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        filters = [self._compile(expr, graph) for expr, _ in node.exprs]
        for sol in self.run(node.child, hint, graph):
            for f in filters:
                if not filter_passes(f, sol):
                    break
            else:
                yield sol

    def _join(self, node: JoinPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        run = self.run
        right = node.right
        if node.mode == "nested":
            for sol in run(node.left, hint, graph):
                yield from run(right, sol, graph)
            return
        table = self._table(right, graph, node.keys)
        for sol in run(node.left, hint, graph):
            for other in table.candidates(sol):
                if compatible(sol, other):
                    yield {**sol, **other}

    def _left_join(self, node: LeftJoinPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        ids = self.ids(graph) if _optional_chain(node) else None
        if ids is not None:
            names, bound, rows = self._rows_on_ids(node, hint, graph, ids)
            return _decoded(rows, hint, [(name, slot) for slot, name in enumerate(names) if slot not in bound],
                            ids.decode)
        return self._left_join_on_terms(node, hint, graph)

    def _left_join_on_terms(self, node: LeftJoinPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        run = self.run
        right = node.right
        check = self._compile(node.expr, graph) if node.expr is not None else None
        table = self._table(right, graph, node.keys) if node.mode == "hash" else None
        for sol in run(node.left, hint, graph):
            found = False
            if table is None:
                extensions = run(right, sol, graph)
            else:
                extensions = ({**sol, **other} for other in table.candidates(sol) if compatible(sol, other))
            for ext in extensions:
                if check is None or filter_passes(check, ext):
                    found = True
                    yield ext
            if not found:
                yield sol

    def _union(self, node: UnionPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        for branch in node.branches:
            yield from self.run(branch, hint, graph)

    def _minus(self, node: MinusPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        right = node.right
        shared = tuple(sorted(node.left.certain & right.certain))
        rows = None if shared else self._table(right, graph, (), "MINUS").rows
        for sol in self.run(node.left, hint, graph):
            if shared:
                probe = {k: sol[k] for k in shared}
                excluded = any(compatible(sol, other) for other in self.run(right, probe, graph))
            else:
                excluded = any(compatible(sol, other) and not other.keys().isdisjoint(sol.keys()) for other in rows)
            if not excluded:
                yield sol

    def _graph(self, node: GraphPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        name = node.name
        if node.mode == "const":
            if self.named_set is not None and name not in self.named_set:
                return iter(())
            return self.run(node.child, hint, name)
        g = name.name
        value = hint.get(g)
        if value is not None:
            if node.mode == "pushdown":
                if (self.named_set is not None and value not in self.named_set) or self.unnamed_table(value):
                    return iter(())
                return self.run(node.child, hint, name)
            if value not in set(self.named_graph_list()):
                return iter(())
            return self.run(node.child, hint, value)
        if node.mode == "pushdown":
            return self.run(node.child, hint, name)
        return self._each_graph(node, hint, g)

    def _each_graph(self, node: GraphPlan, hint: Solution, g: str) -> Iterator[Solution]:
        for value in self.named_graph_list():
            yield from self.run(node.child, {**hint, g: value}, value)

    def _extend(self, node: ExtendPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        bindings = [(name, self._compile(expr, graph)) for name, expr, _ in node.bindings]
        ctx = self.ctx
        memory = self.memory
        for sol in self.run(node.child, hint, graph):
            ctx.new_row()
            new = dict(sol)
            grown = 0
            for name, f in bindings:
                try:
                    value = new[name] = f(new)
                except EvalError:
                    continue
                if memory is not None:  # value_size's text, inlined: this runs once per binding
                    kind = type(value)
                    if kind is Literal:
                        grown += len(value.lexical)
                        if value.datatype is not None:  # STRDT / STRLANG can make long ones
                            grown += len(value.datatype.value)
                        elif value.lang is not None:
                            grown += len(value.lang)
                    elif kind is IRI:
                        grown += len(value.value)
            if grown > LONG_BINDING:
                memory.check(row_size(new), "BIND")  # a solution is held while it flows
            yield new

    def _values(self, node: ValuesPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        names = node.vars
        for row in node.rows:
            new = dict(hint)
            for name, value in zip(names, row):
                if value is None:
                    continue
                current = new.get(name)
                if current is None:
                    new[name] = value
                elif current != value:
                    break
            else:
                yield new

    def _group(self, node: GroupPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        keys = [(self._compile(expr, graph), out) for expr, _, out in node.keys]
        # A plain variable (the common key and argument) is read from the solution directly:
        # unbound gives None, what an error in a key gives, and ERROR as an argument.
        key_names = [expr.name for expr, _, _ in node.keys] if all(type(expr) is Var for expr, _, _ in node.keys) else None
        aggregates = [(name, agg, self._compile(agg.arg, graph) if agg.arg is not None else None) for name, agg, _ in node.aggregates]
        arguments = [agg.arg.name if type(agg.arg) is Var else None for _, agg, _ in node.aggregates]
        groups: dict = {}
        ids = self._group_ids(node, hint, graph, key_names, aggregates, arguments)
        counted = self._kept_counts(node, graph, ids) if ids is not None else None
        if counted is not None:
            yield from counted
            return
        limit = self.max_held_rows
        budget = Budget(limit, self.memory) if limit is not None or self.memory is not None else None
        try:
            with paused_gc():  # the whole input is read before the first group comes out
                if ids is not None:
                    self._accumulate_items(node.child, graph, ids, groups, key_names, aggregates, arguments, budget)
                else:
                    self._accumulate(self.run(node.child, hint, graph), groups, keys, key_names, aggregates, arguments,
                                     budget)
            if budget is not None:
                budget.settle("GROUP BY")
            yield from self._groups(groups, keys, aggregates)
        finally:
            if budget is not None and self.memory is not None:
                self.memory.give(budget.held)

    def _group_ids(self, node: GroupPlan, hint: Solution, graph: Any, key_names: list | None, aggregates: list,
                   arguments: list) -> Any:
        """The source's reads on ids if GROUP BY can group its input's rows of items (see
        :meth:`_accumulate_items`): a BGP read on ids, no outer bindings, keys and
        aggregate arguments plain variables (or COUNT(*)); else None."""
        if hint or key_names is None or type(node.child) is not BGPPlan:
            return None
        for (_, agg, _), argument in zip(aggregates, arguments):
            if argument is None and (agg.arg is not None or agg.distinct):
                return None
        return self.ids(graph)

    def _kept_counts(self, node: GroupPlan, graph: Any, ids: Any) -> list[Solution] | None:
        """The solutions of ``COUNT(*)`` (or ``COUNT(?v)``, not DISTINCT) over a single
        triple pattern without filters, from the counts the store keeps with its heads
        (``ids.known_count``, ``ids.predicate_counts``): without GROUP BY, of a pattern
        binding at most its predicate (one read, whatever its size); grouped by the
        pattern's predicate variable, of ``?s ?p ?o`` (one read a predicate, the store's
        property partition). None where the store keeps no such count."""
        child = node.child
        if len(child.steps) != 1 or child.steps[0].filters or child.steps[0].object_range is not None:
            return None
        triple = child.steps[0].triple
        names = {item.name for item in (triple.s, triple.p, triple.o) if type(item) is Var}
        for _, agg, _ in node.aggregates:
            if agg.name != "COUNT" or agg.distinct or not (agg.arg is None or (type(agg.arg) is Var and agg.arg.name in names)):
                return None
        g = self.default_graphs[0] if graph is DEFAULT else graph
        if not node.keys:
            count = ids.known_count((g, triple.s, triple.p, triple.o))
            return None if count is None else [self._counted({}, node, count)]
        if len(node.keys) != 1 or type(node.keys[0][0]) is not Var or node.keys[0][0] != triple.p or len(names) != 3:
            return None
        by_predicate = ids.predicate_counts(g)
        limit = self.max_held_rows
        if limit is not None and len(by_predicate) > limit:
            raise IntermediateTooLargeError("GROUP BY", limit)
        out = node.keys[0][2]
        return [self._counted({out: ids.decode(item)} if out is not None else {}, node, count)
                for item, count in by_predicate.items()]

    @staticmethod
    def _counted(solution: Solution, node: GroupPlan, count: int) -> Solution:
        """``solution`` with each (COUNT) aggregate of ``node`` bound to ``count``."""
        value = Literal(str(count), XSD_INTEGER)
        for name, _, _ in node.aggregates:
            solution[name] = value
        return solution

    def _accumulate_items(self, child: BGPPlan, graph: Any, ids: Any, groups: dict, key_names: list,
                          aggregates: list, arguments: list, budget: Budget | None) -> None:
        """:meth:`_accumulate` on the BGP's rows of items: groups keyed by items (equal
        items are equal terms), a term decoded only where an aggregate reads a value (not
        for COUNT, which only asks whether a variable is bound), the keys once per group.
        ``groups`` ends keyed by terms, as :meth:`_accumulate` leaves it."""
        names, _, rows = self._bgp_rows(child, {}, graph, ids)
        slot = {name: index for index, name in enumerate(names)}
        key_slots = [slot.get(name) for name in key_names]
        decode = ids.decode
        # Per aggregate, what it is fed: True (COUNT(*)), ERROR (a variable the BGP does not
        # bind), or the slot it reads and whether it needs the term (COUNT only asks
        # whether the variable is bound: the item does).
        feeds: list = []
        for (_, agg, _), argument in zip(aggregates, arguments):
            if argument is None:
                feeds.append((True, None, False))
            elif argument not in slot:
                feeds.append((ERROR, None, False))
            else:
                feeds.append((None, slot[argument], not (agg.name == "COUNT" and not agg.distinct)))
        limit = self.max_held_rows if self.max_held_rows is not None else -1
        memory = self.memory
        by_items: dict = {}
        for row in rows:
            key = tuple([row[i] if i is not None else None for i in key_slots])
            accumulators = by_items.get(key)
            if accumulators is None:
                if len(by_items) == limit:
                    raise IntermediateTooLargeError("GROUP BY", limit)
                if memory is not None:
                    size = sum(value_size(decode(item)) for item in key if item is not None)
                    budget.held += size  # type: ignore[union-attr]
                    memory.take(size, "GROUP BY")
                accumulators = by_items[key] = [new_accumulator(agg, budget) for _, agg, _ in aggregates]
            for accumulator, (fixed, at, needs_term) in zip(accumulators, feeds):
                if at is None:
                    accumulator.add(fixed)
                else:
                    accumulator.add(decode(row[at]) if needs_term else row[at])
        for key, accumulators in by_items.items():
            groups[tuple([decode(item) if item is not None else None for item in key])] = accumulators

    def _groups(self, groups: dict, keys: list, aggregates: list) -> Iterator[Solution]:
        """The solutions of GROUP BY's groups, once its input is read."""
        if not groups and not keys:
            groups[()] = [new_accumulator(agg) for _, agg, _ in aggregates]
        for key, accumulators in groups.items():
            out = {}
            for (_, name), value in zip(keys, key):
                if name is not None and value is not None:
                    out[name] = value
            for accumulator, (name, _, _) in zip(accumulators, aggregates):
                try:
                    out[name] = accumulator.result()
                except EvalError:
                    pass
            yield out

    def _accumulate(self, solutions: Iterator[Solution], groups: dict, keys: list, key_names: list | None,
                    aggregates: list, arguments: list, budget: Budget | None) -> None:
        """Feed each solution to the accumulators of its group (made on first sight); the
        values the groups keep count against ``budget`` (their keys' bytes too)."""
        limit = self.max_held_rows if self.max_held_rows is not None else -1
        memory = self.memory
        for sol in solutions:
            if key_names is not None:
                key = tuple([sol.get(name) for name in key_names])
            else:
                values = []
                for f, _ in keys:
                    try:
                        values.append(f(sol))
                    except EvalError:
                        values.append(None)
                key = tuple(values)
            accumulators = groups.get(key)
            if accumulators is None:
                if len(groups) == limit:
                    raise IntermediateTooLargeError("GROUP BY", limit)
                if memory is not None:
                    size = sum(map(value_size, key))
                    budget.held += size
                    memory.take(size, "GROUP BY")
                accumulators = groups[key] = [new_accumulator(agg, budget) for _, agg, _ in aggregates]
            for accumulator, (_, agg, f), argument in zip(accumulators, aggregates, arguments):
                if argument is not None:
                    value = sol.get(argument)
                    accumulator.add(ERROR if value is None else value)
                elif f is None:  # COUNT(*)
                    accumulator.add(frozenset(sol.items()) if agg.distinct else True)
                else:
                    try:
                        accumulator.add(f(sol))
                    except EvalError:
                        accumulator.add(ERROR)

    def _order(self, node: OrderPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        conditions = [(self._compile(expr, graph), asc) for expr, _, asc in node.conditions]
        memory = self.memory
        # The values an ORDER BY expression computes are kept in the sort keys: counted
        # (a plain variable's value is the row's own, counted with the row).
        computed = memory is not None and any(type(expr) is not Var for expr, _, _ in node.conditions)
        key_bytes = [0, 0]  # taken for the keys so far; the last key's size

        def sort_key(sol: Solution) -> tuple:
            parts = []
            size = 0
            for f, asc in conditions:
                try:
                    value = f(sol)
                    if computed:
                        size += value_size(value)
                    k = order_key(value)
                except EvalError:
                    k = (0,)
                parts.append(k if asc else _Reverse(k))
            if size:
                key_bytes[0] += size
                key_bytes[1] = size
                memory.take(size, "ORDER BY")
            return tuple(parts)

        rows = self.run(node.child, hint, graph)
        limit = self.max_held_rows
        with paused_gc():  # sorting reads every solution first
            # A top-k heap holds k rows: within the cap it needs no count; past it (a huge
            # LIMIT or OFFSET) the full sort counts them, with the same rows in the same order.
            if node.top_k is not None and (limit is None or node.top_k <= limit):
                if memory is None:
                    return iter(heapq.nsmallest(node.top_k, rows, key=sort_key))
                return self._top_k(rows, node.top_k, sort_key, key_bytes)
            held = self.held(rows, "ORDER BY")
            ordered = sorted(held, key=sort_key)
        if memory is None:
            return iter(ordered)
        memory.give(key_bytes[0])  # the keys are gone with the sort
        return _released(ordered, memory, held.held)

    def _top_k(self, rows: Iterator[Solution], k: int, sort_key: Callable, key_bytes: list) -> Iterator[Solution]:
        """``heapq.nsmallest(k, rows, key=sort_key)``, with the bytes of the rows in the heap
        taken from the query's memory as they enter and given back as they leave it (its
        algorithm, written out: the heap's contents are what is held)."""
        memory = self.memory
        held = 0  # the bytes of the rows and keys in the heap (sort_key takes a key's)
        heap: list = []
        try:
            for order, row in zip(range(k), rows):
                key_bytes[1] = 0
                key = sort_key(row)
                size = row_size(row)
                memory.take(size, "ORDER BY")
                size += key_bytes[1]
                held += size
                heap.append((key, order, row, size))
            if heap:
                heapq._heapify_max(heap)
                top = heap[0][0]
                order = k
                for row in rows:
                    key_bytes[1] = 0
                    key = sort_key(row)
                    if key < top:
                        size = row_size(row)
                        memory.take(size, "ORDER BY")
                        size += key_bytes[1]
                        dropped = heapq._heapreplace_max(heap, (key, order, row, size))[3]
                        memory.give(dropped)
                        held += size - dropped
                        top = heap[0][0]
                        order += 1
                    else:
                        memory.give(key_bytes[1])  # a key that never enters the heap
            heap.sort()
        except BaseException:
            memory.give(held)
            raise
        return _released([entry[2] for entry in heap], memory, held)

    def _project(self, node: ProjectPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        names = node.vars
        for sol in self.run(node.child, hint, graph):
            yield {n: sol[n] for n in names if n in sol}

    def _distinct(self, node: DistinctPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        seen = set()
        limit = self.max_held_rows if self.max_held_rows is not None else -1
        memory = self.memory
        held = pending = 0  # taken from memory; counted, taken TAKE_EVERY bytes at a time
        try:
            for sol in self.run(node.child, hint, graph):
                key = frozenset(sol.items())
                if key not in seen:
                    if len(seen) == limit:
                        raise IntermediateTooLargeError("DISTINCT", limit)
                    if memory is not None:
                        pending += row_size(sol)
                        if pending >= TAKE_EVERY:
                            held += pending
                            memory.take(pending, "DISTINCT")
                            pending = 0
                    seen.add(key)
                    yield sol
            if memory is not None:
                held += pending
                memory.take(pending, "DISTINCT")
        finally:
            if memory is not None:
                memory.give(held)

    def _reduced(self, node: ReducedPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        previous = None
        for sol in self.run(node.child, hint, graph):
            if sol != previous:
                yield sol
            previous = sol

    def _slice(self, node: SlicePlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        # islice takes at most sys.maxsize, more rows than any result has: a larger LIMIT
        # is no limit and a larger OFFSET leaves nothing (SPARQL counts are unbounded).
        offset = node.offset
        if offset >= sys.maxsize:
            return iter(())
        stop = None if node.limit is None or node.limit >= sys.maxsize - offset else offset + node.limit
        return islice(self.run(node.child, hint, graph), offset, stop)

    def _sources(self, node: SourcesPlan, hint: Solution, graph: Any) -> Iterator[Solution]:
        """CHANGES / VERSIONS: the pattern over each part's source (planned for it), each
        solution once per binding of the part that agrees with ``hint``."""
        inner = {k: v for k, v in hint.items() if k not in node.extra}
        for source, extras in node.parts():
            wanted = [e for e in extras if all(hint.get(k, v) == v for k, v in e.items())]
            if not wanted:
                continue
            ctx = ExprContext(base=self.ctx.base)
            ctx.now = self.ctx.now
            ctx.deadline = self.ctx.deadline
            sub = Executor(source, dataset=self.dataset, ctx=ctx, check=self.check, max_held_rows=self.max_held_rows,
                           memory=self.memory)
            plan = Planner(source, ctx, default_graphs=tuple(sub.default_graphs)).plan(node.pattern, frozenset(inner), graph)
            try:
                for sol in sub.run(plan, inner, graph):
                    for extra in wanted:
                        yield {**sol, **extra}
            finally:  # the part's tables go with it: parts one after another do not add up
                sub.release()


def _wait(step: Any) -> int:
    """The lookups an adaptive step makes before it starts reading its whole pattern (see
    the module docstring): none when the planner expects more incoming solutions than
    the pattern's rows cost in lookups."""
    if step.in_est * SCAN_ROWS_PER_LOOKUP >= step.scan_est:
        return 0
    return max(LOOKUPS_BEFORE_SCAN, int(step.scan_est / SCAN_ROWS_PER_LOOKUP))


def _decoded(rows: Iterator[list], hint: Solution, outputs: list[tuple[str, int]],
             decode: Callable[[bytes], Any]) -> Iterator[Solution]:
    """The solutions of rows of items: ``hint`` with the terms of ``outputs`` (each
    variable's name and slot; an OPTIONAL may leave a slot None: unbound)."""
    for row in rows:
        solution = hint.copy()
        for name, slot in outputs:
            item = row[slot]
            if item is not None:
                solution[name] = decode(item)
        yield solution


def _optional_chain(node: LeftJoinPlan) -> bool:
    """Whether an OPTIONAL can run on ids (:meth:`Executor._rows_on_ids`): OPTIONALs
    without a filter of their own, looked up once per left solution, each right side a
    BGP, down to a BGP; no operator among them hides outer bindings from its input."""
    while type(node) is LeftJoinPlan:
        right = node.right
        if node.expr is not None or node.mode != "nested" or type(right) is not BGPPlan or \
                right.keep is not None or right.drop or node.left.keep is not None or node.left.drop:
            return False
        node = node.left
    return type(node) is BGPPlan


def _merge(stream: Iterator[Solution], outer: Solution) -> Iterator[Solution]:
    """Join a stream with bindings that were hidden from the operator producing it."""
    for sol in stream:
        for name, value in outer.items():
            other = sol.get(name)
            if other is not None and other != value:
                break
        else:
            yield {**outer, **sol}
