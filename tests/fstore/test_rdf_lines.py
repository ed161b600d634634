"""N-Quads and N-Triples read in C (nstore._terms.LineReader, through fstore.rdf.parse)
against their definition: pyoxigraph's parser, each term made a datae value by
``from_oxigraph``. Generated files mix the lines the reader takes itself with every kind
it leaves to pyoxigraph (escapes, comments, odd IRIs, labels and tags, errors): the quads,
or the error with its message, line and column, must be the same."""

from __future__ import annotations

import gzip

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fstore.rdf import FORMATS, RdfSyntaxError, parse
from nstore.terms import XSD, IRI, TermSyntaxError, from_oxigraph
from tests.profiles import examples

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
_IRIS = [
    "<urn:a>", "<http://example.org/r/1>", "<http://example.org:8080/a?b=c#d>", "<https://ex.org/a#b#c>",
    "<http://ex:abc/>", "<http://user@ex.org/>", "<http://[::1]/x>", "<http:///x>", "<http://ex.org:/x>",
    "<urn:a%20b>", "<urn:a%2>", "<urn:a b>", "<urn:\\u0041>", "<urn:\\U0001F600>", "<urn:é>", "<rel>", "<>",
    "<urn:a|b>", "<urn:a{b>", "<urn:\x7f>", "<urn:\xa0>", "<urn:a>b>", "<urn:a", "<urn:\ufffe>", "<a:b:c>",
    "<http://ex.org/~a!$&'()*+,;=:@/?>", "<http://ex.org/a?x#y?z/>", "<1a:b>", "<a+b.c-d:x>",
]
_BNODES = ["_:b0", "_:a.b", "_:a-b", "_:x_", "_:é", "_:-x", "_:.x", "_:9", "_:", "_:a:b"]
_STRINGS = ['"x"', '""', '"a b\\tc\\n\\"q\\"\\\\"', '"\\u00e9\\U0001F600"', '"\\ud800"', '"\\uDC00x"', '"\\q"',
            '"é あ"', "'single'", '"unclosed', '"a\\\'b"', '"\\u004"', '"\\U00110000"', '"x\x00y"']
_TAGS = ["", "@en", "@EN-us", "@en--ltr", "@en--rtl", "@1x", "@", "@en-", "@de-CH-1996", "@x-a"]
_TYPES = ["", "^^<" + XSD + "integer>", "^^<" + XSD + "string>", "^^<" + XSD + "boolean>", "^^<" + XSD + "double>",
          "^^<" + XSD + "date>", "^^<" + RDF + "langString>", "^^<" + RDF + "dirLangString>", "^^<urn:t>", "^^<rel>",
          "^^urn:t", "^^<urn:\\u0041>"]
_INTEGERS = ['"0"', '"-0"', '"007"', '"12"', '"-12"', '"+1"', '" 1"', '"123456789012345678"',
             '"1234567890123456789012"', '"1_0"', '"٣"', '"x"', '"1.5"']
_LITERALS = st.one_of(
    st.builds(lambda text, tag: text + tag, st.sampled_from(_STRINGS), st.sampled_from(_TAGS)),
    st.builds(lambda text, datatype: text + datatype, st.sampled_from(_STRINGS + _INTEGERS), st.sampled_from(_TYPES)),
    st.sampled_from(_INTEGERS).map(lambda text: text + "^^<" + XSD + "integer>"),
)
_GAPS = st.sampled_from([" ", " ", "\t", "  ", ""])
_NODES = st.sampled_from(_IRIS[:3] * 4 + _IRIS + _BNODES)


@st.composite
def _lines(draw) -> str:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from(["", "   ", "# a comment", "<urn:s> <urn:p> <urn:o> . # after", "\ufeff<urn:s> <urn:p> <urn:o> .",
                                     "<urn:s> <urn:p> <urn:o> . <urn:s> <urn:p> <urn:o> .", "<< <urn:s> <urn:p> <urn:o> >> <urn:p> <urn:o> .",
                                     "<urn:s> <urn:p> <<( <urn:s> <urn:p> <urn:o> )>> .", "<urn:s> <urn:p> .", "<urn:s> <urn:p> <urn:o>",
                                     "<urn:s> <urn:p> <urn:o> <urn:g> <urn:h> .", "<urn:s> <urn:p> <urn:o> .x", "<urn:s>\r<urn:p> <urn:o> ."]))
    terms = [draw(_NODES), draw(st.sampled_from(_IRIS[:4] * 4 + _IRIS + _BNODES[:2])),
             draw(st.one_of(_NODES, _LITERALS, _LITERALS))]
    if draw(st.booleans()):
        terms.append(draw(_NODES))
    line = draw(_GAPS).join(terms)
    return draw(st.sampled_from(["", " ", "\t"])) + line + draw(_GAPS) + "." + draw(st.sampled_from(["", " ", "\t"]))


_FILES = st.builds(lambda lines, ending, last: ending.join(lines) + (ending if last else ""),
                   st.lists(_lines(), min_size=1, max_size=8), st.sampled_from(["\n", "\n", "\r\n"]), st.booleans())


