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
import re
from itertools import chain
from xml.parsers import expat
from typing import IO, Any, Callable, Iterable, Iterator, Mapping, Union

import pyoxigraph as ox

from nstore import Var
from nstore._ntriples import GraphMismatch, LineWriter
from nstore.bulk import gc_paused
from nstore.pack import pack
from nstore.terms import IRI, TermSyntaxError, line_reader, oxigraph_converter, quad_line, to_oxigraph

from .api import add_many, from_, rm_many
from .files import GZIP_DAMAGE, open_input, without_gz
from .progress import EVERY, Progress, counted
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


# Quads converted at a time: large enough that the Python work per batch is nothing, small
# enough that a batch of terms stays in the CPU's caches and memory does not grow with a file.
_BATCH = 4096


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

    N-Quads and N-Triples are read in C (:func:`nstore.terms.line_reader`), pyoxigraph
    parsing only the lines of an uncommon form; the other syntaxes are parsed by pyoxigraph
    and its terms made values in C (:func:`nstore.terms.oxigraph_converter`). Either way,
    a batch of quads at a time: memory does not grow with the file.
    """
    for batch in _batches(source, format, base_iri, graph, progress):
        yield from batch


def _batches(source: Source, format: str | None, base_iri: str | None, graph: Any,
             progress: Progress | None) -> Iterator[list[tuple]]:
    """:func:`parse`, a list of quads at a time (made in C by
    :func:`nstore.terms.oxigraph_converter`); errors name the file, and the line and column
    where pyoxigraph gives them."""
    stream, name, owned = _open(source)
    rdf_format = format_of(name, format)
    keep = graph is KEEP_GRAPHS
    try:
        if rdf_format in _LINE_FORMATS and base_iri is None:  # read in C, line by line
            batches = _lines(stream, rdf_format, keep, graph)
        else:
            batches = _oxigraph_batches(_guarded(stream, name, rdf_format), rdf_format, base_iri, keep, graph)
        yield from batches if progress is None else _counted(batches, progress)
    except SyntaxError as exc:
        raise RdfSyntaxError(f"{name}: {_syntax_message(exc)}", line=exc.lineno, column=exc.offset) from None
    except TermSyntaxError as exc:  # a term the store does not hold (an RDF-star triple)
        raise RdfSyntaxError(str(exc)) from None
    except GZIP_DAMAGE as exc:
        raise RdfSyntaxError(f"{name}: is not a whole gzip file ({exc})") from None
    finally:
        if owned:
            stream.close()


def _counted(batches: Iterator[list[tuple]], progress: Progress) -> Iterator[list[tuple]]:
    """``batches``, telling ``progress`` the quads read as :func:`fstore.progress.counted`
    tells them of an iterator of quads (every ``EVERY``, then at the end)."""
    done = 0
    for batch in batches:
        before, done = done, done + len(batch)
        for mark in range(before - before % EVERY + EVERY, done + 1, EVERY):
            progress("read", mark, None)
        yield batch
    progress("read", done, None)


def _oxigraph_batches(stream: Any, rdf_format: ox.RdfFormat, base_iri: str | None, keep: bool,
                      graph: Any) -> Iterator[list[tuple]]:
    """The quads pyoxigraph parses, made datae values in C a batch at a time."""
    quads = iter(ox.parse(stream, rdf_format, base_iri=base_iri))
    converter = oxigraph_converter()
    return iter(lambda: converter.batch(quads, _BATCH, keep, graph), [])


def _lines(stream: IO[bytes], rdf_format: ox.RdfFormat, keep: bool, graph: Any) -> Iterator[list[tuple]]:
    """An N-Quads or N-Triples file read by :func:`nstore.terms.line_reader`, which hands
    each line of another form than the common one to pyoxigraph. From the first such line
    pyoxigraph refuses, pyoxigraph reads the rest of the file, so that the error is the one
    it gives reading the whole file, its line numbers counted from the file's first line."""
    converter = oxigraph_converter()

    def one_line(line: bytes, number: int) -> list[tuple]:
        quads = iter(ox.parse(line, rdf_format))
        return [quad for batch in iter(lambda: converter.batch(quads, _BATCH, keep, graph), []) for quad in batch]

    reader = line_reader(stream, rdf_format == ox.RdfFormat.N_QUADS, keep, graph, one_line)
    try:
        yield from iter(lambda: reader.batch(_BATCH), [])
        return
    except (SyntaxError, TermSyntaxError):
        read, number = reader.rest()
    try:
        yield from _oxigraph_batches(_Joined(read, stream), rdf_format, None, keep, graph)
    except SyntaxError as exc:
        shift = number - 1
        # "Parser error at line 2 between columns ...: what": the lines of the place, not the text quoted after
        place, colon, what = str(exc.msg).partition(": ")
        place = re.sub(r"\bline (\d+)", lambda found: f"line {int(found.group(1)) + shift}", place)
        raise SyntaxError(place + colon + what, (exc.filename, exc.lineno and exc.lineno + shift, exc.offset,
                                                 exc.text, exc.end_lineno and exc.end_lineno + shift,
                                                 exc.end_offset)) from None


