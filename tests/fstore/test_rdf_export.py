"""fstore.rdf.serialize as issue 26 made it: every syntax written from the compiled lines of
nstore._ntriples. Its oracles: the lines of ``quad_line`` (N-Quads, N-Triples), and for the
syntaxes pyoxigraph writes, pyoxigraph's writer given the terms ``to_oxigraph`` makes, as
serialize gave it before (the very bytes, or a ValueError where that refused a term)."""

from __future__ import annotations

import io

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fstore.rdf import FORMATS, RdfFormatError, serialize
from nstore.terms import BNode, IRI, Literal, quad_line, to_oxigraph
from tests.nstore.test_ntriples import broken, graphs, iris, objects, quads, subjects
from tests.profiles import examples

OXIGRAPH_WRITES = ["trig", "jsonld", "ttl", "rdf"]
# RDF/XML names a predicate by an XML QName: its last character must be able to end one.
predicates = st.sampled_from(["http://example.org/p", "http://xmlns.com/foaf/0.1/name", "urn:p:q"]).map(IRI)


def through_terms(rows: list[tuple], name: str) -> bytes | type:
    """What serialize wrote before issue 26: pyoxigraph's writer given ``to_oxigraph``'s
    terms (the exception type where it refused one)."""
    rdf_format = FORMATS[name]
    try:
        if rdf_format.supports_datasets:
            terms = [ox.Quad(*(to_oxigraph(t) for t in (s, p, o, g))) for g, s, p, o in rows]
        else:
            terms = [ox.Triple(to_oxigraph(s), to_oxigraph(p), to_oxigraph(o)) for _, s, p, o in rows]
        written = ox.serialize(terms, None, rdf_format)
    except ValueError:
        return ValueError
    return written + b"\n" if name in ("jsonld", "rdf") else written


def written(rows: list[tuple], name: str) -> bytes | type:
    try:
        return serialize(rows, name)
    except ValueError:
        return ValueError


@settings(max_examples=examples(60))
@given(st.data(), st.sampled_from(OXIGRAPH_WRITES))
def test_pyoxigraphs_syntaxes_are_written_as_from_to_oxigraphs_terms(data, name):
    dataset = FORMATS[name].supports_datasets
    graph = graphs if dataset else st.just(IRI("urn:g"))
    rows = data.draw(st.lists(st.tuples(graph, subjects, predicates, st.one_of(objects, broken)), max_size=12))
    assert written(rows, name) == through_terms(rows, name)


@settings(max_examples=examples(60))
@given(st.lists(quads, max_size=20))
def test_line_syntaxes_are_quad_lines(rows):
    assert serialize(rows, "nq") == "".join(quad_line(s, p, o, g) for g, s, p, o in rows).encode()
    one = [(IRI("urn:g"), s, p, o) for _, s, p, o in rows]
    assert serialize(one, "nt") == "".join(quad_line(s, p, o) for _, s, p, o in one).encode()


@pytest.mark.parametrize("name", ["nq", "trig"])
def test_many_batches_go_to_the_stream_and_progress_hears_each(name):
    rows = [(IRI(f"urn:g{n % 3}"), IRI(f"urn:s{n}"), IRI("urn:p"), n) for n in range(20_000)]
    heard: list[tuple] = []
    stream = io.BytesIO()
    assert serialize(rows, name, stream, progress=lambda *told: heard.append(told)) is None
    assert [done for _, done, _ in heard] == [8192, 16384, 20000] and heard[0][0] == "write"
    assert stream.getvalue() == serialize(rows, name)
    assert len(list(ox.parse(stream.getvalue(), FORMATS[name]))) == 20_000


def test_an_empty_export_is_heard_once():
    heard: list[tuple] = []
    assert serialize([], "nq", progress=lambda *told: heard.append(told)) == b""
    assert heard == [("write", 0, None)]


@pytest.mark.parametrize("name", ["nt", "ttl"])
def test_a_second_graph_in_a_later_batch_is_refused(name):
    rows = [(None, IRI(f"urn:s{n}"), IRI("urn:p"), n) for n in range(10_000)] + [(IRI("urn:g"), IRI("urn:s"), IRI("urn:p"), 1)]
    with pytest.raises(RdfFormatError, match="the default graph and <urn:g>"):
        serialize(rows, name, io.BytesIO())


def test_a_term_pyoxigraph_cannot_take_is_a_value_error_in_its_syntaxes():
    for bad in (BNode("a b"), Literal("x", lang="e n"), IRI("urn:a> <urn:b")):
        rows = [(None, IRI("urn:s"), IRI("urn:p"), bad)]
        assert serialize(rows, "nq") == quad_line(IRI("urn:s"), IRI("urn:p"), bad).encode()  # as quad_line writes it
        for name in OXIGRAPH_WRITES:
            with pytest.raises(ValueError, match="cannot be written"):
                serialize(rows, name)
