"""The query entry points: parse, plan and run a SPARQL query against a source or view.

>>> from query.source import MemorySource
>>> ex = "http://ex/"
>>> src = MemorySource([(None, IRI(ex + "a"), IRI(ex + "age"), Literal("7", XSD_INTEGER)),
...                     (None, IRI(ex + "b"), IRI(ex + "age"), Literal("12", XSD_INTEGER))])
>>> r = execute(src, "PREFIX : <http://ex/> SELECT ?who WHERE { ?who :age ?n FILTER(?n > 10) }")
>>> [row["who"] for row in r]
[IRI('http://ex/b')]
>>> execute(src, "ASK { ?s ?p 7 }").ask
True

Version clauses (``AT``, ``CHANGES``, ``VERSIONS``) need the repository: ``execute`` finds
it through an fstore view or transaction, or takes a :class:`~query.versioning.VersionContext`
(``versions=``), which is what :class:`query.Session` passes.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, Iterator

from .algebra import BNode, Query, Var
from .errors import IntermediateTooLargeError, QueryEvaluationError
from .executor import Executor
from .expressions import ExprContext
from .limits import Deadline, LimitedSource, Limits, Memory, value_size
from .nesting import guard_recursion
from .parser import parse_query
from .plan_cache import PlanCache
from .planner import DEFAULT, Planner, explain_plan
from .results import Result
from .source import as_source
from nstore.terms import IRI, XSD_INTEGER, Literal, is_valid_term  # noqa: F401 - XSD_INTEGER is used by the doctest
from .versioning import VersionContext, require

__all__ = ["execute", "run_query", "explain", "explain_query", "prepare"]


def prepare(source: Any, query: Query, versions: VersionContext | None = None, *,
            deadline: Deadline | None = None, max_held_rows: int | None = None,
            memory: Memory | None = None, kept: tuple[ExprContext, Any] | None = None) -> tuple[Executor, Any]:
    """An executor and the physical plan of ``query`` over ``source`` (over the view at the
    query's ``AT`` ref if it has one). With a ``deadline``, store reads, the rows between
    operators and REGEX stop at it; operators that hold rows in memory hold at most
    ``max_held_rows`` (None: any number), and the bytes of their values and the length of
    a value a function makes are within ``memory`` (None: any). Every caller (queries,
    updates' WHERE, EXPLAIN) plans through here, so a chain too long to plan is a
    QueryTooComplexError for all. ``kept``: a context and plan made for this query over
    this source before (:mod:`query.plan_cache`), run rather than planned again."""
    if query.at is not None:
        source = as_source(require(versions, "AT").view(query.at))
    ctx = kept[0] if kept is not None else ExprContext(base=query.base)
    check = None
    if deadline is not None and deadline.at is not None:
        source = LimitedSource(source, deadline)
        check = deadline.check
        ctx.deadline = deadline
    executor = Executor(source, dataset=query.dataset, ctx=ctx, check=check, max_held_rows=max_held_rows, memory=memory)
    if kept is not None:
        return executor, kept[1]
    planner = Planner(source, ctx, default_graphs=tuple(executor.default_graphs), versions=versions)
    reading = getattr(source, "reading", None)  # the planner's reads in one store transaction
    with guard_recursion("planning"), reading() if reading is not None else nullcontext():
        return executor, planner.plan(query.pattern)


def execute(source_or_view: Any, text: str, *, base: str | None = None, versions: VersionContext | None = None,
            timeout: float | None = None, max_held_rows: int | None = None, max_held_bytes: int | None = None,
            max_value_length: int | None = None) -> Result:
    """Run a SPARQL query (SELECT, ASK, CONSTRUCT, DESCRIBE) and return its :class:`Result`.

    ``source_or_view`` is anything with the :mod:`query.source` protocol, or an fstore view
    or transaction. SELECT solutions stream: they are read from the store as the result is
    iterated, so iterate it while the view is alive. ``versions`` resolves the refs of
    version clauses (default: the repository and commit of ``source_or_view``).

    ``timeout`` (seconds, counted from this call, reading the result included) stops the
    query with a :class:`~query.errors.QueryTimeoutError`; ``max_held_rows`` caps the rows
    ORDER BY, GROUP BY, DISTINCT, a hash join or MINUS hold (an
    :class:`~query.errors.IntermediateTooLargeError`); ``max_held_bytes`` the bytes of the
    values they and a solution hold between them (a :class:`~query.errors.MemoryLimitError`)
    and ``max_value_length`` the characters of a value CONCAT, REPLACE, GROUP_CONCAT...
    make (a :class:`~query.errors.ValueTooLongError`). None, the default: no limit. See
    docs/query.md, "Limits".

    >>> from query.source import MemorySource
    >>> doubled = "SELECT ?y WHERE { BIND('aaaa' AS ?x) BIND(CONCAT(?x, ?x) AS ?y) }"
    >>> execute(MemorySource([]), doubled, max_value_length=6).rows
    Traceback (most recent call last):
    ...
    query.errors.ValueTooLongError: CONCAT would make a value of 8 characters, more than 6 (the limit on the length of a value); narrow the query or raise the limit (max_value_length, --max-value-length)
    """
    if versions is None:
        versions = VersionContext.of(source_or_view)
    limits = Limits(timeout=timeout, max_rows=None, max_held_rows=max_held_rows, max_held_bytes=max_held_bytes,
                    max_value_length=max_value_length)
    return run_query(as_source(source_or_view), parse_query(text, base=base), versions=versions, limits=limits)


def run_query(source: Any, query: Query, *, versions: VersionContext | None = None,
              limits: Limits | None = None, deadline: Deadline | None = None) -> Result:
    """Evaluate a parsed query. Under ``limits`` the query stops at ``deadline`` (default:
    its timeout from now), holds at most ``limits.max_held_rows`` rows in an operator and
    keeps within its memory budget (``max_held_bytes``, ``max_value_length``); the caps
    on the result's own rows are :func:`query.limits.collect`'s."""
    if limits is not None and deadline is None:
        deadline = limits.deadline()
    held = limits.max_held_rows if limits is not None else None
    memory = limits.memory() if limits is not None else None
    # CONSTRUCT and DESCRIBE read the context after the last solution (its blank nodes),
    # and AT reads another view: their plans are not kept.
    plans = PlanCache(source if query.at is None and query.form in ("SELECT", "ASK") else None)
    kept = plans.take(query)
    executor, plan = prepare(source, query, versions, deadline=deadline, max_held_rows=held, memory=memory, kept=kept)
    solutions = _read_together(executor.source, executor.solutions(plan),
                               lambda: plans.give(query, executor.ctx, plan))
    names = [v.name for v in query.vars]
    if query.form == "SELECT":
        return Result("SELECT", names, solutions=solutions, prefixes=query.prefixes)
    if query.form == "ASK":
        found = next(iter(solutions), None) is not None
        return Result("ASK", ask=found, prefixes=query.prefixes)
    if query.form == "CONSTRUCT":
        return Result("CONSTRUCT", triples=_construct(query.template, solutions, executor), prefixes=query.prefixes)
    if query.form == "DESCRIBE":
        return Result("DESCRIBE", triples=_describe(query, solutions, executor), prefixes=query.prefixes)
    raise QueryEvaluationError(f"unknown query form {query.form}")


def _read_together(source: Any, solutions: Iterator[dict], done: Any = None) -> Iterator[dict]:
    """The solutions, read in one store read transaction if the source can do that;
    ``done()`` once they are all read, or let go (the plan goes back to its cache)."""
    reading = getattr(source, "reading", None)
    try:
        if reading is None:
            yield from solutions
            return
        with reading():
            yield from solutions
    finally:
        if done is not None:
            done()


def _construct(template: tuple, solutions: Iterator[dict], executor: Executor) -> list:
    """Instantiate the template once per solution; the result is a set of triples. A triple
    that would not be valid RDF (an unbound variable, a literal subject, a value the store
    would refuse...) is left out (SPARQL 1.1 Query, 16.2.1)."""
    out: dict = {}
    ctx = executor.ctx
    held = executor.max_held_rows
    memory = executor.memory
    for sol in solutions:
        fresh: dict = {}
        for triple in template:
            items = []
            for node in (triple.s, triple.p, triple.o):
                if type(node) is Var:
                    node = sol.get(node.name)
                    if node is not None and not is_valid_term(node):
                        node = None  # not valid RDF, as an INSERT would leave it out
                elif type(node) is BNode:
                    label = node.id
                    if label not in fresh:
                        fresh[label] = ctx.fresh_bnode()
                    node = fresh[label]
                items.append(node)
            s, p, o = items
            if s is None or p is None or o is None or type(s) is Literal or type(p) is not IRI:
                continue
            if memory is not None and (s, p, o) not in out:
                memory.take(value_size(s) + value_size(p) + value_size(o), "CONSTRUCT")
            out[(s, p, o)] = None
        if held is not None and len(out) > held:
            raise IntermediateTooLargeError("CONSTRUCT", held)
    return list(out)


def _describe(query: Query, solutions: Iterator[dict], executor: Executor) -> list:
    """DESCRIBE: every triple of the default graph whose subject is a described resource."""
    resources: dict = {}
    rows = list(executor.held(solutions, "DESCRIBE"))
    for target in query.describe:
        if type(target) is Var:
            for sol in rows:
                value = sol.get(target.name)
                if value is not None:
                    resources[value] = None
        else:
            resources[target] = None
    out: dict = {}
    memory = executor.memory
    for resource in resources:
        if type(resource) is Literal:
            continue
        for b in executor.match(DEFAULT, resource, Var(".p"), Var(".o")):
            triple = (resource, b[".p"], b[".o"])
            if memory is not None and triple not in out:
                memory.take(sum(map(value_size, triple)), "DESCRIBE")
            out[triple] = None
    return list(out)


def explain(source_or_view: Any, text: str, *, base: str | None = None, versions: VersionContext | None = None) -> str:
    """The physical plan of a query as readable text (what ``EXPLAIN <query>`` prints)."""
    if versions is None:
        versions = VersionContext.of(source_or_view)
    return explain_query(as_source(source_or_view), parse_query(text, base=base), versions=versions)


def explain_query(source: Any, query: Query, *, versions: VersionContext | None = None) -> str:
    """The plan of a parsed query, headed by its form, dataset and ``AT`` ref."""
    _, plan = prepare(source, query, versions)
    header = f"{query.form} query"
    if query.at is not None:
        header += " AT " + require(versions, "AT").label(query.at)
    if query.dataset.given:
        header += " FROM " + ", ".join(str(g) for g in query.dataset.default + query.dataset.named)
    return header + "\n" + explain_plan(plan, 1)