def _oxigraph_reading(data: bytes, syntax: str, graph: object) -> object:
    """The quads pyoxigraph reads, as from_oxigraph makes them, or its error: the definition."""
    try:
        return [(from_oxigraph(q.graph_name) if graph is None else graph, from_oxigraph(q.subject),
                 from_oxigraph(q.predicate), from_oxigraph(q.object)) for q in ox.parse(data, FORMATS[syntax])]
    except SyntaxError as exc:
        return ("error", f"<bytes>: {exc.msg}", exc.lineno, exc.offset)
    except TermSyntaxError as exc:
        return ("error", str(exc), None, None)


def _datae_reading(data: bytes, syntax: str, graph: object) -> object:
    try:
        if graph is None:
            return list(parse(data, syntax))
        return list(parse(data, syntax, graph=graph))
    except RdfSyntaxError as exc:
        return ("error", str(exc), exc.line, exc.column)


def _same(mine: object, theirs: object) -> None:
    assert mine == theirs
    if isinstance(mine, list):  # the very values: types, hashes and forms, not only equality
        for quad, expected in zip(mine, theirs):
            for a, b in zip(quad, expected):
                assert type(a) is type(b) and hash(a) == hash(b) and repr(a) == repr(b)


@settings(max_examples=examples(1500), deadline=None)
@given(_FILES, st.sampled_from(["nq", "nt"]), st.sampled_from([None, IRI("urn:into")]))
def test_a_file_read_in_c_is_what_pyoxigraph_reads(text: str, syntax: str, graph: object) -> None:
    data = text.encode("utf-8", "surrogatepass")
    _same(_datae_reading(data, syntax, graph), _oxigraph_reading(data, syntax, graph))


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.binary(max_size=30), max_size=5), st.sampled_from(["nq", "nt"]))
def test_any_bytes_read_in_c_are_what_pyoxigraph_reads(chunks: list[bytes], syntax: str) -> None:
    data = b"<urn:s> <urn:p> ".join(chunks)
    _same(_datae_reading(data, syntax, None), _oxigraph_reading(data, syntax, None))


def test_an_error_names_the_line_of_the_file_and_its_column() -> None:
    data = b"<urn:s> <urn:p> <urn:o> .\n\n<urn:s> <urn:p> <a b> .\n"
    with pytest.raises(RdfSyntaxError, match=r"^<bytes>: Parser error at line 3 between columns 17 and 22: Invalid IRI") as caught:
        list(parse(data, "nq"))
    assert (caught.value.line, caught.value.column) == (3, 17)


def test_the_quads_before_an_error_come_first() -> None:
    data = b"".join(b"<urn:s> <urn:p> \"%d\" .\n" % n for n in range(10_000)) + b"<urn:s> <urn:p> oops .\n"
    read = []
    with pytest.raises(RdfSyntaxError, match="line 10001"):
        for quad in parse(data, "nt"):
            read.append(quad)
    assert len(read) == 10_000 and read[-1] == (None, IRI("urn:s"), IRI("urn:p"), "9999")


def test_lines_longer_than_a_read_and_a_gzip_file(tmp_path) -> None:
    long = "x" * 3_000_000
    data = f'<urn:s> <urn:p> "{long}" .\n<urn:s> <urn:p> <urn:{long}> <urn:g> .'.encode()
    (tmp_path / "long.nq.gz").write_bytes(gzip.compress(data))
    quads = list(parse(tmp_path / "long.nq.gz"))
    assert quads == [(None, IRI("urn:s"), IRI("urn:p"), long), (IRI("urn:g"), IRI("urn:s"), IRI("urn:p"), IRI(f"urn:{long}"))]
    assert quads == _oxigraph_reading(data, "nq", None)


def test_many_distinct_iris_past_the_memo_read_the_same() -> None:
    data = b"".join(b"<urn:s%d> <urn:p> <urn:o%d> <urn:g%d> .\n" % (n, n % 7, n % 3) for n in range(300_000))
    quads = list(parse(data, "nq"))
    assert quads == _oxigraph_reading(data, "nq", None)
    assert quads[0][2] is quads[1][2] and quads[-2][2] is quads[-1][2]  # one object for a repeated IRI, before and after the memo is emptied


# IRIs of the characters the C reader's own IRI test (the form every parser takes) looks at:
# each it takes must be one pyoxigraph takes, as the same IRI.
_IRI_TEXT = st.builds(lambda scheme, rest: scheme + rest,
                      st.sampled_from(["http://", "urn:", "a+b:", "h://", "x:", "1:", ":", "http://a", "http://a:"]),
                      st.text(st.sampled_from("aZ09:/.?#%-_~!$&'()*+,;=@[]Ff \\é"), max_size=14))


@settings(max_examples=examples(1500), deadline=None)
@given(st.lists(_IRI_TEXT, min_size=1, max_size=4))
def test_each_iri_the_reader_takes_itself_is_one_pyoxigraph_takes(texts: list[str]) -> None:
    data = "".join(f"<{text}> <urn:p> <{text}> <{text}> .\n" for text in texts).encode()
    _same(_datae_reading(data, "nq", None), _oxigraph_reading(data, "nq", None))
