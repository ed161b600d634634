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
from decimal import Decimal, InvalidOperation
from itertools import repeat
from operator import attrgetter
from typing import Any, Callable, Sequence

from nstore import terms as _xsd
from nstore.pack import BNODE_CODE, IRI_CODE, LITERAL_CODE, STRING
from nstore.terms import (DATE_LEXICAL, DATETIME_LEXICAL, DEC, INT, IRI, NUMERIC_KINDS, BNode, Literal, parse_boolean,
                          parse_numeric, parse_term, to_rdf)

from ..tables.types import DECIMAL_PRECISION, DECIMAL_SCALE  # object_decimal is DECIMAL(38, 18)

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
    "packed_quad_columns",
    "quad_from_row",
]

IRI_KIND, BNODE_KIND, LITERAL_KIND = "iri", "bnode", "literal"

# Datatype IRIs as the text columns hold them (the term model's names, nstore.terms).
XSD = _xsd.XSD
XSD_STRING = _xsd.XSD_STRING.value
XSD_INTEGER = _xsd.XSD_INTEGER.value
XSD_BOOLEAN = _xsd.XSD_BOOLEAN.value
XSD_DOUBLE = _xsd.XSD_DOUBLE.value
XSD_DECIMAL = _xsd.XSD_DECIMAL.value
XSD_DATE = _xsd.XSD_DATE.value
XSD_DATETIME = _xsd.XSD_DATETIME.value
XSD_BASE64 = _xsd.XSD_BASE64.value
RDF_LANGSTRING = _xsd.RDF_LANGSTRING.value

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

NODE_COLUMNS = ("graph", "graph_kind", "subject", "subject_kind", "predicate", "predicate_kind")
TYPED_COLUMNS = ("object_int", "object_double", "object_decimal", "object_bool", "object_date",
                 "object_datetime", "object_datetime_local")
OBJECT_COLUMNS = ("object", "object_kind", "datatype", "language") + TYPED_COLUMNS
QUAD_COLUMNS = NODE_COLUMNS + OBJECT_COLUMNS

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


_NODE_KINDS = {IRI: IRI_KIND, BNode: BNODE_KIND, type(None): None}
_iri_value = attrgetter("value")


def _node_texts(values: Sequence[Any]) -> tuple[list, list]:
    """The text and kind columns of graph, subject or predicate values."""
    n = len(values)
    types = set(map(type, values))
    if types == {IRI}:  # the common case, in C loops
        return list(map(_iri_value, values)), [IRI_KIND] * n
    described = [describe_node(v) for v in values]
    return [d[0] for d in described], [d[1] for d in described]


# -- objects ------------------------------------------------------------------------------
# Each describer gives (lexical, kind, datatype, language, typed) where typed is None or
# (position in TYPED_COLUMNS, value): the typed columns are sparse.

INT, DOUBLE, DECIMAL, BOOL, DATE, DATETIME, DATETIME_LOCAL = range(7)


def _fits_decimal(value: Decimal) -> bool:
    """Whether DECIMAL(38, 18) holds the value exactly (trailing zeros dropped exactly:
    ``normalize()`` would round to the context's 28 digits)."""
    if not value.is_finite():
        return False
    _sign, digits, exponent = value.as_tuple()
    if not any(digits):
        return True
    size = len(digits)
    while exponent < 0 and size > 1 and digits[size - 1] == 0:
        size -= 1
        exponent += 1
    if exponent < -DECIMAL_SCALE:
        return False
    return size + exponent <= DECIMAL_PRECISION - DECIMAL_SCALE


def _int_slot(number: int) -> tuple | None:
    return (INT, number) if _INT64_MIN <= number <= _INT64_MAX else None


def _decimal_slot(number: Decimal) -> tuple | None:
    if not _fits_decimal(number):
        return None
    return (DECIMAL, Decimal(0) if number.is_zero() else number)  # 0E+50 is zero too


def _datetime_slot(value: _dt.datetime) -> tuple | None:
    if value.utcoffset() is None:
        return (DATETIME_LOCAL, value)
    try:
        return (DATETIME, value.astimezone(_dt.timezone.utc))
    except OverflowError:  # e.g. 0001-01-01T00:00+01:00 is before year 1 in UTC
        return None


def _typed(datatype: str, lexical: str) -> tuple | None:
    """The typed column of a literal given by its lexical form and datatype (None if its
    datatype has none, or the lexical form is not valid for it: nstore.terms decides)."""
    try:
        kind = NUMERIC_KINDS.get(datatype)
        if kind is not None:
            number = parse_numeric(lexical, kind, datatype)
            if number is None:
                return None
            return _int_slot(number) if kind == INT else _decimal_slot(number) if kind == DEC else (DOUBLE, number)
        if datatype == XSD_BOOLEAN:
            flag = parse_boolean(lexical)
            return None if flag is None else (BOOL, flag)
        if datatype == XSD_DATE:
            if DATE_LEXICAL.match(lexical):
                return (DATE, _dt.date.fromisoformat(lexical))
        elif datatype == XSD_DATETIME:
            if DATETIME_LEXICAL.match(lexical):
                return _datetime_slot(_dt.datetime.fromisoformat(lexical))
    except (ValueError, OverflowError, InvalidOperation):  # a date the calendar or Python lacks
        pass
    return None


