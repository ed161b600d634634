"""The compiled half of nstore.terms (nstore._terms) against its Python definitions: the
IRI check against the ``valid_iri`` regex, the language-tag check against ``valid_lang``,
the quad check against ``check_term`` of each item, and the pyoxigraph conversion against
``from_oxigraph`` of each term."""

from __future__ import annotations

import datetime as dt
import doctest
from decimal import Decimal

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nstore._terms
from nstore._terms import QuadCheck, iri_ok, lang_ok
from nstore.errors import InvalidTermError
from nstore.terms import (
    _ALWAYS_VALID,
    RDF_LANGSTRING,
    XSD,
    XSD_DOUBLE,
    XSD_INTEGER,
    BNode,
    IRI,
    Literal,
    canonical,
    check_term,
    first_unchecked,
    from_oxigraph,
    oxigraph_converter,
    to_oxigraph,
    valid_iri,
    valid_lang,
)
from tests.profiles import examples

# One character of each class the IRI regex treats apart: allowed ASCII, each refused
# ASCII character, controls C0 / DEL / C1, the space, surrogates, non-characters and the
# code points around each range's ends, '%' and hex digits, non-ASCII letters.
_EDGES = ("\x00\x1f\x20\x21\x7e\x7f\x80\x9f\xa0<>\"{}|\\^`%:/#?+.-_~"
          "\ud7ff\ud800\udbff\udc00\udfff\ue000\ufdcf\ufdd0\ufdef\ufdf0\ufffd\ufffe\uffff"
          "\U00010000\U0001fffe\U0010ffff0123456789abcdefABCDEFgzGZéあ")
_IRI_CHARS = st.one_of(st.sampled_from(_EDGES), st.characters())
_SCHEMES = st.one_of(st.sampled_from(["http", "urn", "a", "x-y+z.1", "1a", "", "a b", "é"]),
                     st.text(st.sampled_from("aZ9+.-:%"), max_size=4))
_IRIS = st.one_of(
    st.builds(lambda scheme, colon, rest: scheme + colon + rest, _SCHEMES, st.sampled_from([":", "", "::"]),
              st.text(_IRI_CHARS, max_size=12)),
    st.text(_IRI_CHARS, max_size=12),
)


@settings(max_examples=examples(3000))
@given(_IRIS)
def test_the_c_iri_check_is_the_regex(text: str) -> None:
    assert iri_ok(text) == (valid_iri(text) is not None)


def test_the_c_iri_check_refuses_each_refused_character_as_the_regex_does() -> None:
    for code in [*range(0, 0xA1), *range(0xD7FF, 0xE001), *range(0xFDCF, 0xFDF1), 0xFFFD, 0xFFFE, 0xFFFF, 0x10000]:
        for text in (f"urn:a{chr(code)}b", f"{chr(code)}a:b", f"a{chr(code)}:b", f"urn:%{chr(code)}0", f"urn:%0{chr(code)}"):
            assert iri_ok(text) == (valid_iri(text) is not None), repr(text)


@settings(max_examples=examples(1000))
@given(st.one_of(st.text(st.sampled_from("aZz09-é_ "), max_size=20),
                 st.from_regex(r"[A-Za-z]{1,9}(-[A-Za-z0-9]{0,9}){0,3}", fullmatch=True)))
def test_the_c_language_tag_check_is_the_regex(tag: str) -> None:
    assert lang_ok(tag) == (valid_lang(tag) is not None)


def test_the_docstring_examples_of_the_compiled_module() -> None:
    assert doctest.testmod(nstore._terms).failed == 0


# Items of quads: the terms check_term refuses and those it takes, in every position.
_ITEMS = st.one_of(
    _IRIS.map(IRI),
    st.sampled_from([None, "x", 1.5, True, b"\x00", dt.date(2020, 1, 2), dt.datetime(2020, 1, 2, 3), BNode("b"),
                     Decimal("1.5"), 10**5000, -(2**70), 2**62, Literal("x", lang="e n"), Literal("x", lang="de-CH"),
                     Literal("x", RDF_LANGSTRING), Literal("x", "not an iri"), Literal("x", XSD + "foo"),
                     Literal("x", "urn:t"), Literal("01", XSD + "integer"), object()]),
    st.integers(),
)


def _python_accepts(quad: tuple) -> bool:
    """check_quad_terms's Python definition: check_term of each item (None: the default graph)."""
    try:
        for position, value in enumerate(quad):
            if value is not None or position:
                check_term(value)
    except (InvalidTermError, TypeError):
        return False
    return True


@settings(max_examples=examples(2000))
@given(st.tuples(_ITEMS, _ITEMS, _ITEMS, _ITEMS))
def test_the_c_quad_check_passes_only_what_check_term_passes(quad: tuple) -> None:
    check = QuadCheck(set(), 1 << 10, IRI, Literal, RDF_LANGSTRING.value, _ALWAYS_VALID).check
    if check(quad):
        assert _python_accepts(quad)
    elif _common_shape(quad):
        assert not _python_accepts(quad)  # decided in C both ways


def _common_shape(quad: tuple) -> bool:
    """A quad whose every item the C check decides (else it leaves it to Python)."""
    g, s, p, o = quad
    return (g is None or type(g) is IRI) and type(s) is IRI and type(p) is IRI and \
        (type(o) in (IRI, str, Literal) or (type(o) is int and abs(o) < 2**62))


