"""RDF syntaxes in and out (issue 16): N-Quads, TriG, JSON-LD, N-Triples, Turtle and RDF/XML,
read and written through pyoxigraph, each checked against pyoxigraph as the oracle: what
pyoxigraph writes, datae reads as pyoxigraph does; what datae writes, pyoxigraph reads back
as the quads written. A triples format refuses a second graph instead of merging graphs.
"""

from __future__ import annotations

import io

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fstore
from fstore.rdf import (FORMAT_NAMES, FORMATS, RdfFormatError, RdfSyntaxError, format_of, load, parse, serialize,
                        to_oxigraph)
from nstore.terms import IRI, Literal
from tests.profiles import examples

DATASET_FORMATS = [name for name in FORMAT_NAMES if FORMATS[name].supports_datasets]
TRIPLE_FORMATS = [name for name in FORMAT_NAMES if not FORMATS[name].supports_datasets]

iris = st.sampled_from(["http://example.org/a", "http://example.org/b", "urn:x:1", "https://schema.org/Thing",
                        "http://example.org/ü/%20"]).map(IRI)
# RDF/XML names a predicate by an XML QName: its last character must be able to end one.
predicates = st.sampled_from(["http://example.org/p", "http://xmlns.com/foaf/0.1/name", "urn:p:q"]).map(IRI)
texts = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12)
objects = st.one_of(
    iris,
    texts,
    st.integers(-10**20, 10**20),
    st.booleans(),
    st.builds(lambda text, lang: Literal(text, lang=lang), texts, st.sampled_from(["en", "de-CH", "fr"])),
    st.builds(lambda text: Literal(text, "http://example.org/type"), texts),
)
graphs = st.sampled_from([None, IRI("http://example.org/g1"), IRI("urn:g:2")])


def oracle(quads, as_triples: bool) -> set:
    """The quads as pyoxigraph terms (their graph dropped when written as triples)."""
    found = set()
    for g, s, p, o in quads:
        graph = ox.DefaultGraph() if as_triples else to_oxigraph(g)
        found.add(ox.Quad(to_oxigraph(s), to_oxigraph(p), to_oxigraph(o), graph))
    return found


@settings(max_examples=examples(40))
@given(st.lists(st.tuples(graphs, iris, predicates, objects), max_size=20), st.sampled_from(DATASET_FORMATS))
def test_dataset_formats_written_are_read_by_pyoxigraph_as_written(quads, name):
    written = serialize(quads, name)
    assert set(ox.parse(written, FORMATS[name])) == oracle(quads, False)
    assert {tuple(q) for q in parse(written, name)} == {tuple(q) for q in quads}


@settings(max_examples=examples(40))
@given(st.lists(st.tuples(st.just(IRI("urn:g")), iris, predicates, objects), max_size=20),
       st.sampled_from(TRIPLE_FORMATS))
def test_triple_formats_write_the_triples_of_one_graph(quads, name):
    written = serialize(quads, name)
    assert set(ox.parse(written, FORMATS[name])) == oracle(quads, True)
    assert {tuple(q) for q in parse(written, name, graph=IRI("urn:g"))} == {tuple(q) for q in quads}


@pytest.mark.parametrize("name", FORMAT_NAMES)
def test_what_pyoxigraph_writes_datae_reads_as_pyoxigraph_does(name):
    store = ox.Store()
    store.load(b"""@prefix ex: <http://example.org/> .
        ex:a ex:name "Anna"@en ; ex:age 42 ; ex:knows ex:b , [ ex:name "anon" ] ; ex:score 1.5 ; ex:ok true .
        GRAPH ex:g { ex:b ex:name "Bob" }""", ox.RdfFormat.TRIG)
    as_triples = not FORMATS[name].supports_datasets
    quads = [q for q in store if not as_triples or q.graph_name == ox.DefaultGraph()]
    data = ox.serialize(quads if not as_triples else [q.triple for q in quads], format=FORMATS[name])
    read = list(parse(data, name))
    assert len(read) == len(quads)
    # Blank node labels are the file's own: compare the rest, and the shape around the bnode.
    def ground(terms):
        return {tuple("_" if type(t) is ox.BlankNode else t for t in q) for q in terms}
    assert ground(ox.Quad(*(to_oxigraph(t) for t in (s, p, o, g))) for g, s, p, o in read) == ground(quads)


@pytest.mark.parametrize("name", TRIPLE_FORMATS)
def test_a_triples_format_refuses_a_second_graph(name):
    quads = [(IRI("urn:g1"), IRI("urn:s"), IRI("urn:p"), "x"), (None, IRI("urn:s"), IRI("urn:p"), "y")]
    with pytest.raises(RdfFormatError, match="holds the triples of one graph.*<urn:g1> and the default graph"):
        serialize(quads, name)


