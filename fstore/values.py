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
    MAX_DIGITS,
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
    check_term,
    decimal_lexical,
    double_lexical,
    RDF_LANGSTRING,
    to_rdf,
    valid_iri,
    valid_lang,
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


ALREADY_CANONICAL = frozenset({IRI, str, int, type(None), BNode, float, bool, bytes, Decimal, _dt.date, _dt.datetime})


def check_value(value: Any, where: str) -> Any:
    """Return ``value`` in canonical form, or raise ``PackError`` naming ``where`` it was."""
    if type(value) in ALREADY_CANONICAL:
        return value
    if isinstance(value, _ALLOWED):
        return canonical(value)
    raise PackError(f"{where}: a quad cannot hold a {type(value).__name__} ({value!r:.80})")


# Object types whose every value is a valid term (ints and decimals are bounded, see below).
_ALWAYS_VALID = frozenset({str, float, bool, bytes, _dt.date, _dt.datetime, BNode})
_SAFE_BITS = MAX_DIGITS * 3  # ints this short are far below MAX_DIGITS digits: no more checks
_POSITIONS = ("graph", "subject", "predicate", "object")

# IRIs already found valid: graphs, predicates and classes recur in nearly every quad of a
# load, and a set lookup costs a tenth of the regex. Cleared when full, to bound memory.
_SEEN_IRIS: set[str] = set()
_SEEN_LIMIT = 1 << 17


def _new_valid_iri(text: str) -> bool:
    """Whether ``text`` (not in the cache) is a valid IRI; remembered if it is."""
    if valid_iri(text) is None:
        return False
    if len(_SEEN_IRIS) >= _SEEN_LIMIT:
        _SEEN_IRIS.clear()
    _SEEN_IRIS.add(text)
    return True


def _valid_literal(literal: Literal) -> bool:
    """Whether a literal's language tag or datatype IRI is valid (the fast test; see
    ``nstore.terms.check_term`` for the message)."""
    if literal.lang is not None:
        return valid_lang(literal.lang) is not None
    datatype = literal.datatype
    return datatype is not None and datatype != RDF_LANGSTRING and (datatype.value in _SEEN_IRIS or _new_valid_iri(datatype.value))


def check_quad_terms(quad: tuple, what: str = "quad") -> tuple:
    """Return the (canonical) ``quad`` if each of its items may enter the store as a term,
    else raise :class:`~nstore.errors.InvalidTermError` naming the item, its position and
    what is wrong (see ``nstore.terms.check_term``); the graph may be None (the default
    graph). Writes check what they add; reads and removals take any value, so quads
    stored before these checks can still be found and removed.

    >>> check_quad_terms((None, IRI("urn:a"), IRI("urn:p"), 1))
    (None, IRI('urn:a'), IRI('urn:p'), 1)
    >>> check_quad_terms((None, IRI("urn:a"), IRI("urn:p"), None))
    Traceback (most recent call last):
    nstore.errors.InvalidTermError: quad object: None is not a valid term: ...
    """
    g, s, p, o = quad
    # The common quad, IRIs and a plain object, in one expression: a bulk load pays a set
    # lookup per IRI, one regex match per new IRI, and no call per item.
    seen = _SEEN_IRIS
    if (type(s) is IRI and type(p) is IRI
            and (p.value in seen or _new_valid_iri(p.value)) and (s.value in seen or _new_valid_iri(s.value))
            and (g is None or (type(g) is IRI and (g.value in seen or _new_valid_iri(g.value))))
            and (type(o) in _ALWAYS_VALID or (type(o) is IRI and (o.value in seen or _new_valid_iri(o.value)))
                 or (type(o) is int and o.bit_length() <= _SAFE_BITS) or (type(o) is Literal and _valid_literal(o)))):
        return quad
    for position, value in zip(_POSITIONS, quad):
        if value is not None or position != "graph":
            check_term(value, f"{what} {position}")
    return quad