def _literal(v: Literal) -> tuple:
    return _literal_parts(v.lexical, v.datatype.value if v.datatype is not None else None, v.lang)


def _literal_parts(lexical: str, datatype: str | None, lang: str | None) -> tuple:
    if lang is not None:
        return (lexical, LITERAL_KIND, RDF_LANGSTRING, lang, None)
    if datatype is None:
        return (lexical, LITERAL_KIND, XSD_STRING, None, None)
    return (lexical, LITERAL_KIND, datatype, None, _typed(datatype, lexical))


_DESCRIBE: dict[type, Callable[[Any], tuple]] = {
    str: lambda v: (v, LITERAL_KIND, XSD_STRING, None, None),
    IRI: lambda v: (v.value, IRI_KIND, None, None, None),
    BNode: lambda v: (v.id, BNODE_KIND, None, None, None),
    Literal: _literal,
    int: lambda v: (str(v), LITERAL_KIND, XSD_INTEGER, None, _int_slot(v)),
    bool: lambda v: ("true" if v else "false", LITERAL_KIND, XSD_BOOLEAN, None, (BOOL, v)),
    float: lambda v: (to_rdf(v).lexical, LITERAL_KIND, XSD_DOUBLE, None, (DOUBLE, v)),
    Decimal: lambda v: (to_rdf(v).lexical, LITERAL_KIND, XSD_DECIMAL, None, _decimal_slot(v)),
    _dt.date: lambda v: (v.isoformat(), LITERAL_KIND, XSD_DATE, None, (DATE, v)),
    _dt.datetime: lambda v: (v.isoformat(), LITERAL_KIND, XSD_DATETIME, None, _datetime_slot(v)),
    bytes: lambda v: (base64.b64encode(v).decode("ascii"), LITERAL_KIND, XSD_BASE64, None, None),
    type(None): lambda v: (None, None, None, None, None),
}


def _describe(value: Any) -> tuple:
    describe = _DESCRIBE.get(type(value))
    if describe is None:  # a subclass (fstore stores canonical values, so this is rare)
        return _describe(_canonical_type(value))
    return describe(value)


def describe_object(value: Any) -> tuple:
    """The values of :data:`OBJECT_COLUMNS` for one stored object value."""
    lexical, kind, datatype, language, typed = _describe(value)
    slots = [None] * len(TYPED_COLUMNS)
    if typed is not None:
        slots[typed[0]] = typed[1]
    return (lexical, kind, datatype, language, *slots)


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

_TYPE_KIND: dict[type, str | None] = {IRI: IRI_KIND, BNode: BNODE_KIND, type(None): None}  # else literal
_TYPE_DATATYPE: dict[type, str] = {
    str: XSD_STRING, int: XSD_INTEGER, bool: XSD_BOOLEAN, float: XSD_DOUBLE, Decimal: XSD_DECIMAL,
    _dt.date: XSD_DATE, _dt.datetime: XSD_DATETIME, bytes: XSD_BASE64,
}
_TYPED_PYTHON = frozenset({int, bool, float, Decimal, _dt.date, _dt.datetime})
_TYPED_DATATYPES = frozenset(NUMERIC_KINDS) | {XSD_BOOLEAN, XSD_DATE, XSD_DATETIME}


def _object_columns(objects: Sequence[Any]) -> list[list]:
    """The :data:`OBJECT_COLUMNS` of a batch of objects, column by column: one cheap
    comprehension per column instead of a function call per value (the rarer value types
    go through their describer)."""
    n = len(objects)
    types = list(map(type, objects))
    present = set(types)
    if not present <= _DESCRIBE.keys():  # subclasses: describe them as their base type
        objects = [o if type(o) in _DESCRIBE else _canonical_type(o) for o in objects]
        types = list(map(type, objects))
        present = set(types)
    describe = _DESCRIBE
    lexical = [o if t is str else o.value if t is IRI else o.lexical if t is Literal else describe[t](o)[0]
               for o, t in zip(objects, types)]
    kinds = list(map(_TYPE_KIND.get, types, repeat(LITERAL_KIND)))
    datatypes = list(map(_TYPE_DATATYPE.get, types))
    languages: list = [None] * n
    typed: list[int] = []
    if Literal in present:  # datatype and language per literal, and which have typed values
        typed_datatypes = _TYPED_DATATYPES
        for i in [i for i, t in enumerate(types) if t is Literal]:
            o = objects[i]
            if o.lang is not None:
                datatypes[i], languages[i] = RDF_LANGSTRING, o.lang
            elif o.datatype is None:
                datatypes[i] = XSD_STRING
            else:
                datatypes[i] = datatype = o.datatype.value
                if datatype in typed_datatypes:
                    typed.append(i)
    python_typed = present & _TYPED_PYTHON
    if python_typed:
        typed += [i for i, t in enumerate(types) if t in python_typed]
    slots: list[list] = [[None] * n for _ in TYPED_COLUMNS]
    for i in typed:
        o = objects[i]
        entry = describe[type(o)](o)[4]
        if entry is not None:
            slots[entry[0]][i] = entry[1]
    return [lexical, kinds, datatypes, languages, *slots]