def test_text_formats_end_in_a_newline():
    quads = [(None, IRI("urn:s"), IRI("urn:p"), "x")]
    for name in FORMAT_NAMES:
        assert serialize(quads, name).endswith(b"\n"), name
        stream = io.BytesIO()
        serialize(quads, name, stream)
        assert stream.getvalue().endswith(b"\n") and not stream.getvalue().endswith(b"\n\n"), name


def test_formats_by_file_name():
    assert format_of("onto.owl") == ox.RdfFormat.RDF_XML
    assert format_of("data.jsonld.gz") == ox.RdfFormat.JSON_LD
    assert format_of("data.RDF") == ox.RdfFormat.RDF_XML
    assert format_of("anything", "trig") == ox.RdfFormat.TRIG
    with pytest.raises(RdfFormatError, match=r"data.n3: unknown RDF format 'n3'; use one of nq, trig, jsonld"):
        format_of("data.n3")


def test_progress_counts_quads_read_staged_and_written(tmp_path):
    quads = [(None, IRI("urn:s"), IRI("urn:p"), n) for n in range(20_000)]
    path = tmp_path / "data.nq"
    path.write_bytes(serialize(quads, "nq"))
    heard: list[tuple] = []
    repo = fstore.open(str(tmp_path / "store"))
    with repo.transaction("main", message="m") as tx:
        assert load(tx, str(path), progress=lambda *told: heard.append(told)) == 20_000
    phases = [phase for phase, _, _ in heard]
    assert phases == sorted(phases, key=["read", "stage"].index)  # reading ends before staging begins
    for phase, total in (("read", None), ("stage", 20_000)):
        counts = [done for p, done, t in heard if p == phase and t == total]
        assert counts == sorted(counts) and counts[-1] == 20_000 and len(counts) == len([p for p in phases if p == phase])
    written: list[tuple] = []
    serialize(quads, "jsonld", io.BytesIO(), progress=lambda *told: written.append(told))
    assert written[-1] == ("write", 20_000, None) and len(written) > 1
    repo.close()


def test_syntax_errors_of_json_ld_and_rdf_xml_are_typed_and_change_nothing(tmp_path):
    repo = fstore.open(str(tmp_path / "store"))
    bad = {
        "remote.jsonld": (b'{"@context": "https://schema.org/", "name": "x"}', "is not fetched"),
        "cut.jsonld": (b'{"@id": ', "line 1 column 9"),
        "cut.rdf": (b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description',
                    r"cut.rdf: not well-formed XML at line 1, column 66: unclosed token"),
    }
    for name, (data, expected) in bad.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(RdfSyntaxError, match=expected):
            with repo.transaction("main", message="m") as tx:
                fstore.add(tx, None, IRI("urn:s"), IRI("urn:p"), "before")
                load(tx, str(tmp_path / name))
    assert repo.branches() == {"main": None}
    repo.close()


# Every kind of stored value, control characters included: N-Quads and N-Triples are
# written as text by datae (nstore.terms.quad_line), not by pyoxigraph's serializer.
any_values = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=12),
    st.integers(),
    st.floats(allow_nan=False),
    st.booleans(),
    st.binary(max_size=6),
    st.decimals(allow_nan=False, allow_infinity=False, places=3),
    st.dates(),
    st.datetimes(),
    st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True).map(fstore.BNode),
    st.builds(lambda text, lang: Literal(text, lang=lang), st.text(max_size=6), st.sampled_from(["en", "de-CH"])),
    st.builds(lambda text: Literal(text, "http://example.org/type"), st.text(max_size=6)),
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.tuples(graphs, iris, predicates, any_values), min_size=1, max_size=8))
def test_line_formats_say_what_pyoxigraph_says(quads):
    written = serialize(quads, "nq")
    expected = ox.serialize([ox.Quad(*(to_oxigraph(v) for v in (s, p, o, g))) for g, s, p, o in quads],
                            format=ox.RdfFormat.N_QUADS)
    assert list(ox.parse(written, ox.RdfFormat.N_QUADS)) == list(ox.parse(expected, ox.RdfFormat.N_QUADS))
    one_graph = [(None, s, p, o) for _, s, p, o in quads]
    written = serialize(one_graph, "nt")
    assert [q.triple for q in ox.parse(written, ox.RdfFormat.N_TRIPLES)] == \
        [ox.Triple(*(to_oxigraph(v) for v in (s, p, o))) for _, s, p, o in one_graph]
