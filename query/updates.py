"""SPARQL 1.1 Update operations as frozen dataclasses (the parser's output for updates).

A request is a sequence of operations run in order; datae runs a whole request in one fstore
transaction, so it becomes one commit (or none, if nothing changed). Quad templates are
tuples ``(graph, subject, predicate, object)``: graph None is the default graph (or the
graph of ``WITH``), any position may be a :class:`~query.algebra.Var` in DELETE / INSERT
templates, and :class:`~nstore.terms.BNode` items stand for fresh blank nodes.

>>> from query.parser import parse_update
>>> request = parse_update("PREFIX : <http://ex/> INSERT DATA { :a :p 1 } ; CLEAR GRAPH :g")
>>> [type(op).__name__ for op in request.operations]
['InsertData', 'Clear']
>>> request.operations[1].target
IRI('http://ex/g')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from .algebra import Dataset, Var
from nstore.terms import BNode, IRI

__all__ = [
    "Quad",
    "InsertData",
    "DeleteData",
    "Modify",
    "Load",
    "Clear",
    "Drop",
    "Create",
    "Transfer",
    "Operation",
    "UpdateRequest",
    "GraphTarget",
    "template_vars",
    "has_bnodes",
]

Quad = tuple
"""``(graph, subject, predicate, object)``; graph None is the default graph."""

GraphTarget = Union[IRI, str]
"""An IRI, or one of ``"DEFAULT"``, ``"NAMED"``, ``"ALL"`` (for CLEAR / DROP)."""


@dataclass(frozen=True)
class InsertData:
    """``INSERT DATA { ... }``: ground quads (blank nodes become fresh blank nodes)."""

    quads: tuple


@dataclass(frozen=True)
class DeleteData:
    """``DELETE DATA { ... }``: ground quads without blank nodes."""

    quads: tuple


@dataclass(frozen=True)
class Modify:
    """``[WITH g] DELETE {...} INSERT {...} [USING ...] WHERE {...}`` (and ``DELETE WHERE``).

    The WHERE pattern is evaluated first; then the DELETE template instantiated with every
    solution is removed and the INSERT template added (SPARQL 1.1 Update, 3.1.3).
    ``using`` is the WHERE clause's dataset (None: the store's, or ``with_graph`` as its
    default graph)."""

    delete: tuple
    insert: tuple
    where: Any
    with_graph: IRI | None = None
    using: Dataset | None = None
    form: str = "DELETE/INSERT"  # or "DELETE WHERE"


@dataclass(frozen=True)
class Load:
    """``LOAD <document> [INTO GRAPH g]`` (datae loads ``file:`` IRIs)."""

    source: IRI
    into: IRI | None = None
    silent: bool = False


@dataclass(frozen=True)
class Clear:
    """``CLEAR GRAPH g | DEFAULT | NAMED | ALL``: remove the quads of the graph(s)."""

    target: GraphTarget
    silent: bool = False


@dataclass(frozen=True)
class Drop:
    """``DROP ...``: in datae the same as CLEAR (a graph exists while it has quads)."""

    target: GraphTarget
    silent: bool = False


@dataclass(frozen=True)
class Create:
    """``CREATE GRAPH g``: fails if ``g`` already has quads (unless SILENT); otherwise
    nothing to do, since empty graphs are not stored."""

    graph: IRI
    silent: bool = False


@dataclass(frozen=True)
class Transfer:
    """``ADD`` / ``MOVE`` / ``COPY`` from one graph to another (None: the default graph)."""

    kind: str  # "ADD" | "MOVE" | "COPY"
    source: IRI | None
    target: IRI | None
    silent: bool = False


Operation = Union[InsertData, DeleteData, Modify, Load, Clear, Drop, Create, Transfer]


@dataclass(frozen=True)
class UpdateRequest:
    """A parsed update request: its operations in order, the branch of a leading
    ``AT <branch>`` (None: the session's branch), and the prologue's base and prefixes."""

    operations: tuple
    at: str | None = None
    base: str | None = None
    prefixes: dict = field(default_factory=dict)


def template_vars(quads: tuple) -> set[str]:
    """Names of the variables a quad template mentions."""
    return {item.name for quad in quads for item in quad if type(item) is Var}


def has_bnodes(quads: tuple) -> bool:
    """Whether a quad template holds blank nodes."""
    return any(type(item) is BNode for quad in quads for item in quad)
