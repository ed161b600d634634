"""RDF terms in N-Triples syntax, the line format of N-Triples and N-Quads files and of
SPARQL's TSV results: written here directly, since making a pyoxigraph term for each
value costs several times more than the text.

>>> term_to_ntriples(Literal('say "hi"\\n', lang="en"))
'"say \\\\"hi\\\\"\\\\n"@en'
>>> quad_line(IRI("urn:s"), IRI("urn:p"), Literal("1", datatype=XSD_INTEGER), IRI("urn:g"))
'<urn:s> <urn:p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> <urn:g> .\\n'
>>> quad_line(IRI("urn:s"), IRI("urn:p"), 1) == quad_line(IRI("urn:s"), IRI("urn:p"), Literal("1", datatype=XSD_INTEGER))
True
"""

from __future__ import annotations

from typing import Any

from .terms import XSD_INTEGER, BNode, IRI, Literal, to_rdf  # noqa: F401 - XSD_INTEGER: the doctest

__all__ = ["term_to_ntriples", "quad_line"]


def _escape_string(text: str) -> str:
    return (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
    )


def term_to_ntriples(term: Any) -> str:
    """A term, or a stored value (``"x"``, ``7``: :func:`nstore.terms.to_rdf`), in
    N-Triples syntax (``<iri>``, ``_:b``, ``"x"@en``, ``"1"^^<...>``)."""
    kind = type(term)
    if kind is IRI:
        return f"<{term.value}>"
    if kind is str:  # a plain literal as stored: most objects
        return f'"{_escape_string(term)}"'
    if kind is BNode:
        return f"_:{term.id}"
    if kind is Literal:
        text = f'"{_escape_string(term.lexical)}"'
        if term.lang:
            return f"{text}@{term.lang}"
        if term.datatype is not None:
            return f"{text}^^<{term.datatype.value}>"
        return text
    if term is None:
        raise TypeError("not an RDF term: None")
    return term_to_ntriples(to_rdf(term))


def quad_line(subject: Any, predicate: Any, object: Any, graph: Any = None) -> str:
    """One N-Quads line of terms or stored values (an N-Triples line when ``graph`` is
    None, the default graph)."""
    terms = f"{term_to_ntriples(subject)} {term_to_ntriples(predicate)} {term_to_ntriples(object)}"
    return f"{terms} {term_to_ntriples(graph)} .\n" if graph is not None else f"{terms} .\n"
