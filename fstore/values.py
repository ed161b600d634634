"""The values a quad can hold, and their one canonical form.

fstore stores Python values (str, int, float, bool, bytes, Decimal, date, datetime) and RDF
terms (IRI, Literal, BNode). An RDF literal that a Python value represents exactly is stored
as that value, so one term never has two keys: ``Literal("a")`` is stored as ``"a"`` and
``Literal("5", XSD.integer)`` as ``5``, while ``Literal("05", XSD.integer)`` (not canonical)
stays a Literal and round-trips unchanged. ``to_rdf`` gives every value back as an RDF term.

>>> canonical(Literal("42", datatype=XSD_INTEGER))
42
>>> canonical(Literal("042", datatype=XSD_INTEGER))
Literal('042', datatype='http://www.w3.org/2001/XMLSchema#integer')
>>> to_rdf(True)
Literal('true', datatype='http://www.w3.org/2001/XMLSchema#boolean')
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
from decimal import Decimal
from typing import Any, Union

from nstore.errors import PackError
from nstore.terms import IRI, BNode, Literal

__all__ = [
    "IRI",
    "BNode",
    "Literal",
    "Value",
    "DEFAULT_GRAPH",
    "XSD",
    "XSD_INTEGER",
    "XSD_BOOLEAN",
    "XSD_DOUBLE",
    "XSD_DECIMAL",
    "XSD_DATE",
    "XSD_DATETIME",
    "XSD_BASE64",
    "canonical",
    "check_value",
    "double_lexical",
    "ALREADY_CANONICAL",
    "to_rdf",
]

Value = Union[str, int, float, bool, bytes, Decimal, _dt.date, _dt.datetime, IRI, Literal, BNode, None]

# The default graph of a dataset is written as graph None (it sorts before every name).
DEFAULT_GRAPH = None

XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_INTEGER = IRI(XSD + "integer")
XSD_BOOLEAN = IRI(XSD + "boolean")
XSD_DOUBLE = IRI(XSD + "double")
XSD_DECIMAL = IRI(XSD + "decimal")
XSD_DATE = IRI(XSD + "date")
XSD_DATETIME = IRI(XSD + "dateTime")
XSD_BASE64 = IRI(XSD + "base64Binary")

_ALLOWED = (str, int, float, bytes, Decimal, _dt.date, IRI, Literal, BNode)


ALREADY_CANONICAL = frozenset({IRI, str, int, type(None), BNode, float, bool, bytes, Decimal, _dt.date, _dt.datetime})


def check_value(value: Any, where: str) -> Any:
    """Return ``value`` in canonical form, or raise ``PackError`` naming ``where`` it was."""
    if type(value) in ALREADY_CANONICAL:
        return value
    if isinstance(value, _ALLOWED):
        return canonical(value)
    raise PackError(f"{where}: a quad cannot hold a {type(value).__name__} ({value!r:.80})")


def canonical(value: Any) -> Any:
    """The stored form of a value: a literal that a Python value represents exactly (``to_rdf``
    of that value gives the literal back, same lexical form) becomes that value; any other
    literal stays a Literal, so every lexical form round-trips."""
    if type(value) is not Literal or value.lang is not None:
        return value
    datatype = value.datatype
    if datatype is None:
        return value.lexical
    parse = _PARSERS.get(datatype)
    if parse is None:
        return value
    try:
        native = parse(value.lexical)
    except (ValueError, ArithmeticError, binascii.Error):
        return value
    return native if to_rdf(native) == value else value


def _parse_boolean(lexical: str) -> bool:
    if lexical not in ("true", "false"):
        raise ValueError(lexical)
    return lexical == "true"


def _parse_double(lexical: str) -> float:
    special = {"NaN": float("nan"), "INF": float("inf"), "-INF": float("-inf")}
    return special[lexical] if lexical in special else float(lexical)


def _parse_date(lexical: str) -> _dt.date:
    return _dt.date.fromisoformat(lexical)


_PARSERS = {
    XSD_INTEGER: int,
    XSD_BOOLEAN: _parse_boolean,
    XSD_DOUBLE: _parse_double,
    XSD_DECIMAL: Decimal,
    XSD_DATE: _parse_date,
    XSD_DATETIME: _dt.datetime.fromisoformat,
    XSD_BASE64: lambda lexical: base64.b64decode(lexical, validate=True),
}


def to_rdf(value: Any) -> IRI | Literal | BNode | None:
    """The RDF term of a stored value (None stays None: the default graph)."""
    kind = type(value)
    if kind in (IRI, Literal, BNode) or value is None:
        return value
    if kind is str:
        return Literal(value)
    if kind is bool:
        return Literal("true" if value else "false", XSD_BOOLEAN)
    if kind is int:
        return Literal(str(value), XSD_INTEGER)
    if kind is float:
        return Literal(double_lexical(value), XSD_DOUBLE)
    if kind is Decimal:
        return Literal(_decimal_lexical(value), XSD_DECIMAL)
    if kind is _dt.datetime:
        return Literal(value.isoformat(), XSD_DATETIME)
    if kind is _dt.date:
        return Literal(value.isoformat(), XSD_DATE)
    if kind is bytes:
        return Literal(base64.b64encode(value).decode("ascii"), XSD_BASE64)
    return to_rdf(check_value(value, "to_rdf"))


def double_lexical(value: float) -> str:
    """The canonical xsd:double lexical form (``1.5E0``, ``1.0E20``, ``NaN``, ``-INF``)."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "INF" if value > 0 else "-INF"
    text = repr(value)
    mantissa, _, exponent = text.partition("e")
    exp = int(exponent or 0)
    # Normalise to one digit before the point: 123.5 -> 1.235E2.
    sign = ""
    if mantissa.startswith("-"):
        sign, mantissa = "-", mantissa[1:]
    digits, _, fraction = mantissa.partition(".")
    all_digits = (digits + fraction).lstrip("0")
    if not all_digits:
        return f"{sign}0.0E0"
    exp += len(digits) - 1
    leading_zeros = len(digits + fraction) - len((digits + fraction).lstrip("0"))
    exp -= leading_zeros
    all_digits = all_digits.rstrip("0") or "0"
    head, tail = all_digits[0], all_digits[1:] or "0"
    return f"{sign}{head}.{tail}E{exp}"


def _decimal_lexical(value: Decimal) -> str:
    """The canonical xsd:decimal lexical form: no trailing zeros, at least one fraction digit
    (``1.5``, ``3.0``, ``-0.25``) — the form that survives packing, which drops trailing
    zeros. Exact: ``normalize()`` would round to the context's 28 digits."""
    if value.is_zero():
        return "0.0"
    text = format(value, "f")
    if "." not in text:
        return text + ".0"
    text = text.rstrip("0")
    return text + "0" if text.endswith(".") else text
