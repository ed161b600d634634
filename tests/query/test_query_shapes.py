"""Parsing by shape (query.shapes): a text whose shape was parsed before gets the shape's
parse with its own constants put in, and that must be exactly the full parse of the text.

The oracle is the full parse (``query.parser._parse_query_text``) of the same text; the
texts are the W3C suites' queries with every constant replaced by another of its kind, and
generated queries with arbitrary strings, IRIs and numbers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from query.errors import QueryError
from query.parser import _parse_query_text, string_value
from query.shapes import ShapeCache, _sentinel, shape_of
from tests import conformance
from tests.profiles import examples

_OTHER = {
    "iri": lambda k: f"<http://example.org/other/{k}#x>",
    "string": lambda k: "'''it''s \"\"other\"\" " + str(k) + "'''" if k % 2 else f'"o\\"ther\\n{k}"',
    "integer": lambda k: str(1000 + k),
    "decimal": lambda k: f"{k}.75",
    "double": lambda k: f"{k}.5E-3",
}


def _variant(text: str) -> str | None:
    """``text`` with every constant shape_of takes out replaced by another of its kind."""
    shape, slots = shape_of(text)
    if not slots:
        return None
    for number, (kind, _) in enumerate(slots):
        shape = shape.replace(_sentinel(kind, number), _OTHER[kind](number), 1)
    return shape


def _full(text: str) -> object:
    try:
        return _parse_query_text(text, None)
    except QueryError as error:
        return type(error)


def _cached(cache: ShapeCache, text: str) -> object:
    try:
        return cache.parse(text, None)
    except QueryError as error:
        return type(error)


def _queries() -> list[Path]:
    """The suite's query files (a test needing them is skipped naming what is missing,
    or fails under DATAE_REQUIRE_SHARED=1: ``conformance.require_suite``)."""
    return sorted(p for p in conformance.require_suite().rglob("*.rq") if "syntax-update" not in str(p))


@pytest.mark.xdist_group("w3c")
def test_every_w3c_query_with_other_constants_parses_as_in_full() -> None:
    paths = _queries()
    cache = ShapeCache(_parse_query_text, string_value)
    filled = 0
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        if isinstance(_cached(cache, text), type):
            continue  # a negative syntax test: the full parse raised, no shape was learnt
        other = _variant(text)
        if other is None:
            continue
        assert _cached(cache, other) == _full(other), path
        filled += 1
    assert filled > 200  # most of the suite's queries hold constants


def _bsbm_values(number: int) -> dict[str, str]:
    """Values of the BSBM explore templates' parameters, different for each ``number``."""
    inst = "http://www4.wiwiss.fu-berlin.de/bizer/bsbm/v01/instances/"
    return {
        "ProductXYZ": f"<{inst}dataFromProducer{number}/Product{number * 7}>",
        "OfferXYZ": f"<{inst}dataFromVendor{number}/Offer{number * 3}>",
        "ReviewXYZ": f"<{inst}dataFromRatingSite{number}/Review{number * 5}>",
        "ProductType": f"<{inst}ProductType{number}>",
        "ProductFeature1": f"<{inst}ProductFeature{number}>",
        "ProductFeature2": f"<{inst}ProductFeature{number + 1}>",
        "ProductFeature3": f"<{inst}ProductFeature{number + 2}>",
        "x": str(number * 11), "y": str(number * 13),
        "currentDate": f'"2008-0{number % 9 + 1}-20T00:00:00"^^<http://www.w3.org/2001/XMLSchema#dateTime>',
        "word1": f"word{number}",  # the template quotes it
    }


def test_bsbm_explore_templates() -> None:
    """Every BSBM explore template, with its parameters put in twice, parses as in full,
    and its shape is kept (no query of the mix depends on its values)."""
    templates = Path(__file__).resolve().parents[2] / "bench" / "bsbm" / "vendor" / "queries" / "explore"
    cache = ShapeCache(_parse_query_text, string_value)
    texts = sorted(p for p in templates.glob("query*.txt") if p.stem[5:].isdigit())
    assert len(texts) == 12
    for path in texts:
        template = path.read_text(encoding="utf-8")
        for number in (1, 2):
            text = re.sub(r"%(\w+)%", lambda m: _bsbm_values(number)[m.group(1)], template)
            assert _cached(cache, text) == _full(text) and not isinstance(_full(text), type), path
    assert len(cache.shapes) == 12
    assert all(type(entry).__name__ == "Template" for entry in cache.shapes.values())


