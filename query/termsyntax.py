"""RDF terms as people type them on a command line, and as N-Triples prints them.

>>> parse_term("<https://schema.org/name>", "predicate")
IRI('https://schema.org/name')
>>> parse_term("https://schema.org/name", "predicate")
IRI('https://schema.org/name')
>>> parse_term('"chat"@fr', "object"), parse_term("42", "object")
(Literal('chat', lang='fr'), 42)
>>> format_term(42), format_term("a"), format_term(None)
('"42"^^<http://www.w3.org/2001/XMLSchema#integer>', '"a"', '')
"""

from __future__ import annotations

import re
from typing import Any

import pyoxigraph as ox

from fstore.rdf import from_oxigraph
from fstore.core.values import to_rdf
from nstore.errors import DataeError

__all__ = ["parse_term", "format_term", "TermSyntaxError"]

_BARE_IRI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|^`\\]*$")


class TermSyntaxError(DataeError, ValueError):
    """A term given on the command line is not valid N-Triples / Turtle term syntax."""


def parse_term(text: str, what: str) -> Any:
    """The fstore value of one term in N-Triples / Turtle syntax (a bare absolute IRI is
    taken as ``<IRI>``)."""
    text = text.strip()
    if _BARE_IRI.match(text) and not text.startswith("_:"):
        text = f"<{text}>"
    try:
        (quad,) = list(ox.parse(f"<urn:datae:s> <urn:datae:p> {text} .".encode(), ox.RdfFormat.TURTLE))
    except (SyntaxError, ValueError) as exc:
        raise TermSyntaxError(f"invalid {what} {text!r}: {exc}") from None
    return from_oxigraph(quad.object)


def format_term(value: Any) -> str:
    """A stored value in N-Triples syntax ('' for the default graph)."""
    term = to_rdf(value)
    return "" if term is None else str(term)
