"""Tables in SPARQL: the graph ``<urn:datae:dataset:NAME>`` answered from table ``NAME``'s
rows through the W3C Direct Mapping (IRIs and literals: :mod:`fstore.tables.direct_mapping`).
The store's query source (:class:`fstore.query_source.QuerySource`) hands the engine's
patterns on a table graph to :class:`TableGraphs`, and ``CHANGES`` on one to
:func:`graph_changes`.

A table graph is read only when a query names it (``FROM``, ``FROM NAMED``, ``GRAPH <iri>``):
it is not among the store's named graphs, so ``GRAPH ?g`` never binds one. Triple patterns
are answered without materialising the table:

* a bound subject (a row IRI) is one primary-key lookup;
* a bound predicate reads that column of each row as the rows stream by (``rdf:type``
  reads only the keys); a bound object on a one-column key is a key lookup too;
* estimates for the planner come from the row count (a key count, nothing decoded);
* a ``check`` given to :class:`TableGraphs` (a query's deadline) is called every 1,024
  rows a scan reads, matching or not: a pattern that matches nothing still reads them all.

Pattern items are RDF terms, ``Param()`` (in :meth:`TableGraphs.prepare`) or variables: any
other object with a ``name`` (the query engine's own variable type, which fstore does not
import; see :mod:`fstore.query_source`).

>>> import tempfile, fstore, fstore.tables as tables
>>> from fstore import Var
>>> repo = fstore.open(tempfile.mkdtemp())
>>> with repo.transaction("main", message="add") as tx:
...     t = tables.create(tx, "towns", [
...         {"id": "k", "name": "fid", "dataType": "integer", "primaryKeyIndex": 0},
...         {"id": "n", "name": "name", "dataType": "text"}])
...     t.insert({"fid": 1, "name": "Ōtaki"})
>>> view = repo.at("main")
>>> graphs = TableGraphs(lambda: view)
>>> g = IRI("urn:datae:dataset:towns")
>>> list(graphs.match((g, Var("r"), IRI("urn:datae:dataset:towns#name"), Var("n"))))
[{'r': IRI('urn:datae:dataset:towns/fid=1'), 'n': Literal('Ōtaki')}]
>>> graphs.estimate((g, Var("r"), Var("p"), Var("o")), 1000)
3
>>> repo.close()
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterator
from typing import Any

from nstore import Var
from nstore.store import Param
from nstore.terms import BNode, IRI, Literal

from nstore.terms import IRI

from ..view import View
from .access import following_table
from .dataset import pk_of_path
from .direct_mapping import RDF_TYPE, DirectMapping
from .frames import table_feature_chunks
from .mapping import FEATURE, dataset_name, is_dataset_graph

__all__ = ["TableGraphs", "TableGraph", "graph_changes", "store_item"]

_TYPE = -1  # the rdf:type "column"

_CHECK_EVERY = 1024  # rows a scan reads between two calls of its check (as query.limits)

Check = Callable[[], None]

Triple = tuple


class _Known:
    """What stays true of a table at one commit: its state (schema, legends), mapping and
    row count, kept across the queries on that commit (see :data:`_KNOWN`)."""

    __slots__ = ("state", "mapping", "rows")

    def __init__(self, state: Any, mapping: DirectMapping) -> None:
        self.state = state
        self.mapping = mapping
        self.rows: int | None = None


# Per repository, by (commit id, table name): each query on a view makes a new
# source, and reading schema.json and the legends again would cost more than a key lookup.
_KNOWN: "weakref.WeakKeyDictionary[Any, dict[tuple[str, str], _Known]]" = weakref.WeakKeyDictionary()
_KNOWN_PER_REPO = 256


class TableGraph:
    """One table's Direct Mapping triples, read from the table as patterns ask."""

    def __init__(self, current: Callable[[], Any], table: Any, known: _Known, check: Check | None = None) -> None:
        self._current = current
        self._check = check  # called every _CHECK_EVERY rows scanned (a deadline); may raise
        self.table = table
        self.known = known
        self.mapping = known.mapping
        key = self.mapping.key_columns
        self._key_lookup = self.mapping.key_positions[0] if len(key) == 1 else None

    # -- sizes --------------------------------------------------------------------------
    def row_count(self) -> int:
        """The number of rows (counted once per commit, keys only)."""
        known = self.known
        if known.rows is None:
            known.rows = self._current().count_table_tuples((self.table.graph, Var("s"), FEATURE, Var("o")))
        return known.rows

    def estimate(self, s: Any, p: Any, o: Any, cap: int) -> int:
        """Matches of a triple pattern, no row read: a bound subject or an object bound on a
        one-column key names one row at most; else from the row count, which may exceed
        ``cap`` (the planner takes a number above its cap as known rather than capped)."""
        column = self._column(p)
        if column is None:
            return 0
        if type(s) is not Var or (type(o) is not Var and column == self._key_lookup):
            return min(self._in_one_row(s, column, o), cap)
        rows = self.row_count()
        if column == _TYPE:
            return rows if type(o) is Var or o == self.mapping.table else 0
        if type(p) is Var:
            return rows * (len(self.mapping.columns) + 1) if type(o) is Var else max(1, rows // 100)
        return rows if type(o) is Var else max(1, rows // 100)  # a guess: a value is rare

    def _in_one_row(self, s: Any, column: Any, o: Any) -> int:
        """The most triples a pattern naming one row (by its IRI or its key cell) matches.
        Not read: finding the row is a scan for a key type without a parser, and the
        planner estimates a pattern several times before any deadline applies."""
        mapping = self.mapping
        if (mapping.key_of(s) if type(s) is not Var else mapping.key_of_cell(o)) is None:
            return 0  # no row of this table can have it (parsing, no read)
        if column is ...:
            return len(mapping.columns) + 1  # its type and each cell
        if column == _TYPE:
            return 1 if type(o) is Var or o == mapping.table else 0
        return 1

    # -- reading ------------------------------------------------------------------------
    def _column(self, p: Any) -> Any:
        """``_TYPE``, a column position, ``...`` for any predicate, or None for none."""
        if type(p) is Var:
            return ...
        if p == RDF_TYPE:
            return _TYPE
        return self.mapping.by_predicate.get(p)

    def _row(self, key: tuple) -> Iterator[tuple[tuple, list]]:
        table = self.table
        path = table.path_structure.encode_path(key)
        blob = table.blob_at(path)
        if blob is not None:
            yield key, table.reader.stored_values(path, blob, key)

    def _scan(self, values: bool) -> Iterator[tuple[tuple, list | None]]:
        """``(key, stored values)`` of every row (values None when not wanted: only the keys
        are decoded), read in chunks, each chunk's keys and values decoded in bulk: at a
        commit, the snapshot's rows in key order, then the others."""
        reader = self.table.reader
        check = self._check
        count = 0
        for paths, blobs in table_feature_chunks(self.table, _CHECK_EVERY):
            if check is not None and count:
                check()
            count += len(blobs)
            pks = reader.bulk_pks(paths)
            keys = [tuple(pk) for pk in pks] if pks is not None else [tuple(pk_of_path(path)) for path in paths]
            if not values:
                yield from ((key, None) for key in keys)
                continue
            yield from zip(keys, map(list, zip(*reader.stored_columns(paths, blobs))))

    def _rows_of(self, s: Any, column: Any, o: Any) -> Iterator[tuple[tuple, list | None]]:
        mapping = self.mapping
        if type(s) is not Var:
            key = mapping.key_of(s)
            if key is None:
                return iter(())
            if key == ():  # a key type without a lookup: compare IRIs
                return ((k, v) for k, v in self._scan(True) if mapping.row_iri(k) == s)
            return self._row(key)
        if column == self._key_lookup and type(o) is not Var:
            key = mapping.key_of_cell(o)
            if key is None:
                return iter(())
            if key != ():
                return self._row(key)
        return self._scan(column != _TYPE)

    def row_triples(self, key: tuple) -> Iterator[Triple]:
        """The triples of the row with stored key ``key`` (none if there is no such row)."""
        for found, values in self._row(key):
            yield from self.mapping.triples(found, values)

    def triples(self, s: Any, p: Any, o: Any) -> Iterator[Triple]:
        """The mapped triples matching ``(s, p, o)`` (terms or variables; a repeated
        variable is checked by the caller)."""
        column = self._column(p)
        if column is None:
            return
        mapping = self.mapping
        o_free = type(o) is Var
        if column == _TYPE:
            if not o_free and o != mapping.table:
                return
            for key, _ in self._rows_of(s, column, o):
                yield mapping.row_iri(key), RDF_TYPE, mapping.table
            return
        if column is ...:
            for key, values in self._rows_of(s, column, o):
                for triple in mapping.triples(key, values):
                    if o_free or triple[2] == o:
                        yield triple
            return
        literal = mapping.literals[column]
        if o_free:
            for key, values in self._rows_of(s, column, o):
                value = values[column]
                if value is not None:
                    yield mapping.row_iri(key), p, literal(value)
            return
        # A bound object: whether a stored value maps to it is worked out once per distinct
        # value (a column holds few), not by building a literal for every row.
        matches: dict = {}
        for key, values in self._rows_of(s, column, o):
            value = values[column]
            if value is None:
                continue
            try:
                hit = matches.get((type(value), value))
            except TypeError:  # a json list or dict
                hit = literal(value) == o
            else:
                if hit is None:
                    if len(matches) > 4096:  # many distinct values: keep memory bounded
                        matches.clear()
                    hit = matches[(type(value), value)] = literal(value) == o
            if hit:
                yield mapping.row_iri(key), p, o


class TableGraphs:
    """The table graphs of whatever ``current()`` reads (a view, a pinned view or a
    transaction), as a quad source for patterns whose graph is a table graph: what
    :class:`fstore.query_source.QuerySource` asks when a pattern names one. ``check`` (a
    query's deadline) is called every 1,024 rows a table scan reads."""

    is_table_graph = staticmethod(is_dataset_graph)  # the graphs it answers

    def __init__(self, current: Callable[[], Any], check: Check | None = None) -> None:
        self._current = current
        self._check = check
        self._graphs: dict[IRI, TableGraph | None] = {}

    def graph(self, iri: IRI) -> TableGraph | None:
        """The table graph ``iri`` names, None if there is no such table (an empty graph)."""
        if iri not in self._graphs:
            self._graphs[iri] = self._open(iri)
        return self._graphs[iri]

    def _open(self, iri: IRI) -> TableGraph | None:
        name = dataset_name(iri)
        if name is None:
            return None
        now = self._current()
        # Known per commit id (content-addressed, never reused); a transaction changes.
        commit = now.commit_id if isinstance(now, View) else None
        known_here = _KNOWN.setdefault(now.repo, {}) if commit is not None else {}
        known = known_here.get((commit, name))
        table = following_table(self._current, name, known.state if known is not None else None)
        if table is None:
            return None
        if known is None:
            known = _Known(table.state, DirectMapping(table.name, table.schema))
            if len(known_here) >= _KNOWN_PER_REPO:
                known_here.clear()
            known_here[(commit, name)] = known
        return TableGraph(self._current, table, known, self._check)

    def match(self, pattern: tuple, within: Any = None) -> Iterator[dict]:
        """Bindings of ``(graph, s, p, o)`` (``within`` is ignored: filters still run)."""
        g, s, p, o = pattern
        graph = self.graph(g)
        if graph is None:
            return iter(())
        s, p, o = store_item(s), store_item(p), store_item(o)
        return _bindings(graph.triples(s, p, o), (s, p, o))

    def prepare(self, pattern: tuple) -> Callable[..., Iterator[dict]]:
        """``match`` for a pattern with ``Param()`` items, given their values in order."""
        slots = [i for i, item in enumerate(pattern) if type(item) is Param]

        def run(*values: Any) -> Iterator[dict]:
            filled = list(pattern)
            for at, value in zip(slots, values):
                filled[at] = value
            return self.match(tuple(filled))

        return run

    def count(self, pattern: tuple) -> int:
        return sum(1 for _ in self.match(pattern))

    def estimate(self, pattern: tuple, cap: int) -> int:
        g, s, p, o = pattern
        graph = self.graph(g)
        return 0 if graph is None else graph.estimate(store_item(s), store_item(p), store_item(o), cap)


_CONSTANTS = frozenset({IRI, BNode, Literal, type(None), Param, Var})


def store_item(item: Any) -> Any:
    """``item`` as the store reads it: a term (or ``Param()``, or a store ``Var``) as it is,
    any other object (the query engine's variable) as the store ``Var`` of its ``name``.

    >>> class QueryVar:  # what an engine's variable looks like to the store
    ...     name = "x"
    >>> store_item(QueryVar()), store_item(IRI("urn:a"))
    (Var('x'), IRI('urn:a'))
    """
    return item if type(item) in _CONSTANTS else Var(item.name)


def _bindings(triples: Iterator[Triple], items: tuple) -> Iterator[dict]:
    """``{name: term}`` per triple for the pattern's variables (a variable repeated in the
    pattern must hold the same term in each place)."""
    slots: dict[str, list[int]] = {}
    for at, item in enumerate(items):
        if type(item) is Var:
            slots.setdefault(item.name, []).append(at)
    if all(len(at) == 1 for at in slots.values()):
        pairs = [(name, at[0]) for name, at in slots.items()]
        for triple in triples:
            yield {name: triple[at] for name, at in pairs}
        return
    for triple in triples:
        if all(triple[at[0]] == triple[i] for at in slots.values() for i in at[1:]):
            yield {name: triple[at[0]] for name, at in slots.items()}


def graph_changes(before: Any, after: Any, graph: IRI, check: Check | None = None) -> tuple[list[tuple], list[tuple]]:
    """The quads of table graph ``graph`` added and removed from view ``before`` to view
    ``after`` (what ``CHANGES`` reads). With the same schema on both sides only the rows the
    table's diff lists are read, so the cost is that of the changes; across a schema change
    (whose column IRIs may differ) or where the table is on one side only, both sides are
    read whole, calling ``check`` (a deadline) every 1,024 rows."""
    old = TableGraphs(lambda: before, check).graph(graph)
    new = TableGraphs(lambda: after, check).graph(graph)
    if old is None and new is None:
        return [], []
    if old is not None and new is not None and old.table.schema == new.table.schema:
        diff = after.repo.table_diff(before.commit_id, after.commit_id, old.table.name, python=False)
        names = [c.name for c in new.table.schema.pk_columns]
        keys = {tuple(row[n] for n in names) for row in diff.inserted + diff.deleted}
        keys.update(tuple(change.pk) for change in diff.updated)
        was = {t for key in keys for t in old.row_triples(key)}
        now = {t for key in keys for t in new.row_triples(key)}
    else:
        anything = (Var("s"), Var("p"), Var("o"))
        was = set(old.triples(*anything)) if old is not None else set()
        now = set(new.triples(*anything)) if new is not None else set()
    return [(graph, *t) for t in now - was], [(graph, *t) for t in was - now]
