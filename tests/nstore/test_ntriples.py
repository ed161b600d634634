"""The compiled N-Quads / N-Triples writer (nstore._ntriples) against its two oracles: the
pure-Python term syntax of nstore.terms (``quad_line``, the very bytes) and pyoxigraph's
parser reading the lines back (the very terms ``to_oxigraph`` makes, or a refusal where
``to_oxigraph`` refuses too)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nstore._ntriples import GraphMismatch, LineWriter
from nstore.terms import XSD, BNode, IRI, Literal, quad_line, to_oxigraph
from tests.profiles import examples

# Every character N-Triples escapes, the controls it does not, and text beyond ASCII in
# each width CPython stores a str in (1, 2 and 4 bytes a character).
SPECIAL = '\\"\n\r\t\x00\x01\x08\x0c\x1f\x7f\'<>^@ é\xff\u0100中\ufffd\U0001f600\U0010fffd'
texts = st.text(st.one_of(st.sampled_from(SPECIAL), st.characters(blacklist_categories=("Cs",))), max_size=16)
IRI_CHARS = st.one_of(st.sampled_from("aZ09-._~:/?#[]@!$&'()*+,;=é中\U0001f600"),
                      st.characters(min_codepoint=0xA0, max_codepoint=0xD7FF))
# What no term of the store holds (its checks refuse them), and would end a token if
# written raw: a strict writer refuses them.
BREAKING = st.sampled_from(['> <urn:g', " ", '"', "\n", "#", "\\", "{", "<", "\x00", "`"])
iris = st.builds(lambda scheme, rest: IRI(scheme + rest),
                 st.sampled_from(["urn:x:", "http://example.org/", "https://schema.org/", "tag:a,2024:"]),
                 st.text(IRI_CHARS, max_size=12))
labels = st.from_regex(r"[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?", fullmatch=True).map(BNode)
langs = st.from_regex(r"[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8}){0,2}", fullmatch=True)
datatypes = st.one_of(st.sampled_from([XSD + "integer", XSD + "date", XSD + "double", "urn:type"]),
                      iris.map(lambda iri: iri.value))
literals = st.one_of(
    st.builds(lambda text, lang: Literal(text, lang=lang), texts, langs),
    st.builds(Literal, texts, datatypes),
    st.builds(Literal, texts),
)
values = st.one_of(
    texts,
    st.integers(),
    st.integers(-2**64, 2**64),
    st.sampled_from([0, -1, 2**63 - 1, -2**63, 2**63, -2**63 - 1]),
    st.booleans(),
    st.floats(),
    st.decimals(allow_nan=False, allow_infinity=False, places=4),
    st.dates(),
    st.datetimes(timezones=st.one_of(st.none(), st.just(dt.timezone.utc))),
    st.binary(max_size=8),
)
subjects = st.one_of(iris, labels)
objects = st.one_of(iris, labels, literals, values)
graphs = st.one_of(st.none(), iris, labels)
quads = st.tuples(graphs, subjects, iris, objects)
broken_names = st.one_of(  # what may stand as a graph
    st.builds(lambda iri, bad: IRI(iri.value + bad), iris, BREAKING),
    st.builds(lambda label, bad: BNode(label.id + bad + "x"), labels, BREAKING),
)
broken = st.one_of(
    broken_names,
    st.builds(lambda lang, bad: Literal("x", lang=lang + bad), langs, BREAKING),
    st.builds(lambda iri, bad: Literal("x", iri.value + bad), iris, BREAKING),
)


def lines_of(rows: list[tuple], graphs: bool = True, batch: int = 7) -> bytes:
    writer = LineWriter(graphs=graphs)
    found, rest = [], iter(rows)
    while chunk := writer.lines(rest, batch):
        found.append(chunk)
    assert writer.written == len(rows)
    return b"".join(found)


def read_back(line: bytes, graphs: bool) -> ox.Quad | None:
    """The one quad pyoxigraph reads in ``line``, or None if it refuses the line."""
    try:
        (quad,) = ox.parse(line, ox.RdfFormat.N_QUADS if graphs else ox.RdfFormat.N_TRIPLES)
    except SyntaxError:
        return None
    return quad


def made(quad: tuple, graphs: bool) -> ox.Quad | None:
    """The quad ``to_oxigraph`` makes of ``quad``, or None if it refuses a term."""
    g, s, p, o = quad
    try:
        return ox.Quad(to_oxigraph(s), to_oxigraph(p), to_oxigraph(o), to_oxigraph(g) if graphs else ox.DefaultGraph())
    except ValueError:
        return None


@settings(max_examples=examples(300))
@given(st.lists(st.one_of(quads, st.tuples(graphs, subjects, iris, broken)), max_size=30), st.booleans(),
       st.integers(1, 40))
def test_the_lines_are_quad_lines_bytes(rows, graphs, batch):
    expected = "".join(quad_line(s, p, o, g if graphs else None) for g, s, p, o in rows).encode("utf-8")
    assert lines_of(rows, graphs, batch) == expected


@settings(max_examples=examples(300))
@given(st.one_of(quads, st.tuples(graphs, subjects, iris, broken), st.tuples(broken_names, subjects, iris, objects)),
       st.booleans())
def test_pyoxigraph_reads_each_strict_line_back_as_the_terms_to_oxigraph_makes(quad, graphs):
    """A strict line reads back as the terms ``to_oxigraph`` makes; what it refuses (or
    pyoxigraph's parser refuses) ``to_oxigraph`` refuses too. Not strict, the line is
    ``quad_line``'s whatever the terms hold (the other test)."""
    try:
        line = LineWriter(graphs=graphs, strict=True).lines(iter([quad]), 1)
    except ValueError:
        assert made(quad, graphs) is None
        return
    assert line == LineWriter(graphs=graphs).lines(iter([quad]), 1)
    assert read_back(line, graphs) == made(quad, graphs)


def test_every_escape_and_width():
    text = 'a\\b"c\nd\re\tf\x00g\x7fé\u0100中\U0001f600'
    line = LineWriter().lines(iter([(None, IRI("urn:s"), IRI("urn:p"), text)]), 1)
    assert line == '<urn:s> <urn:p> "a\\\\b\\"c\\nd\\re\\tf\x00g\x7fé\u0100中\U0001f600" .\n'.encode()
    (quad,) = ox.parse(line, ox.RdfFormat.N_QUADS)
    assert quad.object.value == text


def test_integers_at_the_edges_of_a_machine_word():
    for number in (0, 7, -7, 2**63 - 1, -2**63, 2**63, -2**63 - 1, 10**40, -10**40):
        line = LineWriter().lines(iter([(None, IRI("urn:s"), IRI("urn:p"), number)]), 1)
        assert line == quad_line(IRI("urn:s"), IRI("urn:p"), number).encode(), number


def test_other_values_and_subclasses_take_term_to_ntriples():
    class Text(str):
        pass

    class Number(int):
        pass

    rows = [(None, IRI("urn:s"), IRI("urn:p"), value)
            for value in (1.5, float("nan"), Decimal("2.50"), dt.date(2024, 1, 2), b"\x00\xff", Text("t"), Number(3), True)]
    assert lines_of(rows) == "".join(quad_line(s, p, o) for _, s, p, o in rows).encode()


def test_a_batch_takes_at_most_its_limit_and_leaves_the_rest():
    rows = iter([(None, IRI("urn:s"), IRI("urn:p"), n) for n in range(5)])
    writer = LineWriter()
    assert writer.lines(rows, 2).count(b"\n") == 2
    assert next(rows)[3] == 2  # the writer took no quad past its batch
    assert writer.lines(rows, 10).count(b"\n") == 2 and writer.lines(rows, 10) == b"" and writer.written == 4
    with pytest.raises(ValueError, match="at least one line"):
        writer.lines(rows, 0)


def test_lists_are_quads_too():
    row = [IRI("urn:g"), IRI("urn:s"), IRI("urn:p"), "x"]
    assert LineWriter().lines(iter([row]), 1) == quad_line(*row[1:], row[0]).encode()
    with pytest.raises(ValueError):
        LineWriter().lines(iter([(IRI("urn:s"), IRI("urn:p"), "x")]), 1)


def test_one_graph_refuses_a_second_graph():
    g = IRI("urn:g")
    writer = LineWriter(graphs=False, one_graph=True)
    assert writer.lines(iter([(g, IRI("urn:s"), IRI("urn:p"), 1), (IRI("urn:g"), IRI("urn:s"), IRI("urn:p"), 2)]), 5)
    with pytest.raises(GraphMismatch) as raised:
        writer.lines(iter([(g, IRI("urn:s"), IRI("urn:p"), 3), (None, IRI("urn:s"), IRI("urn:p"), 4)]), 5)
    assert raised.value.args == (g, None)


def test_what_quad_line_refuses_is_refused_alike():
    for bad in (None, "\ud800", IRI("urn:\udfff"), object()):
        row = (None, IRI("urn:s"), IRI("urn:p"), bad)
        with pytest.raises(Exception) as expected:
            quad_line(*row[1:]).encode("utf-8")
        with pytest.raises(type(expected.value)):
            LineWriter().lines(iter([row]), 1)


def test_the_compiled_modules_examples_hold():
    import doctest

    import nstore._ntriples

    result = doctest.testmod(nstore._ntriples)
    assert result.attempted >= 2 and not result.failed
