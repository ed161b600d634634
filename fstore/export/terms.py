"""Quads as columns: the RDF term of every stored value, split into typed columns.

Pure Python (no pyarrow): :mod:`fstore.export.arrow` turns the lists made here into Arrow
arrays. Every value is described exactly as :func:`fstore.to_rdf` gives its RDF term:

* ``graph``, ``subject``, ``predicate`` hold the term's text (an IRI's value, a blank
  node's label) with its kind in ``graph_kind`` / ``subject_kind`` / ``predicate_kind``
  (``iri``, ``bnode`` or ``literal``); the default graph is ``graph = null``. A literal in
  those positions (fstore allows it; RDF does not) is written in N-Triples syntax
  (``"5"^^<http://www.w3.org/2001/XMLSchema#integer>``) so nothing is lost.
* ``object`` is the lexical form, ``object_kind`` its kind, ``datatype`` the datatype IRI of
  a literal (``xsd:string`` for a plain one, ``rdf:langString`` with a ``language``), and
  one typed column holds the value when its datatype has one: ``object_int`` (xsd:integer
  and its derived types, within 64 bits), ``object_double`` (xsd:double, xsd:float),
  ``object_decimal`` (xsd:decimal, within DECIMAL(38, 18)), ``object_bool``,
  ``object_date``, ``object_datetime`` (an xsd:dateTime with a time zone, as a UTC
  instant) or ``object_datetime_local`` (one without). The lexical form is always exact;
  a typed column is null when the value does not fit it.

>>> from fstore import IRI
>>> describe_object(IRI("urn:x"))[:4]
('urn:x', 'iri', None, None)
>>> describe_object(42)[:5]
('42', 'literal', 'http://www.w3.org/2001/XMLSchema#integer', None, 42)
>>> quad_columns([(None, IRI("urn:s"), IRI("urn:p"), "hi")])["datatype"]
['http://www.w3.org/2001/XMLSchema#string']
"""

from __future__ import annotations

import base64
import datetime as _dt
import re
from decimal import Decimal, InvalidOperation
from typing import Any, Callable, Iterable, Sequence

from ..values import IRI, BNode, Literal, to_rdf

__all__ = [
    "QUAD_COLUMNS",
    "NODE_COLUMNS",
    "OBJECT_COLUMNS",
    "TYPED_COLUMNS",
    "IRI_KIND",
    "BNODE_KIND",
    "LITERAL_KIND",
    "XSD_STRING",
    "RDF_LANGSTRING",
    "DECIMAL_PRECISION",
    "DECIMAL_SCALE",
    "describe_node",
    "describe_object",
    "quad_columns",
    "quad_from_row",
]

IRI_KIND, BNODE_KIND, LITERAL_KIND = "iri", "bnode", "literal"

XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_STRING = XSD + "string"
XSD_INTEGER = XSD + "integer"
XSD_BOOLEAN = XSD + "boolean"
XSD_DOUBLE = XSD + "double"
XSD_DECIMAL = XSD + "decimal"
XSD_DATE = XSD + "date"
XSD_DATETIME = XSD + "dateTime"
XSD_BASE64 = XSD + "base64Binary"
RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"

# object_decimal is DECIMAL(38, 18), Spark's type for Python decimals.
DECIMAL_PRECISION, DECIMAL_SCALE = 38, 18
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

NODE_COLUMNS = ("graph", "graph_kind", "subject", "subject_kind", "predicate", "predicate_kind")
TYPED_COLUMNS = ("object_int", "object_double", "object_decimal", "object_bool", "object_date",
                 "object_datetime", "object_datetime_local")
OBJECT_COLUMNS = ("object", "object_kind", "datatype", "language") + TYPED_COLUMNS
QUAD_COLUMNS = NODE_COLUMNS + OBJECT_COLUMNS

_INTEGER_TYPES = frozenset(XSD + name for name in (
    "integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
    "nonPositiveInteger", "negativeInteger", "unsignedLong", "unsignedInt", "unsignedShort",
    "unsignedByte"))
_INTEGER_RE = re.compile(r"[+-]?[0-9]+")
_DECIMAL_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_DOUBLE_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?INF|NaN")
_DATE_RE = re.compile(r"-?[0-9]{4,}-[0-9]{2}-[0-9]{2}")
_DATETIME_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2})?")

_N7 = (None,) * 7


# -- graph, subject, predicate ------------------------------------------------------------