class _Joined:
    """``first``, then the rest of ``stream``, as one binary stream."""

    def __init__(self, first: bytes, stream: IO[bytes]) -> None:
        self._first = io.BytesIO(first)
        self._stream = stream

    def read(self, size: int = -1) -> bytes:
        return self._first.read(size) or self._stream.read(size)


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
    quads: list[tuple] = []
    with gc_paused():  # a file's quads are hundreds of thousands of tuples and no cycles
        for batch in _batches(source, format, base_iri, graph, progress):
            quads += batch
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
    # The lines are the file, written as quad_line writes them; or pyoxigraph's input,
    # where a term that would not read back as itself is refused, as its own terms refuse it.
    batches = _line_batches(quads, rdf_format, progress, strict=rdf_format not in _LINE_FORMATS)
    if rdf_format in _LINE_FORMATS:
        if output is None:
            return b"".join(batches)
        for batch in batches:
            output.write(batch)
        return None
    try:
        written = ox.serialize(_oxigraph_quads(batches, rdf_format), output, rdf_format,
                               prefixes=dict(prefixes) if prefixes else None)
    except SyntaxError as exc:  # pyoxigraph refused a term of ours (a blank node label it cannot take)
        raise ValueError(f"a term cannot be written as {rdf_format.name}: {exc.msg}") from None
    if rdf_format in _UNTERMINATED:  # a text file ends in a newline (a shell prompt follows it)
        if output is None:
            return written + b"\n"
        output.write(b"\n")
    return written


# The formats pyoxigraph ends without a newline.
_UNTERMINATED = (ox.RdfFormat.JSON_LD, ox.RdfFormat.RDF_XML)
# A line per quad: the compiled writer's lines are the file.
_LINE_FORMATS = (ox.RdfFormat.N_QUADS, ox.RdfFormat.N_TRIPLES)
# Quads a batch of lines holds: one write and one progress call each.
_BATCH = EVERY


def _line_batches(quads: Iterable[tuple], rdf_format: ox.RdfFormat, progress: Progress | None,
                  strict: bool = False) -> Iterator[bytes]:
    """The N-Quads lines of ``quads``, or the N-Triples lines of a triples format (all in
    one graph), as bytes a batch at a time, made by :class:`nstore._ntriples.LineWriter`
    (``strict`` as there): one buffer per batch, no Python string per term. ``progress``
    hears ``("write", quads so far, None)`` after each batch."""
    one_graph = not rdf_format.supports_datasets
    writer = LineWriter(graphs=not one_graph, one_graph=one_graph, strict=strict)
    rows = iter(quads)
    try:
        while batch := writer.lines(rows, _BATCH):
            yield batch
            if progress is not None:
                progress("write", writer.written, None)
    except GraphMismatch as exc:
        first, other = exc.args
        raise RdfFormatError(f"{rdf_format.name} holds the triples of one graph, but the quads are in "
                             f"{_graph_name(first)} and {_graph_name(other)}: write one graph at a time, "
                             f"or use N-Quads, TriG or JSON-LD") from None
    if progress is not None and not writer.written:
        progress("write", 0, None)


def _oxigraph_quads(batches: Iterable[bytes], rdf_format: ox.RdfFormat) -> Iterator[Any]:
    """pyoxigraph's quads of the lines of :func:`_line_batches`, for its writers of the
    other syntaxes: its parser reads the lines back five times faster than ``to_oxigraph``
    makes the same terms one Python call at a time."""
    lines = ox.RdfFormat.N_QUADS if rdf_format.supports_datasets else ox.RdfFormat.N_TRIPLES
    return chain.from_iterable(ox.parse(batch, lines) for batch in batches)


def _graph_name(graph: Any) -> str:
    return "the default graph" if graph is None else str(to_oxigraph(graph))
