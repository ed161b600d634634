"""Conversion between datae's RDF terms and pyoxigraph's (for serialisation and tests): the
query layer's names for :func:`fstore.rdf.to_oxigraph` and :func:`fstore.rdf.from_oxigraph`,
giving RDF terms rather than stored values.

>>> to_ox(Literal("chat", lang="fr"))
<Literal value=chat language=fr>
>>> from_ox(to_ox(IRI("http://ex/a")))
IRI('http://ex/a')
>>> from_ox(to_ox(Literal("05", "http://www.w3.org/2001/XMLSchema#integer")))
Literal('05', datatype='http://www.w3.org/2001/XMLSchema#integer')
"""

from __future__ import annotations

from typing import Any

from fstore.rdf import from_oxigraph, to_oxigraph
from fstore.core.values import to_rdf

from .terms import IRI, Literal  # noqa: F401 - used by the doctests

__all__ = ["to_ox", "from_ox"]


def to_ox(term: Any) -> Any:
    """A pyoxigraph term for a datae term (None: the default graph)."""
    return to_oxigraph(term)


def from_ox(term: Any) -> Any:
    """A datae term for a pyoxigraph term (the default graph, or None, becomes None)."""
    return None if term is None else to_rdf(from_oxigraph(term))
