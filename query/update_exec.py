"""Applying SPARQL 1.1 Update operations to an open fstore transaction.

Operations run in order, each seeing the writes of the ones before (a transaction reads its
own writes). ``DELETE / INSERT ... WHERE`` evaluates its WHERE clause completely before
changing anything, then removes the DELETE template's quads and adds the INSERT template's,
for every solution (SPARQL 1.1 Update, 3.1.3): a template quad with an unbound variable, a
literal subject or a non-IRI predicate is left out, an INSERT one with a value the store
refuses (an IRI that breaks RFC 3987...) too, and template blank nodes are fresh for
each solution. The transaction, not this module, makes the commit.

>>> import tempfile, fstore
>>> from query.parser import parse_update
>>> repo = fstore.open(tempfile.mkdtemp())
>>> text = 'INSERT DATA { <urn:a> <urn:n> 1 } ; DELETE { ?s <urn:n> ?n } INSERT { ?s <urn:n> 2 } WHERE { ?s <urn:n> ?n }'
>>> with repo.transaction("main", message=text) as tx:
...     stats = apply_update(tx, parse_update(text))
>>> stats
UpdateStats(operations=2, deleted=1, inserted=2)
>>> [b["o"].value for b in fstore.from_(repo.at("main"), None, fstore.IRI("urn:a"), fstore.IRI("urn:n"), fstore.Var("o"))]
[2]
>>> repo.close()
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

import fstore
from nstore.terms import canonical
from nstore.errors import DataeError

from .algebra import Dataset, Query, Var
from .errors import QueryTimeoutError, ReadOnlyGraphError, ResultTooLargeError, UpdateError
from .engine import prepare
from .limits import Deadline, Limits
from .loading import load_file
from .planner import explain_plan
from .source import as_source, table_graph_test
from nstore.terms import BNode, IRI, is_valid_term
from .updates import Clear, Create, DeleteData, Drop, InsertData, Load, Modify, Transfer, UpdateRequest

__all__ = ["apply_update", "explain_update", "UpdateStats", "instantiate", "where_dataset", "writable"]


@dataclass
class UpdateStats:
    """What a request asked for: operations run, quads it deleted and inserted (intents:
    a quad already absent or present still counts; the commit records the real changes)."""

    operations: int = 0
    deleted: int = 0
    inserted: int = 0


def apply_update(tx: Any, request: UpdateRequest, limits: Limits | None = None, *,
                 load_dir: str | os.PathLike[str] | None = None) -> UpdateStats:
    """Run every operation of ``request`` in the open transaction ``tx``. An operation
    marked ``SILENT`` that fails is skipped; any other failure raises (and the caller's
    ``with`` block then commits nothing). Under ``limits``, the WHERE clauses of the
    request share one deadline and each holds at most ``limits.max_held_rows`` solutions:
    past them, a QueryTimeoutError or IntermediateTooLargeError, even under SILENT.
    ``LOAD <file:...>`` reads only files under ``load_dir`` (None: LOAD is refused; see
    :mod:`query.loading`)."""
    stats = UpdateStats()
    deadline = limits.deadline() if limits is not None else None
    held = limits.max_held_rows if limits is not None else None
    memory = limits.memory() if limits is not None else None
    is_table = table_graph_test(as_source(tx))  # which graphs the store answers from tables
    for op in request.operations:
        try:
            if type(op) is Load:  # the one operation that reads outside the store
                _load(tx, op, stats, load_dir, is_table)
            elif type(op) is Modify:
                _modify(tx, op, request, stats, is_table, deadline=deadline, max_held_rows=held, memory=memory)
            else:
                _APPLY[type(op)](tx, op, request, stats, is_table)
        except (QueryTimeoutError, ResultTooLargeError):
            raise  # a limit is not the operation failing: SILENT does not hide it
        except (DataeError, OSError):
            if not getattr(op, "silent", False):
                raise
        stats.operations += 1
    return stats


# ---------------------------------------------------------------------------- writing


def _fresh_bnode() -> BNode:
    return BNode("u" + uuid.uuid4().hex[:24])


def instantiate(template: Iterable[tuple], solution: dict, default_graph: Any, fresh: dict, *,
                checked: bool = False) -> Iterator[tuple]:
    """The quads of a template for one solution: variables replaced by their values, blank
    nodes by the fresh ones in ``fresh`` (label -> BNode, filled as needed), graph None by
    ``default_graph``; quads that would not be valid RDF are left out, and with ``checked``
    (an INSERT template) those in which a value of the solution is not a term the store
    accepts too (:func:`nstore.terms.is_valid_term`). The template's own terms are not
    checked: one the store refuses is a mistake in the request, which the write reports."""
    for quad in template:
        items = []
        for item in quad:
            kind = type(item)
            if kind is Var:
                item = solution.get(item.name)
                if item is None or (checked and not is_valid_term(item)):
                    break
            elif kind is BNode:
                found = fresh.get(item.id)
                if found is None:
                    found = fresh[item.id] = _fresh_bnode()
                item = found
            items.append(item)
        else:
            g, s, p, o = items
            if g is None:
                g = default_graph
            if type(s) not in (IRI, BNode) or type(p) is not IRI or (g is not None and type(g) is not IRI):
                continue
            yield (g, s, p, o)


def _stored(quad: tuple) -> tuple:
    return tuple(None if v is None else canonical(v) for v in quad)


IsTable = Callable[[Any], bool]
"""Whether a graph names a table: the store's source's ``is_table_graph``."""


def writable(graph: Any, operation: str, is_table: IsTable) -> Any:
    """``graph``, or :class:`ReadOnlyGraphError` if it names a table (tables are read-only
    in SPARQL: their graphs are the Direct Mapping of rows, see
    :mod:`fstore.tables.sparql_graphs`).

    >>> from fstore import IRI
    >>> writable(IRI("urn:g"), "INSERT", lambda graph: False)
    IRI('urn:g')
    """
    if is_table(graph):
        raise ReadOnlyGraphError(graph, operation)
    return graph


def _delete(tx: Any, quads: Iterable[tuple], stats: UpdateStats, is_table: IsTable) -> None:
    quads = list(quads)
    for quad in quads:  # every graph checked before the first write
        writable(quad[0], "DELETE", is_table)
    for quad in quads:
        fstore.rm(tx, *_stored(quad))
        stats.deleted += 1


def _insert(tx: Any, quads: Iterable[tuple], stats: UpdateStats, is_table: IsTable) -> None:
    quads = list(quads)
    for quad in quads:
        writable(quad[0], "INSERT", is_table)
    for quad in quads:
        fstore.add(tx, *_stored(quad))
        stats.inserted += 1


# ---------------------------------------------------------------------------- operations


def _insert_data(tx: Any, op: InsertData, request: UpdateRequest, stats: UpdateStats, is_table: IsTable) -> None:
    _insert(tx, list(instantiate(op.quads, {}, None, {})), stats, is_table)


def _delete_data(tx: Any, op: DeleteData, request: UpdateRequest, stats: UpdateStats, is_table: IsTable) -> None:
    _delete(tx, list(instantiate(op.quads, {}, None, {})), stats, is_table)


def _modify(tx: Any, op: Modify, request: UpdateRequest, stats: UpdateStats, is_table: IsTable, *,
            deadline: Deadline | None = None, max_held_rows: int | None = None, memory: Any = None) -> None:
    # WITH <table> may give the WHERE clause its default graph; a template quad without a
    # GRAPH would write there. Refused before the WHERE runs, solutions or not.
    if any(quad[0] is None for quad in op.delete + op.insert):
        writable(op.with_graph, f"{op.form} WITH", is_table)
    for quad in op.delete + op.insert:
        if type(quad[0]) is not Var:
            writable(quad[0], op.form, is_table)

    # a new source: one made before the earlier operations' writes would list stale graphs
    executor, plan = prepare(as_source(tx), Query("SELECT", op.where, dataset=where_dataset(op), base=request.base),
                             deadline=deadline, max_held_rows=max_held_rows, memory=memory)
    # the whole WHERE first, then the changes
    solutions = list(executor.held(executor.solutions(plan), f"the WHERE of {op.form}"))
    deleted = [q for sol in solutions for q in instantiate(op.delete, sol, op.with_graph, {})]
    # removals take any value (a quad stored before terms were checked can still go), so
    # only the INSERT template leaves out the quads that the write would refuse
    inserted = [q for sol in solutions for q in instantiate(op.insert, sol, op.with_graph, {}, checked=True)]
    _delete(tx, deleted, stats, is_table)
    _insert(tx, inserted, stats, is_table)


def where_dataset(op: Modify) -> Dataset:
    """The dataset of a WHERE clause: ``USING`` graphs, else ``WITH``'s graph as the default
    graph (named graphs unchanged), else the store's."""
    if op.using is not None:
        return op.using
    if op.with_graph is not None:
        return Dataset((op.with_graph,), all_named=True)
    return Dataset()


