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

import datetime as _dt
from decimal import Decimal
from typing import Any, Union

from nstore.errors import PackError
from nstore.terms import (
    XSD,
    XSD_BASE64,
    XSD_BOOLEAN,
    XSD_DATE,
    XSD_DATETIME,
    XSD_DECIMAL,
    XSD_DOUBLE,
    XSD_INTEGER,
    IRI,
    BNode,
    Literal,
    canonical,
    check_quad_terms,
    decimal_lexical,
    double_lexical,
    to_rdf,
)

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
    "check_quad_terms",
    "double_lexical",
    "decimal_lexical",
    "ALREADY_CANONICAL",
    "to_rdf",
]

Value = Union[str, int, float, bool, bytes, Decimal, _dt.date, _dt.datetime, IRI, Literal, BNode, None]

# The default graph of a dataset is written as graph None (it sorts before every name).
DEFAULT_GRAPH = None

_ALLOWED = (str, int, float, bytes, Decimal, _dt.date, IRI, Literal, BNode)


# Not float: a NaN of any bit pattern is stored as the one NaN (canonical).
ALREADY_CANONICAL = frozenset({IRI, str, int, type(None), BNode, bool, bytes, Decimal, _dt.date, _dt.datetime})


def check_value(value: Any, where: str) -> Any:
    """Return ``value`` in canonical form, or raise ``PackError`` naming ``where`` it was."""
    if type(value) in ALREADY_CANONICAL:
        return value
    if isinstance(value, _ALLOWED):
        return canonical(value)
    raise PackError(f"{where}: a quad cannot hold a {type(value).__name__} ({value!r:.80})")
