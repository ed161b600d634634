"""RDF files in and out: N-Quads, TriG, JSON-LD, N-Triples, Turtle and RDF/XML, parsed and
written by pyoxigraph.

Terms become fstore values (``IRI``, ``BNode``, ``Literal`` or the Python value a literal
stands for exactly, see :mod:`nstore.terms`); the default graph is graph ``None``.

>>> quads = list(parse(b'<urn:s> <urn:p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .', "nt"))
>>> quads
[(None, IRI('urn:s'), IRI('urn:p'), 1)]
>>> serialize(quads, "nq")
b'<urn:s> <urn:p> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .\\n'
"""

from __future__ import annotations

import io
import os
from itertools import islice
from xml.parsers import expat
from typing import IO, Any, Callable, Iterable, Iterator, Mapping, Union

import pyoxigraph as ox

from nstore import Var
from nstore.bulk import gc_paused
from nstore.pack import pack
from nstore.terms import XSD_STRING, IRI, TermSyntaxError, from_oxigraph, quad_line, to_oxigraph

from .api import add_many, from_, rm_many
from .files import GZIP_DAMAGE, open_input, without_gz
from .progress import Progress, counted
from .rdf_depth import JsonDepthGuard, limit_xml_depth
from .rdf_errors import RdfFormatError, RdfNestingError, RdfSyntaxError

__all__ = ["KEEP_GRAPHS", "parse", "serialize", "load", "format_of", "RdfSyntaxError",
           "RdfFormatError", "RdfNestingError", "FORMATS", "FORMAT_NAMES"]

Source = Union[str, os.PathLike, bytes, IO[bytes]]

# Every name a format goes by: file suffixes (what ``format_of`` reads off a file name) and
# the names people type. ``.owl`` and ``.xml`` files are mostly RDF/XML in practice.
FORMATS = {
    "nq": ox.RdfFormat.N_QUADS,
    "nquads": ox.RdfFormat.N_QUADS,
    "trig": ox.RdfFormat.TRIG,
    "jsonld": ox.RdfFormat.JSON_LD,
    "json-ld": ox.RdfFormat.JSON_LD,
    "nt": ox.RdfFormat.N_TRIPLES,
    "ntriples": ox.RdfFormat.N_TRIPLES,
    "ttl": ox.RdfFormat.TURTLE,
    "turtle": ox.RdfFormat.TURTLE,
    "rdf": ox.RdfFormat.RDF_XML,
    "rdfxml": ox.RdfFormat.RDF_XML,
    "owl": ox.RdfFormat.RDF_XML,
    "xml": ox.RdfFormat.RDF_XML,
}
# One name per format, the usual file suffix: what a ``--format`` option offers. The first
# three hold named graphs; the others hold the triples of one graph.
FORMAT_NAMES = ("nq", "trig", "jsonld", "nt", "ttl", "rdf")



def format_of(name: str, given: str | None = None) -> ox.RdfFormat:
    """The RDF format named ``given`` or guessed from a file name (``.gz`` is looked through).

    >>> format_of("releases/schema.jsonld.gz").name, format_of("x", "ttl").name
    ('JSON-LD', 'Turtle')
    """
    key = given
    if key is None:
        stem = without_gz(name)
        key = stem.rsplit(".", 1)[-1] if "." in stem else ""
    try:
        return FORMATS[key.lower()]
    except KeyError:
        where = f"{name}: " if name else ""
        raise RdfFormatError(f"{where}unknown RDF format {key!r}; use one of {', '.join(FORMAT_NAMES)}") from None


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


def _open(source: Source) -> tuple[IO[bytes], str, bool]:
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        return open_input(name), name, True
    if isinstance(source, bytes):
        return io.BytesIO(source), "<bytes>", True
    return source, getattr(source, "name", "<stream>"), False


class _KeepGraphs:
    def __repr__(self) -> str:
        return "KEEP_GRAPHS"


KEEP_GRAPHS: Any = _KeepGraphs()