_LEXICAL = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=12)
_TEMPLATES = [
    'PREFIX : <http://ex/> SELECT * {{ ?s :p {0} . ?s ?q {1} FILTER(?s != {2}) }} LIMIT 3',
    'SELECT (CONCAT({0}, STR(?o)) AS ?c) {{ GRAPH {2} {{ ?s ?p ?o }} }} ORDER BY DESC(?o) OFFSET 2',
    'ASK {{ VALUES ?v {{ {0} {1} {2} }} ?s ?p ?v FILTER(?v > -{1} || langMatches(lang(?v), {0})) }}',
    'SELECT (GROUP_CONCAT(?o; SEPARATOR={0}) AS ?g) {{ ?s ?p ?o FILTER(REGEX(?o, {0})) }} GROUP BY ?s',
    'CONSTRUCT {{ ?s <http://ex/made> {0} }} WHERE {{ ?s ?p {1}, {2} ; a {2} }}',
]


def _escaped(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


_CONSTANT = st.one_of(
    _LEXICAL.map(_escaped),
    _LEXICAL.map(lambda v: _escaped(v) + "@en-GB"),
    _LEXICAL.map(lambda v: _escaped(v) + "^^<http://www.w3.org/2001/XMLSchema#date>"),
    st.integers(0, 10**30).map(str),
    st.decimals(0, 10**6, places=3).map(str),
    st.floats(0, 1e300, allow_nan=False).map(lambda f: f"{f:e}"),
    st.from_regex(r"http://[a-z]{1,5}\.org/[a-zA-Z0-9_~%/]{0,8}(#[a-z]{0,3})?", fullmatch=True).map(lambda i: f"<{i}>"),
)


@settings(max_examples=examples(60))
@given(template=st.sampled_from(_TEMPLATES), first=st.lists(_CONSTANT, min_size=3, max_size=3),
       second=st.lists(_CONSTANT, min_size=3, max_size=3))
def test_generated_queries_parse_as_in_full(template: str, first: list[str], second: list[str]) -> None:
    cache = ShapeCache(_parse_query_text, string_value)
    one, two = template.format(*first), template.format(*second)
    assert _cached(cache, one) == _full(one)
    assert _cached(cache, two) == _full(two)


def test_values_that_change_the_parse_are_never_slots() -> None:
    kept = [t for kind, t in shape_of(
        'PREFIX x: <http://ex/> BASE <http://b/> SELECT * { ?s ?p "1"^^<http://www.w3.org/2001/XMLSchema#int> '
        'FILTER(<http://www.w3.org/2001/XMLSchema#integer>(?p) > 2) } LIMIT 5 OFFSET 7')[1]]
    assert kept == ['"1"', "2"]
    assert shape_of("SELECT * { <rel> ?p ?o }")[1] == []  # relative: the base decides


def test_a_shape_whose_parse_depends_on_a_value_is_not_used() -> None:
    """A cast is parsed apart from other functions: a shape learnt with an IRI that is not
    one must not answer for one that is (the IRI before ``(`` is never a slot, so the two
    texts have different shapes)."""
    cache = ShapeCache(_parse_query_text, string_value)
    plain = 'SELECT * { ?s ?p ?o FILTER(<http://ex/f>(?o) = 1) }'
    cast = 'SELECT * { ?s ?p ?o FILTER(<http://www.w3.org/2001/XMLSchema#integer>(?o) = 1) }'
    assert _cached(cache, plain) == _full(plain)
    assert _cached(cache, cast) == _full(cast)
    assert json.dumps(len(cache.shapes)) == "2"


def test_escapes_and_errors_go_to_the_full_parse() -> None:
    cache = ShapeCache(_parse_query_text, string_value)
    escaped = 'SELECT * { ?s ?p "caf\\u00e9" }'
    assert _cached(cache, escaped) == _full(escaped)
    assert not cache.shapes
    assert _cached(cache, 'SELECT * { ?s ?p "a" ') is not None
    assert not cache.shapes  # a text that does not parse teaches nothing
