"""The transformer rules of SPARQL 1.1 Update (``update`` in ``sparql.lark``).

:class:`UpdateRules` is mixed into the query transformer of :mod:`query.parser`, whose state
(prefixes, base, blank-node labels) it shares: an update's IRIs, literals and WHERE clauses
are transformed by the same rules as a query's. It checks what the grammar cannot:
variables in ``INSERT DATA`` / ``DELETE DATA``, blank nodes in ``DELETE`` templates, and a
blank-node label used by two ``INSERT DATA`` operations of one request.

>>> from query.parser import parse_update
>>> op = parse_update("DELETE WHERE { ?s <urn:p> ?o }").operations[0]
>>> op.form, op.delete
('DELETE WHERE', ((None, Var(name='s'), IRI('urn:p'), Var(name='o')),))
>>> parse_update("DELETE DATA { _:b <urn:p> 1 }")
Traceback (most recent call last):
...
query.errors.QuerySyntaxError: blank nodes are not allowed in DELETE DATA
"""

from __future__ import annotations

from typing import Any

from lark import Token

from .algebra import Dataset, Triple, Var
from .errors import QuerySyntaxError
from nstore.terms import BNode, IRI
from .translate import GraphSyntax, GroupSyntax, TriplesSyntax, translate_group
from .updates import Clear, Create, DeleteData, Drop, InsertData, Load, Modify, Transfer, UpdateRequest, has_bnodes

__all__ = ["UpdateRules", "quads_pattern"]

# Hidden variables the parser makes for blank nodes: labelled (.l), [] (.b), collection cells (.c).
_BNODE_VAR_PREFIXES = (".l", ".b", ".c")


def _as_bnode(item: Any) -> Any:
    """A blank node of a template: the parser's hidden variable becomes a BNode."""
    if type(item) is Var and item.name.startswith(_BNODE_VAR_PREFIXES):
        return BNode(item.name[1:])
    return item


def quads_pattern(quads: tuple) -> Any:
    """The algebra of a quad pattern used as a WHERE clause (``DELETE WHERE``): its
    default-graph triples as one BGP, each ``GRAPH`` block as a graph pattern."""
    elements: list = []
    by_graph: dict = {}
    for g, s, p, o in quads:
        by_graph.setdefault(g, []).append(Triple(s, p, o))
    for g, triples in by_graph.items():
        if g is None:
            elements.insert(0, TriplesSyntax(triples))
        else:
            elements.append(GraphSyntax(g, GroupSyntax([TriplesSyntax(triples)])))
    return translate_group(GroupSyntax(elements))


def _silent(items: list) -> tuple[bool, list]:
    rest = [i for i in items if not (type(i) is Token and i.type == "SILENT")]
    return len(rest) != len(items), rest


