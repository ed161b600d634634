"""RDF files in and out: N-Quads, N-Triples, Turtle and TriG, parsed and written by pyoxigraph.

Terms become fstore values (``IRI``, ``BNode``, ``Literal`` or the Python value a literal
stands for exactly, see :mod:`fstore.values`); the default graph is graph ``None``.

>>> quads = list(parse(b'<urn:s> <urn:p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .', "nt"))
>>> quads
[(None, IRI('urn:s'), IRI('urn:p'), 1)]
>>> serialize(quads, "nq")
b'<urn:s> <urn:p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .\\n'
"""

from __future__ import annotations

import gzip
import io
import os
from typing import IO, Any, Callable, Iterable, Iterator, Union

import pyoxigraph as ox

from nstore import Var
from nstore.errors import DataeError
from nstore.pack import pack
from nstore.terms import XSD_STRING

from .api import add_many, from_, rm_many
from .values import IRI, BNode, Literal, canonical, to_rdf

__all__ = ["KEEP_GRAPHS", "parse", "serialize", "load", "format_of", "from_oxigraph", "to_oxigraph", "RdfSyntaxError", "FORMATS"]

Source = Union[str, os.PathLike, bytes, IO[bytes]]

FORMATS = {
    "nq": ox.RdfFormat.N_QUADS,
    "nquads": ox.RdfFormat.N_QUADS,
    "nt": ox.RdfFormat.N_TRIPLES,
    "ntriples": ox.RdfFormat.N_TRIPLES,
    "ttl": ox.RdfFormat.TURTLE,
    "turtle": ox.RdfFormat.TURTLE,
    "trig": ox.RdfFormat.TRIG,
}


class RdfSyntaxError(DataeError, ValueError):
    """An RDF file could not be parsed; the message names the file, line and column, which
    are also ``line`` and ``column`` (1-based; None when the fault has no position)."""

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None) -> None:
        self.line = line
        self.column = column
        super().__init__(message)


def format_of(name: str, given: str | None = None) -> ox.RdfFormat:
    """The RDF format named ``given`` or guessed from a file name (``.gz`` is looked through)."""
    key = given
    if key is None:
        stem = name[:-3] if name.endswith(".gz") else name
        key = stem.rsplit(".", 1)[-1] if "." in stem else ""
    try:
        return FORMATS[key.lower()]
    except KeyError:
        raise RdfSyntaxError(f"{name}: unknown RDF format {key!r}; use one of {', '.join(sorted(FORMATS))}") from None


def from_oxigraph(term: Any) -> Any:
    """The fstore value of a pyoxigraph term."""
    kind = type(term)
    if kind is ox.NamedNode:
        return IRI(term.value)
    if kind is ox.Literal:
        language = term.language
        if language:
            return Literal(term.value, lang=language)
        return canonical(Literal(term.value, term.datatype.value))
    if kind is ox.BlankNode:
        return BNode(term.value)
    if kind is ox.DefaultGraph:
        return None
    raise RdfSyntaxError(f"datae stores IRIs, literals and blank nodes, not {kind.__name__} ({term})")


_OX_XSD_STRING = ox.NamedNode(XSD_STRING.value)
_IRI_MEMO = 1 << 18


def _converter() -> Callable[[Any], Any]:
    """:func:`from_oxigraph` for one file's terms: an IRI met again is the same object
    (a file repeats its graphs, predicates and subjects; building an IRI twice costs
    more than finding it), and a plain string is read without building a Literal."""
    iris: dict[str, IRI] = {}

    def convert(term: Any) -> Any:
        kind = type(term)
        if kind is ox.NamedNode:
            value = term.value
            iri = iris.get(value)
            if iri is None:
                if len(iris) >= _IRI_MEMO:
                    iris.clear()
                iri = iris[value] = IRI(value)
            return iri
        if kind is ox.Literal and term.datatype == _OX_XSD_STRING:
            return term.value
        return from_oxigraph(term)

    return convert


def to_oxigraph(value: Any) -> Any:
    """The pyoxigraph term of an fstore value (None: the default graph)."""
    term = to_rdf(value)
    if term is None:
        return ox.DefaultGraph()
    if type(term) is IRI:
        return ox.NamedNode(term.value)
    if type(term) is BNode:
        return ox.BlankNode(term.id)
    if term.lang is not None:
        return ox.Literal(term.lexical, language=term.lang)
    if term.datatype is not None:
        return ox.Literal(term.lexical, datatype=ox.NamedNode(term.datatype.value))
    return ox.Literal(term.lexical)


def _open(source: Source) -> tuple[IO[bytes], str, bool]:
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        stream = gzip.open(name, "rb") if name.endswith(".gz") else open(name, "rb")
        return stream, name, True
    if isinstance(source, bytes):
        return io.BytesIO(source), "<bytes>", True
    return source, getattr(source, "name", "<stream>"), False


class _KeepGraphs:
    def __repr__(self) -> str:
        return "KEEP_GRAPHS"


KEEP_GRAPHS: Any = _KeepGraphs()


def parse(source: Source, format: str | None = None, *, base_iri: str | None = None,
          graph: Any = KEEP_GRAPHS) -> Iterator[tuple]:
    """Stream the quads of an RDF file (path, bytes or binary stream) as fstore values.

    Quads keep their graphs (triples: the default graph, None) unless ``graph`` is given:
    then every quad goes to that graph.
    """
    stream, name, owned = _open(source)
    rdf_format = format_of(name, format)
    keep = graph is KEEP_GRAPHS
    convert = _converter()
    try:
        for quad in ox.parse(stream, rdf_format, base_iri=base_iri):
            g = convert(quad.graph_name) if keep else graph
            yield (g, convert(quad.subject), convert(quad.predicate), convert(quad.object))
    except SyntaxError as exc:
        raise RdfSyntaxError(f"{name}: {exc}", line=exc.lineno, column=exc.offset) from None
    finally:
        if owned:
            stream.close()


def load(tx: Any, source: Source, format: str | None = None, *, base_iri: str | None = None,
         graph: Any = KEEP_GRAPHS, replace: bool = False) -> int:
    """Add every quad of an RDF file to an open fstore transaction; returns how many were read.

    With ``replace``, each graph the file holds ends up with exactly the file's quads (what
    importing a new release of a dataset means). The file is parsed completely before
    anything changes, so a syntax error leaves the transaction untouched.
    """
    quads = list(parse(source, format, base_iri=base_iri, graph=graph))
    if replace:
        for g in {pack(q[0]): q[0] for q in quads}.values():
            rm_many(tx, [(g, old["s"], old["p"], old["o"]) for old in from_(tx, g, Var("s"), Var("p"), Var("o"))])
    add_many(tx, quads)
    return len(quads)


def serialize(quads: Iterable[tuple], format: str = "nq", output: IO[bytes] | None = None) -> bytes | None:
    """Write quads as N-Quads / TriG (or triples of one graph as N-Triples / Turtle).

    Returns the bytes when ``output`` is None, else writes to it.
    """
    rdf_format = format_of("", format)
    as_triples = rdf_format in (ox.RdfFormat.N_TRIPLES, ox.RdfFormat.TURTLE)
    terms = (
        ox.Triple(to_oxigraph(s), to_oxigraph(p), to_oxigraph(o)) if as_triples
        else ox.Quad(to_oxigraph(s), to_oxigraph(p), to_oxigraph(o), to_oxigraph(g))
        for g, s, p, o in quads
    )
    return ox.serialize(terms, output, rdf_format)