def parse(source: Source, format: str | None = None, *, base_iri: str | None = None,
          graph: Any = KEEP_GRAPHS, progress: Progress | None = None) -> Iterator[tuple]:
    """Stream the quads of an RDF file (path, bytes or binary stream) as fstore values.

    Quads keep their graphs (triples: the default graph, None) unless ``graph`` is given:
    then every quad goes to that graph. ``progress`` hears ``("read", quads so far, None)``.
    """
    stream, name, owned = _open(source)
    rdf_format = format_of(name, format)
    keep = graph is KEEP_GRAPHS
    convert = _converter()
    try:
        quads = ox.parse(_guarded(stream, name, rdf_format), rdf_format, base_iri=base_iri)
        for quad in quads if progress is None else counted(quads, "read", progress, None):
            g = convert(quad.graph_name) if keep else graph
            yield (g, convert(quad.subject), convert(quad.predicate), convert(quad.object))
    except SyntaxError as exc:
        raise RdfSyntaxError(f"{name}: {_syntax_message(exc)}", line=exc.lineno, column=exc.offset) from None
    except TermSyntaxError as exc:  # a term the store does not hold (an RDF-star triple)
        raise RdfSyntaxError(str(exc)) from None
    except GZIP_DAMAGE as exc:
        raise RdfSyntaxError(f"{name}: is not a whole gzip file ({exc})") from None
    finally:
        if owned:
            stream.close()


def _guarded(stream: IO[bytes], name: str, rdf_format: ox.RdfFormat) -> Any:
    """``stream`` as pyoxigraph is to read it: checked on the way where its parser needs it."""
    if rdf_format == ox.RdfFormat.RDF_XML:
        return _WellFormedXml(stream, name)
    if rdf_format == ox.RdfFormat.JSON_LD:  # its parser recurses: deep nesting would crash the process
        return JsonDepthGuard(stream, name)
    return stream


class _WellFormedXml:
    """``stream`` as pyoxigraph reads it, checked by expat on the way: pyoxigraph's RDF/XML
    parser takes a document that ends inside an element (a download cut short) as whole,
    and names no line for its errors. expat raises on the first byte that breaks XML, and
    on the first element nested too deep (:mod:`fstore.rdf_depth`)."""

    def __init__(self, stream: IO[bytes], name: str) -> None:
        self._stream = stream
        self._name = name
        self._expat = expat.ParserCreate()
        limit_xml_depth(self._expat, name)  # pyoxigraph takes time quadratic in the depth

    def read(self, size: int = -1) -> bytes:
        chunk = self._stream.read(size)
        try:
            self._expat.Parse(chunk, not chunk)
        except expat.ExpatError as exc:
            line, column = exc.lineno, exc.offset + 1
            raise RdfSyntaxError(f"{self._name}: not well-formed XML at line {line}, column {column}: "
                                 f"{expat.errors.messages[exc.code]}", line=line, column=column) from None
        return chunk


def _syntax_message(exc: SyntaxError) -> str:
    message = str(exc.msg)
    if "LoadDocumentCallback" in message:  # pyoxigraph's words for "no remote contexts"
        return "a JSON-LD @context given by IRI is not fetched: put the context itself in the file"
    return message


def load(tx: Any, source: Source, format: str | None = None, *, base_iri: str | None = None,
         graph: Any = KEEP_GRAPHS, replace: bool = False, progress: Progress | None = None,
         stream: bool = False) -> int:
    """Add every quad of an RDF file to an open fstore transaction; returns how many were read.

    With ``replace``, each graph the file holds ends up with exactly the file's quads (what
    importing a new release of a dataset means). The file is parsed completely before
    anything changes, so a syntax error leaves the transaction untouched. ``progress``
    hears the quads read (phase ``"read"``), then those staged (``"stage"``, of the total);
    the transaction's commit writes them. With ``stream`` (and no ``replace``), each quad
    is staged as it is read, so memory does not grow with the file (the transaction's
    intents spill to the store: :class:`fstore.transaction.Staged`); a syntax error then
    leaves the quads before it staged, and the caller aborts (``datae import`` does).
    """
    if stream and not replace:
        read = 0

        def counting(quads: Iterable[tuple]) -> Iterator[tuple]:
            nonlocal read
            for read, quad in enumerate(quads, 1):
                yield quad

        add_many(tx, counting(parse(source, format, base_iri=base_iri, graph=graph, progress=progress)))
        return read
    with gc_paused():  # a file's quads are hundreds of thousands of tuples and no cycles
        quads = list(parse(source, format, base_iri=base_iri, graph=graph, progress=progress))
    if replace:
        for g in {pack(q[0]): q[0] for q in quads}.values():
            rm_many(tx, [(g, old["s"], old["p"], old["o"]) for old in from_(tx, g, Var("s"), Var("p"), Var("o"))])
    add_many(tx, quads if progress is None else counted(quads, "stage", progress, len(quads)))
    return len(quads)


