"""RDF term helpers for the query layer: XSD names, literal values, literal constructors.

Numbers are classified by the SPARQL promotion ladder integer < decimal < float < double
(:data:`INT`, :data:`DEC`, :data:`FLT`, :data:`DBL`); :func:`numeric` returns a literal's
``(kind, value)`` and raises :class:`EvalError` (a SPARQL "error" value) if it has none.

>>> numeric(Literal("42", XSD_INTEGER))
(0, 42)
>>> numeric(Literal("1.50", XSD_DECIMAL))
(1, Decimal('1.50'))
>>> make_numeric(DEC, Decimal("3") / Decimal("2"))
Literal('1.5', datatype='http://www.w3.org/2001/XMLSchema#decimal')
>>> make_numeric(DBL, 1e20)
Literal('1.0E20', datatype='http://www.w3.org/2001/XMLSchema#double')
"""

from __future__ import annotations

import re
import struct
from decimal import Decimal, InvalidOperation
from typing import Any

from nstore.terms import (
    RDF_LANGSTRING,
    RDF_NS,
    XSD,
    XSD_BOOLEAN,
    XSD_DATE,
    XSD_DATETIME,
    XSD_DAYTIMEDURATION,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_FLOAT,
    XSD_INTEGER,
    XSD_STRING,
    XSD_TIME,
    IRI,
    BNode,
    Literal,
    check_term,
    decimal_lexical,
    double_lexical,
    is_valid_iri,
    valid_iri,
)
from nstore.errors import InvalidTermError

__all__ = [
    "IRI",
    "BNode",
    "Literal",
    "EvalError",
    "XSD",
    "XSD_STRING",
    "XSD_INTEGER",
    "XSD_DECIMAL",
    "XSD_FLOAT",
    "XSD_DOUBLE",
    "XSD_BOOLEAN",
    "XSD_DATETIME",
    "XSD_DATE",
    "XSD_TIME",
    "XSD_DAYTIMEDURATION",
    "RDF_LANGSTRING",
    "RDF_NS",
    "INTEGER_TYPES",
    "NUMERIC_TYPES",
    "INT",
    "DEC",
    "FLT",
    "DBL",
    "TRUE",
    "FALSE",
    "numeric",
    "make_numeric",
    "boolean",
    "is_string_literal",
    "is_valid_term",
    "valid_iri",
    "is_valid_iri",
    "datatype_of",
    "double_lexical",
    "decimal_lexical",
    "to_float32",
]


class EvalError(Exception):
    """A SPARQL expression error (type error, unbound variable...): FILTER treats it as
    false, BIND leaves the variable unbound."""



INT, DEC, FLT, DBL = 0, 1, 2, 3

INTEGER_TYPES = frozenset(
    IRI(XSD + name)
    for name in (
        "integer",
        "nonPositiveInteger",
        "negativeInteger",
        "long",
        "int",
        "short",
        "byte",
        "nonNegativeInteger",
        "unsignedLong",
        "unsignedInt",
        "unsignedShort",
        "unsignedByte",
        "positiveInteger",
    )
)
_KIND_OF: dict[IRI, int] = {t: INT for t in INTEGER_TYPES}
_KIND_OF.update({XSD_DECIMAL: DEC, XSD_FLOAT: FLT, XSD_DOUBLE: DBL})
NUMERIC_TYPES = frozenset(_KIND_OF)
_TYPE_OF_KIND = {INT: XSD_INTEGER, DEC: XSD_DECIMAL, FLT: XSD_FLOAT, DBL: XSD_DOUBLE}

TRUE = Literal("true", XSD_BOOLEAN)
FALSE = Literal("false", XSD_BOOLEAN)

_INTEGER_RE = re.compile(r"[+-]?[0-9]+\Z")
_DECIMAL_RE = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)\Z")
_DOUBLE_RE = re.compile(r"([+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?INF|NaN)\Z")
_RANGES = {
    "nonPositiveInteger": (None, 0),
    "negativeInteger": (None, -1),
    "long": (-(1 << 63), (1 << 63) - 1),
    "int": (-(1 << 31), (1 << 31) - 1),
    "short": (-(1 << 15), (1 << 15) - 1),
    "byte": (-128, 127),
    "nonNegativeInteger": (0, None),
    "unsignedLong": (0, (1 << 64) - 1),
    "unsignedInt": (0, (1 << 32) - 1),
    "unsignedShort": (0, (1 << 16) - 1),
    "unsignedByte": (0, 255),
    "positiveInteger": (1, None),
}