class UpdateRules:
    """Transformer methods for the update rules (a mixin of the query transformer)."""

    prefixes: dict
    base: str | None
    bnode_labels: dict

    def blank_node_used(self, label: str) -> None:
        """Called by the query transformer for each labelled blank node it meets."""
        self.__dict__.setdefault("_current_labels", set()).add(label)

    def _end_operation(self, data: bool = False) -> None:
        """Blank-node labels of ``INSERT DATA`` may not be shared between operations of
        one request (a grammar note of SPARQL 1.1 Update); template blank nodes are fresh
        for each solution anyway."""
        current = self.__dict__.pop("_current_labels", set())
        if not data:
            return
        finished = self.__dict__.setdefault("_finished_labels", set())
        reused = current & finished
        if reused:
            raise QuerySyntaxError(f"blank node _:{sorted(reused)[0]} is used in two INSERT DATA operations of one request")
        finished |= current

    # ------------------------------------------------------------------ quads

    def quads_not_triples(self, items: list) -> tuple:
        name = items[0]
        triples = items[1] if len(items) > 1 else []
        return ("GRAPH", name, triples)

    def quads(self, items: list) -> tuple:
        out: list = []
        for item in items:
            if type(item) is tuple and item and item[0] == "GRAPH":
                _, name, triples = item
                out.extend((name, t.s, t.p, t.o) for t in triples)
            else:
                out.extend((None, t.s, t.p, t.o) for t in item)
        return tuple(out)

    def quad_data(self, items: list) -> tuple:
        return tuple(tuple(_as_bnode(x) for x in quad) for quad in items[0])

    # ------------------------------------------------------------------ data operations

    def insert_data(self, items: list) -> InsertData:
        quads = items[0]
        _no_variables(quads, "INSERT DATA")
        self._end_operation(data=True)
        return InsertData(quads)

    def delete_data(self, items: list) -> DeleteData:
        quads = items[0]
        _no_variables(quads, "DELETE DATA")
        if has_bnodes(quads):
            raise QuerySyntaxError("blank nodes are not allowed in DELETE DATA")
        self._end_operation()
        return DeleteData(quads)

    def delete_where(self, items: list) -> Modify:
        quads = items[0]
        if has_bnodes(quads):
            raise QuerySyntaxError("blank nodes are not allowed in DELETE WHERE")
        self._end_operation()
        return Modify(quads, (), quads_pattern(quads), form="DELETE WHERE")

    # ------------------------------------------------------------------ DELETE / INSERT ... WHERE

    def with_clause(self, items: list) -> tuple:
        return ("WITH", items[0])

    def delete_clause(self, items: list) -> tuple:
        if has_bnodes(items[0]):
            raise QuerySyntaxError("blank nodes are not allowed in a DELETE template")
        return ("DELETE", items[0])

    def insert_clause(self, items: list) -> tuple:
        return ("INSERT", items[0])

    def using_default(self, items: list) -> tuple:
        return ("USING", items[0])

    def using_named(self, items: list) -> tuple:
        return ("USING NAMED", items[0])

    def modify(self, items: list) -> Modify:
        parts: dict = {"DELETE": (), "INSERT": ()}
        default, named = [], []
        with_graph = None
        where = items[-1]
        for item in items[:-1]:
            tag, value = item
            if tag == "WITH":
                with_graph = value
            elif tag == "USING":
                default.append(value)
            elif tag == "USING NAMED":
                named.append(value)
            else:
                parts[tag] = value
        using = Dataset(tuple(default), tuple(named)) if default or named else None
        self._end_operation()
        return Modify(parts["DELETE"], parts["INSERT"], translate_group(where), with_graph, using)

    # ------------------------------------------------------------------ graph management

    def graph_ref(self, items: list) -> IRI:
        return items[0]

    def graph_or_default(self, items: list) -> IRI:
        return items[0]

    def graph_ref_all(self, items: list) -> Any:
        return items[0]

    def default_graph(self, items: list) -> str:
        return "DEFAULT"

    def named_graphs(self, items: list) -> str:
        return "NAMED"

    def all_graphs(self, items: list) -> str:
        return "ALL"

    def load(self, items: list) -> Load:
        silent, rest = _silent(items)
        self._end_operation()
        return Load(rest[0], rest[1] if len(rest) > 1 else None, silent)

    def clear(self, items: list) -> Clear:
        silent, rest = _silent(items)
        self._end_operation()
        return Clear(rest[0], silent)

    def drop(self, items: list) -> Drop:
        silent, rest = _silent(items)
        self._end_operation()
        return Drop(rest[0], silent)

    def create(self, items: list) -> Create:
        silent, rest = _silent(items)
        self._end_operation()
        return Create(rest[0], silent)

    def _transfer(self, kind: str, items: list) -> Transfer:
        silent, rest = _silent(items)
        source, target = (None if g == "DEFAULT" else g for g in rest)
        self._end_operation()
        return Transfer(kind, source, target, silent)

    def add(self, items: list) -> Transfer:
        return self._transfer("ADD", items)

    def move(self, items: list) -> Transfer:
        return self._transfer("MOVE", items)

    def copy(self, items: list) -> Transfer:
        return self._transfer("COPY", items)

    # ------------------------------------------------------------------ the request

    def update_at(self, items: list) -> tuple:
        return ("AT", items[0])

    def update_tail(self, items: list) -> list:
        ops: list = []
        for item in items:
            if type(item) is list:
                ops.extend(item)
            elif item is not None:
                ops.append(item)
        return ops

    def update(self, items: list) -> UpdateRequest:
        at = None
        ops: list = []
        for item in items:
            if type(item) is tuple and item and item[0] == "AT":
                at = item[1]
            elif type(item) is list:
                ops.extend(item)
            elif item is not None:
                ops.append(item)
        return UpdateRequest(tuple(ops), at, self.base, dict(self.prefixes))


def _no_variables(quads: tuple, where: str) -> None:
    for quad in quads:
        for item in quad:
            if type(item) is Var:
                raise QuerySyntaxError(f"variables are not allowed in {where}: {item}")