def quad_columns(quads: Sequence[Sequence[Any]]) -> dict[str, list]:
    """Column lists (:data:`QUAD_COLUMNS`) for a batch of ``(graph, subject, predicate,
    object)`` tuples. The work runs column by column, mostly in C loops."""
    if not quads:
        return {name: [] for name in QUAD_COLUMNS}
    graphs, subjects, predicates, objects = zip(*quads)
    columns: dict[str, list] = {}
    for name, values in (("graph", graphs), ("subject", subjects), ("predicate", predicates)):
        columns[name], columns[name + "_kind"] = _node_texts(values)
    columns.update(zip(OBJECT_COLUMNS, _object_columns(objects)))
    return {name: columns[name] for name in QUAD_COLUMNS}


def packed_quad_columns(rows: Sequence[Sequence[bytes]], decode: Callable[[bytes], Any]) -> dict[str, list]:
    """:func:`quad_columns` of quads still packed as the store keeps them (each row the
    packed graph, subject, predicate and object items): IRIs, strings and literals go
    from their bytes straight to column values, without a Python term per value; other
    items through ``decode`` (the store's, which also fetches blobs). Each distinct item
    of a batch is described once."""
    if not rows:
        return {name: [] for name in QUAD_COLUMNS}
    graphs, subjects, predicates, objects = zip(*rows)
    columns: dict[str, list] = {}
    for name, items in (("graph", graphs), ("subject", subjects), ("predicate", predicates)):
        texts, kinds = zip(*_described(items, _packed_node, decode))
        columns[name], columns[name + "_kind"] = list(texts), list(kinds)
    columns.update(zip(OBJECT_COLUMNS, map(list, zip(*_described(objects, _packed_object, decode)))))
    return {name: columns[name] for name in QUAD_COLUMNS}


def _described(items: Sequence[bytes], describe: Callable[[bytes, Callable], tuple], decode: Callable) -> list[tuple]:
    """``describe(item, decode)`` per item, once per distinct item."""
    memo: dict[bytes, tuple] = {}
    found = memo.get
    out = []
    for item in items:
        described = found(item)
        if described is None:
            described = memo[item] = describe(item, decode)
        out.append(described)
    return out


def _packed_text(item: bytes) -> str | None:
    """The text of a packed IRI, blank node or string with no NUL to unescape, else None."""
    if item.find(b"\x00", 1) != len(item) - 1:
        return None
    try:
        return item[1:-1].decode("utf-8")
    except UnicodeDecodeError:
        return None


def _packed_node(item: bytes, decode: Callable[[bytes], Any]) -> tuple:
    code = item[0]
    if code == IRI_CODE or code == BNODE_CODE:
        text = _packed_text(item)
        if text is not None:
            return text, IRI_KIND if code == IRI_CODE else BNODE_KIND
    return describe_node(decode(item))


def _packed_object(item: bytes, decode: Callable[[bytes], Any]) -> tuple:
    code = item[0]
    if code == IRI_CODE or code == BNODE_CODE or code == STRING:
        text = _packed_text(item)
        if text is not None:
            if code == STRING:
                return (text, LITERAL_KIND, XSD_STRING, None, *_N7)
            return (text, IRI_KIND if code == IRI_CODE else BNODE_KIND, None, None, *_N7)
    elif code == LITERAL_CODE and item[-1] == 0:
        parts = item[1:-1].split(b"\x00")
        if len(parts) == 3:  # lexical form, datatype, language: none with a NUL inside
            try:
                lexical, datatype, lang = [part.decode("utf-8") for part in parts]
            except UnicodeDecodeError:
                pass
            else:
                lexical, kind, datatype, language, typed = _literal_parts(lexical, datatype or None, lang or None)
                slots = list(_N7)
                if typed is not None:
                    slots[typed[0]] = typed[1]
                return (lexical, kind, datatype, language, *slots)
    return describe_object(decode(item))


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
        return to_rdf(parse_term(text, "literal"))

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