def _graph_quads(tx: Any, target: Any, is_table: IsTable) -> list[tuple]:
    """The stored quads of a graph (None: the default graph), or of ``"NAMED"`` / ``"ALL"``
    / ``"DEFAULT"`` graphs."""
    V = fstore.Var
    if target in ("NAMED", "ALL"):
        rows = fstore.from_(tx, V("g"), V("s"), V("p"), V("o"))
        quads = [(b["g"], b["s"], b["p"], b["o"]) for b in rows]
        return [q for q in quads if q[0] is not None] if target == "NAMED" else quads
    if is_table(target):  # ADD / COPY / MOVE from a table: its mapped triples
        pattern = (target, Var("s"), Var("p"), Var("o"))
        return [(target, *(_stored((None, b["s"], b["p"], b["o"]))[1:])) for b in as_source(tx).match(pattern)]
    graph = None if target == "DEFAULT" else canonical(target)
    return [(graph, b["s"], b["p"], b["o"]) for b in fstore.from_(tx, graph, V("s"), V("p"), V("o"))]


def _clear(tx: Any, op: Clear | Drop, request: UpdateRequest, stats: UpdateStats, is_table: IsTable) -> None:
    writable(op.target, type(op).__name__.upper(), is_table)
    _delete(tx, _graph_quads(tx, op.target, is_table), stats, is_table)