_NUMERIC_CACHE: dict[Literal, tuple[int, Any] | None] = {}
_CACHE_LIMIT = 1 << 16


def _parse_numeric(lexical: str, kind: int, datatype: IRI) -> Any:
    """The value of a numeric lexical form, or None if it is not valid for the type."""
    text = lexical.strip()
    if kind == INT:
        if not _INTEGER_RE.match(text):
            return None
        try:
            value = int(text)
        except ValueError:  # past Python's 4,300 digits: no value here, as the store holds none
            return None
        bounds = _RANGES.get(datatype.value[len(XSD):])
        if bounds is not None:
            low, high = bounds
            if (low is not None and value < low) or (high is not None and value > high):
                return None
        return value
    if kind == DEC:
        if not _DECIMAL_RE.match(text):
            return None
        return Decimal(text)
    if not _DOUBLE_RE.match(text):
        return None
    value = float(text.replace("INF", "inf"))
    return to_float32(value) if kind == FLT else value


def numeric(term: object) -> tuple[int, Any]:
    """``(kind, value)`` of a numeric literal; :class:`EvalError` for anything else
    (including an ill-typed literal such as ``"x"^^xsd:integer``)."""
    if type(term) is not Literal or term.datatype is None:
        raise EvalError()
    found = _NUMERIC_CACHE.get(term, False)
    if found is False:
        kind = _KIND_OF.get(term.datatype)
        found = None
        if kind is not None:
            value = _parse_numeric(term.lexical, kind, term.datatype)
            if value is not None:
                found = (kind, value)
        if len(_NUMERIC_CACHE) > _CACHE_LIMIT:
            _NUMERIC_CACHE.clear()
        _NUMERIC_CACHE[term] = found
    if found is None:
        raise EvalError()
    return found


def to_float32(value: float) -> float:
    """Round a Python float to the nearest IEEE single (xsd:float)."""
    try:
        return struct.unpack(">f", struct.pack(">f", value))[0]
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def _float_lexical(value: float) -> str:
    if value != value or value in (float("inf"), float("-inf")):
        return double_lexical(value)
    # The shortest decimal that rounds back to the same single-precision value.
    for digits in range(1, 10):
        text = f"{value:.{digits}g}"
        if to_float32(float(text)) == value:
            return double_lexical(float(text))
    return double_lexical(value)


def make_numeric(kind: int, value: Any) -> Literal:
    """A literal of the given numeric kind holding ``value`` in canonical form."""
    if kind == INT:
        return Literal(str(int(value)), XSD_INTEGER)
    if kind == DEC:
        if not isinstance(value, Decimal):
            try:
                value = Decimal(value)
            except (InvalidOperation, TypeError, ValueError):
                raise EvalError() from None
        if not value.is_finite():
            raise EvalError()
        return Literal(decimal_lexical(value), XSD_DECIMAL)
    if kind == FLT:
        return Literal(_float_lexical(to_float32(float(value))), XSD_FLOAT)
    return Literal(double_lexical(float(value)), XSD_DOUBLE)


def boolean(value: bool) -> Literal:
    """``"true"^^xsd:boolean`` or ``"false"^^xsd:boolean``."""
    return TRUE if value else FALSE


def is_string_literal(term: object) -> bool:
    """A simple literal or xsd:string (RDF 1.1 makes them the same term)."""
    return type(term) is Literal and term.datatype is None and term.lang is None


def is_valid_term(term: object) -> bool:
    """Whether ``term`` may enter the store: the check every write makes
    (``nstore.terms.check_term``: an absolute RFC 3987 IRI, a literal with a well-formed
    language tag and datatype). A template quad holding any other term is left out, as
    SPARQL leaves out one that "would not be valid RDF" (1.1 Query 16.2.1, Update 3.1.3).

    >>> is_valid_term(IRI("urn:a")), is_valid_term(IRI("not an iri")), is_valid_term(Literal("x", lang="e n"))
    (True, False, False)
    """
    # IRIs are most of what a template gets, and most were seen before: a set lookup
    if type(term) is IRI:
        return is_valid_iri(term.value)
    try:
        check_term(term)
    except InvalidTermError:
        return False
    return True


def datatype_of(term: Literal) -> IRI:
    """The datatype IRI of a literal (xsd:string or rdf:langString when none is stored)."""
    if term.datatype is not None:
        return term.datatype
    return RDF_LANGSTRING if term.lang is not None else XSD_STRING
