"""Conversion between datae's RDF terms and pyoxigraph's (for serialisation and tests).

>>> to_ox(Literal("chat", lang="fr"))
<Literal value=chat language=fr>
>>> from_ox(to_ox(IRI("http://ex/a")))
IRI('http://ex/a')
"""

from __future__ import annotations

from typing import Any

import pyoxigraph as ox

from .terms import XSD_STRING, BNode, IRI, Literal

__all__ = ["to_ox", "from_ox"]

_XSD_STRING = XSD_STRING.value


def to_ox(term: Any) -> Any:
    """A pyoxigraph term for a datae term (None: the default graph)."""
    kind = type(term)
    if kind is IRI:
        return ox.NamedNode(term.value)
    if kind is BNode:
        return ox.BlankNode(term.id)
    if kind is Literal:
        if term.lang:
            return ox.Literal(term.lexical, language=term.lang)
        if term.datatype is not None:
            return ox.Literal(term.lexical, datatype=ox.NamedNode(term.datatype.value))
        return ox.Literal(term.lexical)
    if term is None:
        return ox.DefaultGraph()
    raise TypeError(f"not an RDF term: {term!r}")


def from_ox(term: Any) -> Any:
    """A datae term for a pyoxigraph term (the default graph becomes None)."""
    kind = type(term)
    if kind is ox.NamedNode:
        return IRI(term.value)
    if kind is ox.BlankNode:
        return BNode(term.value)
    if kind is ox.Literal:
        if term.language:
            return Literal(term.value, lang=term.language)
        datatype = term.datatype.value
        return Literal(term.value, None if datatype == _XSD_STRING else datatype)
    if kind is ox.DefaultGraph or term is None:
        return None
    raise TypeError(f"not an RDF term: {term!r}")