def describe_node(value: Any) -> tuple[str | None, str | None]:
    """``(text, kind)`` of a value in the graph, subject or predicate position."""
    kind = type(value)
    if kind is IRI:
        return value.value, IRI_KIND
    if value is None:
        return None, None
    if kind is BNode:
        return value.id, BNODE_KIND
    return str(to_rdf(value)), LITERAL_KIND


def _node_texts(values: list) -> tuple[list, list]:
    texts = [v.value if type(v) is IRI else describe_node(v)[0] for v in values]
    kinds = [IRI_KIND if type(v) is IRI else describe_node(v)[1] for v in values]
    return texts, kinds


# -- objects ------------------------------------------------------------------------------

def _fits_decimal(value: Decimal) -> bool:
    if not value.is_finite():
        return False
    exponent = value.as_tuple().exponent
    if exponent < -DECIMAL_SCALE:  # more fractional digits than the scale keeps
        normal = value.normalize()
        if normal.as_tuple().exponent < -DECIMAL_SCALE:
            return False
        value = normal
    return value == 0 or value.adjusted() < DECIMAL_PRECISION - DECIMAL_SCALE


def _int_slot(number: int) -> int | None:
    return number if _INT64_MIN <= number <= _INT64_MAX else None


def _typed(datatype: str, lexical: str) -> tuple:
    """The seven typed columns of a literal given by its lexical form and datatype."""
    try:
        if datatype in _INTEGER_TYPES:
            if _INTEGER_RE.fullmatch(lexical):
                return (_int_slot(int(lexical)), None, None, None, None, None, None)
        elif datatype == XSD_DOUBLE or datatype == XSD + "float":
            if _DOUBLE_RE.fullmatch(lexical):
                return (None, float(lexical), None, None, None, None, None)
        elif datatype == XSD_DECIMAL:
            if _DECIMAL_RE.fullmatch(lexical):
                number = Decimal(lexical)
                return (None, None, number if _fits_decimal(number) else None, None, None, None, None)
        elif datatype == XSD_BOOLEAN:
            if lexical in ("true", "false", "1", "0"):
                return (None, None, None, lexical in ("true", "1"), None, None, None)
        elif datatype == XSD_DATE:
            if _DATE_RE.fullmatch(lexical):
                return (None, None, None, None, _dt.date.fromisoformat(lexical), None, None)
        elif datatype == XSD_DATETIME:
            if _DATETIME_RE.fullmatch(lexical):
                return _datetime_slots(_dt.datetime.fromisoformat(lexical))
    except (ValueError, OverflowError, InvalidOperation):
        pass
    return _N7


def _datetime_slots(value: _dt.datetime) -> tuple:
    if value.utcoffset() is None:
        return (None, None, None, None, None, None, value)
    return (None, None, None, None, None, value.astimezone(_dt.timezone.utc), None)


def _describe_str(v: str) -> tuple:
    return (v, LITERAL_KIND, XSD_STRING, None) + _N7


def _describe_iri(v: IRI) -> tuple:
    return (v.value, IRI_KIND, None, None) + _N7


def _describe_bnode(v: BNode) -> tuple:
    return (v.id, BNODE_KIND, None, None) + _N7


def _describe_int(v: int) -> tuple:
    return (str(v), LITERAL_KIND, XSD_INTEGER, None, _int_slot(v), None, None, None, None, None, None)


def _describe_bool(v: bool) -> tuple:
    return ("true" if v else "false", LITERAL_KIND, XSD_BOOLEAN, None, None, None, None, v, None, None, None)


def _describe_float(v: float) -> tuple:
    return (to_rdf(v).lexical, LITERAL_KIND, XSD_DOUBLE, None, None, v, None, None, None, None, None)


def _describe_decimal(v: Decimal) -> tuple:
    slot = v if _fits_decimal(v) else None
    return (to_rdf(v).lexical, LITERAL_KIND, XSD_DECIMAL, None, None, None, slot, None, None, None, None)


def _describe_date(v: _dt.date) -> tuple:
    return (v.isoformat(), LITERAL_KIND, XSD_DATE, None, None, None, None, None, v, None, None)


def _describe_datetime(v: _dt.datetime) -> tuple:
    return (v.isoformat(), LITERAL_KIND, XSD_DATETIME, None) + _datetime_slots(v)


def _describe_bytes(v: bytes) -> tuple:
    return (base64.b64encode(v).decode("ascii"), LITERAL_KIND, XSD_BASE64, None) + _N7


