"""The SPARQL algebra (W3C SPARQL 1.1, section 18) as frozen dataclasses.

A parsed query is a :class:`Query` whose ``pattern`` is a tree of algebra operators
(:class:`BGP`, :class:`Join`, :class:`LeftJoin`, :class:`Filter`, ...) over triple patterns and
expressions. RDF terms are ``nstore.terms`` values (:class:`IRI`, :class:`Literal`,
:class:`BNode`); variables are :class:`Var`.

>>> from nstore.terms import IRI
>>> bgp = BGP((Triple(Var("s"), IRI("http://ex/p"), Var("o")),))
>>> sorted(pattern_vars(bgp))
['o', 's']
>>> print(bgp)
BGP(?s <http://ex/p> ?o)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Union

from nstore.terms import IRI, BNode, Literal

__all__ = [
    "IRI",
    "BNode",
    "Literal",
    "Term",
    "Var",
    "Node",
    "Triple",
    "Expr",
    "Op",
    "Call",
    "FunctionCall",
    "Exists",
    "Aggregate",
    "Path",
    "PathLink",
    "PathInv",
    "PathSeq",
    "PathAlt",
    "PathMod",
    "PathNeg",
    "Pattern",
    "BGP",
    "PathPattern",
    "Join",
    "LeftJoin",
    "Filter",
    "Union",
    "Graph",
    "Extend",
    "Minus",
    "Values",
    "Group",
    "OrderBy",
    "Project",
    "Distinct",
    "Reduced",
    "Slice",
    "Service",
    "Changes",
    "Versions",
    "Dataset",
    "Query",
    "pattern_vars",
    "ordered_vars",
    "expr_vars",
    "term_str",
    "is_hidden",
]

Term = Union[IRI, Literal, BNode]


@dataclass(frozen=True, slots=True)
class Var:
    """A query variable, ``?name``. Blank nodes of a query become hidden variables
    (:func:`is_hidden`): they join like variables but are never projected."""

    name: str

    def __str__(self) -> str:
        return self.name if is_hidden(self.name) else "?" + self.name


def is_hidden(name: str) -> bool:
    """Whether a variable name stands for a query blank node or a helper variable (such
    names start with ``.``, which no SPARQL variable name can)."""
    return name.startswith(".")


Node = Union[Term, Var]


def term_str(node: object) -> str:
    """A short SPARQL-like rendering of a term, variable or None (the default graph)."""
    if node is None:
        return "DEFAULT"
    return str(node)


@dataclass(frozen=True, slots=True)
class Triple:
    """A triple pattern; any position may be a :class:`Var`."""

    s: Node
    p: Node
    o: Node

    def __str__(self) -> str:
        return f"{term_str(self.s)} {term_str(self.p)} {term_str(self.o)}"


# ---------------------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class Op:
    """An operator: ``||`` ``&&`` ``!`` ``=`` ``!=`` ``<`` ``>`` ``<=`` ``>=`` ``+`` ``-``
    ``*`` ``/`` ``u+`` ``u-`` (unary) ``IN`` ``NOT IN`` (first arg is the tested value)."""

    op: str
    args: tuple

    def __str__(self) -> str:
        if self.op in ("IN", "NOT IN"):
            return f"({self.args[0]} {self.op} ({', '.join(map(str, self.args[1:]))}))"
        if len(self.args) == 1:
            return f"{self.op.lstrip('u')}{self.args[0]}"
        return f"({self.args[0]} {self.op} {self.args[1]})"


@dataclass(frozen=True, slots=True)
class Call:
    """A built-in function call; ``name`` is upper-case (``STR``, ``REGEX``, ``BOUND``...)."""

    name: str
    args: tuple

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(str, self.args))})"


@dataclass(frozen=True, slots=True)
class FunctionCall:
    """A call of a function named by an IRI (XSD casts such as ``xsd:integer(?x)``)."""

    iri: IRI
    args: tuple
    distinct: bool = False

    def __str__(self) -> str:
        return f"{self.iri}({', '.join(map(str, self.args))})"


@dataclass(frozen=True, slots=True)
class Exists:
    """``EXISTS { pattern }`` (or ``NOT EXISTS`` when ``negated``)."""

    pattern: "Pattern"
    negated: bool = False

    def __str__(self) -> str:
        return ("NOT EXISTS" if self.negated else "EXISTS") + " {...}"


@dataclass(frozen=True, slots=True)
class Aggregate:
    """An aggregate: COUNT SUM MIN MAX AVG SAMPLE GROUP_CONCAT; ``arg`` None is ``*``."""

    name: str
    arg: "Expr | None"
    distinct: bool = False
    separator: str = " "

    def __str__(self) -> str:
        inner = "*" if self.arg is None else str(self.arg)
        return f"{self.name}({'DISTINCT ' if self.distinct else ''}{inner})"


Expr = Union[Var, IRI, Literal, BNode, Op, Call, FunctionCall, Exists, Aggregate]


# ---------------------------------------------------------------------------- property paths


@dataclass(frozen=True, slots=True)
class PathLink:
    iri: IRI

    def __str__(self) -> str:
        return str(self.iri)


@dataclass(frozen=True, slots=True)
class PathInv:
    path: "Path"

    def __str__(self) -> str:
        return f"^{self.path}"


@dataclass(frozen=True, slots=True)
class PathSeq:
    paths: tuple

    def __str__(self) -> str:
        return "(" + "/".join(map(str, self.paths)) + ")"


@dataclass(frozen=True, slots=True)
class PathAlt:
    paths: tuple

    def __str__(self) -> str:
        return "(" + "|".join(map(str, self.paths)) + ")"


@dataclass(frozen=True, slots=True)
class PathMod:
    """``path*`` (mod ``*``), ``path+`` or ``path?``."""

    path: "Path"
    mod: str

    def __str__(self) -> str:
        return f"{self.path}{self.mod}"


@dataclass(frozen=True, slots=True)
class PathNeg:
    """``!(iri | ^iri ...)``: forward IRIs in ``iris``, inverse ones in ``inverse``."""

    iris: tuple
    inverse: tuple

    def __str__(self) -> str:
        items = [str(i) for i in self.iris] + ["^" + str(i) for i in self.inverse]
        return "!(" + "|".join(items) + ")"


Path = Union[PathLink, PathInv, PathSeq, PathAlt, PathMod, PathNeg]


# ---------------------------------------------------------------------------- graph patterns


@dataclass(frozen=True, slots=True)
class BGP:
    """A basic graph pattern: triple patterns that must all match (in any order)."""

    triples: tuple = ()

    def __str__(self) -> str:
        return "BGP(" + " . ".join(map(str, self.triples)) + ")"


@dataclass(frozen=True, slots=True)
class PathPattern:
    """A property path between two nodes that is not a plain triple."""

    s: Node
    path: Path
    o: Node

    def __str__(self) -> str:
        return f"Path({term_str(self.s)} {self.path} {term_str(self.o)})"


@dataclass(frozen=True, slots=True)
class Join:
    left: "Pattern"
    right: "Pattern"


@dataclass(frozen=True, slots=True)
class LeftJoin:
    """``left OPTIONAL { right FILTER(expr) }``; ``expr`` None means true."""

    left: "Pattern"
    right: "Pattern"
    expr: "Expr | None" = None


@dataclass(frozen=True, slots=True)
class Filter:
    expr: Expr
    pattern: "Pattern"


@dataclass(frozen=True, slots=True)
class Union:  # noqa: F811 - the algebra operator shadows typing.Union below this line
    left: "Pattern"
    right: "Pattern"


@dataclass(frozen=True, slots=True)
class Graph:
    """``GRAPH name { pattern }``; ``name`` is an IRI or a Var."""

    name: Node
    pattern: "Pattern"


@dataclass(frozen=True, slots=True)
class Extend:
    """``BIND(expr AS ?var)`` over ``pattern``."""

    pattern: "Pattern"
    var: Var
    expr: Expr


@dataclass(frozen=True, slots=True)
class Minus:
    left: "Pattern"
    right: "Pattern"


@dataclass(frozen=True, slots=True)
class Values:
    """Inline data: ``rows`` are tuples of terms (None: UNDEF), one per variable in ``vars``."""

    vars: tuple
    rows: tuple


@dataclass(frozen=True, slots=True)
class Group:
    """Grouping and aggregation: ``keys`` are ``(expr, Var | None)`` (the Var is bound to the
    key in the output); ``aggregates`` are ``(Var, Aggregate)`` computed per group."""

    pattern: "Pattern"
    keys: tuple
    aggregates: tuple


@dataclass(frozen=True, slots=True)
class OrderBy:
    """``conditions`` are ``(expr, ascending)`` pairs."""

    pattern: "Pattern"
    conditions: tuple


@dataclass(frozen=True, slots=True)
class Project:
    pattern: "Pattern"
    vars: tuple


@dataclass(frozen=True, slots=True)
class Distinct:
    pattern: "Pattern"


@dataclass(frozen=True, slots=True)
class Reduced:
    pattern: "Pattern"


@dataclass(frozen=True, slots=True)
class Slice:
    pattern: "Pattern"
    offset: int = 0
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class Service:
    """``SERVICE`` (parsed so it can be reported; never evaluated)."""

    name: Node
    pattern: "Pattern"
    silent: bool = False


@dataclass(frozen=True, slots=True)
class Changes:
    """datae's ``CHANGES FROM start TO end``: ``pattern`` matched against the quads added
    from ``start`` to ``end`` (``var`` bound to ``"+"``) and against the quads removed
    (``var`` bound to ``"-"``). ``end`` None is the ref the query runs at."""

    pattern: "Pattern"
    start: str
    end: str | None = None
    var: Var = Var("op")


@dataclass(frozen=True, slots=True)
class Versions:
    """datae's ``VERSIONS``: each solution of ``pattern`` in each commit of ``ref``'s ancestry
    where it holds, with ``var`` bound to that commit's id. ``ref`` None is the ref the
    query runs at."""

    pattern: "Pattern"
    ref: str | None = None
    var: Var = Var("commit")


Pattern = "BGP | PathPattern | Join | LeftJoin | Filter | Union | Graph | Extend | Minus | Values | Group | OrderBy | Project | Distinct | Reduced | Slice | Service | Changes | Versions"


@dataclass(frozen=True, slots=True)
class Dataset:
    """``FROM`` / ``FROM NAMED`` graphs; both empty means the store's own dataset.

    ``all_named`` keeps every named graph of the store while ``default`` replaces the default
    graph (what an update's ``WITH <g>`` means for its WHERE clause)."""

    default: tuple = ()
    named: tuple = ()
    all_named: bool = False

    @property
    def given(self) -> bool:
        return bool(self.default or self.named)


@dataclass(frozen=True)
class Query:
    """A whole query: ``form`` is SELECT, ASK, CONSTRUCT or DESCRIBE.

    ``pattern`` already holds the solution modifiers; ``vars`` are the projected variables
    (SELECT), ``template`` the triple patterns of a CONSTRUCT, ``describe`` the terms or
    variables of a DESCRIBE. ``at`` is the ref of an ``AT`` clause (None: the ref the query
    is run at); ``CHANGES`` and ``VERSIONS`` are :class:`Changes` / :class:`Versions` nodes
    inside ``pattern``.
    """

    form: str
    pattern: object
    vars: tuple = ()
    template: tuple = ()
    describe: tuple = ()
    dataset: Dataset = field(default_factory=Dataset)
    base: str | None = None
    prefixes: dict = field(default_factory=dict)
    order_vars: tuple = ()
    at: str | None = None


# ---------------------------------------------------------------------------- variables


def expr_vars(expr: object) -> set[str]:
    """Names of the variables an expression mentions (including inside EXISTS patterns)."""
    found: set[str] = set()
    _collect_expr(expr, found)
    return found


def _collect_expr(expr: object, found: set[str]) -> None:
    kind = type(expr)
    if kind is Var:
        found.add(expr.name)
    elif kind in (Op, Call, FunctionCall):
        for arg in expr.args:
            _collect_expr(arg, found)
    elif kind is Aggregate:
        if expr.arg is not None:
            _collect_expr(expr.arg, found)
    elif kind is Exists:
        found.update(pattern_vars(expr.pattern))


def pattern_vars(pattern: object) -> set[str]:
    """Names of the in-scope variables of ``pattern`` (SPARQL 1.1, section 18.2.1): those
    its solutions may bind."""
    return set(_walk_vars(pattern))


def ordered_vars(pattern: object) -> list[str]:
    """The in-scope variables of ``pattern`` in order of first appearance."""
    return list(dict.fromkeys(_walk_vars(pattern)))


def _node_vars(*nodes: object) -> Iterator[str]:
    for node in nodes:
        if type(node) is Var:
            yield node.name


def _walk_vars(p: object) -> Iterator[str]:
    kind = type(p)
    if kind is BGP:
        for t in p.triples:
            yield from _node_vars(t.s, t.p, t.o)
    elif kind is PathPattern:
        yield from _node_vars(p.s, p.o)
    elif kind in (Join, Union, LeftJoin):
        yield from _walk_vars(p.left)
        yield from _walk_vars(p.right)
    elif kind is Minus:
        yield from _walk_vars(p.left)
    elif kind is Filter:
        yield from _walk_vars(p.pattern)
    elif kind in (Graph, Service):
        yield from _node_vars(p.name)
        yield from _walk_vars(p.pattern)
    elif kind is Extend:
        yield from _walk_vars(p.pattern)
        yield p.var.name
    elif kind is Values:
        yield from (v.name for v in p.vars)
    elif kind is Group:
        for _, var in p.keys:
            if var is not None:
                yield var.name
        for var, _ in p.aggregates:
            yield var.name
    elif kind is Project:
        yield from (v.name for v in p.vars)
    elif kind in (OrderBy, Distinct, Reduced, Slice):
        yield from _walk_vars(p.pattern)
    elif kind in (Changes, Versions):
        if kind is Changes:
            yield p.var.name
        yield from _walk_vars(p.pattern)
        if kind is Versions:
            yield p.var.name