def test_the_c_quad_check_remembers_valid_iris_and_forgets_past_its_limit() -> None:
    seen: set[str] = set()
    check = QuadCheck(seen, 3, IRI, Literal, RDF_LANGSTRING.value, _ALWAYS_VALID).check
    assert check((None, IRI("urn:s"), IRI("urn:p"), IRI("urn:o")))
    assert seen == {"urn:s", "urn:p", "urn:o"}
    assert not check((None, IRI("urn:s"), IRI("urn:p"), IRI("bad iri")))
    assert check((IRI("urn:g"), IRI("urn:s"), IRI("urn:p"), "x")) and len(seen) <= 3
    assert not check([None, IRI("urn:s"), IRI("urn:p"), "x"]) and not check((None, IRI("urn:s")))


# Terms as pyoxigraph makes them: the converter against from_oxigraph, term by term.
_OX_LITERALS = st.one_of(
    st.builds(ox.Literal, st.text(max_size=6)),
    st.builds(lambda text, lang: ox.Literal(text, language=lang), st.text(max_size=4), st.sampled_from(["en", "DE-ch", "fr-BE"])),
    st.builds(lambda text, datatype: ox.Literal(text, datatype=ox.NamedNode(XSD + datatype)),
              st.one_of(st.from_regex(r"[+-]?0*[0-9]{0,21}", fullmatch=True), st.text(st.sampled_from("0123456789-+ _.eE٣"), max_size=22),
                        st.sampled_from(["true", "1", "NaN", "1.5E0", "2020-01-01", "AA=="])),
              st.sampled_from(["integer", "int", "boolean", "double", "decimal", "date", "base64Binary", "string"])),
    st.builds(lambda text: ox.Literal(text, datatype=ox.NamedNode("urn:type")), st.text(max_size=4)),
)
_OX_IRIS = st.sampled_from(["urn:a", "http://example.org/x", "urn:b"]).map(ox.NamedNode)
_OX_SUBJECTS = st.one_of(_OX_IRIS, st.sampled_from(["b0", "x1"]).map(ox.BlankNode))
_OX_TERMS = st.one_of(_OX_SUBJECTS, _OX_LITERALS)


@settings(max_examples=examples(1500))
@given(st.lists(st.tuples(st.one_of(st.just(ox.DefaultGraph()), st.just(ox.NamedNode("urn:g")), st.just(ox.BlankNode("g"))),
                          _OX_SUBJECTS, _OX_IRIS, _OX_TERMS), max_size=12),
       st.integers(1, 5), st.booleans())
def test_the_converter_makes_what_from_oxigraph_makes(rows: list, size: int, keep: bool) -> None:
    quads = [ox.Quad(s, p, o, g) for g, s, p, o in rows]
    expected = [(from_oxigraph(q.graph_name) if keep else "G", *(from_oxigraph(t) for t in (q.subject, q.predicate, q.object)))
                for q in quads]
    converter, source, made = oxigraph_converter(memo=2), iter(quads), []
    while batch := converter.batch(source, size, keep, "G"):
        assert len(batch) <= size
        made += batch
    assert made == expected
    for mine, theirs in zip(made, expected):  # the same types, hashes and lexical forms, not only equal
        for a, b in zip(mine, theirs):
            assert type(a) is type(b) and hash(a) == hash(b) and repr(a) == repr(b)


def test_the_converter_raises_after_the_quads_before_the_error() -> None:
    def quads():
        yield ox.Quad(ox.NamedNode("urn:s"), ox.NamedNode("urn:p"), ox.Literal("1"))
        raise SyntaxError("broken")

    converter, source = oxigraph_converter(), quads()
    assert converter.batch(source, 10, True, None) == [(None, IRI("urn:s"), IRI("urn:p"), "1")]
    with pytest.raises(SyntaxError, match="broken"):
        converter.batch(source, 10, True, None)
    star = ox.Quad(ox.NamedNode("urn:s"), ox.NamedNode("urn:p"), ox.Triple(*[ox.NamedNode("urn:x")] * 3))
    with pytest.raises(Exception, match="not Triple"):
        oxigraph_converter().batch(iter([star]), 10, True, None)


def test_the_converter_gives_a_repeated_iri_as_one_object() -> None:
    quads = [ox.Quad(ox.NamedNode("urn:s"), ox.NamedNode("urn:p"), ox.NamedNode(f"urn:o{n}")) for n in range(3)]
    made = oxigraph_converter().batch(iter(quads), 10, True, None)
    assert made[0][1] is made[2][1] and made[0][2] is made[1][2]
    assert to_oxigraph(made[2][3]) == ox.NamedNode("urn:o2")


_LEXICALS = st.one_of(st.text(st.sampled_from("0123456789-+ a٣"), max_size=20), st.integers().map(str))


@settings(max_examples=examples(1500))
@given(st.lists(st.one_of(
    _LEXICALS.map(lambda lexical: Literal(lexical, XSD_INTEGER)),
    _LEXICALS.map(Literal),
    _LEXICALS.map(lambda lexical: Literal(lexical, XSD_DOUBLE)),
    st.sampled_from(["en", "fr-CA"]).map(lambda tag: Literal("x", lang=tag)),
    st.integers(), st.text(max_size=5), st.floats(allow_nan=False)), max_size=12))
def test_a_batch_is_made_canonical_as_canonical_makes_each_quad(objects: list) -> None:
    """first_unchecked puts the literals it knows in canonical form in place, as
    canonical() would; every quad it stops at, the Python path decides."""
    quads = [(None, IRI("urn:s"), IRI("urn:p"), value) for value in objects]
    batch = list(quads)
    start = 0
    while (start := first_unchecked(batch, start)) < len(batch):
        batch[start] = quads[start][:3] + (canonical(quads[start][3]),)
        start += 1
    for ours, quad in zip(batch, quads):
        expected = canonical(quad[3])
        assert type(ours[3]) is type(expected) and repr(ours[3]) == repr(expected), (quad, ours)