def serialize(quads: Iterable[tuple], format: str = "nq", output: IO[bytes] | None = None, *,
              progress: Progress | None = None, prefixes: Mapping[str, str] | None = None) -> bytes | None:
    """Write quads ``(graph, subject, predicate, object)`` as N-Quads, TriG or JSON-LD, or
    the triples of one graph as N-Triples, Turtle or RDF/XML (quads of a second graph are
    an ``RdfFormatError``: a triples format would merge the graphs).

    Returns the bytes when ``output`` is None, else writes to it. ``progress`` hears
    ``("write", quads so far, None)``. ``prefixes`` (name to IRI) abbreviate IRIs in the
    formats that have prefixes (TriG, Turtle, RDF/XML).

    >>> serialize([(IRI("urn:g"), IRI("urn:s"), IRI("urn:p"), "x")], "ttl")
    b'<urn:s> <urn:p> "x" .\\n'
    """
    rdf_format = format_of("", format)
    if progress is not None:
        quads = counted(quads, "write", progress, None)
    if rdf_format in _LINE_FORMATS:
        return _write_lines(quads, rdf_format, output)
    if rdf_format.supports_datasets:
        terms: Iterable[Any] = (ox.Quad(to_oxigraph(s), to_oxigraph(p), to_oxigraph(o), to_oxigraph(g))
                                for g, s, p, o in quads)
    else:
        terms = (ox.Triple(to_oxigraph(s), to_oxigraph(p), to_oxigraph(o)) for _, s, p, o in _one_graph(quads, rdf_format))
    written = ox.serialize(terms, output, rdf_format, prefixes=dict(prefixes) if prefixes else None)
    if rdf_format in _UNTERMINATED:  # a text file ends in a newline (a shell prompt follows it)
        if output is None:
            return written + b"\n"
        output.write(b"\n")
    return written


# The formats pyoxigraph ends without a newline.
_UNTERMINATED = (ox.RdfFormat.JSON_LD, ox.RdfFormat.RDF_XML)
# A line per quad: written as text here, five times faster than through pyoxigraph terms.
_LINE_FORMATS = (ox.RdfFormat.N_QUADS, ox.RdfFormat.N_TRIPLES)
_LINES_PER_WRITE = 4096


def _write_lines(quads: Iterable[tuple], rdf_format: ox.RdfFormat, output: IO[bytes] | None) -> bytes | None:
    if rdf_format == ox.RdfFormat.N_TRIPLES:
        lines = (quad_line(s, p, o) for _, s, p, o in _one_graph(quads, rdf_format))
    else:
        lines = (quad_line(s, p, o, g) for g, s, p, o in quads)
    if output is None:
        return "".join(lines).encode("utf-8")
    while chunk := "".join(islice(lines, _LINES_PER_WRITE)):
        output.write(chunk.encode("utf-8"))
    return None


def _one_graph(quads: Iterable[tuple], rdf_format: ox.RdfFormat) -> Iterator[tuple]:
    """``quads``, refused at the first whose graph differs from the first quad's."""
    first: Any = KEEP_GRAPHS
    for quad in quads:
        graph = quad[0]
        if first is KEEP_GRAPHS:
            first = graph
        elif graph != first:
            raise RdfFormatError(f"{rdf_format.name} holds the triples of one graph, but the quads are in "
                                 f"{_graph_name(first)} and {_graph_name(graph)}: write one graph at a time, "
                                 f"or use N-Quads, TriG or JSON-LD")
        yield quad


def _graph_name(graph: Any) -> str:
    return "the default graph" if graph is None else str(to_oxigraph(graph))