def _create(tx: Any, op: Create, request: UpdateRequest, stats: UpdateStats, is_table: IsTable) -> None:
    writable(op.graph, "CREATE", is_table)
    if _graph_quads(tx, op.graph, is_table):
        raise UpdateError(f"CREATE GRAPH {op.graph}: the graph already exists (use CREATE SILENT to ignore)")


def _transfer(tx: Any, op: Transfer, request: UpdateRequest, stats: UpdateStats, is_table: IsTable) -> None:
    writable(op.target, op.kind, is_table)
    if op.kind == "MOVE":
        writable(op.source, op.kind, is_table)
    if op.source == op.target:
        return
    quads = _graph_quads(tx, "DEFAULT" if op.source is None else op.source, is_table)
    target = None if op.target is None else canonical(op.target)
    if op.kind in ("COPY", "MOVE"):
        _delete(tx, _graph_quads(tx, "DEFAULT" if op.target is None else op.target, is_table), stats, is_table)
    _insert(tx, [(target, s, p, o) for _, s, p, o in quads], stats, is_table)
    if op.kind == "MOVE":
        _delete(tx, quads, stats, is_table)


def _load(tx: Any, op: Load, stats: UpdateStats, load_dir: str | os.PathLike[str] | None, is_table: IsTable) -> None:
    writable(op.into, "LOAD", is_table)
    graph = None if op.into is None else canonical(op.into)  # SPARQL: the default graph
    stats.inserted += load_file(tx, op.source.value, load_dir, graph)


def explain_update(source: Any, request: UpdateRequest, branch: str) -> str:
    """What ``EXPLAIN`` prints for an update: its operations and the plans of their WHERE
    clauses over ``source`` (the branch's head; later operations may see earlier writes)."""
    lines = [f"UPDATE on branch {branch} (one commit)"]
    for op in request.operations:
        kind = type(op)
        if kind in (InsertData, DeleteData):
            lines.append(f"  {'INSERT' if kind is InsertData else 'DELETE'} DATA  ({len(op.quads)} quads)")
        elif kind is Modify:
            graph = f" WITH {op.with_graph}" if op.with_graph is not None else ""
            lines.append(f"  {op.form}{graph}  (delete template {len(op.delete)} quads, insert template {len(op.insert)} quads, per solution of:)")
            _, plan = prepare(source, Query("SELECT", op.where, dataset=where_dataset(op), base=request.base))
            lines.append(explain_plan(plan, 2))
        elif kind is Transfer:
            lines.append(f"  {op.kind} {op.source or 'DEFAULT'} TO {op.target or 'DEFAULT'}")
        else:
            target = getattr(op, "target", None) or getattr(op, "graph", None) or getattr(op, "source", "")
            lines.append(f"  {kind.__name__.upper()} {target}")
    return "\n".join(lines)


_APPLY = {
    InsertData: _insert_data,
    DeleteData: _delete_data,
    Modify: _modify,
    Clear: _clear,
    Drop: _clear,
    Create: _create,
    Transfer: _transfer,
}
