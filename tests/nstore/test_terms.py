"""The one term module (nstore.terms): N-Triples syntax both ways, lexical forms and the
numeric ladder, and every layer reading a literal's value the same way."""

from __future__ import annotations

import subprocess
import sys
from decimal import Decimal

import pyoxigraph as ox
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fstore.export.terms import describe_object
from nstore.terms import (
    DBL,
    DEC,
    FLT,
    INT,
    XSD,
    XSD_INTEGER,
    BNode,
    IRI,
    Literal,
    TermSyntaxError,
    from_oxigraph,
    numeric_value,
    parse_term,
    quad_line,
    term_to_ntriples,
    to_oxigraph,
    to_rdf,
)
from query.errors import EvalError, make_numeric, numeric

TERMS = [
    IRI("http://example.org/a"),
    BNode("b0"),
    "plain",
    'say "hi"\\ \n\r\t end',
    "été ✓ 𝄞",
    Literal("chat", lang="fr"),
    Literal("tab\there", lang="en-gb"),
    7,
    -12,
    1.5,
    True,
    Decimal("2.25"),
    Literal("07", XSD_INTEGER),
    Literal("x y", XSD + "token"),
    Literal("POINT(1 2)", "http://www.opengis.net/ont/geosparql#wktLiteral"),
]


@pytest.mark.parametrize("value", TERMS, ids=repr)
def test_ntriples_text_reads_back_as_the_same_term(value):
    text = term_to_ntriples(value)
    assert parse_term(text) == value
    assert to_rdf(parse_term(text)) == to_rdf(value)
    # pyoxigraph reads the text datae writes as the same term
    (quad,) = ox.parse(f"<urn:s> <urn:p> {text} .".encode(), ox.RdfFormat.N_TRIPLES)
    assert from_oxigraph(quad.object) == value


@given(st.text(), st.one_of(st.none(), st.sampled_from(["en", "en-a", "x-private1", "zh-Hant-TW"])))
def test_any_string_reads_back_from_the_text_written(text, lang):
    value = text if lang is None else Literal(text, lang=lang)
    assert parse_term(term_to_ntriples(value)) == value


def test_a_literal_prints_as_ntriples_writes_it():
    for value in TERMS:
        term = to_rdf(value)
        assert str(term) == term_to_ntriples(term)
    assert quad_line(IRI("urn:s"), IRI("urn:p"), "a\tb") == '<urn:s> <urn:p> "a\\tb" .\n'


def test_parse_term_names_what_it_was_meant_to_be():
    with pytest.raises(TermSyntaxError, match="invalid object"):
        parse_term('"unterminated', "object")
    assert parse_term("urn:isbn:0451450523", "subject") == IRI("urn:isbn:0451450523")


def test_oxigraph_terms_round_trip_and_a_triple_term_is_refused():
    for value in TERMS:
        assert from_oxigraph(to_oxigraph(value)) == value
    assert from_oxigraph(to_oxigraph(None)) is None
    triple = ox.Triple(ox.NamedNode("urn:s"), ox.NamedNode("urn:p"), ox.NamedNode("urn:o"))
    with pytest.raises(TermSyntaxError, match="Triple"):
        from_oxigraph(triple)


@pytest.mark.parametrize("lexical, datatype, expected", [
    ("42", "integer", (INT, 42)),
    (" 42 ", "integer", (INT, 42)),  # XSD's whitespace facet: collapse
    ("+0", "integer", (INT, 0)),
    ("4.2", "integer", None),
    ("-1", "unsignedInt", None),  # a derived type's bounds
    ("255", "unsignedByte", (INT, 255)),
    ("256", "unsignedByte", None),
    ("0", "positiveInteger", None),
    ("1.50", "decimal", (DEC, Decimal("1.50"))),
    (".5", "decimal", (DEC, Decimal("0.5"))),
    ("1e3", "decimal", None),
    ("1e3", "double", (DBL, 1000.0)),
    ("-INF", "double", (DBL, float("-inf"))),
    ("inf", "double", None),
    ("0.1", "float", (FLT, 0.10000000149011612)),  # the nearest single, as a double
    ("x", "integer", None),
    ("1", "string", None),
])
def test_numeric_values_follow_the_xsd_lexical_rules(lexical, datatype, expected):
    literal = Literal(lexical, XSD + datatype)
    assert numeric_value(literal) == expected
    if expected is None:
        with pytest.raises(EvalError):
            numeric(literal)
    else:
        assert numeric(literal) == expected


def test_columns_read_numbers_as_the_query_engine_does():
    # one reading of a lexical form: the typed export column holds what SPARQL compares
    for lexical, datatype in [("12", "unsignedShort"), ("-1", "unsignedShort"), (" 7", "integer"),
                              ("0.1", "float"), ("1.25", "decimal"), ("NaN", "double"), ("x", "int")]:
        literal = Literal(lexical, XSD + datatype)
        found = numeric_value(literal)
        _lexical, _kind, _datatype, _language, as_int, as_double, as_decimal, *_ = describe_object(literal)
        typed = [v for v in (as_int, as_double, as_decimal) if v is not None]
        if found is None:
            assert typed == []
        else:
            assert len(typed) == 1 and (typed[0] == found[1] or typed[0] != typed[0] and found[1] != found[1])


def test_the_query_engine_maps_a_value_with_no_literal_to_its_error():
    assert make_numeric(DEC, Decimal("1.50")) == Literal("1.5", XSD + "decimal")
    with pytest.raises(EvalError):
        make_numeric(DEC, float("nan"))


def test_importing_the_store_loads_no_pyoxigraph():
    code = "import sys, nstore, nstore.terms, fstore; print('pyoxigraph' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