def _describe_literal(v: Literal) -> tuple:
    if v.lang is not None:
        return (v.lexical, LITERAL_KIND, RDF_LANGSTRING, v.lang) + _N7
    if v.datatype is None:
        return (v.lexical, LITERAL_KIND, XSD_STRING, None) + _N7
    datatype = v.datatype.value
    return (v.lexical, LITERAL_KIND, datatype, None) + _typed(datatype, v.lexical)


def _describe_none(v: None) -> tuple:
    return (None, None, None, None) + _N7


_DESCRIBE: dict[type, Callable[[Any], tuple]] = {
    str: _describe_str,
    IRI: _describe_iri,
    BNode: _describe_bnode,
    Literal: _describe_literal,
    int: _describe_int,
    bool: _describe_bool,
    float: _describe_float,
    Decimal: _describe_decimal,
    _dt.date: _describe_date,
    _dt.datetime: _describe_datetime,
    bytes: _describe_bytes,
    type(None): _describe_none,
}


def describe_object(value: Any) -> tuple:
    """The values of :data:`OBJECT_COLUMNS` for one stored object value."""
    describe = _DESCRIBE.get(type(value))
    if describe is None:  # a subclass (fstore stores canonical values, so this is rare)
        return describe_object(_canonical_type(value))
    return describe(value)


def _canonical_type(value: Any) -> Any:
    for kind in (bool, int, float, str, bytes, _dt.datetime, _dt.date, Decimal):
        if isinstance(value, kind):
            return kind(value) if kind not in (_dt.datetime, _dt.date) else _exact_date(value, kind)
    raise TypeError(f"a quad cannot hold a {type(value).__name__} ({value!r:.80})")


def _exact_date(value: Any, kind: type) -> Any:
    if kind is _dt.datetime:
        return _dt.datetime(value.year, value.month, value.day, value.hour, value.minute, value.second,
                            value.microsecond, value.tzinfo, fold=value.fold)
    return _dt.date(value.year, value.month, value.day)


# -- whole quads --------------------------------------------------------------------------

def quad_columns(quads: Sequence[Sequence[Any]]) -> dict[str, list]:
    """Column lists (:data:`QUAD_COLUMNS`) for a batch of ``(graph, subject, predicate,
    object)`` tuples."""
    if not quads:
        return {name: [] for name in QUAD_COLUMNS}
    graphs, subjects, predicates, objects = zip(*quads)
    columns: dict[str, list] = {}
    for name, values in (("graph", graphs), ("subject", subjects), ("predicate", predicates)):
        columns[name], columns[name + "_kind"] = _node_texts(values)  # type: ignore[arg-type]
    described = zip(*map(describe_object, objects))
    for name, values in zip(OBJECT_COLUMNS, described):
        columns[name] = list(values)
    return {name: columns[name] for name in QUAD_COLUMNS}


def quad_from_row(row: dict[str, Any]) -> tuple:
    """The quad of RDF terms (``to_rdf`` of each stored value) that a row of
    :data:`QUAD_COLUMNS` stands for: the inverse of :func:`quad_columns`, for readers and
    tests."""

    def node(text: str | None, kind: str | None) -> Any:
        if kind is None:
            return None
        if kind == IRI_KIND:
            return IRI(text)
        if kind == BNODE_KIND:
            return BNode(text)
        return _parse_ntriples_literal(text)

    kind = row["object_kind"]
    if kind is None:
        obj: Any = None
    elif kind == IRI_KIND:
        obj = IRI(row["object"])
    elif kind == BNODE_KIND:
        obj = BNode(row["object"])
    else:
        obj = Literal(row["object"], None if row["language"] else row["datatype"], row["language"])
    return (node(row["graph"], row["graph_kind"]), node(row["subject"], row["subject_kind"]),
            node(row["predicate"], row["predicate_kind"]), obj)


_NT_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"(?:@([A-Za-z0-9-]+)|\^\^<([^>]*)>)?', re.S)
_NT_ESCAPES = {"n": "\n", "r": "\r"}


def _parse_ntriples_literal(text: str) -> Literal:
    match = _NT_LITERAL.fullmatch(text)
    if match is None:
        raise ValueError(f"not an N-Triples literal: {text!r:.80}")
    body, language, datatype = match.groups()
    lexical = re.sub(r"\\(.)", lambda m: _NT_ESCAPES.get(m.group(1), m.group(1)), body, flags=re.S)
    return Literal(lexical, datatype, language)
